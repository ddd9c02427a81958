package keptmem

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/hugepage"
	"github.com/neardup/neardup/rule"
)

// A Loader adds documents to a Set in bulk, one at a time as they are read
// (a store's records at start-up, say), and builds the tables when it is
// finished: Add only collects, without the set's lock, so reading and
// decoding the next documents go on meanwhile, and Finish sorts the index
// and rebuilds each table in one array (see Loader.sortTables), on every
// core. The set does not hold the documents until Finish, which adds all
// of them or, on an error, none. Nothing else may be added to the set
// between NewLoader and Finish (Finish fails then). A Loader is not safe
// for concurrent use.
type Loader struct {
	k      *Set
	base   int      // k.docs.n at NewLoader: the first document's slot
	order  []string // the ids in order: their map is built by Finish
	fps    []uint64 // the fingerprints in order
	docs   slots
	counts counts
}

// NewLoader returns a Loader for k.
func (k *Set) NewLoader() *Loader {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return &Loader{k: k, base: k.docs.n}
}

// Add collects id with features f, last in priority. Ids are not checked
// until Finish: one that the loader or the set holds already fails Finish.
func (l *Loader) Add(id string, f rule.Features) error {
	k := l.k
	if k == nil {
		return errors.New("keptmem: Loader used after Finish")
	}
	if id == "" || len(id) > index.MaxIDBytes {
		return fmt.Errorf("%w: length %d not in 1..%d", index.ErrBadID, len(id), index.MaxIDBytes)
	}
	if l.base+l.docs.n >= math.MaxUint32 {
		return fmt.Errorf("keptmem: kept set is full (%d documents added)", l.base+l.docs.n)
	}
	if f.FingerprintOnly && k.minhash {
		return errFingerprintOnly
	}
	f.Sig = nil // as insertLocked
	l.docs.add(keptDoc{id: id, f: f, live: true})
	l.order = append(l.order, id)
	l.fps = append(l.fps, f.FP)
	l.counts.add(k, &f, 1)
	return nil
}

// Finish adds the collected documents to the set, or none of them when one
// of their ids is in the set already or twice among them (an error wrapping
// index.ErrDuplicateID) or the set changed since NewLoader.
//
// The map of ids is built here, at its final size, beside the sort of the
// tables: at start-up, one insert per Add into a growing map was the
// largest cost of the goroutine that adds (every id hashed again at each
// doubling), and the tables' sort left a core idle.
func (l *Loader) Finish() error {
	if l.k == nil {
		return errors.New("keptmem: Loader used after Finish")
	}
	k, ld := l.k, *l
	*l = Loader{} // the set takes its chunks
	l = &ld
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.docs.n != l.base {
		return fmt.Errorf("keptmem: the kept set changed while a Loader filled it (%d documents, %d before)", k.docs.n, l.base)
	}
	// Nothing in the set changes until the ids are known to be new: the
	// sorts below only read the tables (and finish a doubling in progress,
	// which moves no entry out of reach).
	var ids map[string]uint32
	var idsErr error
	var wg sync.WaitGroup
	wg.Go(func() { ids, idsErr = l.idMap() })
	sorted := l.sortTables()
	wg.Wait()
	if idsErr != nil {
		return idsErr
	}
	if err := k.x.AddBulk(l.order, l.fps); err != nil {
		return fmt.Errorf("keptmem: kept set index: %w", err)
	}
	if len(k.ids) == 0 {
		k.ids = ids
	} else {
		maps.Copy(k.ids, ids)
	}
	if k.docs.n == 0 {
		k.docs = l.docs
	} else {
		for i := range l.docs.n {
			k.docs.add(*l.docs.at(uint32(i)))
		}
	}
	k.counts.plus(l.counts)
	tabs := k.tables()
	for t, p := range tabs {
		if sorted[t].all != nil {
			p.installBulk(sorted[t])
		}
	}
	if sorted[0].oneByOne || sorted[1].oneByOne || sorted[2].oneByOne {
		var buf []tableKey
		for i := range l.docs.n {
			buf = k.appendEntries(buf[:0], &l.docs.at(uint32(i)).f)
			for _, e := range buf {
				if sorted[e.t].oneByOne {
					tabs[e.t].add(e.key, uint32(l.base+i))
				}
			}
		}
	}
	return nil
}

// tables are the set's tables, in the order of tableKey.t.
func (k *Set) tables() [3]*postings { return [3]*postings{&k.exact, &k.sets, &k.bands} }

