package index

import (
	"cmp"
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
//   - Grouping is a most-significant-digit radix partition (Knuth, TAOCP
//     vol. 3, 5.2.5) instead of a comparison sort. One parallel scatter pass
//     moves (permuted fingerprint, position) entries into at most 256 buckets
//     by the key's leading bits (more destinations thrash the TLB); each
//     bucket, now small enough for the CPU cache, is split by counting sorts
//     on the next bits (one level of about log2(size) bits, or 12-bit levels
//     first for very large buckets) into runs of about one entry. Entries of
//     a run are compared pairwise after checking that their whole keys agree,
//     so the key is never sorted to the last bit.
//   - A pair is reported only by the first table (lowest index) whose key it
//     agrees on, so every pair comes out exactly once with no set of seen
//     pairs (simhash-cpp keeps an unordered_set of all pairs). Entries hold
//     permuted fingerprints, so earlier tables' key masks are permuted too;
//     permutations preserve Hamming distance.
//   - Runs longer than joinSmallGroup are sorted by (permuted fingerprint,
//     position) so that identical fingerprints form groups compared once as a
//     whole: m copies cost O(m log m) comparisons, not O(m^2), and Clusters
//     receives them as m-1 edges (Join must still emit their m(m-1)/2 pairs).
//
// Workers share the work of each table: they scatter disjoint slices of the
// input (each to its own part of every bucket, so the pass is stable), then
// take chunks of buckets from an atomic counter. Pairs travel in batches over
// a channel to the goroutine that called Join, which calls emit.
//
// Cost per table entry on the project machine: about 26 ns at 1M
// fingerprints, 37 at 10M and 50 at 100M (BENCHMARKS.md, "Self-join").

// joinSmallGroup is the sub-bucket size up to which entries are compared pairwise
// without sorting.
const joinSmallGroup = 24

// joinCheckEvery is how many entries a worker handles between checks of ctx.
const joinCheckEvery = 1 << 16

// joinMover applies a table's Permutation with few operations: the bits of
// a fingerprint that move by the same distance are moved together, as
// (x & mask) << left >> right. Permutations of block plans have few distinct
// distances (two to four for five or six blocks); up to six are unrolled and
// the rest, if any, loop.
type joinMover struct {
	mask        [6]uint64 // 0 for unused terms
	left, right [6]uint8
	rest        []joinMove
}

type joinMove struct {
	mask        uint64
	left, right uint8
}

func newJoinMover(p Permutation) joinMover {
	var moves []joinMove
	for i := range 64 {
		to := bits.TrailingZeros64(p.Apply(1 << uint(i)))
		var l, r uint8
		if to >= i {
			l = uint8(to - i)
		} else {
			r = uint8(i - to)
		}
		found := false
		for m := range moves {
			if moves[m].left == l && moves[m].right == r {
				moves[m].mask |= 1 << uint(i)
				found = true
			}
		}
		if !found {
			moves = append(moves, joinMove{1 << uint(i), l, r})
		}
	}
	var mv joinMover
	for i, m := range moves {
		if i < len(mv.mask) {
			mv.mask[i], mv.left[i], mv.right[i] = m.mask, m.left, m.right
		} else {
			mv.rest = append(mv.rest, m)
		}
	}
	return mv
}

// apply returns x permuted. The hot loops in scatter inline it by hand.
func (mv *joinMover) apply(x uint64) uint64 {
	y := (x&mv.mask[0])<<mv.left[0]>>mv.right[0] | (x&mv.mask[1])<<mv.left[1]>>mv.right[1] |
		(x&mv.mask[2])<<mv.left[2]>>mv.right[2] | (x&mv.mask[3])<<mv.left[3]>>mv.right[3] |
		(x&mv.mask[4])<<mv.left[4]>>mv.right[4] | (x&mv.mask[5])<<mv.left[5]>>mv.right[5]
	if mv.rest != nil {
		y |= mv.applyRest(x)
	}
	return y
}

func (mv *joinMover) applyRest(x uint64) uint64 {
	var y uint64
	for _, m := range mv.rest {
		y |= (x & m.mask) << m.left >> m.right
	}
	return y
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
	final   int  // most bits sorted by the last level of piece

	// Entries of the current table: permuted fingerprints and their
	// positions, in buckets by the key's leading b1 bits.
	ys    []uint64
	pos   []uint32
	start []int // bucket b is ys[start[b]:start[b+1]]

	// Current table.
	t        int
	mv       joinMover
	keyShift uint     // a permuted value's key is y >> keyShift
	b1       int      // bucket bits
	earlier  []uint64 // key masks of tables 0..t-1, permuted like table t

	next   atomic.Int64 // next bucket to take
	out    chan []Pair
	free   chan []Pair
	failed atomic.Bool // a worker saw ctx done
}

// joinBucketBits chooses b1 so that buckets average a few thousand entries,
// without more than 256 scatter destinations: more thrash the TLB and the
// write buffers (at 10M, 4096 buckets made the scatter 1.6 times slower than
// 256). Large buckets are split further in cache by piece.
func joinBucketBits(n, kb, target int) int {
	b := 0
	for b < 8 && n>>uint(b) > target {
		b++
	}
	return min(b, kb)
}

func (j *joiner) run() {
	defer close(j.out)
	n := len(j.fps)
	j.ys = make([]uint64, n)
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
		perm := j.plan.Permutation(t)
		j.t = t
		j.mv = newJoinMover(perm)
		kb := j.plan.KeyBits(t)
		j.keyShift = uint(64 - kb)
		j.b1 = joinBucketBits(n, kb, j.bucket)
		j.earlier = j.earlier[:0]
		for s := range t {
			// A permutation moves bits, so (x^y)&m == 0 exactly when
			// P(x^y)&P(m) == 0: earlier keys can be tested on permuted values.
			j.earlier = append(j.earlier, perm.Apply(j.plan.KeyMask(s)))
		}
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

// scatter fills ys, pos and start for the current table: each worker counts
// the bucket sizes of its slice of the input, then moves its entries to its
// own part of each bucket, so the pass is stable and needs no locks.
func (j *joiner) scatter() {
	n := len(j.fps)
	nb := 1 << uint(j.b1)
	shift := uint(64 - j.b1) // y >> 64 is 0 in Go: one bucket when b1 is 0
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
			mv := &j.mv
			// apply, inlined by hand: the compiler will not.
			m0, m1, m2, m3, m4, m5 := mv.mask[0], mv.mask[1], mv.mask[2], mv.mask[3], mv.mask[4], mv.mask[5]
			l0, l1, l2, l3, l4, l5 := mv.left[0], mv.left[1], mv.left[2], mv.left[3], mv.left[4], mv.left[5]
			r0, r1, r2, r3, r4, r5 := mv.right[0], mv.right[1], mv.right[2], mv.right[3], mv.right[4], mv.right[5]
			for s := lo; s < hi; s += joinCheckEvery {
				if j.ctx.Err() != nil {
					j.failed.Store(true)
					return
				}
				xs := j.fps[s:min(s+joinCheckEvery, hi)]
				if mv.rest != nil {
					for _, x := range xs {
						c[mv.apply(x)>>shift]++
					}
					continue
				}
				for _, x := range xs {
					y := (x&m0)<<l0>>r0 | (x&m1)<<l1>>r1 | (x&m2)<<l2>>r2 |
						(x&m3)<<l3>>r3 | (x&m4)<<l4>>r4 | (x&m5)<<l5>>r5
					c[y>>shift]++
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
			mv := &j.mv
			m0, m1, m2, m3, m4, m5 := mv.mask[0], mv.mask[1], mv.mask[2], mv.mask[3], mv.mask[4], mv.mask[5]
			l0, l1, l2, l3, l4, l5 := mv.left[0], mv.left[1], mv.left[2], mv.left[3], mv.left[4], mv.left[5]
			r0, r1, r2, r3, r4, r5 := mv.right[0], mv.right[1], mv.right[2], mv.right[3], mv.right[4], mv.right[5]
			ys, pos := j.ys, j.pos
			for s := lo; s < hi; s += joinCheckEvery {
				if j.ctx.Err() != nil {
					j.failed.Store(true)
					return
				}
				e := min(s+joinCheckEvery, hi)
				for i, x := range j.fps[s:e] {
					y := (x&m0)<<l0>>r0 | (x&m1)<<l1>>r1 | (x&m2)<<l2>>r2 |
						(x&m3)<<l3>>r3 | (x&m4)<<l4>>r4 | (x&m5)<<l5>>r5
					if mv.rest != nil {
						y |= mv.applyRest(x)
					}
					b := y >> shift
					o := off[b]
					ys[o] = y
					pos[o] = uint32(s + i)
					off[b] = o + 1
				}
			}
		})
	}
	wg.Wait()
}

// firstTable reports whether the current table is the first whose key two
// fingerprints differing in the (permuted) bits v agree on.
func (j *joiner) firstTable(v uint64) bool {
	for _, m := range j.earlier {
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
	ys     []uint64 // a bucket split into sub-buckets
	pos    []uint32
	hist   [][]uint32 // counters for each level of piece
	sorted []joinEntry
	groups []int
	batch  []Pair
}

type joinEntry struct {
	y   uint64
	pos uint32
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
			if !w.bucket(j.ys[s:e], j.pos[s:e]) {
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

// bucket compares the entries of one bucket, whose keys agree on the leading
// b1 bits. It returns false if the join must stop.
func (w *joinWorker) bucket(ys []uint64, pos []uint32) bool {
	m := len(ys)
	if cap(w.ys) < m {
		w.ys = make([]uint64, m+m/4)
		w.pos = make([]uint32, m+m/4)
	}
	return w.piece(ys, pos, w.ys[:m], w.pos[:m], w.j.b1, 0)
}

// joinPieceBits is the radix of the intermediate levels of piece: 2^12
// counters fit the L1 cache. joinMaxFinalBits bounds the last level's counters
// (256 KiB, in L2).
const (
	joinPieceBits    = 12
	joinMaxFinalBits = 16
)

// piece groups entries whose keys agree on the leading `sorted` bits by a
// most-significant-digit radix sort, ping-ponging between (ys, pos) and the
// scratch (ay, ap) at the same offsets, and compares the entries of each
// final run. The last level sorts on about log2(len) bits, leaving runs of
// about one entry; the bits below stay unsorted, and group checks whole keys.
func (w *joinWorker) piece(ys []uint64, pos []uint32, ay []uint64, ap []uint32, sorted, depth int) bool {
	m := len(ys)
	if m < 2 {
		return true
	}
	j := w.j
	rem := 64 - int(j.keyShift) - sorted // key bits not yet sorted
	if rem == 0 || m <= joinSmallGroup {
		return w.group(ys, pos)
	}
	// One pass sorting about log2(m) bits leaves runs of about one entry; if
	// that needs too many counters for the cache, sort joinPieceBits and
	// recurse.
	b := min(rem, bits.Len(uint(m)))
	final := b <= j.final
	if !final {
		b = min(rem, joinPieceBits)
	}
	shift := uint(64 - sorted - b)
	mask := uint64(1)<<uint(b) - 1
	nh := 1 << uint(b)
	for len(w.hist) <= depth {
		w.hist = append(w.hist, make([]uint32, 1<<max(j.final, joinPieceBits)+1))
	}
	h := w.hist[depth][:nh+1]
	clear(h)
	for _, y := range ys {
		h[y>>shift&mask+1]++
	}
	for i := 1; i <= nh; i++ {
		h[i] += h[i-1]
	}
	for i, y := range ys {
		c := y >> shift & mask
		o := h[c]
		ay[o] = y
		ap[o] = pos[i]
		h[c] = o + 1
	}
	if !final && b < rem {
		// h[c] is now the end of piece c and the start of c+1.
		lo := 0
		for c := range nh {
			hi := int(h[c])
			if hi-lo >= 2 && !w.piece(ay[lo:hi], ap[lo:hi], ys[lo:hi], pos[lo:hi], sorted+b, depth+1) {
				return false
			}
			lo = hi
		}
		return true
	}
	// Runs of equal leading sorted+b bits; most hold one entry, so finding
	// them by comparing neighbours beats walking h.
	shift = uint(64 - sorted - b)
	lo := 0
	for i := 1; i < m; i++ {
		if (ay[i]^ay[i-1])>>shift == 0 {
			continue
		}
		if i-lo >= 2 && !w.group(ay[lo:i], ap[lo:i]) {
			return false
		}
		lo = i
	}
	if m-lo >= 2 {
		return w.group(ay[lo:m], ap[lo:m])
	}
	return true
}

// group compares the entries of a sub-bucket pairwise, keeping those whose
// whole keys agree.
func (w *joinWorker) group(ys []uint64, pos []uint32) bool {
	if len(ys) > joinSmallGroup {
		return w.largeGroup(ys, pos)
	}
	j := w.j
	ks := j.keyShift
	k := j.k
	for a, y := range ys {
		for b := a + 1; b < len(ys); b++ {
			v := y ^ ys[b]
			if v>>ks != 0 {
				continue // keys differ
			}
			d := bits.OnesCount64(v)
			if d > k || !j.firstTable(v) {
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

// largeGroup sorts a big sub-bucket by (permuted fingerprint, position), which
// orders it by key, and within a key brings identical fingerprints together.
func (w *joinWorker) largeGroup(ys []uint64, pos []uint32) bool {
	es := w.sorted[:0]
	for i, y := range ys {
		es = append(es, joinEntry{y, pos[i]})
	}
	w.sorted = es
	slices.SortFunc(es, func(a, b joinEntry) int {
		if c := cmp.Compare(a.y, b.y); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	ks := w.j.keyShift
	for rs := 0; rs < len(es); {
		re := rs + 1
		for re < len(es) && (es[re].y^es[rs].y)>>ks == 0 {
			re++
		}
		if !w.sameKey(es[rs:re]) {
			return false
		}
		rs = re
	}
	return true
}

// sameKey handles entries with equal keys, sorted: identical fingerprints are
// consecutive, in order of position.
func (w *joinWorker) sameKey(es []joinEntry) bool {
	j := w.j
	// es[gs[i]:gs[i+1]] hold one fingerprint value.
	gs := w.groups[:0]
	for i := range es {
		if i == 0 || es[i].y != es[i-1].y {
			gs = append(gs, i)
		}
	}
	gs = append(gs, len(es))
	w.groups = gs
	ng := len(gs) - 1
	// Identical fingerprints agree on every key, so table 0 reports them.
	if j.t == 0 {
		for g := range ng {
			same := es[gs[g]:gs[g+1]]
			for a := range same {
				if !j.full && a > 0 {
					break // a star from the first copy connects them all
				}
				for b := a + 1; b < len(same); b++ {
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
		ya := es[gs[ga]].y
		for gb := ga + 1; gb < ng; gb++ {
			v := ya ^ es[gs[gb]].y
			d := bits.OnesCount64(v)
			if d > j.k || !j.firstTable(v) {
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
