package rule

import (
	"slices"
	"sync/atomic"
)

// The keep-first rule over a set of documents and their candidate pairs:
// Rule.Match for each document in turn, against its kept candidates before
// it, reading a candidate's features only when its turn comes. The batch
// (package dedup) runs it over its pairs and band buckets.

// Counts counts what the keep-first rule did with the candidates it was
// given, for a caller's summary. It is safe for concurrent use.
type Counts struct {
	Candidates, Skipped, Verified, Rejected atomic.Int64
	Prefiltered                             atomic.Int64 // rejected by the prefilter, without a read
}

// KeepFirst applies the rule to n documents in priority order. feat(i)
// returns document i's features (it may reuse its result's storage between
// calls only if the caller copies; KeepFirst holds at most one document and
// its kept candidates at a time). pairs are the candidate pairs as y<<32 | x
// with x < y, sorted ascending, duplicates allowed. removed[i], when set on
// entry, marks a document already removed in favour of a document outside
// this set (an earlier run's, say); it never keeps anything.
//
// It returns keeper: keeper[i] == i when document i is kept, the kept
// document it duplicates otherwise, and -1 for a document removed on entry.
// The pairs of one connected component do not depend on any other, so
// callers may run KeepFirst per component, in parallel.
func (r *Rule) KeepFirst(n int, feat func(i int) Features, pairs []uint64, removed []bool) []int32 {
	return r.KeepFirstCounted(n, feat, nil, pairs, removed, nil)
}

// SortPairs sorts packed pairs for KeepFirst.
func SortPairs(pairs []uint64) { slices.Sort(pairs) }

// PackPair packs the candidate pair of documents x and y (in any order) for
// KeepFirst.
func PackPair(x, y int) uint64 {
	if x > y {
		x, y = y, x
	}
	return uint64(y)<<32 | uint64(uint32(x))
}

// KeepFirstCounted is KeepFirst with the documents' prefilters in memory
// and its work counted: pre, when not nil, gives them (FirstKept), and st,
// when not nil, counts the candidates skipped, verified, rejected and
// prefiltered. The batch's candidate stage runs it.
func (r *Rule) KeepFirstCounted(n int, feat func(i int) Features, pre func(i int) *Prefilter, pairs []uint64, removed []bool, st *Counts) []int32 {
	keeper := NewKeeper(n, removed)
	var cands []int32
	for p := 0; p < len(pairs); {
		y := int32(pairs[p] >> 32)
		cands = cands[:0]
		for ; p < len(pairs) && int32(pairs[p]>>32) == y; p++ {
			x := int32(uint32(pairs[p]))
			if keeper[x] == x && (len(cands) == 0 || cands[len(cands)-1] != x) {
				cands = append(cands, x)
			}
		}
		if keeper[y] != y {
			if st != nil {
				st.Skipped.Add(int64(len(cands)))
			}
			continue
		}
		if len(cands) == 0 {
			continue
		}
		if m := r.FirstKept(y, cands, feat, pre, st); m >= 0 {
			keeper[y] = m
		}
	}
	return keeper
}

// NewKeeper returns the keeper array of n documents (as KeepFirst returns
// it) before any decision: each keeps itself, but one removed on entry (-1).
func NewKeeper(n int, removed []bool) []int32 {
	keeper := make([]int32, n)
	for i := range keeper {
		keeper[i] = int32(i)
		if removed != nil && removed[i] {
			keeper[i] = -1
		}
	}
	return keeper
}

// FirstKept returns the first of cands (kept documents, in priority order)
// that document y duplicates, or -1: Rule.Match, reading each candidate's
// features only when its turn comes, since a read may go to the disk (the
// batch's temporary file of shingle sets) and the first match ends the
// search. pre, when not nil,
// gives the documents' prefilters (in memory): a candidate the prefilter
// rejects is not read at all, nor is y when every candidate is rejected so.
// It counts in st when st is not nil. The batch's keep-first pass over band
// buckets calls it for each document with candidates.
func (r *Rule) FirstKept(y int32, cands []int32, feat func(i int) Features, pre func(i int) *Prefilter, st *Counts) int32 {
	var fy Features
	readY := false
	var py *Prefilter
	if pre != nil {
		py = pre(int(y))
	}
	m, prefiltered := -1, 0
	for j, x := range cands {
		if py != nil && r.PrefilterRejects(pre(int(x)), py) {
			prefiltered++
			continue
		}
		if !readY {
			fy, readY = feat(int(y)), true
		}
		fx := feat(int(x))
		if r.Duplicates(&fx, &fy) {
			m = j
			break
		}
	}
	if st != nil {
		st.Prefiltered.Add(int64(prefiltered))
		if m >= 0 {
			st.Verified.Add(1)
			st.Rejected.Add(int64(m - prefiltered))
			st.Skipped.Add(int64(len(cands) - m - 1))
		} else {
			st.Rejected.Add(int64(len(cands) - prefiltered))
		}
	}
	if m < 0 {
		return -1
	}
	return cands[m]
}