// sortTables sorts the entries of each table (when it is rebuilt) with
// those of the loader's documents, for installBulk, which rebuilds the
// table in one array sorted by bucket, each bucket a full slice of it: no
// bucket grows one append at a time, and a later add to a bucket copies
// only that bucket out. A table that holds more than twice the entries it
// gains is not rebuilt: its entries are added one at a time (oneByOne).
// Nothing in the tables changes but finishing a doubling in progress.
//
// The entries are made from the documents' features (the table keys are in
// them) rather than collected as the documents came: the collected entries
// and their sorted copy were 5.6 GB at 10M documents, and collecting them
// took a quarter of the CPU of the goroutine that reads the store. Each core
// counts the entries of its share of the documents by their group, the top
// 8 bits of their key (the first digit of the sort); the counts place every
// group, and every core's part of it, in the sorted array; each core then
// writes its entries there, in order, and the groups are sorted on their own
// by the bits below, the groups shared among the cores, in
// least-significant-digit passes that stay in the cache (a group is a few MB
// at most). Under 8 bits of bucket, a group is already in bucket order. A
// bucket keeps its entries in the order they were added: the table's first,
// then the documents' in slot order. A sort by all the bits in passes over
// the whole array (11 bits a pass) took three times as long at 184M
// entries: every pass went to memory and back.
func (l *Loader) sortTables() [3]sortedPostings {
	tabs := l.k.tables()
	nw := max(1, min(runtime.GOMAXPROCS(0), l.docs.n/1024))
	// counts[w][t][g]: the entries of share w for group g of table t;
	// then where the next of them goes in the table's sorted array.
	counts := make([][3][256]int, nw)
	var wg sync.WaitGroup
	// The two passes below make each document's entries and loop over
	// them inline: a call per entry was half their time at 10M documents.
	share := func(w int) (int, int) { return l.docs.n * w / nw, l.docs.n * (w + 1) / nw }
	for w := range nw {
		wg.Go(func() {
			c := &counts[w]
			var buf []tableKey
			lo, hi := share(w)
			for i := lo; i < hi; i++ {
				buf = l.k.appendEntries(buf[:0], &l.docs.at(uint32(i)).f)
				for _, e := range buf {
					c[e.t][mixKey(e.key)>>24]++
				}
			}
		})
	}
	wg.Wait()

	var out [3]sortedPostings
	var starts [3][257]int
	for t, p := range tabs {
		n := 0
		for w := range counts {
			for _, c := range counts[w][t] {
				n += c
			}
		}
		if n == 0 {
			continue
		}
		if p.n > 2*n {
			// Rebuilding would move more entries than it adds.
			out[t].oneByOne = true
			continue
		}
		p.splitSome(len(p.old))
		var pre [256]int // the table's entries come first in each group
		for _, b := range p.buckets {
			for _, e := range b {
				pre[e.key>>24]++
			}
		}
		at := 0
		for g := range 256 {
			starts[t][g] = at
			at += pre[g]
			pre[g] = starts[t][g]
			for w := range counts {
				c := counts[w][t][g]
				counts[w][t][g] = at
				at += c
			}
		}
		starts[t][256] = at
		all := make([]posting, at)
		hugepage.Advise(all)
		for _, b := range p.buckets {
			for _, e := range b {
				all[pre[e.key>>24]] = e
				pre[e.key>>24]++
			}
		}
		bits := p.bits
		for at >= perBucket*(1<<bits) && bits < 30 {
			bits++
		}
		buckets := make([][]posting, 1<<bits)
		hugepage.Advise(buckets)
		out[t] = sortedPostings{all: all, bits: bits, buckets: buckets}
	}

	for w := range nw {
		wg.Go(func() {
			c := &counts[w]
			alls := [3][]posting{out[0].all, out[1].all, out[2].all}
			var buf []tableKey
			lo, hi := share(w)
			for i := lo; i < hi; i++ {
				slot := uint32(l.base + i)
				buf = l.k.appendEntries(buf[:0], &l.docs.at(uint32(i)).f)
				for _, e := range buf {
					if all := alls[e.t]; all != nil {
						m := mixKey(e.key)
						at := &c[e.t][m>>24]
						all[*at] = posting{m, slot}
						*at++
					}
				}
			}
		})
	}
	wg.Wait()

	var next atomic.Int32
	for range max(1, min(runtime.GOMAXPROCS(0), 3*256)) {
		wg.Go(func() {
			var spare []posting
			for {
				j := int(next.Add(1) - 1)
				if j >= 3*256 {
					return
				}
				t, g := j/256, j%256
				o := &out[t]
				switch {
				case o.all == nil:
				case o.bits <= 8:
					// A bucket spans groups, which are in bucket
					// order: one job slices the whole table.
					if g == 0 {
						o.slice(o.all)
					}
				default:
					group := o.all[starts[t][g]:starts[t][g+1]]
					if len(group) > cap(spare) {
						spare = make([]posting, len(group))
					}
					sortGroup(group, spare[:len(group)], uint(o.bits-8), 32-o.bits)
					o.slice(group) // its buckets are its own
				}
			}
		})
	}
	wg.Wait()
	return out
}

// idMap returns the loader's ids by slot, or an error wrapping
// index.ErrDuplicateID when one of them is in the set already or twice
// among them. The set's lock is held.
func (l *Loader) idMap() (map[string]uint32, error) {
	ids := make(map[string]uint32, len(l.order))
	for i, id := range l.order {
		// One map operation, not a lookup and then an insert: at millions
		// of ids each is a cache miss or two.
		n := len(ids)
		ids[id] = uint32(l.base + i)
		if len(ids) == n {
			return nil, fmt.Errorf("%w %q", index.ErrDuplicateID, id)
		}
	}
	if len(l.k.ids) > 0 {
		for id := range ids {
			if _, ok := l.k.ids[id]; ok {
				return nil, fmt.Errorf("%w %q", index.ErrDuplicateID, id)
			}
		}
	}
	return ids, nil
}
