package index

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"runtime"
	"sync"
)

// A Source yields the fingerprints of a BuildFrozen, with their ids, in
// batches. BuildFrozen reads it several times (once to count, then once per
// sort partition of each table), so Scan must yield the same items in the
// same order every time.
type Source interface {
	// Scan calls fn with consecutive batches of fingerprints; ids[i] is the
	// id of fps[i], or, when ids is nil, the item's position in the source
	// (0, 1, 2, ...). fn must not keep the slices. Scan returns fn's first
	// error.
	Scan(fn func(fps, ids []uint64) error) error
}

// SliceSource returns a Source over fps, with ids (nil: positions).
func SliceSource(fps, ids []uint64) Source { return sliceSource{fps, ids} }

type sliceSource struct{ fps, ids []uint64 }

func (s sliceSource) Scan(fn func(fps, ids []uint64) error) error {
	const batch = 1 << 16
	for i := 0; i < len(s.fps); i += batch {
		e := min(i+batch, len(s.fps))
		var ids []uint64
		if s.ids != nil {
			ids = s.ids[i:e]
		} else {
			ids = positions(uint64(i), e-i)
		}
		if err := fn(s.fps[i:e], ids); err != nil {
			return err
		}
	}
	return nil
}

func positions(first uint64, n int) []uint64 {
	p := make([]uint64, n)
	for i := range p {
		p[i] = first + uint64(i)
	}
	return p
}

// FileSource returns a Source reading a file of little-endian 8-byte
// fingerprints; the id of each is its position in the file.
func FileSource(path string) Source { return fileSource(path) }

type fileSource string

