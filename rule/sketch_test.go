package rule

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/neardup/neardup/measure"
)

func TestShinglerTokens(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"Hello, World! 42nd", []string{"hello", "world", "42nd"}},
		{"中文abc字", []string{"中", "文", "abc", "字"}},
		{"ÉCOLE déjà-vu", []string{"école", "déjà", "vu"}},
		{"a_b c.d", []string{"a", "b", "c", "d"}},
		{"x\xffy", []string{"x", "y"}}, // invalid UTF-8 separates
		{"  ...  ", nil},
		{"٣٤ ab", []string{"٣٤", "ab"}}, // Arabic-Indic digits are Nd
	}
	for _, tt := range tests {
		var s shingler
		s.tokens(tt.text)
		var want []uint64
		for _, w := range tt.want {
			want = append(want, hashToken(w))
		}
		if !slices.Equal(s.toks, want) {
			t.Errorf("tokens(%q): got %d tokens, want %q", tt.text, len(s.toks), tt.want)
		}
	}
}

func hashToken(w string) uint64 {
	var s shingler
	s.tokens(w)
	if len(s.toks) != 1 {
		panic(w)
	}
	return s.toks[0]
}

func TestShingles(t *testing.T) {
	s := shingler{w: 5}
	h, e1 := s.shingle("a b c d e f g")
	if len(h) != 3 {
		t.Errorf("7 tokens give %d 5-shingles, want 3", len(h))
	}
	h, _ = s.shingle("a b c")
	if len(h) != 1 {
		t.Errorf("3 tokens give %d shingles, want 1 (all tokens)", len(h))
	}
	h, _ = s.shingle("!!")
	if len(h) != 0 {
		t.Errorf("no tokens give %d shingles, want 0", len(h))
	}
	if _, e2 := s.shingle("A, B; C D E F G!"); e1 != e2 {
		t.Error("same words, different case and punctuation: exact hashes differ")
	}
	if _, e3 := s.shingle("a b c d e f"); e1 == e3 {
		t.Error("different word sequences share an exact hash")
	}
}

func TestSortHashes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tmp []uint32
	for _, n := range []int{0, 1, 5, 127, 128, 1000, 5000} {
		for _, spread := range []uint32{math.MaxUint32, 1000, 1} {
			a := make([]uint32, n)
			for i := range a {
				a[i] = rng.Uint32() % spread
			}
			want := slices.Clone(a)
			slices.Sort(want)
			tmp = sortHashes(a, tmp)
			if !slices.Equal(a, want) {
				t.Fatalf("n %d spread %d: not sorted", n, spread)
			}
		}
	}
}

func randomSet(rng *rand.Rand, n int) []uint32 {
	a := make([]uint32, n)
	for i := range a {
		a[i] = rng.Uint32()
	}
	return a
}

// overlap returns two sets of n elements sharing about j·2n/(1+j) of them
// (Jaccard about j).
func overlap(rng *rand.Rand, n int, j float64) (a, b []uint32) {
	common := int(math.Round(2 * float64(n) * j / (1 + j)))
	c := randomSet(rng, common)
	a = append(slices.Clone(c), randomSet(rng, n-common)...)
	b = append(slices.Clone(c), randomSet(rng, n-common)...)
	return a, b
}

func exactJaccard(a, b []uint32) float64 {
	x := make([]uint64, 0, len(a))
	y := make([]uint64, 0, len(b))
	for _, v := range a {
		x = append(x, uint64(v))
	}
	for _, v := range b {
		y = append(y, uint64(v))
	}
	return measure.Jaccard(measure.NewSet(x), measure.NewSet(y))
}

