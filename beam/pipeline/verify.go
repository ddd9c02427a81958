package pipeline

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/neardup/neardup/rule"
)

// Pair is an edge between two documents' positions, A < B.
type Pair struct{ A, B uint64 }

func newPair(a, b uint64) Pair {
	if a > b {
		a, b = b, a
	}
	return Pair{a, b}
}

var (
	checkedCount    = beam.NewCounter("neardup", "verifications")
	edgeCount       = beam.NewCounter("neardup", "verified_edges")
	coarsenedCount  = beam.NewCounter("neardup", "coarsened_stars")
	largestStar     = beam.NewDistribution("neardup", "star_leaves")
	pivotPrunedPair = beam.NewCounter("neardup", "pivot_pruned")
)

// verifyFn verifies a star at its centre and emits the edges the
// components are computed over.
//
// The leaves are those the prefilter left to the star (centreFn): the
// members of the centre's buckets whose prefilter passes against the
// centre's or against another leaf's; the others have no edge of the
// batch's graph within the star. Every leaf is checked against the centre
// with Rule.Duplicates (the candidate test and the verification: the edges
// of the batch's graph); a centre no leaf passed the prefilter against is
// not sent, and then every leaf counts as failing.
// The features come without their band keys (dataFn), so Rule.Near holds
// for any two of them. The centre and a leaf share a bucket's key, so the
// batch's candidate test holds for them too (but for two keys that met in a
// key partition by their 32 high bits, keyBatcher). Two leaves may come from
// different buckets of the same centre and share no key: such a pair, if it
// passes the verification, is an edge the batch does not have. Extra edges
// of near-duplicates merge components and never split one, and the
// decision has the bands, so the verdicts stay the batch's.
// When every leaf passes, the star is all the bucket's pairs need: any two
// of its members are connected through the centre. When some leaf y fails,
// a pair (x, y) of leaves may still be near-duplicates, and its edge may
// be what joins two components, so the leaves are compared among
// themselves: every pair with y, except pairs already connected (a
// union-find over the leaves) and pairs the centre rules out. Jaccard
// distance is a metric, so J(x, y) >= t implies |J(c, x) - J(c, y)| <= 1 - t:
// the centre is a pivot, and on a bucket of versions most pairs are ruled
// out without reading their sets (Elkan-style pruning by the triangle
// inequality).
//
// Bounds: one call holds the centre's features, the leaves' positions and
// scores (24 bytes a leaf), and the leaves' features up to HoldBytes. A
// star whose leaves exceed HoldBytes, or whose leaf pairs exceed MaxChecks,
// and that has a failing leaf links every leaf to its centre instead,
// unverified: the star becomes part of one component, which is coarser than
// the batch's graph but never splits it, so the decision per component is
// still exact (it is counted in coarsened_stars).
type verifyFn struct {
	Rule      ruleConfig
	HoldBytes int64
	MaxChecks int64
	Shuffle   shuffleCounter

	rule *rule.Rule
}

func (f *verifyFn) Setup() (err error) { f.rule, err = f.Rule.rule(); return err }

type leafState struct {
	pos uint64
	j   float64 // Jaccard with the centre; NaN when a set is empty
	ok  bool    // a duplicate of the centre
	f   rule.Features
}

