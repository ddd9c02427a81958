package pipeline

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/neardup/neardup/simhash"
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

// The edges between the rounds travel in batches per node partition (the
// node's mix modulo the partitions, one per KeyPartBytes of input), not
// one element per edge: a runner's cost per element and per key (prism's)
// dwarfs an edge's 16 bytes, and the rounds shuffle every edge eight
// times. An entry is the uvarints of the node the entry is keyed by and of
// the other end (appendStarEdge); a call decodes its partition's entries,
// sorts them by node and applies the operation to each node's neighbours.
// A DoFn gathers what it emits per destination partition over its bundle,
// up to edgeFlushBytes, so that a bundle emits about one batch per
// partition.
const (
	edgeFlushBytes = 8 << 20
	tagNode        = 0x6e6f6465 // "node"
)

func nodePart(u uint64, parts int) int { return int(simhash.Mix64(u, tagNode) % uint64(parts)) }

// edgeBatcher gathers entries per destination partition.
type edgeBatcher struct {
	partBatches
	emit  func(int, []byte)
	count func(int, []byte)
}

func newEdgeBatcher(parts int) *edgeBatcher {
	return &edgeBatcher{partBatches: newPartBatches(parts)}
}

// add appends an entry keyed by u; extra, when not nil, appends more to it.
func (b *edgeBatcher) add(u, v uint64, extra ...byte) {
	p := nodePart(u, len(b.parts))
	n := len(b.parts[p])
	b.parts[p] = append(appendStarEdge(b.parts[p], starEdge{Member: u, Centre: v}), extra...)
	if b.grew(p, n, edgeFlushBytes) {
		b.flush()
	}
}

func (b *edgeBatcher) flush() {
	b.partBatches.flush(func(p int, e []byte) {
		b.count(p, e)
		b.emit(p, e)
	})
}

// edgeOps are what an edgeFn does with a node u and its distinct
// neighbours ns (sorted), adding the entries of the next grouping:
//
//   - large-star: each neighbour v > u is linked to m(u), the least of u and
//     its neighbours, keyed by v (the larger end, for small-star);
//   - small-star (keyed by the larger end: ns all <= u): u and each
//     neighbour are linked to the least of them, both ways (for the next
//     large-star or the labels).
const (
	opBothWays = iota // the input: single edges, both ways
	opLargeStar
	opSmallStar
)

// edgeFn runs one step of the rounds over edge batches. One call holds
// its partition's entries (16 bytes each decoded); the batcher up to
// edgeFlushBytes.
type edgeFn struct {
	Op, Parts int
	Stage     string // of the shuffle counter
	Shuffle   shuffleCounter

	out *edgeBatcher
}

func (f *edgeFn) batcher(ctx context.Context, emit func(int, []byte)) *edgeBatcher {
	if f.out == nil {
		f.out = newEdgeBatcher(f.Parts)
		f.out.count = func(p int, b []byte) { f.Shuffle.add(ctx, f.Stage, p, b) }
	}
	f.out.emit = emit
	return f.out
}

// FinishBundle emits what the bundle's calls left in the batcher.
func (f *edgeFn) FinishBundle(ctx context.Context, emit func(int, []byte)) {
	if f.out != nil {
		f.batcher(ctx, emit).flush()
	}
}

// bothWaysFn batches single edges (links, verified pairs) both ways: the
// input of the first round.
type bothWaysFn struct{ edgeFn }

func (f *bothWaysFn) ProcessElement(ctx context.Context, u, v uint64, emit func(int, []byte)) {
	b := f.batcher(ctx, emit)
	b.add(u, v)
	b.add(v, u)
}

func (f *edgeFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emit func(int, []byte)) error {
	b := f.batcher(ctx, emit)
	return eachNode(batches, func(u uint64, ns []uint64) {
		m := min(u, ns[0])
		switch f.Op {
		case opLargeStar:
			for _, v := range ns {
				if v > u {
					b.add(v, m)
				}
			}
		case opSmallStar:
			if u != m {
				b.add(u, m)
				b.add(m, u)
			}
			for _, v := range ns {
				if v != m {
					b.add(v, m)
					b.add(m, v)
				}
			}
		}
	})
}

// eachNode decodes a partition's edge batches and calls fn with each node
// and its distinct neighbours, sorted.
func eachNode(batches func(*[]byte) bool, fn func(u uint64, ns []uint64)) error {
	es, err := gather(batches, appendStarEdges)
	if err != nil {
		return err
	}
	es = sortEdges(es)
	var ns []uint64
	for lo := 0; lo < len(es); {
		hi := lo
		ns = ns[:0]
		for ; hi < len(es) && es[hi].Member == es[lo].Member; hi++ {
			ns = append(ns, es[hi].Centre)
		}
		fn(es[lo].Member, ns)
		lo = hi
	}
	return nil
}

