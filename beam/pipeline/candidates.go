package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/filter"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/simhash"
)

// Candidate keys are strings: a kind byte, a table or band number (2 bytes
// big-endian) and a 64-bit value (8 bytes); the shard pair (2+2 bytes) is
// appended when the key is grouped.
const (
	kindTable = 't' // key blocks of a SimHash plan table
	kindExact = 'e' // token-sequence hash
	kindBand  = 'b' // LSH band key
)

func candKey(kind byte, t int, v uint64) string {
	var b [11]byte
	b[0] = kind
	binary.BigEndian.PutUint16(b[1:], uint16(t))
	binary.BigEndian.PutUint64(b[3:], v)
	return string(b[:])
}

func shardKey(key string, i, j int) string {
	var b [4]byte
	binary.BigEndian.PutUint16(b[:], uint16(i))
	binary.BigEndian.PutUint16(b[2:], uint16(j))
	return key + string(b[:])
}

// Pair is a candidate pair of positions, A < B.
type Pair struct{ A, B uint64 }

func newPair(a, b uint64) Pair {
	if a > b {
		a, b = b, a
	}
	return Pair{a, b}
}

// plans caches index.PlanJoin by input size: every worker derives the same
// plan from the document count.
var plans sync.Map // [2]int{n, k} -> index.Plan

func planFor(n, k int) index.Plan {
	key := [2]int{n, k}
	if p, ok := plans.Load(key); ok {
		return p.(index.Plan)
	}
	p := index.PlanJoin(n, k).Plan
	plans.Store(key, p)
	return p
}

// keysFn keys each entry by every candidate key it has: the key blocks of
// each table of the plan for n documents at Rule.QueryK (SimHash), the band
// keys (MinHash), and the token-sequence hash.
type keysFn struct {
	Rule ruleConfig

	rule *dedup.Rule
}

func (f *keysFn) Setup() (err error) { f.rule, err = f.Rule.rule(); return err }

func (f *keysFn) ProcessElement(be bandEntry, n int, emit func(string, Entry)) {
	e := be.E
	emit(candKey(kindExact, 0, e.Exact), e)
	if f.Rule.Method == dedup.MethodMinHash {
		for b, k := range be.Keys {
			emit(candKey(kindBand, b, k), e)
		}
		return
	}
	// Documents without features all have fingerprint 0; they can only be
	// exact copies (dedup.Rule.ExactOnly; dedup.Run leaves them out of the
	// join too).
	if ft := e.features(); f.rule.ExactOnly(&ft) {
		return
	}
	p := planFor(n, f.rule.QueryK())
	for t := range p.Tables {
		emit(candKey(kindTable, t, e.FP&p.KeyMask(t)), e)
	}
}

// hotFn keeps the keys with more than max entries and their shard count.
type hotFn struct{ Max int }

func (f *hotFn) ProcessElement(key string, count int, emit func(string, int)) {
	if count > f.Max {
		emit(key, (count+f.Max-1)/f.Max)
	}
}

// splitFn sends the entries of a hot key with s shards to the s shard pairs
// it belongs to: shard h = hash(position) mod s, pairs (min(h,j), max(h,j))
// for j in 0..s-1. A group (i, i) pairs its own entries, a group (i, j)
// pairs shard i's with shard j's: every pair of the key is seen once, and no
// group has more than about 2·max entries. Other keys go on as one group.
type splitFn struct {
	hot  map[string]int
	once sync.Once
}

func (f *splitFn) ProcessElement(key string, e Entry, hot func(*string, *int) bool, emit func(string, Entry)) {
	f.once.Do(func() {
		f.hot = map[string]int{}
		var k string
		var s int
		for hot(&k, &s) {
			f.hot[k] = s
		}
	})
	s, ok := f.hot[key]
	if !ok {
		emit(shardKey(key, 0, 0), e)
		return
	}
	h := int(simhash.Mix64(e.Pos, 0x5eed) % uint64(s))
	e.Shard = uint16(h)
	for j := range s {
		emit(shardKey(key, min(h, j), max(h, j)), e)
	}
}

var candidateCount = beam.NewCounter("neardup", "candidates")

// pairsFn emits the candidate pairs of one key group (or shard pair).
type pairsFn struct {
	Rule ruleConfig

	rule *dedup.Rule
}

