package rule_test

import (
	"testing"

	"github.com/neardup/neardup/rule"
)

// TestMinHashNearNeedsBand: under MethodMinHash two documents are
// candidates when they share an LSH band (or are exact copies), as the batch
// LSH and the online band tables find them; the rule alone (compare, say)
// says the same.
func TestMinHashNearNeedsBand(t *testing.T) {
	rl, err := rule.NewRule(rule.Options{Method: rule.MethodMinHash, Verify: rule.VerifyNone, Bands: 2, Rows: 2})
	if err != nil {
		t.Fatal(err)
	}
	a := rule.Features{Exact: 1, Tokens: 10, Bands: []uint64{1, 2}}
	for _, tc := range []struct {
		name string
		b    rule.Features
		want bool
	}{
		{"no shared band", rule.Features{Exact: 2, Tokens: 10, Bands: []uint64{3, 4}}, false},
		{"second band shared", rule.Features{Exact: 2, Tokens: 10, Bands: []uint64{3, 2}}, true},
		{"exact copy", rule.Features{Exact: 1, Tokens: 10, Bands: []uint64{3, 4}}, true},
		{"no tokens", rule.Features{Exact: 2, Bands: []uint64{1, 2}}, false},
	} {
		if got := rl.Duplicates(&a, &tc.b); got != tc.want {
			t.Errorf("%s: Duplicates = %v, want %v", tc.name, got, tc.want)
		}
	}
}
