package pipeline

import (
	"context"
	"slices"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
)

// plans caches index.PlanJoin by input size: every worker derives the same
// plan from the document count.
var plans sync.Map // [2]int{n, k} -> index.Plan

func planFor(n, k int) index.Plan {
	key := [2]int{n, k}
	if p, ok := plans.Load(key); ok {
		return p.(index.Plan)
	}
	p := index.PlanJoin(max(n, 1), k).Plan
	plans.Store(key, p)
	return p
}

// tableKeysFn keys a fingerprint by the key block of every table of
// index.PlanJoin(n, Rule.QueryK()) (MethodSimHash): two fingerprints within
// QueryK share at least one. Their number grows with n, which is why
// MethodMinHash is the method that scales.
type tableKeysFn struct {
	Rule    ruleConfig
	Shuffle shuffleCounter

	rule *dedup.Rule
}

func (f *tableKeysFn) Setup() (err error) { f.rule, err = f.Rule.rule(); return err }

func (f *tableKeysFn) ProcessElement(ctx context.Context, e simEntry, n int, emit func(uint64, uint64)) {
	p := planFor(n, f.rule.QueryK())
	for t := range p.Tables {
		k := tableKey(t, e.FP&p.KeyMask(t))
		f.Shuffle.add(ctx, "keys", k, e.Pos)
		emit(k, e.Pos)
	}
}

var starCount = beam.NewCounter("neardup", "star_edges")

// starFn turns a bucket (the documents of one candidate key) into a star:
// each member is linked to the least member, its centre, by an element
// KV<member, centre>, and the centre is told it is one by KV<centre,
// centre>. A bucket of m documents costs m elements, whatever their
// similarity; a key of one document, the fate of nearly every key, none.
// One call holds the bucket's positions (8 bytes a member).
type starFn struct{ Shuffle shuffleCounter }

func (f *starFn) ProcessElement(ctx context.Context, _ uint64, members func(*uint64) bool, emit func(uint64, uint64)) {
	var ms []uint64
	var p uint64
	for members(&p) {
		ms = append(ms, p)
	}
	if len(ms) < 2 {
		return
	}
	slices.Sort(ms)
	ms = slices.Compact(ms)
	if len(ms) < 2 {
		return
	}
	c := ms[0]
	for _, y := range ms {
		f.Shuffle.add(ctx, "star", y, c)
		emit(y, c)
	}
	starCount.Inc(ctx, int64(len(ms)-1))
}

// Stars groups the candidate keys into buckets and returns their star
// edges, KV<member, centre> (KV<centre, centre> marking a centre), at most
// one per key a document has. Under MethodSimHash the fingerprints are keyed
// by the plan for the document count first.
func Stars(s beam.Scope, opt Options, keys, sims, counts beam.PCollection) beam.PCollection {
	s = s.Scope("Candidates")
	if opt.Method == dedup.MethodSimHash {
		n := stats.Sum(s.Scope("Count documents"), counts)
		tk := beam.ParDo(s.Scope("Table keys"), &tableKeysFn{Rule: opt.ruleConfig(), Shuffle: shuffleCounter{On: opt.CountShuffle}},
			sims, beam.SideInput{Input: n})
		keys = beam.Flatten(s, keys, tk)
	}
	return beam.ParDo(s.Scope("Stars"), &starFn{Shuffle: shuffleCounter{On: opt.CountShuffle}}, beam.GroupByKey(s, keys))
}