// Exact sketches agree with measure.Jaccard, and similarAtLeast with
// jaccard >= t.
func TestJaccardExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		n := 1 + rng.IntN(600)
		a, b := overlap(rng, n, rng.Float64())
		b = b[:1+rng.IntN(len(b))] // sizes differ too
		want := exactJaccard(a, b)
		ka, _ := newSketch(nil, slices.Clone(a), nil, 0)
		kb, _ := newSketch(nil, slices.Clone(b), nil, 0)
		if got := jaccard(ka, kb); math.Abs(got-want) > 1e-12 {
			t.Fatalf("jaccard %v, want %v", got, want)
		}
		for _, th := range []float64{0.3, 0.5, 0.8, 0.95, 1} {
			if ok := similarAtLeast(ka, kb, th); ok != (want >= th) {
				t.Fatalf("similarAtLeast(t=%v) = %v; Jaccard %v", th, ok, want)
			}
		}
	}
	var empty Sketch
	if jaccard(empty, empty) != 1 {
		t.Error("two empty sets: want 1")
	}
	one, _ := newSketch(nil, []uint32{1}, nil, 0)
	if jaccard(empty, one) != 0 {
		t.Error("empty against non-empty: want 0")
	}
}

// Sampled sketches (Broder's MOD_m) estimate Jaccard within a few hundredths
// on long documents, and short documents stay exact.
func TestJaccardSampled(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, j := range []float64{0.5, 0.8, 0.9} {
		a, b := overlap(rng, 20000, j)
		want := exactJaccard(a, b)
		for _, shift := range []uint8{1, 3, 5} {
			ka, _ := newSketch(nil, slices.Clone(a), nil, shift)
			kb, _ := newSketch(nil, slices.Clone(b), nil, shift)
			if ka.shift != shift || kb.shift != shift {
				t.Fatalf("shifts %d, %d, want %d", ka.shift, kb.shift, shift)
			}
			if got := jaccard(ka, kb); math.Abs(got-want) > 0.03 {
				t.Errorf("J %.3f at m=%d: estimate %.3f", want, 1<<shift, got)
			}
		}
	}
	small, _ := newSketch(nil, randomSet(rng, 100), nil, 10)
	if small.shift != 0 || len(small.h) != 100 {
		t.Errorf("a 100-hash set was thinned: shift %d, %d left", small.shift, len(small.h))
	}
}

// TestShingleRarityClass checks that every shingle hash carries, in its top
// three bits, the number of common words among its tokens, counted here by
// hand from the words, so that a sorted set lists shingles of content words
// first (the prefix filter's order).
func TestShingleRarityClass(t *testing.T) {
	common := map[string]bool{}
	for _, w := range strings.Fields(commonWords) {
		common[w] = true
	}
	texts := []string{
		"The suspension bridge over the river was closed for an inspection of its cables",
		"one of the most important things is that you do not give up on it",
		"这是一个关于人工智能的故事，他们在实验室里工作了很多年",
		"short text",
		"Don't stop: it's the end of the road and I can't see why we should",
	}
	for _, text := range texts {
		var words []string
		for _, r := range []rune(strings.ToLower(text)) {
			switch {
			case unicode.Is(unicode.Han, r):
				words = append(words, string(r), "")
			case unicode.IsLetter(r) || unicode.IsDigit(r):
				if len(words) == 0 || words[len(words)-1] == "" {
					words = append(words, "")
				}
				words[len(words)-1] += string(r)
			default:
				words = append(words, "")
			}
		}
		words = slices.DeleteFunc(words, func(w string) bool { return w == "" })
		sh := shingler{w: 5}
		hashes, _ := sh.shingle(text)
		w := min(5, len(words))
		if len(hashes) != len(words)-w+1 {
			t.Fatalf("%q: %d shingles, want %d", text, len(hashes), len(words)-w+1)
		}
		classes := map[uint32]int{}
		for i, h := range hashes {
			n := 0
			for _, word := range words[i : i+w] {
				if common[word] {
					n++
				}
			}
			classes[h>>29]++
			if got := int(h >> 29); got != n {
				t.Errorf("%q: shingle %q has class %d, want %d common words", text, words[i:i+w], got, n)
			}
		}
		t.Logf("%q: shingles per class %v", text, classes)
	}
}
