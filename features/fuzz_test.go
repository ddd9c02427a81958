package features

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFingerprint runs the whole text pipeline of every profile on arbitrary
// bytes: no panic, deterministic, valid UTF-8 out of Clean, and the
// explaining path agrees with the fast path.
func FuzzFingerprint(f *testing.F) {
	for _, s := range goldenTexts {
		f.Add(s)
	}
	for _, s := range []string{"<script>", "<!--", "&#x110000;", "&#0;", "a<b c='>'>d", "ΑΣ'Σ", "\u0301\u0301", "\xed\xa0\x80", "中文 text 日本"} {
		f.Add(s)
	}
	var profiles []*Profile
	names := Names()
	if only := os.Getenv("FUZZ_PROFILES"); only != "" {
		names = strings.Split(only, ",")
	}
	for _, name := range names {
		p, err := Lookup(name)
		if err != nil {
			f.Fatal(err)
		}
		// Load lazily built dictionaries now: the fuzzing engine takes an
		// input that runs for seconds for a hang.
		p.Fingerprint("中文 text 日本")
		profiles = append(profiles, p)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if c := Clean(s, CleanOptions{}); !utf8.ValidString(c) {
			t.Fatalf("Clean(%q) = %q: invalid UTF-8", s, c)
		}
		for _, p := range profiles {
			r1 := p.Fingerprint(s)
			r2 := p.Fingerprint(s)
			if r1 != r2 {
				t.Fatalf("%s: Fingerprint(%q) not deterministic: %+v then %+v", p.Name(), s, r1, r2)
			}
			if r1.Empty && r1.Fingerprint != 0 && p.Name() != "leonsim" {
				t.Fatalf("%s: empty result with fingerprint %v", p.Name(), r1.Fingerprint)
			}
			if feats := p.Features(s); len(feats) != r1.Features && p.Name() != "leonsim" {
				t.Fatalf("%s: %d features, Fingerprint used %d", p.Name(), len(feats), r1.Features)
			}
			for _, tok := range p.Tokens(s) {
				if !utf8.ValidString(tok.Text) {
					t.Fatalf("%s: token %q is invalid UTF-8", p.Name(), tok.Text)
				}
			}
		}
	})
}
