package rule_test

import (
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
)

// TestShinglerMatchesGroundTruth pins the verification tokenizer to package
// eval's ground-truth tokenizer: both implement the corpora README's
// definition, eval with strings and this package with hashes streamed from the
// text. Every token hash here must be FNV-1a of eval's token, in order, on
// real English and Chinese text and on edge cases, or a verified "J >= 0.8"
// would drift from the ground truth's.
func TestShinglerMatchesGroundTruth(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: one goroutine, no concurrency to check; the run without it asserts this")
	}
	texts := []string{
		"", "   ", "Hello, World! 42x", "ÀÉÎ straße ΣΑΣ", "美国51区 雇员称\u3000内部有9架飞碟",
		"a\xffb\xc3", "x_y-z's", "١٢٣ ٤٥", "\u0301accent", "ǅungla İstanbul",
	}
	for _, name := range []string{"en_spdx", "zh_fortunes"} {
		docs, err := eval.ReadFile(testcorpora.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			texts = append(texts, d.Text)
		}
	}
	var ref []string
	for i, text := range texts {
		ref = eval.Tokens(ref[:0], text)
		toks := rule.TokenHashes(text)
		if len(toks) != len(ref) {
			t.Fatalf("text %d: %d tokens, eval has %d (%q...)", i, len(toks), len(ref), ref[:min(len(ref), 5)])
		}
		for j, tok := range ref {
			if want := simhash.FNV1aString64(tok); toks[j] != want {
				t.Fatalf("text %d token %d (%q): hash %#x, want FNV-1a %#x", i, j, tok, toks[j], want)
			}
		}
	}
}

// FuzzShinglerMatchesGroundTruth is TestShinglerMatchesGroundTruth on any
// bytes: invalid UTF-8, Han next to Latin, letters outside ASCII inside a
// word, digits, marks, separators of every kind.
//
//	go test ./rule -run '^$' -fuzz FuzzShinglerMatchesGroundTruth -fuzztime 60s
func FuzzShinglerMatchesGroundTruth(f *testing.F) {
	for _, s := range []string{
		"", "   ", "Hello, World! 42x", "ÀÉÎ straße ΣΑΣ", "美国51区 雇员称\u3000内部有9架飞碟",
		"a\xffb\xc3", "x_y-z's", "١٢٣ ٤٥", "\u0301accent", "ǅungla İstanbul", "ab中cd", "Z9\x00q\x7f",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ref := eval.Tokens(nil, text)
		toks := rule.TokenHashes(text)
		if len(toks) != len(ref) {
			t.Fatalf("%q: %d tokens, eval has %d (%q)", text, len(toks), len(ref), ref)
		}
		for j, tok := range ref {
			if want := simhash.FNV1aString64(tok); toks[j] != want {
				t.Fatalf("%q token %d (%q): hash %#x, want FNV-1a %#x", text, j, tok, toks[j], want)
			}
		}
	})
}
