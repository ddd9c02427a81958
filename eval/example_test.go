package eval_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/neardup/neardup/eval"
)

func ExampleTokens() {
	fmt.Printf("%q\n", eval.Tokens(nil, "The GPL-3.0 许可证, v2"))
	// Output: ["the" "gpl" "3" "0" "许" "可" "证" "v2"]
}

func ExampleComputeTruth() {
	long := strings.Repeat("the quick brown fox jumps over the lazy dog number ", 20)
	docs := []eval.Doc{
		{ID: "a", Text: long + "one"},
		{ID: "b", Text: long + "two"},
		{ID: "c", Text: long + "one"}, // an exact duplicate of a
		{ID: "d", Text: "something else entirely, with enough words to shingle"},
	}
	truth, err := eval.ComputeTruth(context.Background(), docs, eval.TruthOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("exact-duplicate pairs:", truth.ExactPairs)
	for _, p := range truth.Pairs {
		fmt.Printf("%s ~ %s: J = %.3f\n", docs[p.A].ID, docs[p.B].ID, p.Jaccard)
	}
	// Output:
	// exact-duplicate pairs: 1
	// a ~ b: J = 0.833
}

func ExampleEvaluate() {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "word%d ", i)
	}
	long := b.String()
	docs := []eval.Doc{{ID: "a", Text: long + "one"}, {ID: "b", Text: long + "two"}, {ID: "d", Text: "unrelated words entirely here"}}
	ctx := context.Background()
	truth, _ := eval.ComputeTruth(ctx, docs, eval.TruthOptions{})
	results, err := eval.Evaluate(ctx, docs, truth, []eval.Setting{{Method: eval.MethodNaive}}, eval.Options{Ks: []int{3}})
	if err != nil {
		panic(err)
	}
	r := results[0]
	fmt.Printf("%s k=%d: pair precision %.2f recall %.2f\n", r.Name, r.K, r.Pair.Precision, r.Pair.Recall)
	// Output: naive k=3: pair precision 1.00 recall 1.00
}
