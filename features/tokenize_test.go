package features

import (
	"slices"
	"testing"
)

func texts(toks []Token) []string {
	out := make([]string, 0, len(toks))
	for _, t := range toks {
		out = append(out, t.Text)
	}
	return out
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"hello world", []string{"hello", "world"}},
		{"don't stop 'quoted' rock'n'roll", []string{"don't", "stop", "quoted", "rock'n'roll"}},
		{"snake_case x2 3.14 a-b", []string{"snake", "case", "x2", "3", "14", "a", "b"}},
		{"naïve café ½ ² e\u0301", []string{"naïve", "café", "½", "²", "e\u0301"}},
		{"\u0301x", []string{"x"}},
		{"中文abc日本語 ひらがな", []string{"中", "文", "abc", "日", "本", "語", "ひ", "ら", "が", "な"}},
		{"привет мир", []string{"привет", "мир"}},
		{"trailing'", []string{"trailing"}},
		{"\uFFFDab", []string{"ab"}},
	}
	for _, tt := range tests {
		if got := texts(Words{}.Tokenize(nil, tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNGramsSeedExample(t *testing.T) {
	// Seeds 001 and 003: the 2-grams of "the cat sat on the mat" are, as a
	// set in order of first appearance, exactly these 15.
	want := []string{"th", "he", "e ", " c", "ca", "at", "t ", " s", "sa", " o", "on", "n ", " t", " m", "ma"}
	toks := NGrams{N: 2}.Tokenize(nil, Clean("The cat sat on the mat", CleanOptions{}))
	var distinct []string
	seen := map[string]bool{}
	for _, s := range texts(toks) {
		if !seen[s] {
			seen[s] = true
			distinct = append(distinct, s)
		}
	}
	if !slices.Equal(distinct, want) {
		t.Errorf("distinct 2-grams = %q, want %q", distinct, want)
	}
	if len(toks) != len("the cat sat on the mat")-1 {
		t.Errorf("%d 2-grams, want %d", len(toks), len("the cat sat on the mat")-1)
	}
}

func TestNGrams(t *testing.T) {
	tests := []struct {
		n    int
		in   string
		want []string
	}{
		{2, "", nil},
		{2, "a", []string{"a"}},
		{3, "abcd", []string{"abc", "bcd"}},
		{0, "abcde", []string{"abcd", "bcde"}},
		{2, "中文字", []string{"中文", "文字"}},
		{20, "short", []string{"short"}},
		{17, "abcdefghijklmnopqr", []string{"abcdefghijklmnopq", "bcdefghijklmnopqr"}},
	}
	for _, tt := range tests {
		if got := texts(NGrams{N: tt.n}.Tokenize(nil, tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("NGrams{%d}(%q) = %q, want %q", tt.n, tt.in, got, tt.want)
		}
	}
}

func TestShingleHashes(t *testing.T) {
	toks := Words{}.Tokenize(nil, "a b c d")
	got := ShingleHashes(nil, toks, 3)
	if len(got) != 2 {
		t.Fatalf("%d shingles of 4 tokens at w=3, want 2", len(got))
	}
	if got[0] == got[1] {
		t.Errorf("distinct shingles share a hash")
	}
	// One shingle of all tokens when there are fewer than w.
	if got := ShingleHashes(nil, toks[:2], 3); len(got) != 1 {
		t.Errorf("%d shingles of 2 tokens at w=3, want 1", len(got))
	}
	if got := ShingleHashes(nil, nil, 3); len(got) != 0 {
		t.Errorf("shingles of no tokens: %d, want 0", len(got))
	}
	// Order matters.
	rev := ShingleHashes(nil, Words{}.Tokenize(nil, "c b a"), 3)
	if rev[0] == ShingleHashes(nil, toks[:3], 3)[0] {
		t.Errorf("shingle hash ignores order")
	}
	// The shingles profile's features are these hashes.
	p, err := Lookup("shingles")
	if err != nil {
		t.Fatal(err)
	}
	const text = "the quick brown fox jumps over the lazy dog"
	want := ShingleHashes(nil, p.Tokens(text), 3)
	var fromFeatures []uint64
	for _, f := range p.Features(text) {
		fromFeatures = append(fromFeatures, f.Hash)
	}
	slices.Sort(want)
	slices.Sort(fromFeatures)
	if !slices.Equal(want, slices.Compact(fromFeatures)) {
		t.Errorf("ShingleHashes differ from the shingles profile's feature hashes")
	}
}

// naiveNGrams is the obvious rune-slice form of NGrams.
func naiveNGrams(text string, n int) []string {
	r := []rune(text)
	if len(r) == 0 {
		return nil
	}
	if len(r) < n {
		return []string{text}
	}
	var out []string
	for i := 0; i+n <= len(r); i++ {
		out = append(out, string(r[i:i+n]))
	}
	return out
}

func FuzzNGrams(f *testing.F) {
	for _, s := range []string{"", "a", "abcdef", "中文字符串", "mixé d中", "ab\u0301cd"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		s = Clean(s, CleanOptions{}) // valid UTF-8, as the tokenizers get it
		n = 1 + (n%20+20)%20
		got := texts(NGrams{N: n}.Tokenize(nil, s))
		if want := naiveNGrams(s, n); !slices.Equal(got, want) {
			t.Errorf("NGrams{%d}(%q) = %q, want %q", n, s, got, want)
		}
	})
}
