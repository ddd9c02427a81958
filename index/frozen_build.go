package index

import (
	"context"
	"fmt"
	"runtime"
)

// A Source yields the fingerprints of a BuildFrozen, with their ids, in
// batches. BuildFrozen reads it once.
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
	// SortMemory bounds the bytes of the sort buffers; default 1 GiB.
	// BuildFrozen reads the Source in chunks that fit it (16 bytes an item
	// and 24 per table sorted at once: 64 with two), sorts each chunk once per
	// table and writes the sorted runs to TempDir, then merges each
	// table's runs (an external sort).
	SortMemory int64
	// TempDir is where the sorted runs go, 8 bytes an item a table and 8
	// more for the ids (24 GB at 1B with flip-2x32), removed at the end;
	// default os.TempDir().
	TempDir string
	// Workers is how many tables are sorted and merged at once; default
	// GOMAXPROCS.
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

// BuildFrozen builds a Frozen of the Source's items with an external sort:
// one pass over the Source writes sorted runs of each table to
// opt.TempDir, and a merge of each table's runs encodes it. Its memory is
// the tables and the id column (the result) plus opt.SortMemory.
func BuildFrozen(ctx context.Context, src Source, opt FrozenOptions) (*Frozen, error) {
	f, runs, err := sortRuns(ctx, src, opt)
	if err != nil {
		return nil, err
	}
	defer runs.remove()
	f.tables = make([]efSeq, len(f.lay.perms))
	idSink := &sliceSink{w: make([]uint64, idWords(f.n, f.idBits))}
	err = runs.mergeAll(ctx, opt.Workers, func(t int) (*efWriter, *bitPacker, func()) {
		w, done := newEFSeqWriter(f.n)
		var ids *bitPacker
		if t == f.lay.ident {
			ids = &bitPacker{sink: idSink, width: f.idBits, words: uint64(len(idSink.w))}
		}
		return w, ids, func() { f.tables[t] = done() }
	})
	if err != nil {
		return nil, err
	}
	f.ids = idSink.w
	return f, nil
}

// idWords returns the length of the id column of n ids of width bits.
func idWords(n uint64, width uint) uint64 { return (n*uint64(width)+63)/64 + 1 }

// frozenPlan checks the options and returns the empty Frozen they make.
func frozenPlan(opt FrozenOptions) (*Frozen, error) {
	if opt.SortMemory < 0 || opt.K < 0 || opt.Workers < 0 {
		return nil, fmt.Errorf("%w: sort memory %d, k %d, workers %d", ErrOptions, opt.SortMemory, opt.K, opt.Workers)
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
	return &Frozen{lay: lay, radius: radius}, nil
}
