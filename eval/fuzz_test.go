package eval

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTokens: no panic on any input, tokens are non-empty valid UTF-8 without
// separators, and tokenizing the tokens joined by spaces gives them back.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"", "Hello, World!", "中华人民共和国", "a\xffb", "ΣΊΣΥΦΟΣ x²", "(╯‵□′)╯︵┻━┻", "第1条 GPL"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokens(nil, s)
		for _, tok := range toks {
			if tok == "" || !utf8.ValidString(tok) || strings.ContainsAny(tok, " \t\n") {
				t.Fatalf("bad token %q from %q", tok, s)
			}
		}
		again := Tokens(nil, strings.Join(toks, " "))
		if strings.Join(again, " ") != strings.Join(toks, " ") {
			t.Fatalf("not idempotent: %q then %q", toks, again)
		}
		if len(toks) > 0 && len(Shingles(toks)) == 0 {
			t.Fatalf("tokens %q give no shingle", toks)
		}
	})
}

// FuzzReadJSONL: malformed input is an error, never a panic.
func FuzzReadJSONL(f *testing.F) {
	for _, s := range []string{"", "{\"id\":\"a\",\"text\":\"x\"}\n", "{\"text\":5}", "not json", "{\"id\":1e400,\"text\":\"\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		docs, err := ReadJSONL(strings.NewReader(s))
		if err != nil && docs != nil {
			t.Fatalf("docs returned with error %v", err)
		}
	})
}
