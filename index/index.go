package index

import (
	"cmp"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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
// An Index is safe for concurrent use. Query, QueryBatch, Len, Stats,
// WriteTo and SaveFile read an immutable version of the index without a
// lock, so they never wait for a write, a merge or a snapshot. Add, AddBulk,
// Remove, Update and Compact take a writer lock and publish a new version,
// so each is atomic: a query sees a write entirely or not at all, and a
// failed AddBulk changes nothing. Results never include an item removed
// before the query started, nor miss one added before it started. Small
// merges run inside the write that triggers them; large ones run on a
// background goroutine that exists only while there is work (Close stops
// it). Contains waits only for the hash-table part of a write (for AddBulk,
// inserting the batch's ids).
type Index struct {
	lay       *layout
	choice    Choice
	memtable  int
	workers   int
	inline    int    // largest merge a writer does itself
	mergeHook func() // test hook: called by the background merger before it merges

	// cur is the current version; see version.
	cur atomic.Pointer[version]

	wmu sync.Mutex // serializes writers; guards everything below but cur
	// segs, memFP, memIID and dead are the state the next version will
	// publish. segs is replaced, never modified in place, once published:
	// only appends past its length are allowed.
	segs   []*segment
	memFP  []uint64
	memIID []uint32
	dead   deadSet
	live   int
	ndead  int
	// busy holds the segments the background merger is merging.
	busy map[*segment]bool
	// merging is set while the background merger goroutine runs; idle
	// (whose lock is wmu) is signalled when it stops.
	merging bool
	idle    sync.Cond
	// paused counts compactions waiting for the merger: it starts no new
	// merge while it is not zero.
	paused int
	closed bool // Close was called: merges run inline

	// idsMu guards ids' hash table for Contains, which reads it with the
	// published version's idView. Writers, holding wmu, read ids without
	// it and change the hash table only with it held; they append to the
	// idView without it (Contains reads only the published copy).
	idsMu sync.RWMutex
	ids   idStore
}

// defaultInlineMerge is the largest merge, in items, that a write does
// itself: a few milliseconds of sorting. Larger ones go to the background.
const defaultInlineMerge = 1 << 16

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
	x := &Index{
		lay: newLayout(c.Plan), choice: c, memtable: opt.Memtable, workers: opt.Workers,
		inline: defaultInlineMerge, mergeHook: opt.testMergeHook,
		busy: map[*segment]bool{},
	}
	if opt.testInlineMerge != 0 {
		x.inline = opt.testInlineMerge
	}
	x.idle.L = &x.wmu
	x.publishLocked()
	return x, nil
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
func (x *Index) Len() int { return x.cur.Load().live }

// publishLocked makes the writer state the current version.
func (x *Index) publishLocked() {
	x.cur.Store(&version{
		segs: x.segs, memFP: x.memFP, memIID: x.memIID, dead: x.dead,
		ids: x.ids.idView, live: x.live, ndead: x.ndead,
		idBytes: x.ids.bytes(), memBytes: 12 * int64(cap(x.memFP)),
	})
}

// commitLocked publishes the writer state with change applied to the id
// hash table, under idsMu so that Contains sees the table and the version
// agree.
func (x *Index) commitLocked(change func()) {
	x.idsMu.Lock()
	defer x.idsMu.Unlock()
	if change != nil {
		change()
	}
	x.publishLocked()
}

// reserveIDsLocked grows the id hash table for m more ids if it needs to,
// building the new table outside idsMu so that Contains does not wait.
func (x *Index) reserveIDsLocked(m int) {
	if !x.ids.needsRehash(m) {
		return
	}
	t := x.ids.rehashed(x.ids.used + m)
	x.idsMu.Lock()
	x.ids.setTable(t)
	x.idsMu.Unlock()
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
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if _, _, ok := x.ids.lookup(id); ok {
		return fmt.Errorf("%w %q", ErrDuplicateID, id)
	}
	if x.ids.count() >= MaxItems {
		return ErrFull
	}
	x.addLocked(id, fp, noIID)
	return nil
}

// Update sets id's fingerprint to fp, adding id if it is absent.
func (x *Index) Update(id string, fp uint64) error {
	if err := checkID(id); err != nil {
		return err
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if x.ids.count() >= MaxItems {
		return ErrFull
	}
	old, _, ok := x.ids.lookup(id)
	if !ok {
		old = noIID
	}
	x.addLocked(id, fp, old)
	x.maybeCompactLocked()
	return nil
}

// noIID is the iid value reserved by MaxItems, meaning none.
const noIID = 1<<32 - 1

// Remove removes id. It returns an error wrapping ErrNotFound when id is
// absent.
func (x *Index) Remove(id string) error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if _, _, ok := x.ids.lookup(id); !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	x.commitLocked(func() {
		iid, _ := x.ids.remove(id)
		x.killLocked(iid)
	})
	x.maybeCompactLocked()
	return nil
}

// Contains reports whether id is in the index.
func (x *Index) Contains(id string) bool {
	x.idsMu.RLock()
	defer x.idsMu.RUnlock()
	v := x.cur.Load()
	_, _, ok := x.ids.lookupIn(&v.ids, id)
	return ok
}

func (x *Index) killLocked(iid uint32) {
	x.dead = x.dead.with(iid)
	x.live--
	x.ndead++
}

// addLocked adds id, replacing iid old unless it is noIID, and publishes.
func (x *Index) addLocked(id string, fp uint64, old uint32) {
	x.reserveIDsLocked(1)
	iid := x.ids.appendID(id)
	x.memFP = append(x.memFP, fp)
	x.memIID = append(x.memIID, iid)
	x.live++
	if len(x.memFP) >= x.memtable {
		x.flushLocked()
	}
	x.commitLocked(func() {
		if old != noIID {
			x.ids.remove(id)
			x.killLocked(old)
		}
		x.ids.insert(id, iid)
	})
}

// flushLocked sorts the memtable into a segment and merges. Versions keep
// the old memtable arrays, so it sorts a copy and starts new ones.
func (x *Index) flushLocked() {
	if len(x.memFP) == 0 {
		return
	}
	s := buildSegment(x.lay, slices.Clone(x.memFP), slices.Clone(x.memIID), 1)
	x.memFP, x.memIID = make([]uint64, 0, x.memtable), make([]uint32, 0, x.memtable)
	x.pushLocked(s)
}

// maybeCompactLocked renumbers everything once dead iids outnumber live ones.
func (x *Index) maybeCompactLocked() {
	if x.ndead > 4096 && x.ndead > x.live {
		x.waitMergerLocked()
		// Another writer may have compacted while this one waited.
		if x.ndead > 4096 && x.ndead > x.live {
			x.compactLocked()
		}
	}
}

// Compact merges every segment and the memtable into one segment, drops
// removed items and reclaims their ids' memory. Queries are fastest after
// it. It waits for a background merge to finish first; queries do not wait
// for it.
func (x *Index) Compact() {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.compactLocked()
}

// waitMergerLocked waits, with wmu released meanwhile, for the background
// merger to stop, and keeps it from starting a new merge in the meantime.
func (x *Index) waitMergerLocked() {
	x.paused++
	for x.merging {
		x.idle.Wait()
	}
	x.paused--
}

// compactLocked renumbers the live items 0, 1, ... into one segment. Iids
// change, so it first waits for the background merger (whose segment would
// hold the old ones) to stop.
func (x *Index) compactLocked() {
	x.waitMergerLocked()
	x.publishLocked() // the writer state as a version, to list its items
	fps, iids := x.cur.Load().items()
	var ids idStore
	for i, iid := range iids {
		ids.appendID(x.ids.view(iid))
		iids[i] = uint32(i)
	}
	ids.insertRange(0)
	var segs []*segment
	if len(fps) > 0 {
		segs = []*segment{buildSegment(x.lay, fps, iids, x.workers)}
	}
	x.commitLocked(func() {
		x.ids = ids
		x.dead = deadSet{}
		x.ndead = 0
		x.live = len(iids)
		x.memFP, x.memIID = nil, nil
		x.segs = segs
	})
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
	x.wmu.Lock()
	defer x.wmu.Unlock()
	first := x.ids.count()
	if first+len(ids) > MaxItems {
		return ErrFull
	}
	x.reserveIDsLocked(len(ids))
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
	// The ids enter the hash table under idsMu, ahead of the version that
	// publishes them; Contains ignores iids beyond its version's ids.
	insert := func() (string, bool) {
		x.idsMu.Lock()
		defer x.idsMu.Unlock()
		return x.ids.insertRange(first)
	}
	var seg *segment
	var dup string
	var ok bool
	if len(ids) < concurrentBulk {
		var wg sync.WaitGroup
		wg.Go(func() { seg = buildSegment(x.lay, slices.Clone(fps), iids, x.workers) })
		dup, ok = insert()
		wg.Wait()
	} else {
		// Huge batches one after the other: the two need 24 and 44 bytes
		// per item of scratch, 6.8 GB at 100 million.
		if dup, ok = insert(); ok {
			seg = buildSegment(x.lay, slices.Clone(fps), iids, x.workers)
		}
	}
	if !ok {
		x.ids.truncate(first)
		return fmt.Errorf("%w %q", ErrDuplicateID, dup)
	}
	x.live += len(ids)
	x.pushLocked(seg)
	x.commitLocked(nil)
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
	return x.cur.Load().query(x.lay, sc, fp, k, limit), nil
}

// query answers Query from the version.
func (v *version) query(lay *layout, sc *queryScratch, q uint64, k, limit int) []Match {
	hits := sc.hits[:0]
	for _, s := range v.segs {
		hits, sc.buf = s.query(lay, q, k, v.dead, hits, sc.buf)
	}
	for i, f := range v.memFP {
		if d := bits.OnesCount64(f ^ q); d <= k && !v.dead.has(v.memIID[i]) {
			hits = append(hits, hit{fp: f, iid: v.memIID[i], d: d})
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
		out[i] = Match{ID: v.ids.get(h.iid), Fingerprint: h.fp, Distance: h.d}
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
				v := x.cur.Load()
				for i := lo; i < hi; i++ {
					out[i] = v.query(x.lay, sc, fps[i], k, limit)
				}
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
	v := x.cur.Load()
	st := Stats{Len: v.live, Removed: v.ndead, Segments: len(v.segs), Memtable: len(v.memFP)}
	c := Explain(x.lay.plan, v.live)
	c.Why, c.Budget, c.Fits = x.choice.Why, x.choice.Budget, c.Bytes <= x.choice.Budget
	st.Choice = c
	for _, s := range v.segs {
		st.TableBytes += s.bytes()
	}
	st.IDBytes = v.idBytes
	st.OtherBytes = v.dead.bytes() + v.memBytes
	st.Bytes = st.TableBytes + st.IDBytes + st.OtherBytes
	if v.live > 0 {
		st.BytesPerFingerprint = float64(st.Bytes) / float64(v.live)
	}
	return st
}
