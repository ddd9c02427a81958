package rule_test

import (
	"fmt"

	"github.com/neardup/neardup/rule"
)

func Example() {
	opt := rule.Options{} // the defaults: MinHash LSH candidates, Jaccard of word 5-shingles >= 0.8
	rl, _ := rule.NewRule(opt)
	ex, _ := rule.NewExtractor(opt) // one per goroutine
	story := "the quick brown fox jumps over the lazy dog while the cat watches from the fence "
	a := ex.Extract(story + story + story + "and then it rains")
	b := ex.Extract(story + story + story + "and then it snows")
	c := ex.Extract("An entirely different document about something else.")
	fmt.Println(rl.Near(&a, &b), rl.Verify(&a, &b), rl.Duplicates(&a, &b))
	fmt.Println(rl.Duplicates(&a, &c))
	kept := []*rule.Features{&c, &a} // kept documents, in priority order
	fmt.Println(rl.Match(&b, kept))  // b duplicates kept[1]
	// Output:
	// true true true
	// false
	// 1
}

// The LSH shape a run with --method minhash uses: 128 permutations banded
// for the candidate threshold 0.2 below the verification threshold.
func ExampleOptions_LSHShape() {
	opt := rule.Options{Method: rule.MethodMinHash}
	opt.EnsureDefaults()
	bands, rows := opt.LSHShape()
	fmt.Println(bands, rows, opt.Perms)
	opt.Bands, opt.Rows = 16, 8
	fmt.Println(opt.LSHShape())
	// Output:
	// 24 6 144
	// 16 8
}

func ExampleRule_ExactOnly() {
	rl, _ := rule.NewRule(rule.Options{})
	ex, _ := rule.NewExtractor(rule.Options{})
	a, b, c := ex.Extract("the the the the the the"), ex.Extract("the the the the the the the"), ex.Extract("The THE the the the the")
	fmt.Println(rl.ExactOnly(&a), a.FP) // only stopwords: no features, fingerprint 0
	fmt.Println(rl.Duplicates(&a, &b))  // another such text: not a duplicate
	fmt.Println(rl.Duplicates(&a, &c))  // the same word sequence: a duplicate
	// Output:
	// true 0
	// false
	// true
}
