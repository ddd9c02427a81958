package index

import (
	"math/bits"
	"slices"
	"sync"
)

// A layout is a plan with its permutations worked out.
type layout struct {
	plan  Plan
	perms []Permutation
	kb    []uint // key bits per table
	ident int    // the table whose permutation is the identity, or -1
}

func newLayout(p Plan) *layout {
	l := &layout{plan: p, ident: -1}
	for t := range p.Tables {
		perm := p.Permutation(t)
		l.perms = append(l.perms, perm)
		l.kb = append(l.kb, uint(perm.KeyBits()))
		if l.ident < 0 && isIdentity(perm) {
			l.ident = t
		}
	}
	return l
}

func isIdentity(p Permutation) bool {
	for _, m := range p.moves {
		if m.src != m.dst {
			return false
		}
	}
	return true
}

// A segment is an immutable sorted run of items (Manku et al. section 3.1:
// one sorted table per permutation; the LSM-tree of O'Neil et al. 1996 for
// how runs are added and merged). prim holds the fingerprints in ascending
// order with iids alongside; it doubles as the plan's identity table when
// the plan has one (every BlockPlan does: its first table's key is the
// leading blocks), which saves a table's worth of memory.
//
// A segment never changes after it is built, so readers need no lock to
// search it; removed items are filtered through a version's dead set.
type segment struct {
	n      int
	prim   *table
	iids   []uint32
	tables []*table // one per plan table; tables[ident] == prim
}

// buildSegment builds a segment from items; it sorts fps and iids in place
// and keeps neither. It builds the tables on up to workers goroutines.
func buildSegment(l *layout, fps []uint64, iids []uint32, workers int) *segment {
	n := len(fps)
	s := &segment{n: n, iids: iids, tables: make([]*table, len(l.perms))}
	tk := make([]uint64, n)
	if !sortedPairs(fps, iids) { // snapshots and merges of one run arrive sorted
		radixSortPairs(fps, iids, tk, make([]uint32, n))
	}
	s.prim = newTable(fps)
	var todo []int
	for t := range l.perms {
		if t == l.ident {
			s.tables[t] = s.prim
		} else {
			todo = append(todo, t)
		}
	}
	workers = max(1, min(workers, len(todo)))
	var next sync.Mutex
	var wg sync.WaitGroup
	for w := range workers {
		var vals []uint64
		if w == 0 {
			vals = tk // reuse the sort scratch
		}
		wg.Go(func() {
			var tmp []uint64
			for {
				next.Lock()
				if len(todo) == 0 {
					next.Unlock()
					return
				}
				t := todo[0]
				todo = todo[1:]
				next.Unlock()
				if vals == nil {
					vals = make([]uint64, n)
				}
				if tmp == nil {
					tmp = make([]uint64, n)
				}
				perm := l.perms[t]
				for i, x := range fps {
					vals[i] = perm.Apply(x)
				}
				radixSortTop(vals, tmp, max(int(l.kb[t]), int(bucketBits(n))))
				s.tables[t] = newTable(vals)
			}
		})
	}
	wg.Wait()
	return s
}

// live appends the segment's items that are not dead.
func (s *segment) live(fps []uint64, iids []uint32, dead deadSet) ([]uint64, []uint32) {
	start := len(fps)
	fps = s.prim.values(fps)
	if dead.empty() {
		return fps, append(iids, s.iids...)
	}
	w := start
	for i, iid := range s.iids {
		if !dead.has(iid) {
			fps[w] = fps[start+i]
			iids = append(iids, iid)
			w++
		}
	}
	return fps[:w], iids
}

// hit is one match before its id is looked up.
type hit struct {
	fp  uint64
	iid uint32
	d   int
}

// query appends the segment's live items within k bits of q. buf is scratch.
func (s *segment) query(l *layout, q uint64, k int, dead deadSet, hits []hit, buf []uint64) ([]hit, []uint64) {
	buf = buf[:0]
	for t, tab := range s.tables {
		perm := l.perms[t]
		start := len(buf)
		buf = tab.scan(buf, perm.Apply(q), l.kb[t], k)
		if t != l.ident {
			for i := start; i < len(buf); i++ {
				buf[i] = perm.Invert(buf[i])
			}
		}
	}
	// A fingerprint is found once per table whose key it shares with q.
	if len(buf) > 1 {
		slices.Sort(buf)
		buf = slices.Compact(buf)
	}
	for _, x := range buf {
		lo, hi := s.prim.find(x)
		d := bits.OnesCount64(x ^ q)
		for i := lo; i < hi; i++ {
			if iid := s.iids[i]; !dead.has(iid) {
				hits = append(hits, hit{fp: x, iid: iid, d: d})
			}
		}
	}
	return hits, buf
}

func (s *segment) bytes() int64 {
	b := 4*int64(cap(s.iids)) + s.prim.bytes()
	for _, tab := range s.tables {
		if tab != s.prim {
			b += tab.bytes()
		}
	}
	return b
}

// sortedPairs reports whether fps is ascending with iids ascending among
// equal fingerprints.
func sortedPairs(fps []uint64, iids []uint32) bool {
	for i := 1; i < len(fps); i++ {
		if fps[i] < fps[i-1] || fps[i] == fps[i-1] && iids[i] < iids[i-1] {
			return false
		}
	}
	return true
}