// labelFn gives each node u the least of itself and its neighbours, l(u),
// and sends l(u) on for the convergence check (apartFn): to u itself and to
// each neighbour v > u, so that each edge of the graph the rounds left is
// looked at once, at its larger end. The rounds keep the components, so
// the edges they leave, not the original ones, are enough to find the
// labels still apart: every node of an edge is still in one (at least the
// one to its label). A carried label is an entry (node, label) and a byte,
// 1 for the node's own.
type labelFn struct{ edgeFn }

func (f *labelFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, labels func(uint64, uint64), carry func(int, []byte)) error {
	b := f.batcher(ctx, carry)
	return eachNode(batches, func(u uint64, ns []uint64) {
		l := min(u, ns[0])
		labels(u, l)
		b.add(u, l, 1)
		for _, v := range ns {
			if v > u {
				b.add(v, l, 0)
			}
		}
	})
}

// FinishBundle emits what the bundle's calls left in the batcher.
func (f *labelFn) FinishBundle(ctx context.Context, _ func(uint64, uint64), carry func(int, []byte)) {
	f.edgeFn.FinishBundle(ctx, carry)
}

// apartFn emits, under one key, the pair of labels of each edge whose ends
// the rounds left with different labels: the residual graph. One call
// holds its partition's carried labels (17 bytes each decoded).
func apartFn(_ int, batches func(*[]byte) bool, emit func(int, Pair)) error {
	type carried struct {
		node, label uint64
		own         bool
	}
	var cs []carried
	var b []byte
	for batches(&b) {
		for len(b) > 0 {
			u, n := binary.Uvarint(b)
			if n <= 0 {
				return errors.New("pipeline: a label batch holds a bad node")
			}
			l, k := binary.Uvarint(b[n:])
			if k <= 0 || len(b) < n+k+1 {
				return errors.New("pipeline: a label batch holds a bad label")
			}
			cs = append(cs, carried{u, l, b[n+k] == 1})
			b = b[n+k+1:]
		}
	}
	slices.SortFunc(cs, func(a, b carried) int { return cmp.Compare(a.node, b.node) })
	for lo := 0; lo < len(cs); {
		hi := lo
		var own uint64
		found := false
		for ; hi < len(cs) && cs[hi].node == cs[lo].node; hi++ {
			if cs[hi].own {
				own, found = cs[hi].label, true
			}
		}
		if !found {
			return fmt.Errorf("pipeline: node %d of an edge has no component label", cs[lo].node)
		}
		for _, c := range cs[lo:hi] {
			if !c.own && c.label != own {
				emit(0, newPair(c.label, own))
			}
		}
		lo = hi
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
func Components(s beam.Scope, opt Options, edges beam.PCollection, parts int) beam.PCollection {
	return components(s.Scope("Components"), opt, edges, parts, "")
}

// CandidateComponents labels every document of a link (Links) with its
// component in the candidate graph, as Components does; its metrics are
// named candidate_components and candidate_residual_label_pairs, its
// shuffle stage candidates.
func CandidateComponents(s beam.Scope, opt Options, links beam.PCollection, parts int) beam.PCollection {
	return components(s.Scope("Candidate components"), opt, links, parts, "candidate_")
}

func components(s beam.Scope, opt Options, edges beam.PCollection, parts int, prefix string) beam.PCollection {
	sh := shuffleCounter{On: opt.CountShuffle}
	stage := "components"
	if prefix != "" {
		stage = "candidates"
	}
	step := func(s beam.Scope, op int, in beam.PCollection) beam.PCollection {
		return beam.ParDo(s, &edgeFn{Op: op, Parts: parts, Stage: stage, Shuffle: sh}, beam.GroupByKey(s, in))
	}
	batches := beam.ParDo(s, &bothWaysFn{edgeFn{Op: opBothWays, Parts: parts, Stage: stage, Shuffle: sh}}, edges)
	for r := range opt.Rounds {
		rs := s.Scope(fmt.Sprintf("Round %d", r+1))
		batches = step(rs.Scope("Small star"), opSmallStar, step(rs.Scope("Large star"), opLargeStar, batches))
	}
	ls := s.Scope("Label")
	labels, carry := beam.ParDo2(ls, &labelFn{edgeFn{Parts: parts, Stage: stage, Shuffle: sh}}, beam.GroupByKey(ls, batches))

	cs := s.Scope("Until convergence")
	apart := beam.ParDo(cs, apartFn, beam.GroupByKey(cs, carry))
	roots := beam.ParDo(cs, &residualFn{Rounds: opt.Rounds, Max: opt.MaxResidual, Prefix: prefix}, beam.GroupByKey(cs, apart))
	return beam.ParDo(cs, &relabelFn{Prefix: prefix}, labels, beam.SideInput{Input: roots})
}
