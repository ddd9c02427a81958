package features

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/simhash"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json from the current fingerprints")

// myProfiles are the profiles defined outside the zh files.
var myProfiles = []string{"default", "en-words", "shingles", "ngrams", "leonsim"}

// goldenTexts are fixed inputs whose fingerprints testdata/golden.json pins
// for every profile and width, so that a release cannot change them silently.
// (The default profile's Han route belongs to zh-words, pinned in the zh
// tests; these texts are not Han-heavy.)
var goldenTexts = []string{
	"",
	"The quick brown fox jumps over the lazy dog.",
	"The quick brown fox jumped over the lazy dogs!",
	"<p>Hello &amp; welcome to <b>neardup</b>, a SimHash near-duplicate detector.</p>",
	"ＦＵＬＬ－ＷＩＤＴＨ Ｔｅｘｔ and naïve café résumé ½",
	"Call me Ishmael. Some years ago—never mind how long precisely—having little or no money in my purse, and nothing particular to interest me on shore, I thought I would sail about a little and see the watery part of the world.",
	"invalid \xff\xfe utf-8 \xc0 bytes",
	"Привет, мир! Это тест. Ελληνικά κείμενα.",
}

func TestGolden(t *testing.T) {
	got := map[string]map[string][]string{} // profile -> bits -> fingerprints
	for _, name := range myProfiles {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		got[name] = map[string][]string{}
		for _, bits := range []int{32, 64, 128} {
			q, err := p.WithBits(bits)
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range goldenTexts {
				r := q.Fingerprint(text)
				s := r.Fingerprint.String()
				switch bits {
				case 128:
					s = r.Fingerprint128.String()
				case 32:
					s = simhash.Fingerprint32(r.Fingerprint).String()
				}
				key := map[int]string{32: "32", 64: "64", 128: "128"}[bits]
				got[name][key] = append(got[name][key], s)
			}
		}
	}
	const file = "testdata/golden.json"
	if *update {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]map[string][]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for name, byBits := range got {
		for bits, fps := range byBits {
			w := want[name][bits]
			for i := range fps {
				if i >= len(w) || fps[i] != w[i] {
					t.Errorf("%s/%s %q: fingerprint %s, want %v (run go test -update only if the change is intended)", name, bits, goldenTexts[i], fps[i], w)
				}
			}
		}
	}
}

func TestLookup(t *testing.T) {
	for _, name := range myProfiles {
		p, err := Lookup(name)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", name, err)
		}
		if p.Name() != name || p.Doc() == "" || p.Bits() != 64 {
			t.Errorf("Lookup(%q) = name %q, doc %q, bits %d", name, p.Name(), p.Doc(), p.Bits())
		}
	}
	_, err := Lookup("nope")
	if !errors.Is(err, ErrUnknownProfile) {
		t.Fatalf("Lookup(nope) error %v, want ErrUnknownProfile", err)
	}
	if !strings.Contains(err.Error(), "en-words") {
		t.Errorf("error %q does not list the valid names", err)
	}
	names := Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names() not sorted: %q", names)
	}
	for _, n := range myProfiles {
		if !slices.Contains(names, n) {
			t.Errorf("Names() = %q, missing %q", names, n)
		}
	}
}

func TestWithBits(t *testing.T) {
	p, _ := Lookup("en-words")
	for _, bad := range []int{0, 16, 65} {
		if _, err := p.WithBits(bad); !errors.Is(err, ErrBits) {
			t.Errorf("WithBits(%d) error %v, want ErrBits", bad, err)
		}
	}
	const text = "some words for a fingerprint of several widths"
	r64 := p.Fingerprint(text)
	p32, _ := p.WithBits(32)
	r32 := p32.Fingerprint(text)
	if r32.Bits != 32 || uint64(r32.Fingerprint) != uint64(r64.Fingerprint)&0xffffffff {
		t.Errorf("32-bit %v, want the low half of %v (same feature hashes, low 32 bits)", r32.Fingerprint, r64.Fingerprint)
	}
	p128, _ := p.WithBits(128)
	r128 := p128.Fingerprint(text)
	if r128.Bits != 128 || r128.Fingerprint128 == (simhash.Fingerprint128{}) || uint64(r128.Fingerprint) != r128.Fingerprint128.Lo {
		t.Errorf("128-bit result %+v", r128)
	}
	if p.Bits() != 64 {
		t.Errorf("WithBits changed the original profile")
	}
	d, _ := Lookup("default")
	d128, _ := d.WithBits(128)
	if d128.Fingerprint(text).Fingerprint128 != r128.Fingerprint128 {
		t.Errorf("default/128 differs from en-words/128 on English text")
	}
}

