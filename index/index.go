package index

import (
	"cmp"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// A Match is one stored fingerprint within the query distance.
type Match struct {
	ID          string
	Fingerprint uint64
	Distance    int
}

// An Index finds every stored fingerprint within k bits of a query. See the
// package documentation for the design. Make one with New, Build, Read or
// LoadFile; the zero value is not usable.
//
// An Index is safe for concurrent use. Queries share a read lock and run in
// parallel with each other; Add, AddBulk, Remove, Update and Compact take
// the write lock, so each is atomic: a query sees a write entirely or not at
// all, and a failed AddBulk changes nothing. A write that fills the memtable
// sorts it into a segment and merges segments while holding the lock, so an
// occasional single Add pauses readers for the merge (amortized O(log n) per
// item). AddBulk holds the lock while it sorts its batch. WriteTo holds the
// read lock while it writes. Results never include an item removed before
// the query started, nor miss one added before it started.
type Index struct {
	lay      *layout
	choice   Choice
	memtable int
	workers  int

	mu sync.RWMutex // guards everything below
	// segs are the sorted runs, oldest and largest first.
	segs []*segment
	// memFP and memIID are the latest single adds, unsorted, scanned by
	// every query until they fill up.
	memFP  []uint64
	memIID []uint32
	ids    idStore
	// dead has a bit per iid that was removed or replaced; its entries stay
	// in the segments until a merge drops them.
	dead  []uint64
	live  int // ids in the index
	ndead int // dead iids still stored
}

// New returns an empty index.
func New(opt Options) (*Index, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	c, err := opt.choice()
	if err != nil {
		return nil, err
	}
	if err := c.Plan.Validate(); err != nil {
		return nil, err
	}
	return &Index{lay: newLayout(c.Plan), choice: c, memtable: opt.Memtable, workers: opt.Workers}, nil
}

// Build returns an index of the given items, planned for their number when
// opt.ExpectedN is zero. ids[i] labels fps[i].
func Build(ids []string, fps []uint64, opt Options) (*Index, error) {
	if opt.ExpectedN == 0 {
		opt.ExpectedN = max(len(fps), 1)
	}
	x, err := New(opt)
	if err != nil {
		return nil, err
	}
	if err := x.AddBulk(ids, fps); err != nil {
		return nil, err
	}
	return x, nil
}

// Plan returns the index's plan.
func (x *Index) Plan() Plan { return x.lay.plan }

// K returns the largest distance a query may ask for.
func (x *Index) K() int { return x.lay.plan.K }

// Len returns the number of ids in the index.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

func checkID(id string) error {
	if id == "" || len(id) > MaxIDBytes {
		return fmt.Errorf("%w: length %d not in 1..%d", ErrBadID, len(id), MaxIDBytes)
	}
	return nil
}

// Add adds id with fingerprint fp. It returns an error wrapping
// ErrDuplicateID when id is already present.
func (x *Index) Add(id string, fp uint64) error {
	if err := checkID(id); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, _, ok := x.ids.lookup(id); ok {
		return fmt.Errorf("%w %q", ErrDuplicateID, id)
	}
	return x.addLocked(id, fp)
}

// Update sets id's fingerprint to fp, adding id if it is absent.
func (x *Index) Update(id string, fp uint64) error {
	if err := checkID(id); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ids.count() >= MaxItems {
		return ErrFull
	}
	if iid, ok := x.ids.remove(id); ok {
		x.killLocked(iid)
	}
	err := x.addLocked(id, fp)
	x.maybeCompactLocked()
	return err
}

// Remove removes id. It returns an error wrapping ErrNotFound when id is
// absent.
func (x *Index) Remove(id string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	iid, ok := x.ids.remove(id)
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	x.killLocked(iid)
	x.maybeCompactLocked()
	return nil
}

// Contains reports whether id is in the index.
func (x *Index) Contains(id string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, _, ok := x.ids.lookup(id)
	return ok
}

func (x *Index) killLocked(iid uint32) {
	x.dead[iid>>6] |= 1 << (iid & 63)
	x.live--
	x.ndead++
}

func (x *Index) growDeadLocked() {
	if need := (x.ids.count() + 63) >> 6; need > len(x.dead) {
		x.dead = append(x.dead, make([]uint64, need-len(x.dead))...)
	}
}

func (x *Index) addLocked(id string, fp uint64) error {
	if x.ids.count() >= MaxItems {
		return ErrFull
	}
	iid := x.ids.appendID(id)
	x.ids.insert(id, iid)
	x.growDeadLocked()
	x.live++
	x.memFP = append(x.memFP, fp)
	x.memIID = append(x.memIID, iid)
	if len(x.memFP) >= x.memtable {
		x.flushLocked()
	}
	return nil
}

// flushLocked sorts the memtable into a segment and merges.
func (x *Index) flushLocked() {
	if len(x.memFP) == 0 {
		return
	}
	s := buildSegment(x.lay, x.memFP, x.memIID, 1)
	x.memFP, x.memIID = nil, nil
	x.pushLocked(s)
}

// pushLocked appends a segment and merges the youngest segments while the
// one before is no larger than the last (a binary counter: each item is
// merged O(log n) times and there are O(log n) segments).
func (x *Index) pushLocked(s *segment) {
	x.segs = append(x.segs, s)
	for len(x.segs) >= 2 {
		a, b := x.segs[len(x.segs)-2], x.segs[len(x.segs)-1]
		if a.n > b.n {
			break
		}
		fps, iids := a.live(nil, nil, x.dead)
		fps, iids = b.live(fps, iids, x.dead)
		x.segs = x.segs[:len(x.segs)-2]
		if len(fps) > 0 {
			x.segs = append(x.segs, buildSegment(x.lay, fps, iids, x.workers))
		}
	}
}

// maybeCompactLocked renumbers everything once dead iids outnumber live ones.
func (x *Index) maybeCompactLocked() {
	if x.ndead > 4096 && x.ndead > x.live {
		x.compactLocked()
	}
}

// Compact merges every segment and the memtable into one segment, drops
// removed items and reclaims their ids' memory. Queries are fastest after it.
func (x *Index) Compact() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.compactLocked()
}

