package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Connected components of the candidate graph by large-star and small-star
// operations (Kiveris et al., SoCC 2014, algorithm "Alternating", section 3):
//
//   - large-star: each node u links every neighbour v > u to m(u), the least
//     of u and its neighbours;
//   - small-star: each node u links itself and every neighbour v <= u to the
//     least of them.
//
// Both keep the components and shrink the label distance; alternated, the
// graph becomes one star per component, centred on its least node, in
// O(log² n) rounds in the worst case and a few in practice. A pipeline's
// graph is fixed before it runs, so the rounds are unrolled Options.Rounds
// times and the result checked: every candidate edge must join two nodes
// with one label. Star graphs are fixed points, so extra rounds cost a
// shuffle of the stars and change nothing.

func pairEdge(p Pair) (uint64, uint64) { return p.A, p.B }

func bothWays(u, v uint64, emit func(uint64, uint64)) {
	emit(u, v)
	emit(v, u)
}

func largerFirst(u, v uint64) (uint64, uint64) { return max(u, v), min(u, v) }

// neighbours collects a node's distinct neighbours, sorted.
func neighbours(iter func(*uint64) bool) []uint64 {
	var ns []uint64
	var v uint64
	for iter(&v) {
		ns = append(ns, v)
	}
	slices.Sort(ns)
	return slices.Compact(ns)
}

func largeStar(u uint64, iter func(*uint64) bool, emit func(uint64, uint64)) {
	ns := neighbours(iter)
	m := min(u, ns[0])
	for _, v := range ns {
		if v > u {
			emit(v, m)
		}
	}
}

func smallStar(u uint64, iter func(*uint64) bool, emit func(uint64, uint64)) {
	ns := neighbours(iter) // all <= u: keyed by the larger end
	m := min(u, ns[0])
	if u != m {
		emit(u, m)
	}
	for _, v := range ns {
		if v != m {
			emit(v, m)
		}
	}
}

// label gives each node the least of itself and its neighbours: after
// convergence, its component's least node.
func label(u uint64, iter func(*uint64) bool) (uint64, uint64) {
	return u, min(u, neighbours(iter)[0])
}

var componentCount = beam.NewCounter("neardup", "components")

func countCenter(ctx context.Context, u, l uint64) (uint64, uint64) {
	if u == l {
		componentCount.Inc(ctx, 1)
	}
	return u, l
}

// checkFn fails the run when an edge's two ends have different labels.
type checkFn struct{ Rounds int }

func (f *checkFn) ProcessElement(u uint64, labels func(*uint64) bool, edgeLabels func(*uint64) bool) error {
	var l, other uint64
	if !labels(&l) {
		return fmt.Errorf("pipeline: node %d of a candidate edge has no component label", u)
	}
	for edgeLabels(&other) {
		if other != l {
			return fmt.Errorf("pipeline: connected components did not converge in %d rounds (positions %d and %d still apart): raise --cc-rounds", f.Rounds, other, l)
		}
	}
	return nil
}

// edgeLabel carries the label of an edge's first end to its second end.
func edgeLabel(u uint64, labels func(*uint64) bool, ends func(*uint64) bool, emit func(uint64, uint64)) {
	var l, v uint64
	if !labels(&l) {
		return // checked by checkFn on this node's own edges
	}
	for ends(&v) {
		emit(v, l)
	}
}

// Components labels every document of a candidate pair with its connected
// component: KV<position, label>, the label being the component's least
// position.
func Components(s beam.Scope, rounds int, pairs beam.PCollection) beam.PCollection {
	s = s.Scope("Components")
	orig := beam.ParDo(s, pairEdge, pairs)
	edges := orig
	for r := range rounds {
		rs := s.Scope(fmt.Sprintf("Round %d", r+1))
		ls := rs.Scope("Large star")
		edges = beam.ParDo(ls, largeStar, beam.GroupByKey(ls, beam.ParDo(ls, bothWays, edges)))
		ss := rs.Scope("Small star")
		edges = beam.ParDo(ss, smallStar, beam.GroupByKey(ss, beam.ParDo(ss, largerFirst, edges)))
	}
	ls := s.Scope("Label")
	labels := beam.ParDo(ls, countCenter, beam.ParDo(ls, label, beam.GroupByKey(ls, beam.ParDo(ls, bothWays, edges))))

	cs := s.Scope("Check")
	carried := beam.ParDo(cs, edgeLabel, beam.CoGroupByKey(cs, labels, orig))
	beam.ParDo0(cs, &checkFn{Rounds: rounds}, beam.CoGroupByKey(cs, labels, carried))
	return labels
}
