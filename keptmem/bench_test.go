package keptmem_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/internal/textgen"
	"github.com/neardup/neardup/keptmem"
	"github.com/neardup/neardup/rule"
)

// BenchmarkKeptMatch measures one Set.Match (the online service's decision)
// against n stored documents of about 1 KB, per candidate method and k, with
// the texts of cmd/neardup-load (package textgen): "markov", new text from
// en_prose's word pairs with one document in ten an edited copy, its default;
// "windows", windows of en_prose with one word in 20 replaced (at 1M
// documents every word of the corpus is in about 70 of them, so many share
// shingles); and "random", 170 words drawn uniformly from 20,000. It reports
// the candidates each match reads (cands/op). n defaults to 100,000
// (NEARDUP_BENCH_N).
func BenchmarkKeptMatch(b *testing.B) {
	n := benchN()
	for _, tc := range []struct {
		method string
		k      int
		text   string
	}{{rule.MethodSimHash, 3, "random"}, {rule.MethodSimHash, 6, "random"}, {rule.MethodSimHash, rule.DefaultK, "random"},
		{rule.MethodMinHash, 0, "random"}, {rule.MethodSimHash, rule.DefaultK, "windows"}, {rule.MethodMinHash, 0, "windows"},
		{rule.MethodSimHash, rule.DefaultK, "markov"}, {rule.MethodMinHash, 0, "markov"}} {
		b.Run(fmt.Sprintf("%s/k=%d/%s/n=%d", tc.method, tc.k, tc.text, n), func(b *testing.B) {
			kept, qs := benchKept(b, rule.Options{Method: tc.method, K: tc.k, KShort: tc.k}, tc.text, n)
			var cands int
			for i := range qs {
				cands += kept.Candidates(&qs[i])
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := kept.Match(&qs[i%len(qs)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cands)/float64(len(qs)), "cands/op")
		})
	}
}

// benchN is the number of stored documents: NEARDUP_BENCH_N, else 100,000.
func benchN() int {
	if n, err := strconv.Atoi(os.Getenv("NEARDUP_BENCH_N")); err == nil && n > 0 {
		return n
	}
	return 100000
}

// benchKept returns a set of n documents of the named texts under opt, and
// 20,000 more of them as queries: enough distinct ones that their
// candidates are not all in the cache.
func benchKept(b *testing.B, opt rule.Options, text string, n int) (*keptmem.Set, []rule.Features) {
	rl, err := rule.NewRule(opt)
	if err != nil {
		b.Fatal(err)
	}
	ex, _ := rule.NewExtractor(opt)
	next := benchText(b, text, rand.New(rand.NewPCG(1, 2)))
	ids := make([]string, n)
	fs := make([]rule.Features, n)
	for i := range n {
		ids[i], fs[i] = strconv.Itoa(i), ex.Extract(next())
	}
	kept, _ := keptmem.New(rl, n)
	if err := kept.AddBulk(ids, fs); err != nil {
		b.Fatal(err)
	}
	qs := make([]rule.Features, 20000)
	for i := range qs {
		qs[i] = ex.Extract(next())
	}
	return kept, qs
}

// benchText returns the maker of the named texts: random, windows or markov.
func benchText(b *testing.B, name string, rng *rand.Rand) func() string {
	if name == "random" {
		return func() string {
			w := make([]string, 170)
			for i := range w {
				w[i] = "w" + strconv.Itoa(rng.IntN(20000))
			}
			return strings.Join(w, " ")
		}
	}
	words, err := textgen.ReadWords(testcorpora.Path(b, "en_prose"))
	if err != nil {
		b.Fatal(err)
	}
	src := textgen.Windows(words)
	if name == "markov" {
		src = textgen.NewMarkov(words).Doc
	}
	return func() string { return src(rng) }
}

// BenchmarkKeptAddIfNew measures Set.AddIfNew of new documents (the
// service's serialised step for add_if_new: match, then insert into the
// tables and the Hamming index) after n stored random-word documents.
func BenchmarkKeptAddIfNew(b *testing.B) {
	n := benchN()
	for _, method := range []string{rule.MethodSimHash, rule.MethodMinHash} {
		b.Run(fmt.Sprintf("%s/n=%d", method, n), func(b *testing.B) {
			kept, qs := benchKept(b, rule.Options{Method: method}, "random", n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := kept.AddIfNew(fmt.Sprint("new-", i), qs[i%len(qs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkKeptAddBulk measures the start-up of the service: keptmem.New and one
// AddBulk of n stored markov documents (NEARDUP_BENCH_N, default 100,000),
// their features already decoded. It reports the time per document.
func BenchmarkKeptAddBulk(b *testing.B) {
	n := benchN()
	opt := rule.Options{}
	rl, err := rule.NewRule(opt)
	if err != nil {
		b.Fatal(err)
	}
	ex, _ := rule.NewExtractor(opt)
	next := benchText(b, "markov", rand.New(rand.NewPCG(1, 2)))
	ids := make([]string, n)
	fs := make([]rule.Features, n)
	for i := range n {
		ids[i], fs[i] = strconv.Itoa(i), ex.Extract(next())
	}
	b.ResetTimer()
	for b.Loop() {
		kept, _ := keptmem.New(rl, n)
		if err := kept.AddBulk(ids, fs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/doc")
}