func (x *Index) compactLocked() {
	var fps []uint64
	var iids []uint32
	for _, s := range x.segs {
		fps, iids = s.live(fps, iids, x.dead)
	}
	for i, iid := range x.memIID {
		if !isDead(x.dead, iid) {
			fps = append(fps, x.memFP[i])
			iids = append(iids, iid)
		}
	}
	var ids idStore
	for i, iid := range iids {
		ids.appendID(x.ids.view(iid))
		iids[i] = uint32(i)
	}
	ids.insertRange(0)
	x.ids = ids
	x.dead = make([]uint64, (len(iids)+63)>>6)
	x.ndead = 0
	x.live = len(iids)
	x.memFP, x.memIID = nil, nil
	x.segs = nil
	if len(fps) > 0 {
		x.segs = []*segment{buildSegment(x.lay, fps, iids, x.workers)}
	}
}

// concurrentBulk is the batch size from which AddBulk hashes ids and builds
// tables one after the other rather than at once, to bound its peak memory.
const concurrentBulk = 1 << 25

// AddBulk adds ids[i] with fingerprint fps[i] for every i. It sorts the
// batch into a segment with radix sorts, much faster than Add in a loop. If
// an id is already present or repeats in the batch it returns an error
// wrapping ErrDuplicateID and adds nothing.
func (x *Index) AddBulk(ids []string, fps []uint64) error {
	if len(ids) != len(fps) {
		return fmt.Errorf("index: AddBulk got %d ids and %d fingerprints", len(ids), len(fps))
	}
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return err
		}
	}
	if len(ids) == 0 {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	first := x.ids.count()
	if first+len(ids) > MaxItems {
		return ErrFull
	}
	total := 0
	for _, id := range ids {
		total += len(id)
	}
	x.ids.arena = slices.Grow(x.ids.arena, total)
	x.ids.offs = slices.Grow(x.ids.offs, len(ids))
	for _, id := range ids {
		x.ids.appendID(id)
	}
	// The id hash table and the segment's tables are independent work: do
	// them at once, and drop the segment if an id turns out duplicate.
	iids := make([]uint32, len(ids))
	for i := range iids {
		iids[i] = uint32(first + i)
	}
	var seg *segment
	var dup string
	var ok bool
	if len(ids) < concurrentBulk {
		var wg sync.WaitGroup
		wg.Go(func() { seg = buildSegment(x.lay, slices.Clone(fps), iids, x.workers) })
		dup, ok = x.ids.insertRange(first)
		wg.Wait()
	} else {
		// Huge batches one after the other: the two need 24 and 44 bytes
		// per item of scratch, 6.8 GB at 100 million.
		if dup, ok = x.ids.insertRange(first); ok {
			seg = buildSegment(x.lay, slices.Clone(fps), iids, x.workers)
		}
	}
	if !ok {
		x.ids.truncate(first)
		return fmt.Errorf("%w %q", ErrDuplicateID, dup)
	}
	x.growDeadLocked()
	x.live += len(ids)
	x.pushLocked(seg)
	return nil
}

// queryScratch is reused across queries.
type queryScratch struct {
	hits []hit
	buf  []uint64
}