func (f *pairsFn) Setup() (err error) { f.rule, err = f.Rule.rule(); return err }

func (f *pairsFn) ProcessElement(key string, iter func(*Entry) bool, n int, emit func(Pair)) error {
	if len(key) != 15 {
		return fmt.Errorf("pipeline: bad candidate key %q", key)
	}
	kind, t := key[0], int(binary.BigEndian.Uint16([]byte(key[1:3])))
	si, sj := binary.BigEndian.Uint16([]byte(key[11:13])), binary.BigEndian.Uint16([]byte(key[13:15]))
	var left, right []Entry
	var e Entry
	for iter(&e) {
		if e.Shard == si {
			left = append(left, e)
		} else {
			right = append(right, e)
		}
	}
	var p index.Plan
	if kind == kindTable {
		p = planFor(n, f.rule.QueryK())
	}
	try := func(a, b *Entry) {
		if f.candidate(kind, t, p, a, b) {
			emit(newPair(a.Pos, b.Pos))
		}
	}
	if si == sj {
		for x := range left {
			for y := x + 1; y < len(left); y++ {
				try(&left[x], &left[y])
			}
		}
		return nil
	}
	for x := range left {
		for y := range right {
			try(&left[x], &right[y])
		}
	}
	return nil
}

// candidate reports whether a and b, met in a group of kind and table t, are
// a candidate pair to emit from this group. A SimHash pair within PairK is
// emitted by the first table whose key it agrees on; the exact-hash group
// emits the pairs no table emits (Rule.Near holds for equal hashes whatever
// the fingerprints). Under MinHash every band pair is a candidate (Near is
// always true there) and the exact group adds the documents without tokens,
// which the LSH leaves out.
func (f *pairsFn) candidate(kind byte, t int, p index.Plan, a, b *Entry) bool {
	fa, fb := a.features(), b.features()
	switch kind {
	case kindBand:
		return true
	case kindExact:
		if a.Exact != b.Exact {
			return false // a 64-bit key holds the whole hash; never happens
		}
		if f.Rule.Method == dedup.MethodMinHash {
			return a.Tokens == 0 || b.Tokens == 0
		}
		return !f.simhashNear(&fa, &fb)
	case kindTable:
		if !f.simhashNear(&fa, &fb) {
			return false
		}
		for u := range t {
			if (a.FP^b.FP)&p.KeyMask(u) == 0 {
				return false // an earlier table has it
			}
		}
		return true
	}
	return false
}

// simhashNear reports whether the fingerprints alone make a and b
// candidates: both have one, within PairK.
func (f *pairsFn) simhashNear(a, b *dedup.Features) bool {
	if f.rule.ExactOnly(a) || f.rule.ExactOnly(b) {
		return false
	}
	return bits.OnesCount64(a.FP^b.FP) <= f.rule.PairK(a, b)
}

func countPairs(ctx context.Context, p Pair) Pair {
	candidateCount.Inc(ctx, 1)
	return p
}

func keyOne(k string, _ Entry) (string, int) { return k, 1 }

// Candidates returns the distinct candidate pairs of the entries: those
// dedup.Run finds (index.Join and the exact twins, or the LSH bands).
func Candidates(s beam.Scope, opt Options, entries beam.PCollection) beam.PCollection {
	s = s.Scope("Candidates")
	n := stats.Sum(s.Scope("Count documents"), beam.ParDo(s, bandEntryOne, entries))
	keyed := beam.ParDo(s.Scope("Candidate keys"), &keysFn{Rule: opt.ruleConfig()}, entries, beam.SideInput{Input: n})

	hs := s.Scope("Split hot keys")
	counts := stats.SumPerKey(hs, beam.ParDo(hs, keyOne, keyed))
	hot := beam.ParDo(hs, &hotFn{Max: opt.MaxBucket}, counts)
	sharded := beam.ParDo(hs, &splitFn{}, keyed, beam.SideInput{Input: hot})

	ps := s.Scope("Pairs per key")
	groups := beam.GroupByKey(ps, sharded)
	pairs := beam.ParDo(ps, &pairsFn{Rule: opt.ruleConfig()}, groups, beam.SideInput{Input: n})

	ds := s.Scope("Distinct pairs")
	return beam.ParDo(ds, countPairs, filter.Distinct(ds, pairs))
}

func bandEntryOne(bandEntry) int { return 1 }
