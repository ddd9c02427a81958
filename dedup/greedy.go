package dedup

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/neardup/neardup/minhash"
)

// greedyCandidates is the candidate stage of ClusterGreedy: collect the
// candidate pairs, match every twin group's lead against the kept set of
// earlier runs (incremental mode), then run the keep-first rule over the
// pairs in priority order.
func (r *runner) greedyCandidates(ctx context.Context, lsh *minhash.LSH) error {
	d := r.d
	n := d.len()
	pairs := r.exactPairs
	r.exactPairs = nil
	count := 0
	if r.bands == nil {
		err := r.candidatePairs(ctx, lsh, func(a, b int) error {
			pairs = append(pairs, PackPair(a, b))
			if count++; count&4095 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				r.progress(Progress{Stage: "candidates", Docs: int64(count)})
			}
			return nil
		})
		if err != nil {
			return err
		}
		r.cand.candidates.Store(int64(count))
	}

	// Priority: order[p] is the document at position p, rank its inverse;
	// nil for input order. lead(g) is the first member of twin group g (by
	// its first document read) in priority order: g itself in input order.
	order := r.priority()
	var rank, leadOf []int32
	lead := func(g int32) int32 {
		if leadOf == nil {
			return g
		}
		return leadOf[g]
	}
	if order != nil {
		rank = make([]int32, n)
		for p, i := range order {
			rank[i] = int32(p)
		}
		leadOf = make([]int32, n)
		for i := range leadOf {
			leadOf[i] = -1
		}
		for _, i := range order {
			if g := d.first.get(int(i)); leadOf[g] < 0 {
				leadOf[g] = i
			}
		}
		r.leadOf = leadOf
		for j, p := range pairs {
			a, b := lead(int32(uint32(p))), lead(int32(p>>32))
			pairs[j] = PackPair(int(rank[a]), int(rank[b]))
		}
	}
	pos := func(i int32) int32 {
		if rank == nil {
			return i
		}
		return rank[i]
	}
	doc := func(p int) int {
		if order == nil {
			return p
		}
		return int(order[p])
	}
	SortPairs(pairs)

	// Leads that duplicate a document kept by an earlier run.
	var removed []bool
	if r.kept != nil {
		r.stored = make([]KeptMatch, n)
		r.storedOK = make([]bool, n)
		if err := r.matchKept(ctx, lead); err != nil {
			return err
		}
		removed = make([]bool, n)
		for i := range n {
			if r.storedOK[i] {
				removed[pos(int32(i))] = true
			}
		}
	}

	st := &r.cand
	feat := func(p int) Features { return r.feat(doc(p)) }
	var pre func(p int) *Prefilter
	// The members' prefilters (and, when the first pass's sets were
	// dropped, their sets), once the candidates name them (members.go).
	loadMembers := func(b *buckets) error {
		if r.opt.Verify != VerifyJaccard {
			return nil
		}
		r.setMembers(pairs, b, doc)
		if err := r.loadMembers(ctx); err != nil {
			return err
		}
		pre = func(p int) *Prefilter { return r.pre(doc(p)) }
		return nil
	}
	var keeper []int32
	if r.bands != nil {
		b, err := r.bands.group(r.opt.Workers, func(i int32) int32 { return pos(lead(i)) })
		if err != nil {
			return err
		}
		// The buckets are in memory now: the spilled keys' disk (~0.3 KB a
		// document) comes back before the outputs and OnKept, which may
		// write a store as large (neardup import).
		if err := r.bands.close(); err != nil {
			return fmt.Errorf("dedup: band keys: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// The pairs of buckets of two join the exact copies' pairs.
		if len(b.pairs) > 0 {
			pairs = append(pairs, b.pairs...)
			sortUint64(pairs, r.opt.Workers)
			pairs = slices.Compact(pairs)
			b.pairs = nil
		}
		r.sum.BandBuckets, r.sum.BandMemberships, r.sum.BandPairs = int64(len(b.start)-1), int64(len(b.of)), int64(len(pairs))
		if err := loadMembers(b); err != nil {
			return err
		}
		if keeper, err = r.rule.keepFirstBuckets(ctx, n, feat, pre, b, pairs, removed, st); err != nil {
			return err
		}
		count = int(st.candidates.Load())
	} else {
		if err := loadMembers(nil); err != nil {
			return err
		}
		keeper = r.rule.keepFirst(n, feat, pre, pairs, removed, st)
		st.skipped.Store(int64(count) - st.verified.Load() - st.rejected.Load() - st.prefiltered.Load())
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	// Back to documents; twins share their lead's verdict.
	r.keeper = make([]int32, n)
	for i := range n {
		l := lead(d.first.get(int(i)))
		k := keeper[pos(l)]
		switch {
		case k < 0:
			r.keeper[i] = -1
			if i != int(l) {
				r.stored[i], r.storedOK[i] = r.stored[l], true
			}
		case int(k) == int(pos(l)):
			r.keeper[i] = l
		default:
			r.keeper[i] = int32(doc(int(k)))
		}
	}
	r.progress(Progress{Stage: "candidates", Docs: int64(count), Done: true})
	return nil
}

// priority returns the documents in keep-policy order, nil for input order.
func (r *runner) priority() []int32 {
	if r.opt.Keep == KeepFirst {
		return nil
	}
	order := make([]int32, r.d.len())
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		switch {
		case r.better(int(a), int(b)):
			return -1
		case r.better(int(b), int(a)):
			return 1
		}
		return cmp.Compare(a, b)
	})
	return order
}

