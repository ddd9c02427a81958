package dedup_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/testcorpora"
)

// BenchmarkKeptMatch measures one Kept.Match (the online service's decision)
// against n stored documents of about 1 KB, per candidate method and k: 170
// random words ("random"), or, as cmd/neardup-load makes them, windows of
// en_prose with one word in 20 replaced ("prose": at 1M documents every word
// of the corpus is in about 70 of them, so many share shingles). n defaults
// to 100,000 (NEARDUP_BENCH_N).
func BenchmarkKeptMatch(b *testing.B) {
	n := 100000
	if s := os.Getenv("NEARDUP_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for _, tc := range []struct {
		method string
		k      int
		text   string
	}{{dedup.MethodSimHash, 3, "random"}, {dedup.MethodSimHash, 6, "random"}, {dedup.MethodSimHash, dedup.DefaultK, "random"},
		{dedup.MethodMinHash, 0, "random"}, {dedup.MethodSimHash, dedup.DefaultK, "prose"}, {dedup.MethodMinHash, 0, "prose"}} {
		b.Run(fmt.Sprintf("%s/k=%d/%s/n=%d", tc.method, tc.k, tc.text, n), func(b *testing.B) {
			opt := dedup.Options{Method: tc.method, K: tc.k, KShort: tc.k}
			rule, err := dedup.NewRule(opt)
			if err != nil {
				b.Fatal(err)
			}
			ex, _ := dedup.NewExtractor(opt)
			rng := rand.New(rand.NewPCG(1, 2))
			text := func() string {
				w := make([]string, 170)
				for i := range w {
					w[i] = "w" + strconv.Itoa(rng.IntN(20000))
				}
				return strings.Join(w, " ")
			}
			if tc.text == "prose" {
				words := proseWords(b)
				text = func() string {
					i := rng.IntN(len(words) - 400)
					var sb strings.Builder
					for j := i; sb.Len() < 1024; j++ {
						w := words[j]
						if rng.IntN(20) == 0 {
							w = words[rng.IntN(len(words))]
						}
						sb.WriteString(w)
						sb.WriteByte(' ')
					}
					return sb.String()
				}
			}
			ids := make([]string, n)
			fs := make([]dedup.Features, n)
			for i := range n {
				ids[i], fs[i] = strconv.Itoa(i), ex.Extract(text())
			}
			kept, _ := dedup.NewKept(rule, n)
			if err := kept.AddBulk(ids, fs); err != nil {
				b.Fatal(err)
			}
			qs := make([]dedup.Features, 256)
			for i := range qs {
				qs[i] = ex.Extract(text())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := kept.Match(&qs[i%len(qs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// proseWords returns the words of en_prose, in order.
func proseWords(b *testing.B) []string {
	r, err := corpus.Open([]string{testcorpora.Path(b, "en_prose")}, corpus.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var words []string
	for {
		d, err := r.Next()
		if err == io.EOF {
			return words
		}
		if err != nil {
			b.Fatal(err)
		}
		words = append(words, strings.Fields(d.Text)...)
	}
}

// BenchmarkKeptAddIfNew measures Kept.AddIfNew of new documents (the
// service's serialised step for add_if_new: match, then insert into the
// tables and the Hamming index) after n stored random-word documents.
func BenchmarkKeptAddIfNew(b *testing.B) {
	n := 100000
	if s := os.Getenv("NEARDUP_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for _, method := range []string{dedup.MethodSimHash, dedup.MethodMinHash} {
		b.Run(fmt.Sprintf("%s/n=%d", method, n), func(b *testing.B) {
			opt := dedup.Options{Method: method}
			rule, _ := dedup.NewRule(opt)
			ex, _ := dedup.NewExtractor(opt)
			rng := rand.New(rand.NewPCG(1, 2))
			text := func() string {
				w := make([]string, 170)
				for i := range w {
					w[i] = "w" + strconv.Itoa(rng.IntN(20000))
				}
				return strings.Join(w, " ")
			}
			ids := make([]string, n)
			fs := make([]dedup.Features, n)
			for i := range n {
				ids[i], fs[i] = strconv.Itoa(i), ex.Extract(text())
			}
			kept, _ := dedup.NewKept(rule, n)
			if err := kept.AddBulk(ids, fs); err != nil {
				b.Fatal(err)
			}
			qs := make([]dedup.Features, 20000)
			for i := range qs {
				qs[i] = ex.Extract(text())
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := kept.AddIfNew(fmt.Sprint("new-", i), qs[i%len(qs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
