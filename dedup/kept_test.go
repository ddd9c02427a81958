package dedup

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/testcorpora"
)

// keptTexts returns version histories (each version a small edit of the one
// before, so neighbours are near-duplicates at every distance around the
// threshold) with exact copies, short and wordless texts mixed in, and
// (without -short) the documents of two shared corpora.
func keptTexts(t *testing.T) []string {
	rng := rand.New(rand.NewPCG(3, 9))
	var texts []string
	for range 40 {
		words := make([]string, 20+rng.IntN(300))
		for i := range words {
			words[i] = fmt.Sprintf("w%d", rng.IntN(3000))
		}
		for range 1 + rng.IntN(8) {
			for range 1 + rng.IntN(6) {
				words[rng.IntN(len(words))] = fmt.Sprintf("w%d", rng.IntN(3000))
			}
			texts = append(texts, strings.Join(words, " "))
			if rng.IntN(10) == 0 {
				texts = append(texts, strings.ToUpper(strings.Join(words, "  ")))
			}
		}
	}
	texts = append(texts, "a b", "a b", "c", "!!!", "!!!", "?")
	if testing.Short() {
		return texts // the race pass: the concurrent paths are elsewhere
	}
	for _, name := range []string{"en_spdx", "zh_fortunes"} {
		r, err := corpus.Open([]string{testcorpora.Path(t, name)}, corpus.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for {
			d, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, d.Text)
		}
		r.Close()
	}
	return texts
}

// TestKeptMatchesEveryDocument checks Kept's candidate tables against the
// rule itself: for every document, MatchAll must return exactly the kept
// documents that Rule.Duplicates accepts, in priority order, whatever found
// the candidates (the prefix filter, LSH bands, the Hamming index, the exact
// table), while documents come and go and the tables grow from their
// smallest size. (Under MethodMinHash the bands are the candidate test: the
// rule applies to documents that share a band key, as in the batch.)
func TestKeptMatchesEveryDocument(t *testing.T) {
	texts := keptTexts(t)
	for _, tc := range []struct {
		name string
		opt  Options
		thin bool // store every third document's set sampled at modulus 2
	}{
		{"simhash", Options{}, false},
		{"simhash-k3", Options{K: 3, KShort: 3}, false},
		{"simhash-t0.5", Options{Threshold: 0.5}, false},
		{"simhash-sampled", Options{}, true},
		{"simhash-noverify", Options{Verify: VerifyNone, K: 3, KShort: 3}, false},
		{"minhash", Options{Method: MethodMinHash}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rule, err := NewRule(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			ex, err := NewExtractor(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := NewKept(rule, 1)
			if err != nil {
				t.Fatal(err)
			}
			type doc struct {
				id string
				f  Features
			}
			var all []doc // kept documents in priority order, removed ones deleted
			rng := rand.New(rand.NewPCG(5, 5))
			matched := 0
			for i, text := range texts {
				f := ex.Extract(text)
				if tc.thin && i%3 == 0 {
					f.Sketch, _ = newSketch(slices.Clone(f.Sketch.h), nil, 1)
				}
				var want []string
				for _, d := range all {
					if rule.Duplicates(&d.f, &f) && (rule.method != MethodMinHash || shareBand(&d.f, &f) || d.f.Exact == f.Exact) {
						want = append(want, d.id)
					}
				}
				ms, err := kept.MatchAll(&f, 0)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]string, len(ms))
				for j, m := range ms {
					got[j] = m.ID
				}
				if !slices.Equal(got, want) {
					t.Fatalf("document %d: MatchAll %v, the rule over every kept document %v", i, got, want)
				}
				if m, ok, _ := kept.Match(&f); ok != (len(want) > 0) || ok && m.ID != want[0] {
					t.Fatalf("document %d: Match %v %v, want the first of %v", i, m.ID, ok, want)
				}
				matched += min(len(want), 1)
				id := fmt.Sprint("d", i)
				if err := kept.Add(id, f); err != nil {
					t.Fatal(err)
				}
				all = append(all, doc{id, f})
				if rng.IntN(6) == 0 {
					j := rng.IntN(len(all))
					if !kept.Remove(all[j].id) {
						t.Fatalf("Remove(%s) found nothing", all[j].id)
					}
					all = slices.Delete(all, j, j+1)
				}
			}
			if kept.Len() != len(all) {
				t.Fatalf("Len %d, want %d", kept.Len(), len(all))
			}
			if matched < len(texts)/30 {
				t.Fatalf("only %d of %d documents had a match: the test proves little", matched, len(texts))
			}
			t.Logf("%d documents, %d with a match, %d kept", len(texts), matched, len(all))
		})
	}
}

// The prefix is long enough for every set size and threshold: two sets at
// Jaccard t share a hash within their prefixes.
func TestPrefixLen(t *testing.T) {
	for _, th := range []float64{0.5, 0.7, 0.8, 0.9, 0.95, 1} {
		for n := 1; n < 400; n++ {
			p := prefixLen(n, th)
			if p < 1 || p > n {
				t.Fatalf("prefixLen(%d, %g) = %d", n, th, p)
			}
			// A set of n can share at most n-p+... : a set B whose
			// intersection with A misses A's whole prefix has |A∩B| <= n-p,
			// so J <= (n-p)/n, which must be below th.
			if float64(n-p)/float64(n) >= th && !(th == 1 && p == 1) {
				t.Fatalf("prefixLen(%d, %g) = %d: a set missing the prefix can still reach J = %g", n, th, p, float64(n-p)/float64(n))
			}
		}
	}
}

// shareBand reports whether a and b have the same key in some LSH band.
func shareBand(a, b *Features) bool {
	for i := range min(len(a.Bands), len(b.Bands)) {
		if a.Bands[i] == b.Bands[i] {
			return true
		}
	}
	return false
}

// A set loaded with AddBulk (in one call, and in pieces that take both of
// its paths: a rebuild with entries already in the table, and adds one by
// one) answers every match as the set built with Add does.
func TestKeptAddBulkEqualsAdd(t *testing.T) {
	texts := keptTexts(t)
	for _, opt := range []Options{{}, {Method: MethodMinHash}} {
		rule, _ := NewRule(opt)
		ex, _ := NewExtractor(opt)
		ids := make([]string, len(texts))
		fs := make([]Features, len(texts))
		for i, text := range texts {
			ids[i], fs[i] = fmt.Sprint("d", i), ex.Extract(text)
		}
		one, _ := NewKept(rule, 1)
		for i := range ids {
			if err := one.Add(ids[i], fs[i]); err != nil {
				t.Fatal(err)
			}
		}
		whole, _ := NewKept(rule, 1)
		pieces, _ := NewKept(rule, 1)
		a, b := len(ids)/3, len(ids)/3+len(ids)/2 // then a rebuild (a < b-a), then adds
		for _, err := range []error{whole.AddBulk(ids, fs), pieces.AddBulk(ids[:a], fs[:a]),
			pieces.AddBulk(ids[a:b], fs[a:b]), pieces.AddBulk(ids[b:], fs[b:])} {
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := pieces.AddBulk([]string{"d1"}, fs[:1]); err == nil {
			t.Fatal("AddBulk took an id already present")
		}
		for i := range fs {
			want, _ := one.MatchAll(&fs[i], 0)
			for name, k := range map[string]*Kept{"whole": whole, "pieces": pieces} {
				got, _ := k.MatchAll(&fs[i], 0)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s %s: document %d: %v, Add gives %v", opt.Method, name, i, got, want)
				}
			}
		}
	}
}
