package index

import "slices"

// pushLocked appends a segment and merges while some adjacent pair has its
// older segment no larger than the younger (a binary counter: each item is
// merged O(log n) times and there are O(log n) segments). Merges of up to
// x.inline items run here, holding the writer lock but not blocking
// readers; larger ones are left to the background merger.
func (x *Index) pushLocked(s *segment) {
	x.segs = append(x.segs, s) // past every published length: safe
	x.mergeLocked()
}

func (x *Index) mergeLocked() {
	for x.paused == 0 { // a compaction is about to merge everything
		i := x.pickLocked()
		if i < 0 {
			return
		}
		a, b := x.segs[i], x.segs[i+1]
		if a.n+b.n > x.inline && !x.closed {
			if !x.merging {
				x.merging = true
				go x.mergeLoop()
			}
			return
		}
		x.segs = replaceSegs(x.segs, i, mergeSegs(x.lay, a, b, x.dead, x.workers))
	}
}

// pickLocked returns the position of the youngest adjacent pair of segments,
// neither being merged, whose older is no larger than the younger, or -1.
func (x *Index) pickLocked() int {
	for i := len(x.segs) - 2; i >= 0; i-- {
		a, b := x.segs[i], x.segs[i+1]
		if a.n <= b.n && !x.busy[a] && !x.busy[b] {
			return i
		}
	}
	return -1
}

// replaceSegs returns a new list with segs[i] and segs[i+1] replaced by m
// (dropped if m is nil). It never writes into segs, which versions share.
func replaceSegs(segs []*segment, i int, m *segment) []*segment {
	out := make([]*segment, 0, len(segs)-1)
	out = append(out, segs[:i]...)
	if m != nil {
		out = append(out, m)
	}
	return append(out, segs[i+2:]...)
}

// mergeSegs returns a segment of the items of a and b not in dead, or nil if
// there are none.
func mergeSegs(l *layout, a, b *segment, dead deadSet, workers int) *segment {
	fps, iids := a.live(make([]uint64, 0, a.n+b.n), make([]uint32, 0, a.n+b.n), dead)
	fps, iids = b.live(fps, iids, dead)
	if len(fps) == 0 {
		return nil
	}
	return buildSegment(l, fps, iids, workers)
}

// mergeLoop is the background merger. It merges pairs picked as pushLocked
// would until none is left, then exits; so an idle index has no goroutine
// and an index dropped without Close is collected once its merges end.
//
// Each merge takes a pair (a, b) and the dead set D of the moment, marks
// them busy and builds the merged segment m with no lock held; then, under
// the writer lock, it replaces a and b by m and publishes. Meanwhile
// writers only append segments, merge pairs not busy, and add iids to the
// dead set (which never loses one), so a and b are still adjacent, and
// every item m drops was in D, dead before the merge began. m holds the
// rest with their iids unchanged, so removes during the merge, which are in
// the newer dead set every later version carries, still hide them.
// Compactions, which renumber iids, wait for the merger to stop.
func (x *Index) mergeLoop() {
	workers := max(1, x.workers/2) // leave cores for queries
	x.wmu.Lock()
	defer x.wmu.Unlock()
	for x.paused == 0 && !x.closed {
		i := x.pickLocked()
		if i < 0 {
			break
		}
		a, b, dead := x.segs[i], x.segs[i+1], x.dead
		x.busy[a], x.busy[b] = true, true
		x.wmu.Unlock()
		if x.mergeHook != nil {
			x.mergeHook()
		}
		m := mergeSegs(x.lay, a, b, dead, workers)
		x.wmu.Lock()
		delete(x.busy, a)
		delete(x.busy, b)
		i = slices.Index(x.segs, a)
		if i < 0 || i+1 >= len(x.segs) || x.segs[i+1] != b {
			panic("index: segments changed during a background merge")
		}
		x.segs = replaceSegs(x.segs, i, m)
		x.commitLocked(nil)
	}
	x.merging = false
	x.idle.Broadcast()
}

// Close waits for a background merge in progress to finish and stops
// background merging: later writes merge inline, as the write that fills
// a segment pays for it. The index stays usable. Close is needed only to
// know that no goroutine of the index runs (an idle index has none); it
// returns nil.
func (x *Index) Close() error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.closed = true
	x.waitMergerLocked()
	return nil
}

// waitMerges waits until the background merger is idle; for tests.
func (x *Index) waitMerges() {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.waitMergerLocked()
}
