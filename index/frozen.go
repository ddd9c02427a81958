package index

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"syscall"
)

// A Frozen is an immutable, compressed set of fingerprints with integer ids,
// for collections too large for an Index: a billion fingerprints on one
// machine. Each table of the plan is one Elias-Fano sequence of the permuted
// fingerprints (see efSeq), about 64 - log2(n) + 2 bits an entry, decoded on
// the fly by the query; the ids are a bit-packed column in the order of the
// identity table, as wide as the largest id needs. See the package
// documentation ("Frozen tables") for the layout and its cost.
//
// Make one with BuildFrozen, or map a snapshot with OpenFrozen (the query
// then reads the file in place). A Frozen is safe for concurrent use.
type Frozen struct {
	lay    *layout
	radius int // bits a probe's key may differ from the query's (probed layouts)
	n      uint64
	tables []efSeq // one per plan table; tables[lay.ident] is sorted fingerprints
	idBits uint    // bits per id, 0 when every id is 0
	ids    []uint64
	// names, when set, are string ids: name i (of the integer id i) is
	// nameBytes[nameOffs[i]:nameOffs[i+1]]. Mapped, they stay on disk but
	// for the pages Name reads.
	nameOffs  []uint64
	nameBytes []byte
	mapped    []byte // the mapping behind the slices, when opened from a file

	closeOnce sync.Once
	closeErr  error
}

// A FrozenMatch is one stored fingerprint within the query distance.
type FrozenMatch struct {
	ID          uint64
	Fingerprint uint64
	Distance    int
}

// Len returns the number of stored fingerprints.
func (f *Frozen) Len() int { return int(f.n) }

// Plan returns the table layout.
func (f *Frozen) Plan() Plan { return f.lay.plan }

// Bytes returns the size of the tables and the id column: the memory a
// query may touch.
func (f *Frozen) Bytes() int64 {
	b := 8 * int64(len(f.ids))
	for i := range f.tables {
		b += f.tables[i].bytes()
	}
	return b
}

// SetNames gives the integer ids 0..len(names)-1 string names, which
// SaveFile and WriteTo store beside the tables and Name returns. It is
// for callers whose own ids are strings: build with position ids (a
// Source whose ids are nil) and name each position.
func (f *Frozen) SetNames(names []string) error {
	if f.mapped != nil {
		return fmt.Errorf("%w: SetNames on a mapped Frozen", ErrOptions)
	}
	offs := make([]uint64, len(names)+1)
	var b []byte
	for i, s := range names {
		b = append(b, s...)
		offs[i+1] = uint64(len(b))
	}
	f.nameOffs, f.nameBytes = offs, b
	return nil
}

// Name returns the string name of integer id id, if SetNames gave it one.
// A damaged snapshot (offsets out of order or past the bytes) gives false,
// not a panic.
func (f *Frozen) Name(id uint64) (string, bool) {
	if id+1 >= uint64(len(f.nameOffs)) || id+1 == 0 {
		return "", false
	}
	lo, hi := f.nameOffs[id], f.nameOffs[id+1]
	if lo > hi || hi > uint64(len(f.nameBytes)) {
		return "", false
	}
	return string(f.nameBytes[lo:hi]), true // a copy: the mapping may go
}

// HasNames reports whether the ids have string names.
func (f *Frozen) HasNames() bool { return len(f.nameOffs) > 0 }

// IDBytes returns the size of the id column.
func (f *Frozen) IDBytes() int64 { return 8 * int64(len(f.ids)) }

// Close releases the mapping of a Frozen opened from a file; the Frozen
// must not be used afterwards. It does nothing for a built one.
func (f *Frozen) Close() error {
	f.closeOnce.Do(func() {
		if f.mapped != nil {
			f.closeErr = syscall.Munmap(f.mapped)
		}
	})
	return f.closeErr
}

