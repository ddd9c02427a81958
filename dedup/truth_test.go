package dedup

import (
	"io"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
)

func corpusPath(tb testing.TB, name string) string {
	tb.Helper()
	return testcorpora.Path(tb, name)
}

// truthSet is an independent ground truth for a corpus, computed as
// ../shared/corpora/README.md describes: candidates from MinHash-LSH with 32
// bands of 4 rows, exact Jaccard of 5-shingle sets, pairs of different texts at
// J >= threshold.
type truthSet struct {
	ids   []string
	text  []uint64 // hash of the raw text: equal means identical texts
	pairs [][2]int32
	jac   []float64
	docs  map[int32]bool // docs in a pair
}

func computeTruth(tb testing.TB, path string, threshold float64) *truthSet {
	tb.Helper()
	rd, err := corpus.Open([]string{path}, corpus.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	h := minhash.New(128, 42)
	lsh := minhash.NewLSH(32, 4)
	sh := shingler{w: 5}
	var sets []sketch
	t := &truthSet{docs: map[int32]bool{}}
	var set64 []uint64
	for {
		doc, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		hs, _ := sh.shingle(doc.Text)
		set64 = set64[:0]
		for _, x := range hs {
			set64 = append(set64, uint64(x))
		}
		lsh.Add(len(t.ids), h.Sign(nil, set64))
		sk, _ := newSketch(hs, nil, 0)
		sets = append(sets, sk)
		t.ids = append(t.ids, doc.ID)
		t.text = append(t.text, simhash.HashString64(doc.Text))
	}
	err = lsh.Pairs(func(a, b int) error {
		if t.text[a] == t.text[b] {
			return nil
		}
		// Two documents without tokens have two empty sets; they are not
		// near-duplicates of each other (the corpora README does not count them).
		if len(sets[a].h) == 0 && len(sets[b].h) == 0 {
			return nil
		}
		if j := jaccard(sets[a], sets[b]); j >= threshold {
			t.pairs = append(t.pairs, [2]int32{int32(a), int32(b)})
			t.jac = append(t.jac, j)
			t.docs[int32(a)], t.docs[int32(b)] = true, true
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return t
}
