package rule

import (
	"testing"
	"unicode/utf8"
)

// FuzzShingle: any bytes tokenise without panic, the exact hash depends only
// on the word sequence, and the shingle count follows the token count.
func FuzzShingle(f *testing.F) {
	for _, s := range []string{"", "a", "Hello, world", "中文字符", "\xff\xfe", "a b c d e f g", "ÉÉ é", "x\x00y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s := shingler{w: 5}
		h, exact := s.shingle(text)
		n := len(s.toks)
		want := 0
		if n > 0 {
			want = max(n-4, 1)
		}
		if len(h) != want {
			t.Fatalf("%d tokens gave %d shingles, want %d", n, len(h), want)
		}
		// Upper-casing ASCII letters and adding punctuation keeps the words.
		var b []byte
		for i := 0; i < len(text); {
			r, size := utf8.DecodeRuneInString(text[i:])
			if r < utf8.RuneSelf && r >= 'a' && r <= 'z' {
				b = append(b, byte(r-'a'+'A'))
			} else {
				b = append(b, text[i:i+size]...)
			}
			i += size
		}
		b = append(b, '!')
		s2 := shingler{w: 5}
		if _, e2 := s2.shingle(string(b)); n > 0 && e2 != exact {
			t.Fatalf("%q and %q: exact hashes differ", text, b)
		}
		sk, _ := newSketch(nil, h, nil, 0)
		if j := jaccard(sk, sk); j != 1 {
			t.Fatalf("self-similarity %v", j)
		}
	})
}
