package index

import (
	"context"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// The self-join engine. For each table of the plan it groups the fingerprints
// by the table's key and compares the fingerprints within each group, as in
// section 3.1 of Manku, Jain and Das Sarma (2007) and seomoz/simhash-cpp's
// find_all, with three changes that make it fast:
//
//   - Grouping is a two-level radix partition (Knuth, TAOCP vol. 3, 5.2.5)
//     instead of a comparison sort: one parallel scatter pass moves
//     (fingerprint, position) entries into 2^b1 buckets by the key's leading
//     bits, and each bucket, now small enough for the CPU cache, is split by a
//     counting sort on the next bits into sub-buckets of about one entry.
//     Entries of a sub-bucket are compared pairwise after checking that their
//     whole keys agree, so the key never needs sorting to the last bit.
//   - A pair is reported only by the first table (lowest index) whose key it
//     agrees on, so every pair comes out exactly once with no set of seen
//     pairs (simhash-cpp keeps an unordered_set of all pairs).
//   - Large sub-buckets are sorted by (key, fingerprint) so that identical
//     fingerprints form groups compared once as a whole: a group of m copies
//     costs O(m log m), not O(m^2), and Clusters receives it as m-1 edges.
//
// Workers share the work of each table: they scatter disjoint slices of the
// input, then take buckets from an atomic counter. Pairs travel in batches
// over a channel to the goroutine that called Join, which calls emit.

// joinSmallGroup is the sub-bucket size up to which entries are compared pairwise
// without sorting.
const joinSmallGroup = 24

// joinCheckEvery is how many entries a worker handles between checks of ctx.
const joinCheckEvery = 1 << 16

// joinKeyExtractor gathers a table's key bits, which are blocks of the unpermuted
// fingerprint, into an integer: the bits under KeyMask, most significant
// first (a software PEXT). Adjacent key blocks are merged into one run, so a
// key has at most four runs in most plans; further runs go to rest.
type joinKeyExtractor struct {
	shift [4]uint8  // right shift bringing the run to bit 0
	mask  [4]uint64 // width mask of the run; 0 for unused runs
	dst   [4]uint8  // left shift of the run within the key
	rest  []joinKeyRun
}

type joinKeyRun struct {
	shift, dst uint8
	mask       uint64
}

func newJoinKeyExtractor(keyMask uint64) joinKeyExtractor {
	var runs []joinKeyRun
	out := bits.OnesCount64(keyMask) // bits of the key still to place
	for m := keyMask; m != 0; {
		top := 63 - bits.LeadingZeros64(m) // highest bit of the run
		w := bits.LeadingZeros64(^(m << uint(63-top)))
		lo := top - w + 1
		out -= w
		runs = append(runs, joinKeyRun{shift: uint8(lo), dst: uint8(out), mask: widthMask(w)})
		m &^= widthMask(w) << uint(lo)
	}
	var e joinKeyExtractor
	for i, r := range runs {
		if i < 4 {
			e.shift[i], e.mask[i], e.dst[i] = r.shift, r.mask, r.dst
		} else {
			e.rest = append(e.rest, r)
		}
	}
	return e
}

func (e *joinKeyExtractor) key(x uint64) uint64 {
	k := (x>>e.shift[0]&e.mask[0])<<e.dst[0] | (x>>e.shift[1]&e.mask[1])<<e.dst[1] |
		(x>>e.shift[2]&e.mask[2])<<e.dst[2] | (x>>e.shift[3]&e.mask[3])<<e.dst[3]
	if e.rest != nil {
		k |= e.restKey(x)
	}
	return k
}

func (e *joinKeyExtractor) restKey(x uint64) uint64 {
	var k uint64
	for _, r := range e.rest {
		k |= (x >> r.shift & r.mask) << r.dst
	}
	return k
}

// joiner is one run of the engine.
type joiner struct {
	ctx     context.Context
	fps     []uint64
	k       int
	plan    *Plan
	workers int
	full    bool // all pairs (Join) or enough edges for the components (Clusters)
	bucket  int  // target entries per first-level bucket
	masks   []uint64

	// Entries of the current table, bucketed by the key's leading b1 bits.
	xs    []uint64
	pos   []uint32
	start []int // bucket b is xs[start[b]:start[b+1]]

	// Current table.
	t      int
	ex     joinKeyExtractor
	kb     int    // key bits
	b1     int    // bucket bits
	keyM   uint64 // KeyMask(t)
	next   atomic.Int64
	out    chan []Pair
	free   chan []Pair
	failed atomic.Bool // a worker saw ctx done
}

// joinBucketBits chooses b1 so that buckets average a few thousand entries (a few
// tens of KiB: they stay in cache during the second level), without more than
// 4096 scatter destinations, which would thrash the TLB and write buffers.
func joinBucketBits(n, kb, target int) int {
	b := 0
	for b < 12 && n>>uint(b) > target {
		b++
	}
	return min(b, kb)
}

func (j *joiner) run() {
	defer close(j.out)
	n := len(j.fps)
	j.xs = make([]uint64, n)
	j.pos = make([]uint32, n)
	workers := make([]*joinWorker, j.workers)
	for w := range workers {
		workers[w] = &joinWorker{j: j}
	}
	for t := range j.plan.Tables {
		if j.ctx.Err() != nil {
			j.failed.Store(true)
			return
		}
		j.t = t
		j.keyM = j.masks[t]
		j.ex = newJoinKeyExtractor(j.keyM)
		j.kb = j.plan.KeyBits(t)
		j.b1 = joinBucketBits(n, j.kb, j.bucket)
		j.scatter()
		if j.failed.Load() {
			return
		}
		j.next.Store(0)
		var wg sync.WaitGroup
		for _, w := range workers {
			wg.Go(w.buckets)
		}
		wg.Wait()
		if j.failed.Load() {
			return
		}
	}
	for _, w := range workers {
		if !w.flush() {
			return
		}
	}
}

// scatter fills xs, pos and start for the current table: each worker counts
// the bucket sizes of its slice of the input, then moves its entries to its
// own part of each bucket, so the pass is stable and needs no locks.
func (j *joiner) scatter() {
	n := len(j.fps)
	nb := 1 << uint(j.b1)
	shift := uint(j.kb - j.b1)
	W := j.workers
	if n < 16*j.bucket {
		W = 1 // not worth the goroutines
	}
	counts := make([][]int, W)
	var wg sync.WaitGroup
	for w := range W {
		lo, hi := n*w/W, n*(w+1)/W
		counts[w] = make([]int, nb)
		wg.Go(func() {
			c := counts[w]
			ex := j.ex
			for s := lo; s < hi; s += joinCheckEvery {
				if j.ctx.Err() != nil {
					j.failed.Store(true)
					return
				}
				for _, x := range j.fps[s:min(s+joinCheckEvery, hi)] {
					c[ex.key(x)>>shift]++
				}
			}
		})
	}
	wg.Wait()
	if j.failed.Load() {
		return
	}
	j.start = slices.Grow(j.start[:0], nb+1)[:nb+1]
	sum := 0
	for b := range nb {
		j.start[b] = sum
		for w := range W {
			c := counts[w][b]
			counts[w][b] = sum
			sum += c
		}
	}
	j.start[nb] = sum
	for w := range W {
		lo, hi := n*w/W, n*(w+1)/W
		wg.Go(func() {
			off := counts[w]
			ex := j.ex
			xs, pos := j.xs, j.pos
			for s := lo; s < hi; s += joinCheckEvery {
				if j.ctx.Err() != nil {
					j.failed.Store(true)
					return
				}
				e := min(s+joinCheckEvery, hi)
				for i, x := range j.fps[s:e] {
					b := ex.key(x) >> shift
					o := off[b]
					xs[o] = x
					pos[o] = uint32(s + i)
					off[b] = o + 1
				}
			}
		})
	}
	wg.Wait()
}

// firstTableOf reports whether the current table is the first whose key two
// fingerprints differing in the bits v agree on.
func (j *joiner) firstTableOf(v uint64) bool {
	for _, m := range j.masks[:j.t] {
		if v&m == 0 {
			return false
		}
	}
	return true
}

// joinWorker holds one worker's scratch space, reused across buckets and
// tables.
type joinWorker struct {
	j      *joiner
	xs     []uint64 // a bucket split into sub-buckets
	pos    []uint32
	hist   []int
	sorted []joinEntry
	batch  []Pair
}

type joinEntry struct {
	key, x uint64
	pos    uint32
}

// buckets processes buckets taken from the shared counter until none remain.
func (w *joinWorker) buckets() {
	j := w.j
	nb := len(j.start) - 1
	// Chunks of buckets amortise the atomic counter; 64 chunks per worker
	// balance the load.
	chunk := max(1, nb/(64*j.workers))
	done := 0
	for {
		b0 := int(j.next.Add(int64(chunk))) - chunk
		if b0 >= nb {
			return
		}
		for b := b0; b < min(b0+chunk, nb); b++ {
			s, e := j.start[b], j.start[b+1]
			if !w.bucket(j.xs[s:e], j.pos[s:e]) {
				j.failed.Store(true)
				return
			}
			done += e - s
			if done >= joinCheckEvery {
				done = 0
				if j.ctx.Err() != nil {
					j.failed.Store(true)
					return
				}
			}
		}
	}
}

// bucket compares the entries of one bucket whose keys agree on the leading b1
// bits. It returns false if the join must stop.
func (w *joinWorker) bucket(xs []uint64, pos []uint32) bool {
	m := len(xs)
	if m < 2 {
		return true
	}
	j := w.j
	rem := j.kb - j.b1
	if rem == 0 || m <= joinSmallGroup {
		return w.group(xs, pos)
	}
	// Counting sort on the next b2 key bits, about one sub-bucket per entry.
	b2 := min(rem, bits.Len(uint(m)))
	shift := uint(rem - b2)
	mask := uint64(1)<<uint(b2) - 1
	nh := 1 << uint(b2)
	if cap(w.hist) < nh+1 {
		w.hist = make([]int, nh+1)
	}
	h := w.hist[:nh+1]
	clear(h)
	ex := &j.ex
	for _, x := range xs {
		h[ex.key(x)>>shift&mask+1]++
	}
	for i := 1; i <= nh; i++ {
		h[i] += h[i-1]
	}
	if cap(w.xs) < m {
		w.xs = make([]uint64, m+m/4)
		w.pos = make([]uint32, m+m/4)
	}
	sx, sp := w.xs[:m], w.pos[:m]
	for i, x := range xs {
		c := ex.key(x) >> shift & mask
		o := h[c]
		sx[o] = x
		sp[o] = pos[i]
		h[c] = o + 1
	}
	// h[c] is now the end of sub-bucket c, and the start of c+1.
	lo := 0
	for c := range nh {
		hi := h[c]
		if hi-lo >= 2 && !w.group(sx[lo:hi], sp[lo:hi]) {
			return false
		}
		lo = hi
	}
	return true
}

// group compares the entries of a sub-bucket pairwise, keeping those whose
// whole keys agree.
func (w *joinWorker) group(xs []uint64, pos []uint32) bool {
	if len(xs) > joinSmallGroup {
		return w.largeGroup(xs, pos)
	}
	j := w.j
	keyM := j.keyM
	k := j.k
	for a, x := range xs {
		for b := a + 1; b < len(xs); b++ {
			v := x ^ xs[b]
			if v&keyM != 0 {
				continue
			}
			d := bits.OnesCount64(v)
			if d > k || !j.firstTableOf(v) {
				continue
			}
			pa, pb := int(pos[a]), int(pos[b])
			if !w.emit(min(pa, pb), max(pa, pb), d) {
				return false
			}
		}
	}
	return true
}

// largeGroup sorts a big sub-bucket by (key, fingerprint, position) and
// compares groups of identical fingerprints as wholes.
func (w *joinWorker) largeGroup(xs []uint64, pos []uint32) bool {
	j := w.j
	ex := &j.ex
	es := w.sorted[:0]
	for i, x := range xs {
		es = append(es, joinEntry{ex.key(x), x, pos[i]})
	}
	w.sorted = es
	slices.SortFunc(es, func(a, b joinEntry) int {
		switch {
		case a.key != b.key:
			return joinCmp(a.key, b.key)
		case a.x != b.x:
			return joinCmp(a.x, b.x)
		}
		return joinCmp(uint64(a.pos), uint64(b.pos))
	})
	for rs := 0; rs < len(es); {
		re := rs + 1
		for re < len(es) && es[re].key == es[rs].key {
			re++
		}
		if !w.sameKey(es[rs:re]) {
			return false
		}
		rs = re
	}
	return true
}

func joinCmp(a, b uint64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// joinKeyRun handles entries with equal keys, sorted by fingerprint: identical
// fingerprints are consecutive.
func (w *joinWorker) sameKey(es []joinEntry) bool {
	j := w.j
	// Group starts: es[g[i]:g[i+1]] hold one fingerprint value.
	var gs []int
	for i := range es {
		if i == 0 || es[i].x != es[i-1].x {
			gs = append(gs, i)
		}
	}
	gs = append(gs, len(es))
	ng := len(gs) - 1
	// Identical fingerprints agree on every key, so table 0 reports them.
	if j.t == 0 {
		for g := range ng {
			same := es[gs[g]:gs[g+1]]
			for a := range same {
				b0 := a + 1
				if !j.full && a > 0 {
					break // a star from the first copy connects them all
				}
				for b := b0; b < len(same); b++ {
					if !w.emit(int(same[a].pos), int(same[b].pos), 0) {
						return false
					}
				}
			}
		}
	}
	for ga := range ng {
		if ga%256 == 255 && j.ctx.Err() != nil {
			return false
		}
		xa := es[gs[ga]].x
		for gb := ga + 1; gb < ng; gb++ {
			v := xa ^ es[gs[gb]].x
			d := bits.OnesCount64(v)
			if d > j.k || !j.firstTableOf(v) {
				continue
			}
			A, B := es[gs[ga]:gs[ga+1]], es[gs[gb]:gs[gb+1]]
			if !j.full {
				A, B = A[:1], B[:1]
			}
			for _, ea := range A {
				for _, eb := range B {
					pa, pb := int(ea.pos), int(eb.pos)
					if !w.emit(min(pa, pb), max(pa, pb), d) {
						return false
					}
				}
			}
		}
	}
	return true
}

// emit adds a pair to the worker's batch, handing the batch over when full.
func (w *joinWorker) emit(a, b, d int) bool {
	w.batch = append(w.batch, Pair{a, b, d})
	if len(w.batch) < joinBatch {
		return true
	}
	return w.flush()
}

// flush hands the batch to the emitting goroutine.
func (w *joinWorker) flush() bool {
	if len(w.batch) == 0 {
		return true
	}
	j := w.j
	select {
	case j.out <- w.batch:
	case <-j.ctx.Done():
		j.failed.Store(true)
		return false
	}
	select {
	case w.batch = <-j.free:
		w.batch = w.batch[:0]
	default:
		w.batch = make([]Pair, 0, joinBatch)
	}
	return true
}
