package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/simhash"
)

// Line is one line of an output file at the position that orders it.
type Line struct {
	Pos  uint64
	Data []byte // with its "\n"
}

var (
	verifiedCount = beam.NewCounter("neardup", "verified")
	removedCount  = beam.NewCounter("neardup", "removed")
)

// toComponent sends a document's features and the pairs it is the first of
// to its component, when it has one (documents in no pair are kept).
func toComponent(pos uint64, labels func(*uint64) bool, feats func(*DocFeatures) bool, pairs func(*Pair) bool,
	emitFeat func(uint64, DocFeatures), emitPair func(uint64, Pair)) error {
	var l uint64
	if !labels(&l) {
		return nil
	}
	var f DocFeatures
	if !feats(&f) {
		return fmt.Errorf("pipeline: no features for position %d of a candidate pair", pos)
	}
	emitFeat(l, f)
	var p Pair
	for pairs(&p) {
		emitPair(l, p)
	}
	return nil
}

// decideFn runs the keep-first rule over one component.
type decideFn struct {
	Rule ruleConfig

	rule *dedup.Rule
}

func (f *decideFn) Setup() (err error) { f.rule, err = f.Rule.rule(); return err }

func (f *decideFn) ProcessElement(ctx context.Context, _ uint64, featIter func(*DocFeatures) bool, pairIter func(*Pair) bool,
	emitDup func(Line), emitCluster func(Line)) error {
	var docs []DocFeatures
	var d DocFeatures
	for featIter(&d) {
		docs = append(docs, d)
	}
	slices.SortFunc(docs, func(a, b DocFeatures) int { return cmpU64(a.Pos, b.Pos) })
	idx := make(map[uint64]int, len(docs))
	fs := make([]dedup.Features, len(docs))
	for i := range docs {
		idx[docs[i].Pos] = i
		if err := fs[i].UnmarshalBinary(docs[i].Features); err != nil {
			return fmt.Errorf("pipeline: features of %q: %w", docs[i].ID, err)
		}
	}
	var packed []uint64
	var p Pair
	for pairIter(&p) {
		a, okA := idx[p.A]
		b, okB := idx[p.B]
		if !okA || !okB {
			return fmt.Errorf("pipeline: pair (%d, %d) outside its component", p.A, p.B)
		}
		packed = append(packed, dedup.PackPair(a, b))
	}
	dedup.SortPairs(packed)
	keeper := f.rule.KeepFirst(len(docs), func(i int) dedup.Features { return fs[i] }, packed, nil)

	clusters := map[int32]*dedup.Cluster{}
	var order []int32 // keepers in the order of their first removed document
	first := map[int32]uint64{}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i, k := range keeper {
		if int(k) == i {
			continue
		}
		verifiedCount.Inc(ctx, 1)
		removedCount.Inc(ctx, 1)
		buf.Reset()
		if err := enc.Encode(f.duplicate(&docs[i], &fs[i], &docs[k], &fs[k])); err != nil {
			return err
		}
		emitDup(Line{Pos: docs[i].Pos, Data: slices.Clone(buf.Bytes())})
		c, ok := clusters[k]
		if !ok {
			c = &dedup.Cluster{KeptID: docs[k].ID, IDs: []string{docs[k].ID}}
			clusters[k] = c
			order = append(order, k)
			first[k] = docs[i].Pos
		}
		c.IDs = append(c.IDs, docs[i].ID)
	}
	for _, k := range order {
		c := clusters[k]
		c.Size = len(c.IDs)
		buf.Reset()
		if err := enc.Encode(c); err != nil {
			return err
		}
		emitCluster(Line{Pos: first[k], Data: slices.Clone(buf.Bytes())})
	}
	return nil
}

// duplicate is the report of removed document d against kept document k, as
// dedup.Run writes it.
func (f *decideFn) duplicate(d *DocFeatures, fd *dedup.Features, k *DocFeatures, fk *dedup.Features) dedup.Duplicate {
	dup := dedup.Duplicate{DupID: d.ID, KeptID: k.ID, Exact: fd.Exact == fk.Exact}
	if f.Rule.Method == dedup.MethodSimHash {
		dist := simhash.Distance(fd.FP, fk.FP)
		sim := simhash.Similarity(dist, 64)
		dup.Distance, dup.Similarity = &dist, &sim
	}
	j := f.rule.Score(fk, fd)
	dup.Jaccard = &j
	return dup
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func pairByA(p Pair) (uint64, Pair) { return p.A, p }

func featByPos(f DocFeatures) (uint64, DocFeatures) { return f.Pos, f }

// Decide applies the keep-first rule per component. It returns the
// duplicates and clusters output lines, ordered by position.
func Decide(s beam.Scope, opt Options, feats, pairs, labels beam.PCollection) (dups, clusters beam.PCollection) {
	s = s.Scope("Decide")
	gs := s.Scope("Gather components")
	byPos := beam.CoGroupByKey(gs, labels, beam.ParDo(gs, featByPos, feats), beam.ParDo(gs, pairByA, pairs))
	cf, cp := beam.ParDo2(gs, toComponent, byPos)
	ks := s.Scope("Keep first")
	return beam.ParDo2(ks, &decideFn{Rule: opt.ruleConfig()}, beam.CoGroupByKey(ks, cf, cp))
}
