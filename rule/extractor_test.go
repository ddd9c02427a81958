package rule_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/rule"
)

// TestRuleExtractor: the rule's extractor gives NewExtractor's features but
// for the SimHash fingerprint, which it leaves out under minhash only.
func TestRuleExtractor(t *testing.T) {
	const text = "the quick brown fox jumps over the lazy dog near the river bank today"
	for _, method := range []string{rule.MethodMinHash, rule.MethodSimHash} {
		full, err := rule.NewExtractor(rule.Options{Method: method})
		if err != nil {
			t.Fatal(err)
		}
		ruleEx, err := rule.NewRuleExtractor(rule.Options{Method: method})
		if err != nil {
			t.Fatal(err)
		}
		want, got := full.Extract(text), ruleEx.Extract(text)
		if method == rule.MethodMinHash {
			if got.FP != 0 || want.FP == 0 {
				t.Errorf("minhash: rule extractor FP %#x, full %#x: want 0 and a fingerprint", got.FP, want.FP)
			}
			want.FP = 0
		}
		wb, _ := want.MarshalBinary()
		gb, _ := got.MarshalBinary()
		if !slices.Equal(wb, gb) || !slices.Equal(want.Sig, got.Sig) {
			t.Errorf("%s: rule extractor's features differ from NewExtractor's beyond the fingerprint", method)
		}
	}
}

// TestExtractInto: extracting text after text into one Features gives each
// text's Extract features, whatever the previous text left in its slices (a
// longer text, a text without tokens and so without band keys).
func TestExtractInto(t *testing.T) {
	long := strings.Repeat("the quick brown fox jumps over the lazy dog near the river bank today ", 40)
	texts := []string{long, "a short text of seven words here", "!!! ???", "", long + " and more",
		"中华人民共和国宪法 第一条", "one two", long}
	for _, method := range []string{rule.MethodMinHash, rule.MethodSimHash} {
		ex, err := rule.NewExtractor(rule.Options{Method: method})
		if err != nil {
			t.Fatal(err)
		}
		var f rule.Features
		for _, text := range texts {
			want := ex.Extract(text)
			ex.ExtractInto(&f, text)
			wb, _ := want.MarshalBinary()
			gb, _ := f.MarshalBinary()
			if !slices.Equal(wb, gb) || !slices.Equal(want.Sig, f.Sig) || !slices.Equal(want.Bands, f.Bands) ||
				want.FP != f.FP || want.Empty != f.Empty {
				t.Errorf("%s, %.20q: ExtractInto differs from Extract", method, text)
			}
		}
	}
}
