package dedup_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/dedup"
)

func Example() {
	dir, _ := os.MkdirTemp("", "dedup-example")
	defer os.RemoveAll(dir)
	story := strings.Repeat("the quick brown fox jumps over the lazy dog while the cat watches from the fence ", 5)
	in := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(in, []byte(
		`{"id":"a","text":"`+story+`"}`+"\n"+
			`{"id":"b","text":"`+story+`and then it rains"}`+"\n"+ // near-duplicate of a
			`{"id":"c","text":"An entirely different document about something else."}`+"\n"+
			`{"id":"d","text":"AN ENTIRELY DIFFERENT DOCUMENT, ABOUT SOMETHING ELSE!"}`+"\n"), // same words as c
		0o644)
	out := filepath.Join(dir, "kept.jsonl")
	dups := filepath.Join(dir, "dups.jsonl")
	sum, err := dedup.Run(context.Background(), []string{in}, dedup.Options{Output: out, Duplicates: dups})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("read %d, kept %d, removed %d (%d exact, %d near)\n", sum.Docs, sum.Kept, sum.Removed, sum.ExactDuplicates, sum.NearDuplicates)
	kept, _ := os.ReadFile(out)
	for _, line := range strings.Split(strings.TrimSpace(string(kept)), "\n") {
		fmt.Println(line[:12])
	}
	// Output:
	// read 4, kept 2, removed 2 (1 exact, 1 near)
	// {"id":"a","t
	// {"id":"c","t
}

// The LSH shape a run with --method minhash uses: 128 permutations banded
// for the candidate threshold 0.2 below the verification threshold.
func ExampleOptions_LSHShape() {
	opt := dedup.Options{Method: dedup.MethodMinHash}
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
	rule, _ := dedup.NewRule(dedup.Options{})
	ex, _ := dedup.NewExtractor(dedup.Options{})
	a, b, c := ex.Extract("the the the the the the"), ex.Extract("the the the the the the the"), ex.Extract("The THE the the the the")
	fmt.Println(rule.ExactOnly(&a), a.FP) // only stopwords: no features, fingerprint 0
	fmt.Println(rule.Duplicates(&a, &b))  // another such text: not a duplicate
	fmt.Println(rule.Duplicates(&a, &c))  // the same word sequence: a duplicate
	// Output:
	// true 0
	// false
	// true
}