// id returns the id at rank i of the identity table.
func (f *Frozen) id(i uint64) uint64 {
	w := uint64(f.idBits)
	if w == 0 {
		return 0
	}
	off := i * w
	wi := off / 64
	if wi+1 >= uint64(len(f.ids)) {
		return 0
	}
	sh := off % 64
	v := f.ids[wi] >> sh
	if sh+w > 64 {
		v |= f.ids[wi+1] << (64 - sh)
	}
	return v & (^uint64(0) >> (64 - w))
}

type frozenScratch struct {
	buf    []uint64
	ranges []bucketRange
	probes []bucketProbe
	cands  []probeCand
	touch  uint64 // keeps pass 1's reads of queryBuckets
}

var frozenPool = sync.Pool{New: func() any { return new(frozenScratch) }}

// Query returns the stored fingerprints within k bits of fp, nearest first
// (ties by id), at most limit of them when limit > 0, as Index.Query does.
func (f *Frozen) Query(fp uint64, k, limit int) ([]FrozenMatch, error) {
	if k < 0 || k > f.lay.plan.K {
		return nil, fmt.Errorf("%w: k=%d, plan answers 0..%d", ErrDistance, k, f.lay.plan.K)
	}
	sc := frozenPool.Get().(*frozenScratch)
	defer frozenPool.Put(sc)
	buf := sc.buf[:0]
	if f.radius > 0 && f.singleBuckets() {
		buf = f.queryBuckets(fp, k, buf, sc)
	} else {
		buf = f.queryRanges(fp, k, buf, sc)
	}
	// A fingerprint is found once per table whose key it shares with fp.
	if len(buf) > 1 {
		slices.Sort(buf)
		buf = slices.Compact(buf)
	}
	sc.buf = buf
	if len(buf) == 0 {
		return nil, nil
	}
	ident := &f.tables[f.lay.ident]
	var out []FrozenMatch
	for _, x := range buf {
		lo, hi := ident.find(x)
		d := bits.OnesCount64(x ^ fp)
		for i := lo; i < hi; i++ {
			out = append(out, FrozenMatch{ID: f.id(i), Fingerprint: x, Distance: d})
		}
	}
	slices.SortFunc(out, func(a, b FrozenMatch) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.ID, b.ID))
	})
	if limit > 0 && limit < len(out) {
		out = out[:limit]
	}
	return out, nil
}

// All calls fn with every stored fingerprint and its id, in ascending order
// of fingerprint; it stops when fn returns false.
func (f *Frozen) All(fn func(id, fp uint64) bool) {
	i := uint64(0)
	stop := false
	f.tables[f.lay.ident].all(func(v uint64) {
		if !stop && !fn(f.id(i), v) {
			stop = true
		}
		i++
	})
}

// ErrNoIdentity is returned, wrapped in ErrPlan, for a plan without a table
// whose permutation is the identity: a Frozen maps matches to ids through
// that table.
var errNoIdentity = errors.New("a frozen index needs a table keyed by the leading blocks (the identity permutation)")

// queryRanges appends to buf the stored fingerprints within k of fp,
// table by table, scanning each probe's run of buckets.
func (f *Frozen) queryRanges(fp uint64, k int, buf []uint64, sc *frozenScratch) []uint64 {
	var y uint64
	keep := func(_, v uint64) bool {
		if bits.OnesCount64(v^y) <= k {
			buf = append(buf, v)
		}
		return true
	}
	for t := range f.tables {
		s := &f.tables[t]
		perm := f.lay.perms[t]
		y = perm.Apply(fp)
		yh := y >> s.l
		start := len(buf)
		// The buckets of the query's key and, in a probed layout, of the
		// keys near it (the distance test drops the other keys in them).
		sc.ranges = probeRanges(sc.ranges[:0], y, f.lay.kb[t], s.h, f.radius)
		for _, r := range sc.ranges {
			s.scan(r.b0, r.b1, yh, k, keep)
		}
		if t != f.lay.ident {
			for i := start; i < len(buf); i++ {
				buf[i] = perm.Invert(buf[i])
			}
		}
	}
	return buf
}
