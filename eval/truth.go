package eval

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/neardup/neardup/measure"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
)

// ShingleWidth is the number of tokens in a ground-truth shingle.
const ShingleWidth = 5

// Tokens appends the ground-truth tokens of text to dst: each Han character
// alone, otherwise maximal runs of letters (L) and decimal digits (Nd), each
// rune lower-cased (unicode.ToLower, rune by rune: no final sigma). Invalid
// UTF-8 separates tokens. Tokens that need no lower-casing share text's memory.
func Tokens(dst []string, text string) []string {
	start := -1 // start of the current run of letters and digits
	flush := func(end int) {
		if start >= 0 {
			dst = append(dst, strings.ToLower(text[start:end]))
			start = -1
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' {
				if start < 0 {
					start = i
				}
			} else {
				flush(i)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			flush(i)
		case unicode.Is(unicode.Han, r):
			flush(i)
			dst = append(dst, text[i:i+size])
		case unicode.IsLetter(r) || unicode.Is(unicode.Nd, r):
			if start < 0 {
				start = i
			}
		default:
			flush(i)
		}
		i += size
	}
	flush(len(text))
	return dst
}

// Shingles returns the sorted, distinct hashes of the ShingleWidth-token
// shingles of tokens (one shingle of all tokens when there are fewer), each the
// simhash.HashString64 of its tokens joined by one space. No tokens give the
// empty set.
func Shingles(tokens []string) measure.Set {
	if len(tokens) == 0 {
		return measure.Set{}
	}
	w := min(ShingleWidth, len(tokens))
	n := len(tokens) - w + 1
	hs := make([]uint64, 0, n)
	var buf []byte
	for i := range n {
		buf = buf[:0]
		for j, t := range tokens[i : i+w] {
			if j > 0 {
				buf = append(buf, ' ')
			}
			buf = append(buf, t...)
		}
		hs = append(hs, simhash.Hash64(buf))
	}
	return measure.NewSet(hs)
}

// TruthOptions configure ComputeTruth. The zero value is the README's reference
// run.
type TruthOptions struct {
	Perms      int     // MinHash permutations; 0: 128
	Bands      int     // LSH bands; 0: 32
	Rows       int     // LSH rows per band; 0: 4
	Seed       uint64  // MinHash seed; 0: 1
	MinJaccard float64 // keep pairs at or above this exact Jaccard; 0: 0.5
	Workers    int     // 0: GOMAXPROCS
}

