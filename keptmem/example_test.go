package keptmem_test

import (
	"fmt"
	"strings"

	"github.com/neardup/neardup/keptmem"
	"github.com/neardup/neardup/rule"
)

// A Set decides one document at a time what dedup.Run decides for a batch:
// the second text, one word changed, is declined in favour of the first.
func Example() {
	opt := rule.Options{}
	rl, err := rule.NewRule(opt)
	if err != nil {
		panic(err)
	}
	ex, err := rule.NewExtractor(opt)
	if err != nil {
		panic(err)
	}
	k, err := keptmem.New(rl, 10)
	if err != nil {
		panic(err)
	}
	var words []string
	for i := range 60 {
		words = append(words, fmt.Sprintf("word%d", i))
	}
	a := strings.Join(words, " ")
	words[30] = "changed"
	b := strings.Join(words, " ")
	for _, d := range []struct{ id, text string }{{"a", a}, {"b", b}, {"c", "something else entirely"}} {
		m, dup, err := k.AddIfNew(d.id, ex.Extract(d.text))
		if err != nil {
			panic(err)
		}
		if dup {
			fmt.Printf("%s duplicates %s (Jaccard %.2f)\n", d.id, m.ID, m.Score)
		} else {
			fmt.Printf("%s kept\n", d.id)
		}
	}
	fmt.Println(k.Len(), "kept")
	// Output:
	// a kept
	// b duplicates a (Jaccard 0.84)
	// c kept
	// 2 kept
}