func (p fileSource) Scan(fn func(fps, ids []uint64) error) error {
	f, err := os.Open(string(p))
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	buf := make([]byte, 8<<13)
	fps := make([]uint64, 0, 1<<13)
	ids := make([]uint64, 1<<13)
	pos := uint64(0)
	for {
		m, err := io.ReadFull(r, buf)
		if m%8 != 0 {
			return fmt.Errorf("index: %s: length is not a multiple of 8 bytes", string(p))
		}
		fps = fps[:0]
		for i := 0; i < m; i += 8 {
			fps = append(fps, binary.LittleEndian.Uint64(buf[i:]))
		}
		for i := range fps {
			ids[i] = pos + uint64(i)
		}
		pos += uint64(len(fps))
		if len(fps) > 0 {
			if err := fn(fps, ids[:len(fps)]); err != nil {
				return err
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// FrozenOptions configure BuildFrozen. The zero value means the defaults.
type FrozenOptions struct {
	// K is the largest distance a query may ask; default 3.
	K int
	// Layout names the plan: "flip-2x32" (the default for k = 3: two
	// tables of 32-bit keys, each probed with the keys within 1 bit of the
	// query's), "flip:K:T" (T tables probed within K/T bits), or a plan of
	// exact tables that ParseLayout reads ("seeds-4x16", ...; the default
	// for k other than 3 is blocks:K:K+1).
	Layout string
	// Plan, when not nil, is the plan itself, overriding Layout and K. It
	// must have a table whose permutation is the identity.
	Plan *Plan
	// Radius, with Plan, is the bits a probe's key may differ from the
	// query's in each table (0: the plan's tables are exact, as an Index's;
	// see checkProbed for what a radius above 0 asks of the plan).
	Radius int
	// SortMemory bounds the bytes of the sort buffers; default 1 GiB. Each
	// table is sorted in partitions of its values' top 16 bits that fit it,
	// one pass over the Source per partition (an external sort whose runs
	// are regenerated from the Source instead of spilled: the Source is the
	// temporary disk). A single 16-bit prefix holding more than fits is
	// sorted whole.
	SortMemory int64
	// Workers is how many tables are sorted at once, each with its share
	// of SortMemory; default GOMAXPROCS.
	Workers int
}

// EnsureDefaults fills in the defaults.
func (o *FrozenOptions) EnsureDefaults() {
	if o.K == 0 && o.Layout == "" && o.Plan == nil {
		o.K = 3
	}
	if o.SortMemory == 0 {
		o.SortMemory = 1 << 30
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
}

func (o FrozenOptions) plan() (Plan, int, error) {
	if o.Plan != nil {
		return *o.Plan, o.Radius, nil
	}
	name := o.Layout
	if name == "" && o.K == 3 {
		name = FlipLayout
	}
	if name == "" {
		p, err := BlockPlan(o.K, o.K+1)
		return p, 0, err
	}
	p, r, ok, err := parseFrozenLayout(name)
	if !ok {
		p, err = ParseLayout(name)
	}
	if err != nil {
		return Plan{}, 0, err
	}
	if o.K != 0 && o.K > p.K {
		return Plan{}, 0, fmt.Errorf("%w: layout %s answers k <= %d, not %d", ErrOptions, name, p.K, o.K)
	}
	return p, r, nil
}

// prefixBits is the width of the prefixes a table's sort partitions are
// made of.
const prefixBits = 16

// BuildFrozen builds a Frozen of the Source's items in bounded memory: the
// tables themselves (about 64 - log2 n + 2 bits an entry each, plus the id
// column) and SortMemory of sort buffers. It reads the Source 1 + P times,
// P the number of sort partitions over all tables (the tables' sizes times
// 16 bytes, 32 for the identity table with its ids, over SortMemory).
func BuildFrozen(ctx context.Context, src Source, opt FrozenOptions) (*Frozen, error) {
	opt.EnsureDefaults()
	if opt.SortMemory < 0 || opt.K < 0 || opt.Workers < 0 {
		return nil, fmt.Errorf("%w: sort memory %d, k %d", ErrOptions, opt.SortMemory, opt.K)
	}
	p, radius, err := opt.plan()
	if err != nil {
		return nil, err
	}
	if err := checkProbed(p, radius); err != nil {
		return nil, err
	}
	lay := newLayout(p)
	if lay.ident < 0 {
		return nil, fmt.Errorf("%w: %w", ErrPlan, errNoIdentity)
	}
	// Pass 0: the count, the widest id and each table's prefix histogram.
	hist := make([][]uint64, len(lay.perms))
	for t := range hist {
		hist[t] = make([]uint64, 1<<prefixBits)
	}
	var n, maxID uint64
	err = src.Scan(func(fps, ids []uint64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			maxID = max(maxID, id)
		}
		for t, perm := range lay.perms {
			h := hist[t]
			for _, x := range fps {
				h[perm.Apply(x)>>(64-prefixBits)]++
			}
		}
		n += uint64(len(fps))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("index: reading the source: %w", err)
	}
	f := &Frozen{lay: lay, radius: radius, n: n, tables: make([]efSeq, len(lay.perms)), idBits: uint(bits.Len64(maxID))}
	f.ids = make([]uint64, (n*uint64(f.idBits)+63)/64+1)
	workers := max(1, min(opt.Workers, len(lay.perms)))
	errs := make([]error, len(lay.perms))
	next := make(chan int, len(lay.perms))
	for t := range lay.perms {
		next <- t
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for t := range next {
				if errs[t] = f.buildTable(ctx, src, t, hist[t], opt.SortMemory/int64(workers)); errs[t] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f, nil
}

// buildTable sorts table t in partitions of its prefixes and encodes it.
func (f *Frozen) buildTable(ctx context.Context, src Source, t int, hist []uint64, mem int64) error {
	ident := t == f.lay.ident
	per := int64(16) // a value and its radix-sort scratch
	if ident {
		per = 32 // and a position, its scratch, and the id
	}
	limit := uint64(max(1, mem/per))
	w := newEFWriter(f.n)
	perm := f.lay.perms[t]
	var keys, tmp, ids []uint64
	var pos, tpos []uint32
	rank := uint64(0)
	for lo := 0; lo < len(hist); {
		// The widest run of prefixes [lo, hi) that fits the buffers.
		hi, size := lo, uint64(0)
		for hi < len(hist) && (hi == lo || size+hist[hi] <= limit) {
			size += hist[hi]
			hi++
		}
		if size == 0 {
			lo = hi
			continue
		}
		if uint64(cap(keys)) < size {
			keys, tmp = make([]uint64, 0, size), make([]uint64, size)
			if ident {
				ids = make([]uint64, 0, size)
				pos, tpos = make([]uint32, size), make([]uint32, size)
			}
		}
		keys, ids = keys[:0], ids[:0]
		plo, phi := uint64(lo), uint64(hi)
		err := src.Scan(func(fps, fids []uint64) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			for i, x := range fps {
				y := perm.Apply(x)
				if p := y >> (64 - prefixBits); p >= plo && p < phi {
					if uint64(len(keys)) == size {
						return errSourceChanged
					}
					keys = append(keys, y)
					if ident {
						ids = append(ids, fids[i])
					}
				}
			}
			return nil
		})
		if err == nil && uint64(len(keys)) != size {
			err = errSourceChanged
		}
		if err != nil {
			return fmt.Errorf("index: reading the source for table %d: %w", t, err)
		}
		if ident {
			for i := range pos[:size] {
				pos[i] = uint32(i)
			}
			radixSortPairs(keys, pos[:size], tmp, tpos)
			for i, p := range pos[:size] {
				f.putID(rank+uint64(i), ids[p])
			}
		} else {
			radixSort(keys, tmp)
		}
		for _, y := range keys {
			w.add(y)
		}
		rank += size
		lo = hi
	}
	f.tables[t] = w.finish()
	return nil
}

var errSourceChanged = errors.New("the source yielded different items than on its first pass")

// putID sets the id at rank i.
func (f *Frozen) putID(i, id uint64) {
	w := uint64(f.idBits)
	if w == 0 {
		return
	}
	off := i * w
	f.ids[off/64] |= id << (off % 64)
	if off%64+w > 64 {
		f.ids[off/64+1] |= id >> (64 - off%64)
	}
}