// EnsureDefaults fills in zero fields.
func (o *TruthOptions) EnsureDefaults() {
	if o.Perms == 0 {
		o.Perms = 128
	}
	if o.Bands == 0 {
		o.Bands = 32
	}
	if o.Rows == 0 {
		o.Rows = 4
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.MinJaccard == 0 {
		o.MinJaccard = 0.5
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
}

// Pair is a pair of documents (positions in the corpus, A < B) and the exact
// Jaccard similarity of their shingle sets.
type Pair struct {
	A, B    int
	Jaccard float64
}

// Truth is the ground truth of one corpus.
type Truth struct {
	// Docs is the number of documents.
	Docs int
	// Distinct is the number of distinct texts.
	Distinct int
	// Pairs are the near-duplicate pairs of distinct texts at or above
	// MinJaccard, sorted by A then B. A text is represented by its first
	// document (Canon).
	Pairs []Pair
	// ExactPairs is the number of document pairs with identical texts.
	ExactPairs int
	// Canon[i] is the first document whose text equals document i's.
	Canon []int
	// Sets[i] is document i's shingle set; identical texts share one. A
	// document without tokens has the empty set.
	Sets []measure.Set
	// Candidates is the number of LSH candidate pairs of distinct texts.
	Candidates int
	// Options are the options the truth was computed with.
	Options TruthOptions

	index map[[2]int]float64
}

// Count returns the number of near-duplicate pairs with Jaccard >= t.
func (t *Truth) Count(th float64) int {
	n := 0
	for _, p := range t.Pairs {
		if p.Jaccard >= th {
			n++
		}
	}
	return n
}

// DocsIn returns the number of distinct texts in at least one near-duplicate
// pair with Jaccard >= th.
func (t *Truth) DocsIn(th float64) int {
	in := make([]bool, t.Docs)
	n := 0
	for _, p := range t.Pairs {
		if p.Jaccard >= th {
			for _, d := range [2]int{p.A, p.B} {
				if !in[d] {
					in[d] = true
					n++
				}
			}
		}
	}
	return n
}

// MissProbability returns the probability that the LSH missed a pair of
// Jaccard similarity s: (1-s^rows)^bands.
func (t *Truth) MissProbability(s float64) float64 {
	return 1 - minhash.Probability(s, t.Options.Bands, t.Options.Rows)
}

// Jaccard returns the exact Jaccard similarity of documents a and b, from the
// truth's pairs when it holds them and computed from the sets otherwise.
func (t *Truth) Jaccard(a, b int) float64 {
	if a > b {
		a, b = b, a
	}
	if j, ok := t.index[[2]int{a, b}]; ok {
		return j
	}
	return jaccard(t.Sets[a], t.Sets[b])
}

// jaccard is measure.Jaccard except that empty sets are similar to nothing: a
// text without tokens has no content to share (the README's reference run
// counts no pairs among the token-less texts of zh_fortunes).
func jaccard(a, b measure.Set) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	return measure.Jaccard(a, b)
}

// Known reports whether the pair (a, b) is one of the truth's pairs, and its
// Jaccard similarity.
func (t *Truth) Known(a, b int) (float64, bool) {
	if a > b {
		a, b = b, a
	}
	j, ok := t.index[[2]int{a, b}]
	return j, ok
}

// ComputeTruth computes the ground truth of docs (see the package doc).
func ComputeTruth(ctx context.Context, docs []Doc, opt TruthOptions) (*Truth, error) {
	opt.EnsureDefaults()
	if opt.Bands*opt.Rows > opt.Perms {
		return nil, ErrSetting
	}
	n := len(docs)
	t := &Truth{Docs: n, Canon: make([]int, n), Sets: make([]measure.Set, n), Options: opt}
	// Exact duplicates by text.
	first := make(map[string]int, n)
	var uniq []int
	for i, d := range docs {
		if c, ok := first[d.Text]; ok {
			t.Canon[i] = c
			continue
		}
		first[d.Text] = i
		t.Canon[i] = i
		uniq = append(uniq, i)
	}
	copies := make(map[int]int)
	for _, c := range t.Canon {
		t.ExactPairs += copies[c] // each new copy pairs with every earlier one
		copies[c]++
	}
	t.Distinct = len(uniq)
	// Shingle sets and signatures of distinct texts, on all workers.
	h := minhash.New(opt.Perms, opt.Seed)
	sigs := make([]minhash.Signature, len(uniq))
	if err := parallel(ctx, len(uniq), opt.Workers, func(k int) {
		i := uniq[k]
		t.Sets[i] = Shingles(Tokens(nil, docs[i].Text))
		sigs[k] = h.Sign(nil, t.Sets[i])
	}); err != nil {
		return nil, err
	}
	for i, c := range t.Canon {
		t.Sets[i] = t.Sets[c]
	}
	l := minhash.NewLSH(opt.Bands, opt.Rows)
	for k, s := range sigs {
		if len(t.Sets[uniq[k]]) == 0 {
			continue // no tokens: near-duplicate of nothing
		}
		if err := l.Add(k, s); err != nil {
			return nil, err
		}
	}
	var cand [][2]int32
	if err := l.Pairs(func(a, b int) error {
		cand = append(cand, [2]int32{int32(a), int32(b)})
		return nil
	}); err != nil {
		return nil, err
	}
	t.Candidates = len(cand)
	js := make([]float64, len(cand))
	if err := parallel(ctx, len(cand), opt.Workers, func(k int) {
		js[k] = jaccard(t.Sets[uniq[cand[k][0]]], t.Sets[uniq[cand[k][1]]])
	}); err != nil {
		return nil, err
	}
	for k, c := range cand {
		if js[k] >= opt.MinJaccard {
			a, b := uniq[c[0]], uniq[c[1]]
			t.Pairs = append(t.Pairs, Pair{min(a, b), max(a, b), js[k]})
		}
	}
	slices.SortFunc(t.Pairs, func(x, y Pair) int {
		if c := cmp.Compare(x.A, y.A); c != 0 {
			return c
		}
		return cmp.Compare(x.B, y.B)
	})
	t.index = make(map[[2]int]float64, len(t.Pairs))
	for _, p := range t.Pairs {
		t.index[[2]int{p.A, p.B}] = p.Jaccard
	}
	return t, nil
}

// parallel calls f(0..n-1) on workers goroutines, handing out indices in
// chunks, and stops early when ctx is done.
func parallel(ctx context.Context, n, workers int, f func(i int)) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	const chunk = 64
	var (
		mu   sync.Mutex
		next int // guarded by mu
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				lo := next
				next += chunk
				mu.Unlock()
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+chunk, n); i++ {
					f(i)
				}
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}
