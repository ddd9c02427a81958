package pipeline

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/rule"
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

	rule *rule.Rule
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
// centre, by a starEdge, the centre to itself; the edges leave in one batch
// per member's range (appendStarEdge). A bucket of m documents costs m
// edges, whatever their similarity; a key of one document, the fate of
// nearly every key, none. One call holds its partition's entries (about 5
// bytes encoded, 16 decoded, about 25 per document of KeyPartBytes of
// input) and their star edges.
type starFn struct{ Shuffle shuffleCounter }

type keyEntry struct{ key, pos uint64 }

func (f *starFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emit func(uint64, []byte)) error {
	es, err := gather(batches, appendKeyEntries)
	if err != nil {
		return err
	}
	slices.SortFunc(es, func(a, b keyEntry) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	es = slices.Compact(es)
	out := map[uint64][]byte{}
	for lo := 0; lo < len(es); {
		hi := lo + 1
		for hi < len(es) && es[hi].key == es[lo].key {
			hi++
		}
		if hi-lo >= 2 {
			c := es[lo].pos
			for _, e := range es[lo:hi] {
				r := uint64(rangeOf(e.pos))
				out[r] = appendStarEdge(out[r], starEdge{Member: e.pos, Centre: c})
			}
			starCount.Inc(ctx, int64(hi-lo-1))
		}
		lo = hi
	}
	for r, b := range out {
		f.Shuffle.add(ctx, "star", r, b)
		emit(r, b)
	}
	return nil
}

// Star edges travel in batches, one element per range per key partition
// and then one per range, not one per edge: a runner's cost per element
// dwarfs an edge's bytes. An edge is the uvarints of its member and its
// centre.
func appendStarEdge(b []byte, e starEdge) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(b, e.Member), e.Centre)
}

// gather decodes every batch that batches gives (key entries, star edges)
// onto one slice, with decode.
func gather[T any](batches func(*[]byte) bool, decode func([]T, []byte) ([]T, error)) ([]T, error) {
	var es []T
	var b []byte
	for batches(&b) {
		var err error
		if es, err = decode(es, b); err != nil {
			return nil, err
		}
	}
	return es, nil
}

// appendStarEdges decodes a batch of star edges onto es.
func appendStarEdges(es []starEdge, b []byte) ([]starEdge, error) {
	for len(b) > 0 {
		m, n := binary.Uvarint(b)
		if n <= 0 {
			return es, errors.New("pipeline: a star edge batch holds a bad member")
		}
		c, k := binary.Uvarint(b[n:])
		if k <= 0 {
			return es, errors.New("pipeline: a star edge batch holds a bad centre")
		}
		es = append(es, starEdge{Member: m, Centre: c})
		b = b[n+k:]
	}
	return es, nil
}

// Stars groups the candidate keys into buckets and returns their star
// edges, KV<range, batch>, at most one per key a document has. Under
// MethodSimHash the fingerprints are keyed by the plan for the document
// count first.
func Stars(s beam.Scope, opt Options, keys, sims, counts beam.PCollection, keyParts int) beam.PCollection {
	s = s.Scope("Candidates")
	if opt.Method == rule.MethodSimHash {
		n := stats.Sum(s.Scope("Count documents"), counts)
		tk := beam.ParDo(s.Scope("Table keys"), &tableKeysFn{Rule: opt.ruleConfig(), KeyParts: keyParts, Shuffle: shuffleCounter{On: opt.CountShuffle}},
			sims, beam.SideInput{Input: n})
		keys = beam.Flatten(s, keys, tk)
	}
	return beam.ParDo(s.Scope("Stars"), &starFn{Shuffle: shuffleCounter{On: opt.CountShuffle}}, beam.GroupByKey(s, keys))
}
