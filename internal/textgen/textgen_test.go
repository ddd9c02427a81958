package textgen

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// words returns a small text's words: enough pairs for a chain, more than
// the 400 Windows needs.
func words() []string {
	var w []string
	for i := range 2000 {
		w = append(w, []string{"the", "cat", "sat", "on", "a", "mat", "and", "then", "it", "slept"}[i%10], "w"+string(rune('a'+i%26)))
	}
	return w
}

func TestMarkovDeterministicSizesAndCopies(t *testing.T) {
	gen := func() []string {
		m := NewMarkov(words())
		r := rand.New(rand.NewPCG(7, 8))
		docs := make([]string, 1000)
		for i := range docs {
			docs[i] = m.Doc(r)
		}
		return docs
	}
	a, b := gen(), gen()
	copies := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("doc %d differs between two runs from the same seed", i)
		}
		if n := len(a[i]); n < 1000 || n > 1200 { // an edited copy may be a little shorter
			t.Errorf("doc %d: %d bytes, want about 1 KB", i, n)
		}
		// An edited copy replaces one word in 100: most of its word set is
		// an earlier document's.
		if i > 100 && nearCopy(a[i], a[:i]) {
			copies++
		}
	}
	if copies < 50 || copies > 150 {
		t.Errorf("%d of 899 documents are near-copies of an earlier one, want about one in ten", copies)
	}
}

// nearCopy reports whether doc shares at least 95% of its words, in place,
// with one of earlier.
func nearCopy(doc string, earlier []string) bool {
	w := strings.Fields(doc)
	for _, e := range earlier {
		v := strings.Fields(e)
		if len(v) != len(w) {
			continue
		}
		same := 0
		for i := range w {
			if w[i] == v[i] {
				same++
			}
		}
		if same*100 >= 95*len(w) {
			return true
		}
	}
	return false
}

func TestWindows(t *testing.T) {
	ws := words()
	src := Windows(ws)
	r := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		d := src(r)
		if n := len(d); n < 1024 || n > 1200 {
			t.Fatalf("%d bytes, want about 1 KB", n)
		}
		// Most words follow the source's order, which alternates words with
		// and without a leading "w".
		f := strings.Fields(d)
		inOrder := 0
		for i := 1; i < len(f); i++ {
			if strings.HasPrefix(f[i-1], "w") != strings.HasPrefix(f[i], "w") {
				inOrder++
			}
		}
		if inOrder*10 < 8*(len(f)-1) {
			t.Errorf("only %d of %d word pairs come from the source", inOrder, len(f)-1)
		}
	}
}
