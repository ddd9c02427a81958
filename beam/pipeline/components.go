package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Connected components of the edge graph (verified pairs, and the links of
// coarsened stars) by large-star and small-star operations (Kiveris,
// Lattanzi, Mirrokni, Rastogi, Vassilvitskii, "Connected Components in
// MapReduce and Beyond", SoCC 2014, algorithm "Alternating", section 3):
//
//   - large-star: each node u links every neighbour v > u to m(u), the least
//     of u and its neighbours;
//   - small-star: each node u links itself and every neighbour v <= u to the
//     least of them.
//
// Both keep the components and shrink the label distance; alternated, the
// graph becomes one star per component, centred on its least node. A
// pipeline's graph is fixed before it runs, so Options.Rounds rounds are
// unrolled (the verified graph is mostly stars already: a few suffice),
// and the run then goes on until convergence in one step: every edge of the
// graph the rounds leave (which has the original's components) whose two
// ends still have different labels gives a pair of labels, and a union-find
// over those pairs (at most MaxResidual of them, on one worker) joins the
// labels left apart. The final label of a node is the root of its
// label: the least position of its component, whatever the rounds left.

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

// carried is a node's label as the label stage sends it on: to the node
// itself (Own), and to each of its neighbours above it.
type carried struct {
	Label uint64
	Own   bool
}

// labelFn gives each node u the least of itself and its neighbours, l(u),
// and sends l(u) on for the convergence check (apartFn): to u itself and to
// each neighbour v > u, so that each edge of the graph the rounds left is
// looked at once, at its larger end. The rounds keep the components, so
// the edges they leave, not the original ones, are enough to find the
// labels still apart: every node of an edge is still in one (at least the
// one to its label).
type labelFn struct {
	Stage   string // of the shuffle counter
	Shuffle shuffleCounter
}

func (f *labelFn) ProcessElement(ctx context.Context, u uint64, iter func(*uint64) bool, labels func(uint64, uint64), carry func(uint64, carried)) {
	ns := neighbours(iter)
	l := min(u, ns[0])
	labels(u, l)
	send := func(v uint64, c carried) {
		f.Shuffle.add(ctx, f.Stage, v, c)
		carry(v, c)
	}
	send(u, carried{Label: l, Own: true})
	for _, v := range ns {
		if v > u {
			send(v, carried{Label: l})
		}
	}
}

// apartFn emits, under one key, the pair of labels of each edge whose ends
// the rounds left with different labels: the residual graph. One call holds
// the labels of a node's neighbours below it.
func apartFn(v uint64, iter func(*carried) bool, emit func(int, Pair)) error {
	var own uint64
	found := false
	var others []uint64
	var c carried
	for iter(&c) {
		if c.Own {
			own, found = c.Label, true
		} else {
			others = append(others, c.Label)
		}
	}
	if !found {
		return fmt.Errorf("pipeline: node %d of an edge has no component label", v)
	}
	slices.Sort(others)
	for _, o := range slices.Compact(others) {
		if o != own {
			emit(0, newPair(o, own))
		}
	}
	return nil
}

// residualFn joins the labels left apart with a union-find on one worker and
// emits, for each label that is not its set's least, KV<label, root>.
type residualFn struct {
	Rounds, Max int
	Prefix      string // of the metric's name: "" or "candidate_"
}

func (f *residualFn) ProcessElement(ctx context.Context, _ int, pairs func(*Pair) bool, emit func(uint64, uint64)) error {
	parent := map[uint64]uint64{}
	find := func(x uint64) uint64 {
		r := x
		for {
			p, ok := parent[r]
			if !ok || p == r {
				break
			}
			r = p
		}
		for x != r { // path compression
			p := parent[x]
			parent[x] = r
			x = p
		}
		return r
	}
	n := 0
	var p Pair
	for pairs(&p) {
		if n++; n > f.Max {
			return fmt.Errorf("pipeline: %scomponents: more than %d label pairs left apart after %d rounds: raise --cc-rounds (or --max-residual)",
				strings.ReplaceAll(f.Prefix, "_", " "), f.Max, f.Rounds)
		}
		a, b := find(p.A), find(p.B)
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		parent[b] = a // the least label is the root
		if _, ok := parent[a]; !ok {
			parent[a] = a
		}
	}
	beam.NewCounter("neardup", f.Prefix+"residual_label_pairs").Inc(ctx, int64(n))
	for x := range parent {
		if r := find(x); r != x {
			emit(x, r)
		}
	}
	return nil
}

// relabelFn maps a node's label to its root. The roots (labels left apart
// by the rounds, at most MaxResidual) are read into a map on the first
// element: the pipeline has one window, so the side input is the same for
// every bundle an instance runs.
type relabelFn struct {
	Prefix string // of the metric's name: "" or "candidate_"

	roots      map[uint64]uint64
	components beam.Counter // Prefix + "components"
}

func (f *relabelFn) ProcessElement(ctx context.Context, u, l uint64, roots func(*uint64, *uint64) bool, emit func(uint64, uint64)) {
	if f.roots == nil {
		f.roots = map[uint64]uint64{}
		var k, r uint64
		for roots(&k, &r) {
			f.roots[k] = r
		}
		f.components = beam.NewCounter("neardup", f.Prefix+"components")
	}
	if r, ok := f.roots[l]; ok {
		l = r
	}
	if u == l {
		f.components.Inc(ctx, 1)
	}
	emit(u, l)
}

// Components labels every node of an edge with its connected component:
// KV<position, label>, the label being the component's least position.
func Components(s beam.Scope, opt Options, edges beam.PCollection) beam.PCollection {
	return components(s.Scope("Components"), opt, edges, "")
}

// CandidateComponents labels every document of a link (Links) with its
// component in the candidate graph, as Components does; its metrics are
// named candidate_components and candidate_residual_label_pairs, its
// shuffle stage candidates.
func CandidateComponents(s beam.Scope, opt Options, links beam.PCollection) beam.PCollection {
	return components(s.Scope("Candidate components"), opt, links, "candidate_")
}

func components(s beam.Scope, opt Options, edges beam.PCollection, prefix string) beam.PCollection {
	sh := shuffleCounter{On: opt.CountShuffle}
	stage := "components"
	if prefix != "" {
		stage = "candidates"
	}
	count := func(s beam.Scope, c beam.PCollection) beam.PCollection { return countU64(s, sh, stage, c) }
	for r := range opt.Rounds {
		rs := s.Scope(fmt.Sprintf("Round %d", r+1))
		ls := rs.Scope("Large star")
		edges = beam.ParDo(ls, largeStar, beam.GroupByKey(ls, count(ls, beam.ParDo(ls, bothWays, edges))))
		ss := rs.Scope("Small star")
		edges = beam.ParDo(ss, smallStar, beam.GroupByKey(ss, count(ss, beam.ParDo(ss, largerFirst, edges))))
	}
	ls := s.Scope("Label")
	labels, carry := beam.ParDo2(ls, &labelFn{Stage: stage, Shuffle: sh}, beam.GroupByKey(ls, count(ls, beam.ParDo(ls, bothWays, edges))))

	cs := s.Scope("Until convergence")
	apart := beam.ParDo(cs, apartFn, beam.GroupByKey(cs, carry))
	roots := beam.ParDo(cs, &residualFn{Rounds: opt.Rounds, Max: opt.MaxResidual, Prefix: prefix}, beam.GroupByKey(cs, apart))
	return beam.ParDo(cs, &relabelFn{Prefix: prefix}, labels, beam.SideInput{Input: roots})
}