var scratchPool = sync.Pool{New: func() any { return new(queryScratch) }}

// Query returns the stored fingerprints within k bits of fp, nearest first
// (ties by id), at most limit of them when limit > 0. k may be anything from
// 0 to the plan's K; beyond it Query returns an error wrapping ErrDistance.
func (x *Index) Query(fp uint64, k, limit int) ([]Match, error) {
	if k < 0 || k > x.lay.plan.K {
		return nil, fmt.Errorf("%w: k=%d, plan answers 0..%d", ErrDistance, k, x.lay.plan.K)
	}
	sc := scratchPool.Get().(*queryScratch)
	defer scratchPool.Put(sc)
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.queryLocked(sc, fp, k, limit), nil
}

func (x *Index) queryLocked(sc *queryScratch, q uint64, k, limit int) []Match {
	hits := sc.hits[:0]
	for _, s := range x.segs {
		hits, sc.buf = s.query(x.lay, q, k, x.dead, hits, sc.buf)
	}
	for i, f := range x.memFP {
		if d := bits.OnesCount64(f ^ q); d <= k && !isDead(x.dead, x.memIID[i]) {
			hits = append(hits, hit{fp: f, iid: x.memIID[i], d: d})
		}
	}
	sc.hits = hits
	if len(hits) == 0 {
		return nil
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(a.d, b.d) })
	n := len(hits)
	if limit > 0 && limit < n {
		// Keep every hit tied with the last one kept so ids break ties.
		n = limit
		for n < len(hits) && hits[n].d == hits[limit-1].d {
			n++
		}
	}
	out := make([]Match, n)
	for i, h := range hits[:n] {
		out[i] = Match{ID: x.ids.get(h.iid), Fingerprint: h.fp, Distance: h.d}
	}
	slices.SortFunc(out, func(a, b Match) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.ID, b.ID))
	})
	if limit > 0 && limit < len(out) {
		out = out[:limit]
	}
	return out
}

// QueryBatch answers Query for every fingerprint in fps, on several
// goroutines; result i belongs to fps[i].
func (x *Index) QueryBatch(fps []uint64, k, limit int) ([][]Match, error) {
	if k < 0 || k > x.lay.plan.K {
		return nil, fmt.Errorf("%w: k=%d, plan answers 0..%d", ErrDistance, k, x.lay.plan.K)
	}
	out := make([][]Match, len(fps))
	workers := max(1, min(x.workers, runtime.GOMAXPROCS(0), len(fps)/64))
	const chunk = 256
	var next sync.Mutex
	pos := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			sc := new(queryScratch)
			for {
				next.Lock()
				lo := pos
				pos += chunk
				next.Unlock()
				if lo >= len(fps) {
					return
				}
				hi := min(lo+chunk, len(fps))
				x.mu.RLock()
				for i := lo; i < hi; i++ {
					out[i] = x.queryLocked(sc, fps[i], k, limit)
				}
				x.mu.RUnlock()
			}
		})
	}
	wg.Wait()
	return out, nil
}

// Stats describe an index's contents and memory.
type Stats struct {
	// Len is the number of ids; Removed counts removed or replaced items
	// whose storage is not reclaimed yet.
	Len, Removed int
	// Segments is the number of sorted runs; Memtable the number of recent
	// adds not sorted yet.
	Segments, Memtable int
	// Choice explains the plan, with estimates for Len fingerprints.
	Choice Choice
	// TableBytes, IDBytes and OtherBytes are the memory held by the tables
	// (internal ids included), the ids and their hash table, and the rest;
	// Bytes is their sum.
	TableBytes, IDBytes, OtherBytes, Bytes int64
	// BytesPerFingerprint is Bytes / Len.
	BytesPerFingerprint float64
}

// Stats returns statistics.
func (x *Index) Stats() Stats {
	x.mu.RLock()
	defer x.mu.RUnlock()
	st := Stats{Len: x.live, Removed: x.ndead, Segments: len(x.segs), Memtable: len(x.memFP)}
	c := Explain(x.lay.plan, x.live)
	c.Why, c.Budget, c.Fits = x.choice.Why, x.choice.Budget, c.Bytes <= x.choice.Budget
	st.Choice = c
	for _, s := range x.segs {
		st.TableBytes += s.bytes()
	}
	st.IDBytes = x.ids.bytes()
	st.OtherBytes = 8*int64(cap(x.dead)) + 12*int64(cap(x.memFP))
	st.Bytes = st.TableBytes + st.IDBytes + st.OtherBytes
	if x.live > 0 {
		st.BytesPerFingerprint = float64(st.Bytes) / float64(x.live)
	}
	return st
}
