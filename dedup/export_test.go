package dedup

import (
	"testing"

	"github.com/neardup/neardup/rule"
)

// Helpers of the internal tests, for the external ones: those that use a
// concrete kept set (package keptfiles) among them.
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
func RuleAndExtractor(tb testing.TB, opt Options) (*rule.Rule, *rule.Extractor) {
	tb.Helper()
	rl, err := rule.NewRule(opt.Options)
	if err != nil {
		tb.Fatal(err)
	}
	ex, err := rule.NewExtractor(opt.Options)
	if err != nil {
		tb.Fatal(err)
	}
	return rl, ex
}
