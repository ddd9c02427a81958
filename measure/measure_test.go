package measure

import (
	"math"
	"strings"
	"testing"
)

func TestJaccard(t *testing.T) {
	tests := []struct {
		a, b []uint64
		want float64
	}{
		{nil, nil, 1},
		{[]uint64{1}, nil, 0},
		{nil, []uint64{1}, 0},
		{[]uint64{1, 2, 3}, []uint64{3, 2, 1}, 1},
		{[]uint64{1, 2, 3}, []uint64{2, 3, 4}, 0.5},
		{[]uint64{1, 1, 2, 2}, []uint64{2}, 0.5}, // repeats do not count
		{[]uint64{1, 2}, []uint64{3, 4}, 0},
		{[]uint64{5, 1, 9, 7}, []uint64{9, 8, 1}, 2.0 / 5},
	}
	for _, tt := range tests {
		a, b := NewSet(append([]uint64(nil), tt.a...)), NewSet(append([]uint64(nil), tt.b...))
		if got := Jaccard(a, b); got != tt.want {
			t.Errorf("Jaccard(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got, rev := Jaccard(a, b), Jaccard(b, a); got != rev {
			t.Errorf("Jaccard not symmetric for %v, %v: %v vs %v", tt.a, tt.b, got, rev)
		}
	}
}

func TestNewSet(t *testing.T) {
	got := NewSet([]uint64{3, 1, 3, 2, 1, math.MaxUint64, 0})
	want := Set{0, 1, 2, 3, math.MaxUint64}
	if len(got) != len(want) {
		t.Fatalf("NewSet = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("NewSet = %v, want %v", got, want)
		}
	}
	if !got.Contains(2) || got.Contains(4) {
		t.Errorf("Contains wrong on %v", got)
	}
}

func TestNewVectorMerges(t *testing.T) {
	got := NewVector([]Term{{3, 1}, {1, 2}, {3, 0.5}, {2, 1}, {1, 1}})
	want := Vector{{1, 3}, {2, 1}, {3, 1.5}}
	if len(got) != len(want) {
		t.Fatalf("NewVector = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("NewVector = %v, want %v", got, want)
		}
	}
}

// vec builds a vector from dense weights, key = position.
func vec(w ...float64) Vector {
	v := make([]Term, 0, len(w))
	for i, x := range w {
		if x != 0 {
			v = append(v, Term{Key: uint64(i), Weight: x})
		}
	}
	return NewVector(v)
}

func TestCosine(t *testing.T) {
	tests := []struct {
		name string
		a, b Vector
		want float64
	}{
		// Seed 001: 我/爱/北京/天安门 -> [1,1,1,1]; 我们/都爱/北京/天安门 -> [1,0,1,2]
		// (the article's pseudo-vectors): 4 / (2 * sqrt(6)).
		{"seed001", vec(1, 1, 1, 1), vec(1, 0, 1, 2), 4 / (2 * math.Sqrt(6))},
		{"same", vec(1, 2, 3), vec(1, 2, 3), 1},
		{"scaled", vec(1, 2, 3), vec(2, 4, 6), 1},
		{"orthogonal", vec(1, 0), vec(0, 1), 0},
		{"both zero", nil, nil, 1},
		{"one zero", vec(1), nil, 0},
		{"zero weights", vec(0, 0), vec(1), 0},
		{"45 degrees", vec(1, 1), vec(1), 1 / math.Sqrt2},
	}
	for _, tt := range tests {
		got := Cosine(tt.a, tt.b)
		if math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: Cosine = %v, want %v", tt.name, got, tt.want)
		}
		if rev := Cosine(tt.b, tt.a); rev != got {
			t.Errorf("%s: Cosine not symmetric: %v vs %v", tt.name, got, rev)
		}
	}
}