func (f *verifyFn) ProcessElement(ctx context.Context, c uint64, selfIter func(*docData) bool, leafIter func(*docData) bool,
	emit func(uint64, uint64)) error {
	// Without the centre's features (the prefilter rejected every leaf
	// against it: centreFn), the leaves sent are compared among
	// themselves, as failing leaves without a pivot.
	var self docData
	hasCentre := selfIter(&self)
	var fc rule.Features
	if hasCentre {
		if err := fc.UnmarshalBinary(self.Features); err != nil {
			return fmt.Errorf("pipeline: features of position %d: %w", self.Pos, err)
		}
	}
	edge := func(p Pair) {
		edgeCount.Inc(ctx, 1)
		f.Shuffle.add(ctx, "edges", p.A, p.B)
		emit(p.A, p.B)
	}
	var leaves []leafState
	var held int64
	holding, failed := true, false
	var d docData
	for leafIter(&d) {
		l := leafState{pos: d.Pos}
		if err := l.f.UnmarshalBinary(d.Features); err != nil {
			return fmt.Errorf("pipeline: features of position %d: %w", d.Pos, err)
		}
		l.j = math.NaN()
		if hasCentre {
			checkedCount.Inc(ctx, 1)
			l.ok = f.rule.Duplicates(&fc, &l.f)
			l.j = f.pivot(&fc, &l.f)
		}
		if l.ok {
			edge(newPair(c, d.Pos))
		} else {
			failed = true
		}
		if held += int64(len(d.Features)); holding && held > f.HoldBytes {
			holding = false
			for i := range leaves {
				leaves[i].f = rule.Features{}
			}
		}
		if !holding {
			l.f = rule.Features{}
		}
		leaves = append(leaves, l)
	}
	largestStar.Update(ctx, int64(len(leaves)))
	if !failed {
		return nil
	}
	nFail := 0
	for _, l := range leaves {
		if !l.ok {
			nFail++
		}
	}
	if !holding || int64(nFail)*int64(len(leaves)) > f.MaxChecks {
		coarsenedCount.Inc(ctx, 1)
		for _, l := range leaves {
			if !l.ok {
				p := newPair(c, l.pos)
				f.Shuffle.add(ctx, "edges", p.A, p.B)
				emit(p.A, p.B)
			}
		}
		return nil
	}
	f.leafPairs(ctx, leaves, edge)
	return nil
}

// leafPairs adds the edges among the leaves of a star with failing leaves:
// each failing leaf against every other leaf (a pair of failing leaves
// once), skipping pairs already connected and pairs the centre rules out.
func (f *verifyFn) leafPairs(ctx context.Context, leaves []leafState, edge func(Pair)) {
	parent := make([]int32, len(leaves))
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(i int32) int32 {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	// The leaves that pass are connected through the centre.
	first := int32(-1)
	for i, l := range leaves {
		if l.ok {
			if first < 0 {
				first = int32(i)
			} else {
				parent[i] = first
			}
		}
	}
	slack := 1 - f.rule.Threshold() + 1e-6
	for y := range leaves {
		if leaves[y].ok {
			continue
		}
		for x := range leaves {
			if x == y || (!leaves[x].ok && x > y) {
				continue // a pair of failing leaves is looked at once
			}
			rx, ry := find(int32(x)), find(int32(y))
			if rx == ry {
				continue
			}
			if jx, jy := leaves[x].j, leaves[y].j; !math.IsNaN(jx) && !math.IsNaN(jy) && math.Abs(jx-jy) > slack {
				pivotPrunedPair.Inc(ctx, 1)
				continue
			}
			checkedCount.Inc(ctx, 1)
			a, b := &leaves[x], &leaves[y]
			if a.pos > b.pos {
				a, b = b, a
			}
			if f.rule.Duplicates(&a.f, &b.f) {
				parent[rx] = ry
				edge(newPair(a.pos, b.pos))
			}
		}
	}
}

// pivot is the Jaccard similarity of a leaf's set with the centre's, or NaN
// when either text has no tokens (such documents pass verification only as
// exact copies, which the metric does not speak of).
func (f *verifyFn) pivot(c, l *rule.Features) float64 {
	if c.Tokens == 0 || l.Tokens == 0 {
		return math.NaN()
	}
	return f.rule.Score(c, l)
}

// Verify verifies every star at its centre and returns the edges for the
// components (KV<A, B>, A < B: verified pairs, and the unverified links of
// coarsened stars).
func Verify(s beam.Scope, opt Options, self, leaves beam.PCollection) beam.PCollection {
	s = s.Scope("Verify stars")
	f := &verifyFn{Rule: opt.ruleConfig(), HoldBytes: opt.HoldBytes, MaxChecks: opt.MaxChecks, Shuffle: shuffleCounter{On: opt.CountShuffle}}
	return beam.ParDo(s, f, beam.CoGroupByKey(s, self, leaves))
}