// matchKept matches the lead of every twin group against the kept set, in
// parallel: the kept documents all come before the batch in priority, so
// their verdicts do not depend on the batch's.
func (r *runner) matchKept(ctx context.Context, lead func(g int32) int32) error {
	d := r.d
	n := d.len()
	var leads []int32
	for i := range n {
		if int(d.first.get(i)) == i {
			leads = append(leads, lead(int32(i)))
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, r.opt.Workers)
	for w := range r.opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := w; j < len(leads); j += r.opt.Workers {
				if j&1023 == 0 && ctx.Err() != nil {
					errs[w] = ctx.Err()
					return
				}
				i := leads[j]
				f := r.feat(int(i))
				m, ok, err := r.kept.Match(&f)
				if err != nil {
					errs[w] = err
					return
				}
				r.stored[i], r.storedOK[i] = m, ok
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// keepFirst is KeepFirst counting the verifications in st.
func (r *Rule) keepFirst(n int, feat func(i int) Features, pre func(i int) *Prefilter, pairs []uint64, removed []bool, st *candStats) []int32 {
	keeper := newKeeper(n, removed)
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
				st.skipped.Add(int64(len(cands)))
			}
			continue
		}
		if len(cands) == 0 {
			continue
		}
		if m := r.firstKept(y, cands, feat, pre, st); m >= 0 {
			keeper[y] = m
		}
	}
	return keeper
}

// newKeeper returns the keeper array of n documents before any decision:
// each keeps itself, but one removed on entry (-1).
func newKeeper(n int, removed []bool) []int32 {
	keeper := make([]int32, n)
	for i := range keeper {
		keeper[i] = int32(i)
		if removed != nil && removed[i] {
			keeper[i] = -1
		}
	}
	return keeper
}

// firstKept returns the first of cands (kept documents, in priority order)
// that document y duplicates, or -1: Rule.Match, reading each candidate's
// features only when its turn comes, since a read may go to the disk
// (sketchStore) and the first match ends the search. pre, when not nil,
// gives the documents' prefilters (in memory): a candidate the prefilter
// rejects is not read at all, nor is y when every candidate is rejected so.
// It counts in st.
func (r *Rule) firstKept(y int32, cands []int32, feat func(i int) Features, pre func(i int) *Prefilter, st *candStats) int32 {
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
		st.prefiltered.Add(int64(prefiltered))
		if m >= 0 {
			st.verified.Add(1)
			st.rejected.Add(int64(m - prefiltered))
			st.skipped.Add(int64(len(cands) - m - 1))
		} else {
			st.rejected.Add(int64(len(cands) - prefiltered))
		}
	}
	if m < 0 {
		return -1
	}
	return cands[m]
}
