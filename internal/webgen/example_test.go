package webgen_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/neardup/neardup/internal/webgen"
)

// exampleGenerator makes a generator over made-up sentences; real runs read
// the shared corpora with LoadPool.
func exampleGenerator() (*webgen.Generator, error) {
	syl := []string{"ka", "lo", "mi", "ne", "su", "ta", "vo", "ri", "pe", "du"}
	w := func(k int) string { return syl[k%10] + syl[k/10%10] + syl[k/100%10] }
	pb := webgen.NewPoolBuilder()
	for i := range 400 {
		pb.AddText(fmt.Sprintf("The %s of %s walked past the %s and the %s in sentence %d.\n\n", w(i), w(i*7+3), w(i*13+5), w(i*31+7), i))
	}
	pool, err := pb.Pool()
	if err != nil {
		return nil, err
	}
	return webgen.New(pool, webgen.Options{Seed: 1, Near: 0.2, Exact: 0.05})
}

// The first 30 documents of a corpus with the truth beside each copy.
func Example() {
	g, err := exampleGenerator()
	if err != nil {
		fmt.Println(err)
		return
	}
	s := webgen.NewScratch()
	for i := range int64(30) {
		if d := g.Doc(i, s); d.Planted != nil {
			fmt.Printf("%s %s of %s, J %.3f\n", d.ID, d.Planted.Kind, d.Planted.Of, d.Planted.Jaccard)
		}
	}
	// The same documents as JSON lines, as the command writes them.
	var b strings.Builder
	if err := g.Write(context.Background(), &b, 0, 30, 2); err != nil {
		fmt.Println(err)
	}
	fmt.Println(strings.Count(b.String(), "\n"), "lines")
	// Output:
	// d0000000010 near of d0000000009, J 0.920
	// d0000000012 exact of d0000000002, J 1.000
	// d0000000013 near of d0000000009, J 0.904
	// d0000000021 exact of d0000000002, J 1.000
	// d0000000029 exact of d0000000014, J 1.000
	// 30 lines
}

// Checking a dedup that removed d0000000010 and d0000000012 (planted) and
// d0000000007 (not planted, and unlike the document kept for it).
func ExampleCheck() {
	g, err := exampleGenerator()
	if err != nil {
		fmt.Println(err)
		return
	}
	var corpus strings.Builder
	if err := g.Write(context.Background(), &corpus, 0, 30, 0); err != nil {
		fmt.Println(err)
		return
	}
	dups := `{"dup_id":"d0000000007","kept_id":"d0000000001"}
{"dup_id":"d0000000010","kept_id":"d0000000009"}
{"dup_id":"d0000000012","kept_id":"d0000000002","exact":true}
`
	rep, err := webgen.Check(context.Background(), strings.NewReader(corpus.String()), strings.NewReader(dups), webgen.CheckOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	rep.WriteText(os.Stdout)
	// Output:
	// documents          30, 3 removed (threshold 0.80)
	// near-copies        2 planted at J >= 0.80, 1 removed: recall 0.5000
	// exact copies       3 planted, 1 removed (33.33%)
	// controls           0 planted at J < 0.80, 0 wrongly removed
	// unplanted removals 1 (0 at J >= 0.80)
	// false removals     1 (recomputed J < 0.80)
	//   d0000000007 removed for d0000000001: reported J -, recomputed 0.0000 (unplanted)
}

// A named option set, such as the crawl-short profile of neardup-gen
// -profile crawl-short, with the seed set apart.
func ExampleProfile() {
	opt, err := webgen.Profile("crawl-short")
	if err != nil {
		fmt.Println(err)
		return
	}
	opt.Seed = 1
	fmt.Printf("%d sites, %.0f%% of documents pages of one, %.0f%% short\n", opt.Sites, 100*opt.SiteShare, 100*opt.ShortShare)
	// Output:
	// 2000 sites, 80% of documents pages of one, 30% short
}