func TestEmpty(t *testing.T) {
	for _, name := range []string{"default", "en-words", "shingles", "ngrams"} {
		p, _ := Lookup(name)
		for _, text := range []string{"", "   \t\n", "<p></p>", "\x00\x01"} {
			r := p.Fingerprint(text)
			if !r.Empty || r.Fingerprint != 0 || r.Features != 0 {
				t.Errorf("%s %q: %+v, want Empty with fingerprint 0", name, text, r)
			}
		}
	}
	// Only stopwords: no features either.
	p, _ := Lookup("en-words")
	if r := p.Fingerprint("the and of"); !r.Empty {
		t.Errorf("en-words of stopwords only: %+v, want Empty", r)
	}
}

// TestFeaturesMatchFingerprint checks that the explaining path gives the
// same features as the fast path: building from Features gives Fingerprint.
func TestFeaturesMatchFingerprint(t *testing.T) {
	texts := append([]string{"a a a a a a a a b b c", strings.Repeat("word ", 20) + "other"}, goldenTexts...)
	for _, name := range []string{"default", "en-words", "shingles", "ngrams"} {
		p, _ := Lookup(name)
		for _, text := range texts {
			feats := p.Features(text)
			var b simhash.Builder
			for _, f := range slices.Backward(feats) {
				b.Add(f.Hash, f.Weight)
			}
			r := p.Fingerprint(text)
			if b.Sum64() != r.Fingerprint || len(feats) != r.Features {
				t.Errorf("%s %q: Features give %v (%d), Fingerprint %v (%d)", name, text, b.Sum64(), len(feats), r.Fingerprint, r.Features)
			}
			for i := 1; i < len(feats); i++ {
				if feats[i].Weight > feats[i-1].Weight {
					t.Errorf("%s: Features not sorted by weight", name)
					break
				}
			}
			for _, f := range feats {
				if name != "shingles" && f.Hash != simhash.HashString64(f.Text) {
					t.Errorf("%s: feature %q hash %x, want HashString64 of its text", name, f.Text, f.Hash)
				}
			}
		}
	}
}