// TestCosineTFIDFSeed001 follows seed 001's TFIDFMeasure: tf = freq/maxfreq in
// the document, idf = ln(N/df), cosine of the two weight vectors, on the
// article's three example sentences.
func TestCosineTFIDFSeed001(t *testing.T) {
	docs := []string{"the cat sat on the mat", "the cat sat on a mat", "we all scream for ice cream"}
	df := map[string]int{}
	tfs := make([]map[string]int, len(docs))
	for i, d := range docs {
		tfs[i] = map[string]int{}
		for _, w := range strings.Fields(d) {
			if tfs[i][w] == 0 {
				df[w]++
			}
			tfs[i][w]++
		}
	}
	keys := map[string]uint64{}
	vecs := make([]Vector, len(docs))
	for i, tf := range tfs {
		maxf := 0
		for _, n := range tf {
			maxf = max(maxf, n)
		}
		var v []Term
		for w, n := range tf {
			if _, ok := keys[w]; !ok {
				keys[w] = uint64(len(keys))
			}
			idf := math.Log(float64(len(docs)) / float64(df[w]))
			v = append(v, Term{keys[w], float64(n) / float64(maxf) * idf})
		}
		vecs[i] = NewVector(v)
	}
	// By hand: with L = ln 1.5, doc 1 is (the L, cat/sat/on/mat L/2) and doc 2
	// is (the/cat/sat/on/mat L, a ln 3): 3L^2 / (L sqrt 2 * sqrt(5L^2 + ln^2 3)).
	L := math.Log(1.5)
	want := 3 * L / (math.Sqrt2 * math.Sqrt(5*L*L+math.Log(3)*math.Log(3)))
	if got := Cosine(vecs[0], vecs[1]); math.Abs(got-want) > 1e-12 || math.Abs(got-0.6038418) > 1e-6 {
		t.Errorf("cosine(doc1, doc2) = %v, want %v", got, want)
	}
	if got := Cosine(vecs[0], vecs[2]); got != 0 {
		t.Errorf("cosine(doc1, doc3) = %v, want 0 (no shared words)", got)
	}
}

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"saturday", "sunday", 3},
		{"abc", "abc", 0},
		{"abc", "acb", 2},
		{"café", "cafe", 1}, // runes, not bytes
		{"北京天安门", "北京的天安门", 1}, // Han runes
		{"我爱北京", "我们都爱北京", 2},
		{"a\xffb", "a\xfeb", 0},   // each invalid byte is U+FFFD
		{"a\xffb", "a\uFFFDb", 0}, // ... the same as a real U+FFFD
		{"a\xffb", "ab", 1},
		{"xabcx", "yabcy", 2},
	}
	for _, tt := range tests {
		if got := Levenshtein(tt.a, tt.b); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Levenshtein(tt.b, tt.a); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestLevenshteinSimilarity(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"abc", "abc", 1},
		{"abc", "xyz", 0},
		{"", "ab", 0},
		{"kitten", "sitting", 1 - 3.0/7},
		{"café", "cafe", 0.75},
	}
	for _, tt := range tests {
		if got := LevenshteinSimilarity(tt.a, tt.b); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("LevenshteinSimilarity(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// naiveLevenshtein is the textbook full-matrix Wagner-Fischer, the reference
// for the one-row version.
func naiveLevenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
		}
	}
	return d[len(ra)][len(rb)]
}

func FuzzLevenshtein(f *testing.F) {
	for _, s := range [][2]string{{"kitten", "sitting"}, {"", "x"}, {"北京", "北京人"}, {"a\xff", "\xffa"}, {"abab", "baba"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 300 || len(b) > 300 {
			return // quadratic: keep the fuzzer fast
		}
		d := Levenshtein(a, b)
		la, lb := len([]rune(a)), len([]rune(b))
		if d != Levenshtein(b, a) {
			t.Fatalf("not symmetric: %q %q", a, b)
		}
		if d < max(la, lb)-min(la, lb) || d > max(la, lb) {
			t.Fatalf("d=%d out of bounds [%d, %d] for %q %q", d, max(la, lb)-min(la, lb), max(la, lb), a, b)
		}
		if (d == 0) != (string([]rune(a)) == string([]rune(b))) {
			t.Fatalf("d=%d but equality differs for %q %q", d, a, b)
		}
		if want := naiveLevenshtein(a, b); d != want {
			t.Fatalf("Levenshtein(%q, %q) = %d, naive %d", a, b, d, want)
		}
		if s := LevenshteinSimilarity(a, b); s < 0 || s > 1 {
			t.Fatalf("similarity %v out of [0,1]", s)
		}
	})
}

func BenchmarkLevenshtein(b *testing.B) {
	x := strings.Repeat("the quick brown fox jumps over the lazy dog ", 5)
	y := strings.Replace(x, "lazy", "sleepy", 2)
	b.ReportAllocs()
	for b.Loop() {
		Levenshtein(x, y)
	}
}

func BenchmarkJaccard(b *testing.B) {
	x, y := make([]uint64, 1000), make([]uint64, 1000)
	for i := range x {
		x[i], y[i] = uint64(i*2), uint64(i*3)
	}
	sx, sy := NewSet(x), NewSet(y)
	b.ReportAllocs()
	for b.Loop() {
		Jaccard(sx, sy)
	}
}
