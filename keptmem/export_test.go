package keptmem

import (
	"testing"

	"github.com/neardup/neardup/rule"
)

// Candidates returns how many candidate slots (with repeats) Match reads for
// f before the rule judges them: the work the candidate tables leave.
func (k *Set) Candidates(f *rule.Features) int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	c, err := k.candidatesLocked(nil, f)
	if err != nil {
		panic(err)
	}
	return len(c)
}

// RuleAndExtractor returns the rule and an extractor of opt, failing tb on
// an error.
func RuleAndExtractor(tb testing.TB, opt rule.Options) (*rule.Rule, *rule.Extractor) {
	tb.Helper()
	rl, err := rule.NewRule(opt)
	if err != nil {
		tb.Fatal(err)
	}
	ex, err := rule.NewExtractor(opt)
	if err != nil {
		tb.Fatal(err)
	}
	return rl, ex
}