func TestWeights(t *testing.T) {
	weightOf := func(feats []Feature, text string) float64 {
		for _, f := range feats {
			if f.Text == text {
				return f.Weight
			}
		}
		return 0
	}
	text := "apple apple apple apple apple apple apple pear pear the plum"
	tests := []struct {
		name string
		cfg  Config
		want map[string]float64
	}{
		{"raw", Config{}, map[string]float64{"apple": 7, "pear": 2, "the": 1, "plum": 1}},
		{"cap 5 (seed 000)", Config{MaxRepeat: 5}, map[string]float64{"apple": 5, "pear": 2}},
		{"log", Config{TF: TFLog}, map[string]float64{"apple": 1 + math.Log(7), "pear": 1 + math.Log(2), "plum": 1}},
		{"binary", Config{TF: TFBinary}, map[string]float64{"apple": 1, "pear": 1}},
		{"stopwords", Config{Stopwords: EnglishStopwords}, map[string]float64{"apple": 7, "the": 0}},
		{"min runes", Config{MinRunes: 5}, map[string]float64{"apple": 7, "pear": 0, "plum": 0}},
		{"idf", Config{IDF: NewIDF(map[string]float64{"apple": 0.5, "pear": 2})},
			map[string]float64{"apple": 3.5, "pear": 4, "plum": 1.25, "the": 1.25}},
		{"top 2", Config{TopN: 2}, map[string]float64{"apple": 7, "pear": 2, "the": 0, "plum": 0}},
		{"pos", Config{
			Tokenizer: TokenizerFunc(func(dst []Token, text string) []Token {
				for _, w := range strings.Fields(text) {
					pos := "n"
					if w == "the" {
						pos = "w"
					} else if w == "pear" {
						pos = "v"
					}
					dst = append(dst, Token{Text: w, POS: pos})
				}
				return dst
			}),
			POSWeight: func(pos string) float64 { return map[string]float64{"n": 2, "v": 0.5}[pos] },
		}, map[string]float64{"apple": 14, "pear": 1, "the": 0, "plum": 2}},
	}
	for _, tt := range tests {
		p, err := New("test", "", tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		feats := p.Features(text)
		for term, want := range tt.want {
			if got := weightOf(feats, term); math.Abs(got-want) > 1e-12 {
				t.Errorf("%s: weight of %q = %v, want %v", tt.name, term, got, want)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []Config{{Bits: 16}, {MaxRepeat: -1}, {TF: 7}} {
		if _, err := New("x", "", cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestShinglesProfile(t *testing.T) {
	p, _ := Lookup("shingles")
	// Word order matters for shingles, not for en-words.
	a, b := "one two three four five six", "six five four three two one"
	if p.Fingerprint(a).Fingerprint == p.Fingerprint(b).Fingerprint {
		t.Errorf("shingles ignore word order")
	}
	en, _ := Lookup("en-words")
	if en.Fingerprint(a).Fingerprint != en.Fingerprint(b).Fingerprint {
		t.Errorf("en-words depends on word order")
	}
	// Fewer words than the width: one shingle of all.
	if r := p.Fingerprint("two words"); r.Features != 1 {
		t.Errorf("shingles of two words: %d features, want 1", r.Features)
	}
	// Shingles with IDF: the mean IDF of the words.
	q := p.WithIDF(NewIDF(map[string]float64{"one": 3, "two": 1, "three": 2}))
	if f := q.Features("one two three"); len(f) != 1 || f[0].Weight != 2 || f[0].Text != "one two three" {
		t.Errorf("shingle with IDF: %+v, want one feature of weight 2", f)
	}
}

func TestDefaultRoutesHan(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the run without it asserts this")
	}
	tests := []struct {
		text string
		han  bool
	}{
		{"plain English", false},
		{"English with “quotes” — and dashes", false},
		{"中华人民共和国刑法", true},
		{"中文文本里 with English", true},
		{"中文 with some English words mixed in", false},
		{"A long English sentence with a single Chinese word 中 inside it", false},
		{"日本語のテキスト", true},
	}
	for _, tt := range tests {
		if got := hanHeavy(tt.text); got != tt.han {
			t.Errorf("hanHeavy(%q) = %v, want %v", tt.text, got, tt.han)
		}
	}
	d, _ := Lookup("default")
	en, _ := Lookup("en-words")
	const english = "An English text goes through en-words."
	if d.Fingerprint(english) != en.Fingerprint(english) {
		t.Errorf("default differs from en-words on English")
	}
	zh := zhProfile()
	if zh == nil {
		t.Skip("no zh profile registered")
	}
	const chinese = "中华人民共和国刑法第一条为了惩罚犯罪保护人民"
	if d.Fingerprint(chinese) != zh.Fingerprint(chinese) {
		t.Errorf("default differs from %s on Chinese", zh.Name())
	}
}

func TestConcurrent(t *testing.T) {
	p, _ := Lookup("default")
	texts := goldenTexts
	want := make([]Result, len(texts))
	for i, s := range texts {
		want[i] = p.Fingerprint(s)
	}
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- true }()
			for k := 0; k < 50; k++ {
				for i, s := range texts {
					if got := p.Fingerprint(s); got != want[i] {
						t.Errorf("concurrent Fingerprint(%q) = %+v, want %+v", s, got, want[i])
						return
					}
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}

func TestIDFRoundTrip(t *testing.T) {
	tab := NewIDF(map[string]float64{"a": 1.5, "tab\there": 2, "back\\slash": 0.25, "new\nline": 3, "中文": 7.125})
	var buf bytes.Buffer
	n, err := tab.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo: %d, %v (buffer %d)", n, err, buf.Len())
	}
	if !strings.HasPrefix(buf.String(), "neardup-idf 1 docs=0\n") {
		t.Errorf("header %q", strings.SplitN(buf.String(), "\n", 2)[0])
	}
	got, err := ReadIDF(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != tab.Len() || got.Average() != tab.Average() {
		t.Errorf("round trip: %d terms avg %v, want %d avg %v", got.Len(), got.Average(), tab.Len(), tab.Average())
	}
	for _, term := range []string{"a", "tab\there", "back\\slash", "new\nline", "中文"} {
		if got.Weight(term) != tab.Weight(term) {
			t.Errorf("Weight(%q) = %v, want %v", term, got.Weight(term), tab.Weight(term))
		}
	}
	if w := got.Weight("unknown"); w != tab.Average() {
		t.Errorf("unknown term weight %v, want the average %v (seed 004)", w, tab.Average())
	}
	var nilTab *IDF
	if nilTab.Weight("x") != 1 {
		t.Errorf("nil table weight != 1")
	}
}

func TestReadIDFErrors(t *testing.T) {
	for _, in := range []string{"", "term\t1\n", "neardup-idf 2\n", "neardup-idf 1\nno tab\n", "neardup-idf 1\nx\tnan\n", "neardup-idf 1 docs=x\n"} {
		if _, err := ReadIDF(strings.NewReader(in)); !errors.Is(err, ErrIDFFormat) {
			t.Errorf("ReadIDF(%q) error %v, want ErrIDFFormat", in, err)
		}
	}
}

func TestIDFBuilder(t *testing.T) {
	p, _ := Lookup("en-words")
	b := NewIDFBuilder(p)
	for _, doc := range []string{"apple pear", "apple plum plum", "apple the"} {
		b.Add(doc)
	}
	if b.Docs() != 3 {
		t.Fatalf("Docs() = %d", b.Docs())
	}
	tab := b.IDF()
	// idf = ln((1+N)/(1+df)) + 1
	for term, df := range map[string]float64{"apple": 3, "pear": 1, "plum": 1} {
		want := math.Log(4/(1+df)) + 1
		if got, ok := tab.Lookup(term); !ok || math.Abs(got-want) > 1e-12 {
			t.Errorf("idf(%q) = %v, want %v", term, got, want)
		}
	}
	if _, ok := tab.Lookup("the"); ok {
		t.Errorf("stopword in the table")
	}
	if tab.Docs() != 3 {
		t.Errorf("table Docs() = %d", tab.Docs())
	}
	c := NewIDFBuilder(p)
	c.Add("pear")
	b.Merge(c)
	if got, _ := b.IDF().Lookup("pear"); math.Abs(got-(math.Log(5.0/3)+1)) > 1e-12 {
		t.Errorf("merged idf(pear) = %v", got)
	}
	// A profile with IDF weighs rare words up.
	q := p.WithIDF(tab)
	feats := q.Features("apple pear")
	if len(feats) != 2 || feats[0].Text != "pear" {
		t.Errorf("TF-IDF features %+v, want pear first", feats)
	}
}

func TestDefaultWithIDF(t *testing.T) {
	d, _ := Lookup("default")
	tab := NewIDF(map[string]float64{"apple": 4})
	q := d.WithIDF(tab)
	feats := q.Features("apple pear")
	if len(feats) != 2 || feats[0].Text != "apple" || feats[0].Weight != 4 || feats[1].Weight != 4 {
		t.Errorf("default.WithIDF features %+v, want apple and pear at 4 (pear unknown: the average)", feats)
	}
	if q.Fingerprint("apple pear") != q.Fingerprint("apple pear") {
		t.Errorf("not deterministic")
	}
}

func TestLargeText(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	// 4 MiB in one document, with markup, entities, invalid bytes and Han
	// text: every profile handles it in linear time and memory.
	unit := "<p>Word &amp; more words, naïve \xff café 中文字符 don’t</p>\n"
	big := strings.Repeat(unit, (4<<20)/len(unit))
	for _, name := range myProfiles {
		p, _ := Lookup(name)
		if r := p.Fingerprint(big); r.Empty {
			t.Errorf("%s: large text gave no features", name)
		}
	}
}

func TestZeroProfile(t *testing.T) {
	var zero Profile
	p, _ := New("", "", Config{})
	const text = "Zero value profiles work like New with the zero Config"
	if zero.Fingerprint(text) != p.Fingerprint(text) || zero.Bits() != 64 {
		t.Errorf("zero Profile %+v, New(Config{}) %+v", zero.Fingerprint(text), p.Fingerprint(text))
	}
}
