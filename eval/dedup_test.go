package eval

import (
	"math"
	"testing"
)

// TestScoreDedup scores three outcomes on a hand-made truth: 0~1 (J 0.9),
// 1~2 (J 0.85), 3 is 0's text again, 4~5 only at J 0.7. The truth's
// keep-first rule keeps 0, 2, 4 and 5, and removes 1 and 3.
func TestScoreDedup(t *testing.T) {
	tr := &Truth{Docs: 6, Canon: []int{0, 1, 2, 0, 4, 5},
		Pairs: []Pair{{0, 1, 0.9}, {1, 2, 0.85}, {4, 5, 0.7}}}
	tests := []struct {
		name     string
		removed  []int
		tp, fp   int
		fn       int
		coverage float64
		residual float64
	}{
		{"keep-first", []int{1, 3}, 2, 0, 0, 1, 0},
		{"components", []int{1, 2, 3}, 2, 1, 0, 2.0 / 3, 0},
		{"nothing", nil, 0, 0, 2, 1, 4.0 / 6},
		{"the original", []int{0}, 0, 1, 2, 1, 3.0 / 5},
	}
	for _, tc := range tests {
		removed := make([]bool, tr.Docs)
		for _, i := range tc.removed {
			removed[i] = true
		}
		s := ScoreDedup(tr, removed, 0.8)
		if s.Doc.TP != tc.tp || s.Doc.FP != tc.fp || s.Doc.FN != tc.fn {
			t.Errorf("%s: TP/FP/FN %d/%d/%d, want %d/%d/%d", tc.name, s.Doc.TP, s.Doc.FP, s.Doc.FN, tc.tp, tc.fp, tc.fn)
		}
		if math.Abs(s.Coverage-tc.coverage) > 1e-12 || math.Abs(s.Residual-tc.residual) > 1e-12 {
			t.Errorf("%s: coverage %v residual %v, want %v and %v", tc.name, s.Coverage, s.Residual, tc.coverage, tc.residual)
		}
	}
}
