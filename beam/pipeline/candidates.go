package pipeline

import (
	"cmp"
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
	Rule     ruleConfig
	KeyParts int
	Shuffle  shuffleCounter

	rule *dedup.Rule
}

func (f *tableKeysFn) Setup() (err error) { f.rule, err = f.Rule.rule(); return err }

func (f *tableKeysFn) ProcessElement(ctx context.Context, e simEntry, n int, emit func(int, []byte)) {
	p := planFor(n, f.rule.QueryK())
	kb := newKeyBatcher(f.KeyParts, func(part int, b []byte) {
		f.Shuffle.add(ctx, "keys", part, b)
		emit(part, b)
	})
	for t := range p.Tables {
		kb.add(tableKey(t, e.FP&p.KeyMask(t)), e.Pos)
	}
	kb.flush()
}

var starCount = beam.NewCounter("neardup", "star_edges")

// starFn turns the buckets of a key partition (the documents of one
// candidate key) into stars: each member is linked to the least member, its
// centre, by a starEdge keyed by the member's range, the centre to itself. A bucket of m documents costs m elements,
// whatever their similarity; a key of one document, the fate of nearly
// every key, none. One call holds its partition's entries (about 5 bytes
// encoded, 16 decoded, about 25 per document of KeyPartBytes of input).
type starFn struct{ Shuffle shuffleCounter }

type keyEntry struct{ key, pos uint64 }

func (f *starFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emit func(uint64, starEdge)) error {
	var es []keyEntry
	var b []byte
	for batches(&b) {
		var err error
		if es, err = appendKeyEntries(es, b); err != nil {
			return err
		}
	}
	slices.SortFunc(es, func(a, b keyEntry) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	es = slices.Compact(es)
	for lo := 0; lo < len(es); {
		hi := lo + 1
		for hi < len(es) && es[hi].key == es[lo].key {
			hi++
		}
		if hi-lo >= 2 {
			c := es[lo].pos
			for _, e := range es[lo:hi] {
				r, se := uint64(rangeOf(e.pos)), starEdge{Member: e.pos, Centre: c}
				f.Shuffle.add(ctx, "star", r, se)
				emit(r, se)
			}
			starCount.Inc(ctx, int64(hi-lo-1))
		}
		lo = hi
	}
	return nil
}

// Stars groups the candidate keys into buckets and returns their star
// edges, KV<range, starEdge>, at most one per key a document has. Under MethodSimHash the fingerprints are keyed
// by the plan for the document count first.
func Stars(s beam.Scope, opt Options, keys, sims, counts beam.PCollection, keyParts int) beam.PCollection {
	s = s.Scope("Candidates")
	if opt.Method == dedup.MethodSimHash {
		n := stats.Sum(s.Scope("Count documents"), counts)
		tk := beam.ParDo(s.Scope("Table keys"), &tableKeysFn{Rule: opt.ruleConfig(), KeyParts: keyParts, Shuffle: shuffleCounter{On: opt.CountShuffle}},
			sims, beam.SideInput{Input: n})
		keys = beam.Flatten(s, keys, tk)
	}
	return beam.ParDo(s.Scope("Stars"), &starFn{Shuffle: shuffleCounter{On: opt.CountShuffle}}, beam.GroupByKey(s, keys))
}

// starLink is the edge of a star edge, unverified: under MethodSimHash the
// components are those of the candidate graph (see doc.go).
func starLink(_ uint64, e starEdge, emit func(uint64, uint64)) {
	if e.Member != e.Centre {
		emit(e.Centre, e.Member)
	}
}
