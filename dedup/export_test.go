package dedup

import "testing"

// TokenHashes exposes the verification tokenizer to the external tests that
// compare it with package eval's ground truth (eval imports dedup, so they
// cannot live in this package): the FNV-1a 64 hashes of text's tokens.
func TokenHashes(text string) []uint64 {
	var s shingler
	s.tokens(text)
	return s.toks
}

// Candidates returns how many candidate slots (with repeats) Match reads for
// f before the rule judges them: the work the candidate tables leave.
func (k *Kept) Candidates(f *Features) int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	c, err := k.candidatesLocked(nil, f)
	if err != nil {
		panic(err)
	}
	return len(c)
}

// RuleAndExtractor returns the rule and an extractor of opt, failing tb on
// an error: the pair every test that decides by hand starts from.
func RuleAndExtractor(tb testing.TB, opt Options) (*Rule, *Extractor) {
	tb.Helper()
	rule, err := NewRule(opt)
	if err != nil {
		tb.Fatal(err)
	}
	ex, err := NewExtractor(opt)
	if err != nil {
		tb.Fatal(err)
	}
	return rule, ex
}
