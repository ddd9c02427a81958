package index

// A version is an immutable state of the index: the segments, a view of the
// memtable, the dead set and a view of the ids. Writers publish a new one
// through Index.cur after every change; Query, Len, Stats and WriteTo load
// the current one and read it without a lock. Nothing a version refers to
// is ever written again: segments are immutable, memtable, ids and segment
// list only grow past the lengths a version holds (or are replaced by new
// arrays), and the dead set is copied on write.
type version struct {
	// segs are the sorted runs, oldest and largest first.
	segs []*segment
	// memFP and memIID are the latest single adds, unsorted, scanned by
	// every query until they fill up.
	memFP  []uint64
	memIID []uint32
	dead   deadSet
	ids    idView
	live   int // ids in the index
	ndead  int // dead iids still stored
	// idBytes and memBytes are the ids' and the memtable's memory when the
	// version was published, for Stats.
	idBytes, memBytes int64
}

// deadChunkShift sets the iids per dead-set chunk: 1<<16 of them, 8 KiB.
const deadChunkShift = 16

type deadChunk [1 << (deadChunkShift - 6)]uint64

// A deadSet is an immutable set of iids: the items removed or replaced whose
// entries may still be stored in segments or the memtable. It is split into
// chunks so that adding an iid copies one chunk and the chunk pointers (about
// 20 KiB at 100 million iids) rather than the whole bitmap; a nil chunk has
// no iid. Iids are never reused until a compaction renumbers everything, so
// an iid in the set stays dead in every later version.
type deadSet struct {
	chunks []*deadChunk
}

// has reports whether iid is in the set.
func (d deadSet) has(iid uint32) bool {
	c := int(iid >> deadChunkShift)
	if c >= len(d.chunks) {
		return false
	}
	ch := d.chunks[c]
	return ch != nil && ch[iid>>6&(1<<(deadChunkShift-6)-1)]&(1<<(iid&63)) != 0
}

// with returns the set with iid added; d is unchanged.
func (d deadSet) with(iid uint32) deadSet {
	c := int(iid >> deadChunkShift)
	chunks := make([]*deadChunk, max(len(d.chunks), c+1))
	copy(chunks, d.chunks)
	ch := new(deadChunk)
	if old := chunks[c]; old != nil {
		*ch = *old
	}
	ch[iid>>6&(1<<(deadChunkShift-6)-1)] |= 1 << (iid & 63)
	chunks[c] = ch
	return deadSet{chunks}
}

// empty reports whether the set has no iid.
func (d deadSet) empty() bool { return len(d.chunks) == 0 }

func (d deadSet) bytes() int64 {
	b := 8 * int64(len(d.chunks))
	for _, ch := range d.chunks {
		if ch != nil {
			b += int64(len(ch)) * 8
		}
	}
	return b
}

// items returns the version's live items, unsorted, in arrays allocated at
// their final size: growing them by appending would make several times the
// garbage, and at 10 million items the collector then slows every goroutine
// that allocates, queries included.
func (v *version) items() ([]uint64, []uint32) {
	n := len(v.memFP)
	for _, s := range v.segs {
		n += s.n
	}
	fps, iids := make([]uint64, 0, n), make([]uint32, 0, n)
	for _, s := range v.segs {
		fps, iids = s.live(fps, iids, v.dead)
	}
	for i, iid := range v.memIID {
		if !v.dead.has(iid) {
			fps = append(fps, v.memFP[i])
			iids = append(iids, iid)
		}
	}
	return fps, iids
}
