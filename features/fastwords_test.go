package features

import (
	"slices"
	"testing"
)

// checkFastWords fails when fastWords accepts text but disagrees with the
// staged path.
func checkFastWords(t *testing.T, text string) bool {
	t.Helper()
	got, _, ok := fastWords(nil, nil, text)
	if !ok {
		return false
	}
	want := Words{}.Tokenize(nil, Clean(text, CleanOptions{}))
	if !slices.Equal(texts(got), texts(want)) {
		t.Errorf("fastWords(%q) = %q, want %q", text, texts(got), texts(want))
	}
	return true
}

func TestFastWords(t *testing.T) {
	tests := []struct {
		in     string
		fusion bool // fastWords takes it
	}{
		{"", true},
		{"Hello, World! It's DON’T “quoted” — dash\u00a0nbsp\ttab", true},
		{"rock'n'roll 'a' b' 'c x'", true},
		{"x’ y ‘z", true},
		{"a\x00b\x7fc", true},
		{"café", true},
		{"ĳ", false},
		{"a<b>", false},
		{"&amp;", false},
		{"R&D AT&T & Co, &c. a&", true},
		{"x &amp y &#; &#x41; z", false}, // &#x41; is a reference
		{"&notareference here", true},
		{"hell'—what me’— “ok’”", true},
		{"it'é", false},
		{"a'é", false},
		{"soft\u00adhyphen", false},
		{"\xff", false},
		{"中文", false},
	}
	for _, tt := range tests {
		if got := checkFastWords(t, tt.in); got != tt.fusion {
			t.Errorf("fastWords(%q) took it: %v, want %v", tt.in, got, tt.fusion)
		}
	}
}

func FuzzFastWords(f *testing.F) {
	for _, s := range []string{"Hello World", "It’s 'x' “y”", "a\u2014b", "x'’y", "R&D &amp; &#65;x &c", "no'— x’—y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkFastWords(t, s) })
}

func TestFastWordsLatin(t *testing.T) {
	for _, in := range []string{"Naïve CAFÉ Æsir ŒUVRE straße İstanbul ÿŸ", "Ĳssel", "ſ", "é\u0301", "Ángel's “Æ”", "x'é"} {
		checkFastWords(t, in)
	}
	for r := rune(0xC0); r < 0x180; r++ {
		checkFastWords(t, "a"+string(r)+"B "+string(r)+"x")
	}
}
