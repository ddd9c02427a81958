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

// Helpers of the internal tests, for the external ones that need a
// concrete kept set (package keptmem imports dedup, so they cannot live in
// this package).
type TestDoc = testDoc

var (
	PlantedCorpus  = plantedCorpus
	RandomText     = randomText
	BandCorpus     = bandCorpus
	WriteJSONL     = writeJSONL
	ReadDuplicates = readDuplicates
)

// WithBandSpill returns o with the memory its band keys may hold before
// they are spilled to files set to spill (Options.bandSpill).
func WithBandSpill(o Options, spill int64) Options {
	o.bandSpill = spill
	return o
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
