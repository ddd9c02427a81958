package index

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sync"
)

// The external sort of BuildFrozen. One pass over the Source cuts it into
// chunks that fit the sort memory; each chunk is permuted and radix-sorted
// once per table and written as one run to the table's temporary file (the
// identity table's ids to a file of their own, in the same order): flat
// little-endian words, no pointers. Every table's run r holds the same
// items, so one list of bounds describes the runs of all files. A merge of
// a table's runs, a binary heap of run heads reading each run through its
// own buffer, then yields the table in order to its Elias-Fano writer.

// frozenRuns are the sorted runs of every table on temporary disk.
type frozenRuns struct {
	dir    string
	vals   []*os.File // per table, its runs one after another
	ids    *os.File   // the identity table's ids, in the order of its runs
	ident  int
	bounds []uint64 // run r is items [bounds[r], bounds[r+1]) of each file
}

// sortScratch is one worker's sort buffers.
type sortScratch struct {
	keys, tmp []uint64
	pos, tpos []uint32
}

// sortRuns reads the Source once and writes the sorted runs of every table
// of the plan opt names; it returns the Frozen to fill (plan, count, id
// width) and the runs, which the caller removes.
func sortRuns(ctx context.Context, src Source, opt FrozenOptions) (*Frozen, *frozenRuns, error) {
	opt.EnsureDefaults()
	f, err := frozenPlan(opt)
	if err != nil {
		return nil, nil, err
	}
	nt := len(f.lay.perms)
	workers := max(1, min(opt.Workers, nt))
	// A chunk's fingerprints and ids, and each worker's keys, scratch and
	// positions (uint32: a chunk holds fewer than 2^32 items).
	per := int64(16 + 24*workers)
	chunk := int(min(max(1<<12, opt.SortMemory/per), 1<<31))
	dir, err := os.MkdirTemp(opt.TempDir, "neardup-frozen-*")
	if err != nil {
		return nil, nil, fmt.Errorf("index: temporary directory for the sort: %w", err)
	}
	r := &frozenRuns{dir: dir, ident: f.lay.ident, bounds: []uint64{0}}
	ok := false
	defer func() {
		if !ok {
			r.remove()
		}
	}()
	for t := range nt {
		fd, err := os.CreateTemp(dir, fmt.Sprintf("table%d-", t))
		if err != nil {
			return nil, nil, fmt.Errorf("index: sort run file: %w", err)
		}
		r.vals = append(r.vals, fd)
	}
	if r.ids, err = os.CreateTemp(dir, "ids-"); err != nil {
		return nil, nil, fmt.Errorf("index: sort run file: %w", err)
	}
	fps := make([]uint64, 0, chunk)
	ids := make([]uint64, 0, chunk)
	scratch := make([]sortScratch, workers)
	var n, maxID uint64
	flush := func() error {
		if len(fps) == 0 {
			return nil
		}
		next := make(chan int, nt)
		for t := range nt {
			next <- t
		}
		close(next)
		errs := make([]error, nt)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for t := range next {
					errs[t] = r.writeRun(f.lay.perms[t], t, fps, ids, &scratch[w])
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("index: writing a sort run: %w", err)
		}
		r.bounds = append(r.bounds, r.bounds[len(r.bounds)-1]+uint64(len(fps)))
		fps, ids = fps[:0], ids[:0]
		return nil
	}
	err = src.Scan(func(bf, bi []uint64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for len(bf) > 0 {
			m := min(len(bf), chunk-len(fps))
			fps = append(fps, bf[:m]...)
			if bi == nil {
				for i := range m {
					ids = append(ids, n+uint64(i))
				}
				maxID = max(maxID, n+uint64(m)-1)
			} else {
				for _, id := range bi[:m] {
					maxID = max(maxID, id)
				}
				ids = append(ids, bi[:m]...)
				bi = bi[m:]
			}
			bf = bf[m:]
			n += uint64(m)
			if len(fps) == chunk {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("index: reading the source: %w", err)
	}
	f.n, f.idBits = n, uint(bits.Len64(maxID))
	ok = true
	return f, r, nil
}

// writeRun sorts the chunk fps (with ids) for table t and appends the run.
func (r *frozenRuns) writeRun(perm Permutation, t int, fps, ids []uint64, sc *sortScratch) error {
	m := len(fps)
	if cap(sc.keys) < m {
		sc.keys, sc.tmp = make([]uint64, m), make([]uint64, m)
	}
	keys, tmp := sc.keys[:m], sc.tmp[:m]
	for i, x := range fps {
		keys[i] = perm.Apply(x)
	}
	if t != r.ident {
		radixSort(keys, tmp)
		_, err := r.vals[t].Write(wordBytes(keys))
		return err
	}
	if cap(sc.pos) < m {
		sc.pos, sc.tpos = make([]uint32, m), make([]uint32, m)
	}
	pos := sc.pos[:m]
	for i := range pos {
		pos[i] = uint32(i)
	}
	radixSortPairs(keys, pos, tmp, sc.tpos[:m])
	if _, err := r.vals[t].Write(wordBytes(keys)); err != nil {
		return err
	}
	for i, p := range pos {
		tmp[i] = ids[p]
	}
	_, err := r.ids.Write(wordBytes(tmp))
	return err
}

// remove deletes the runs.
func (r *frozenRuns) remove() {
	for _, fd := range r.vals {
		fd.Close()
	}
	if r.ids != nil {
		r.ids.Close()
	}
	os.RemoveAll(r.dir)
}

// mergeAll merges each table's runs, workers tables at once. open returns
// table t's writer, the id column's writer for the identity table (else
// nil) and a function to call when the table is done.
func (r *frozenRuns) mergeAll(ctx context.Context, workers int, open func(t int) (*efWriter, *bitPacker, func())) error {
	nt := len(r.vals)
	next := make(chan int, nt)
	for t := range nt {
		next <- t
	}
	close(next)
	errs := make([]error, nt)
	var (
		wg sync.WaitGroup
		mu sync.Mutex // open and done may share state (the id column)
	)
	for range max(1, min(workers, nt)) {
		wg.Go(func() {
			for t := range next {
				mu.Lock()
				w, ids, done := open(t)
				mu.Unlock()
				if errs[t] = r.merge(ctx, t, w, ids); errs[t] != nil {
					return
				}
				if ids != nil {
					ids.finish()
				}
				mu.Lock()
				done()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runBuffer is the words a merge reads from one run at a time.
const runBuffer = 1 << 14

// A runReader reads one run of one file through its own buffer.
type runReader struct {
	fd        *os.File
	next, end uint64 // items not yet read into buf
	buf       []uint64
	i         int
}

func (rr *runReader) fill() error {
	m := min(uint64(cap(rr.buf)), rr.end-rr.next)
	rr.buf = rr.buf[:m]
	rr.i = 0
	if m == 0 {
		return nil
	}
	if _, err := rr.fd.ReadAt(wordBytes(rr.buf), int64(8*rr.next)); err != nil {
		return fmt.Errorf("index: reading a sort run: %w", err)
	}
	rr.next += m
	return nil
}

// merge yields table t's items in order to w (and the ids to ids).
func (r *frozenRuns) merge(ctx context.Context, t int, w *efWriter, ids *bitPacker) error {
	nr := len(r.bounds) - 1
	vals := make([]runReader, nr)
	var idr []runReader
	if ids != nil {
		idr = make([]runReader, nr)
	}
	heads := make([]uint64, nr)
	headIDs := make([]uint64, nr)
	heap := make([]int, 0, nr)
	less := func(a, b int) bool {
		return heads[a] < heads[b] || heads[a] == heads[b] && a < b
	}
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(heap) {
				return
			}
			if c+1 < len(heap) && less(heap[c+1], heap[c]) {
				c++
			}
			if !less(heap[c], heap[i]) {
				return
			}
			heap[i], heap[c] = heap[c], heap[i]
			i = c
		}
	}
	// advance loads run j's next item into heads; false when it is done.
	advance := func(j int) (bool, error) {
		v := &vals[j]
		if v.i == len(v.buf) {
			if err := v.fill(); err != nil {
				return false, err
			}
			if len(v.buf) == 0 {
				return false, nil
			}
			if idr != nil {
				if err := idr[j].fill(); err != nil {
					return false, err
				}
			}
		}
		heads[j] = v.buf[v.i]
		v.i++
		if idr != nil {
			headIDs[j] = idr[j].buf[idr[j].i]
			idr[j].i++
		}
		return true, nil
	}
	for j := range nr {
		lo, hi := r.bounds[j], r.bounds[j+1]
		vals[j] = runReader{fd: r.vals[t], next: lo, end: hi, buf: make([]uint64, 0, runBuffer)}
		if idr != nil {
			idr[j] = runReader{fd: r.ids, next: lo, end: hi, buf: make([]uint64, 0, runBuffer)}
		}
		ok, err := advance(j)
		if err != nil {
			return err
		}
		if ok {
			heap = append(heap, j)
		}
	}
	for i := len(heap)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for count := 0; len(heap) > 0; count++ {
		if count&(1<<20-1) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		j := heap[0]
		w.add(heads[j])
		if ids != nil {
			ids.add(headIDs[j])
		}
		ok, err := advance(j)
		if err != nil {
			return err
		}
		if !ok {
			heap[0] = heap[len(heap)-1]
			heap = heap[:len(heap)-1]
		}
		down(0)
	}
	return nil
}
