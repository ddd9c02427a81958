package rule

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	mathbits "math/bits"

	"github.com/neardup/neardup/internal/hugepage"
)

// The binary encoding of Features (Features.AppendBinary), which the stores
// keep as their records (package store) and the old kept-set file held one of
// per document (keptfiles/LEGACY-FORMAT.md): this package owns it, as
// it owns the types.

// appendBinary appends the sketch: n, shift, the count of hashes and their
// deltas, as uvarints (the hashes are sorted).
func (s Sketch) appendBinary(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(s.n))
	b = append(b, s.shift)
	b = binary.AppendUvarint(b, uint64(len(s.h)))
	prev := uint32(0)
	for _, h := range s.h {
		b = binary.AppendUvarint(b, uint64(h-prev))
		prev = h
	}
	return b
}

func (s *Sketch) readBinary(r *sliceReader) error {
	n, err := r.uvarint()
	if err != nil || n > 1<<32-1 {
		return fmt.Errorf("sketch size")
	}
	shift, err := r.ReadByte()
	if err != nil || shift > 31 {
		return fmt.Errorf("sketch modulus")
	}
	c, err := r.uvarint()
	if err != nil || c > n || c > uint64(len(r.b)-r.i) {
		return fmt.Errorf("sketch count")
	}
	// The deltas are decoded from the slice in place: through
	// io.ByteReader, a call per byte made this loop a fifth of start-up.
	h := r.arena.alloc(int(c))
	b, prev := r.b[r.i:], uint64(0)
	for i := range h {
		var d uint64
		var w int
		if len(b) >= 8 {
			d, w = uvarint8(binary.LittleEndian.Uint64(b))
		}
		if w == 0 {
			d, w = binary.Uvarint(b)
		}
		if w <= 0 || prev+d > 1<<32-1 || (i > 0 && d == 0) {
			return fmt.Errorf("sketch hash %d", i)
		}
		b = b[w:]
		prev += d
		h[i] = uint32(prev)
	}
	r.i = len(r.b) - len(b)
	s.h, s.n, s.shift = h, uint32(n), shift
	return nil
}

// uvarint8 decodes the varint at the start of the 8 bytes x (little-endian)
// and returns it and its length, or a length of 0 when it is longer than 5
// bytes (a sketch's deltas take at most 5; Sketch.readBinary gives the rest,
// and the last 7 bytes of a record, to binary.Uvarint). It finds the value's
// last byte (the first without its top bit) from the one load and gathers
// the 7-bit groups with shifts, without a branch per byte; it is small
// enough to be inlined into the sketch's loop, where binary.Uvarint, a call
// and a branch per byte, was 9% of start-up.
func uvarint8(x uint64) (uint64, int) {
	n := mathbits.TrailingZeros64(^x&0x8080808080808080)/8 + 1
	if n > 5 {
		return 0, 0 // longer than a 32-bit delta: binary.Uvarint's
	}
	x &= ^uint64(0) >> (64 - 8*n) &^ 0x8080808080808080
	return x&0x7f | x>>1&(0x7f<<7) | x>>2&(0x7f<<14) | x>>3&(0x7f<<21) | x>>4&(0x7f<<28), n
}

// MarshalBinary encodes the sketch (for stores that keep it).
func (s Sketch) MarshalBinary() ([]byte, error) { return s.appendBinary(nil), nil }

// UnmarshalBinary decodes a sketch written by MarshalBinary.
func (s *Sketch) UnmarshalBinary(b []byte) error {
	r := &sliceReader{b: b}
	if err := s.readBinary(r); err != nil {
		return err
	}
	if r.i != len(b) {
		return fmt.Errorf("dedup: sketch: %d trailing bytes", len(b)-r.i)
	}
	return nil
}

type sliceReader struct {
	b     []byte
	i     int
	arena *Arena // of the sketches read; nil: allocated each
}

func (r *sliceReader) next(n int) ([]byte, error) {
	if n > len(r.b)-r.i {
		return nil, io.ErrUnexpectedEOF
	}
	b := r.b[r.i : r.i+n]
	r.i += n
	return b, nil
}

// uvarint reads an unsigned varint.
func (r *sliceReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	r.i += n
	return v, nil
}

func (r *sliceReader) ReadByte() (byte, error) {
	if r.i >= len(r.b) {
		return 0, io.ErrUnexpectedEOF
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

// AppendBinary appends what the rule needs of f for a store to keep (the
// fingerprint, the token-sequence hash, the counts and the shingle set; not
// Vector or Sig, nor Pre, which decoding computes from the shingle set):
// the record of one document in the kept-set file.
func (f *Features) AppendBinary(b []byte) ([]byte, error) {
	b = binary.LittleEndian.AppendUint64(b, f.FP)
	b = binary.LittleEndian.AppendUint64(b, f.Exact)
	b = binary.AppendUvarint(b, uint64(f.Tokens))
	b = binary.AppendUvarint(b, uint64(f.Length))
	b = f.Sketch.appendBinary(b)
	b = binary.AppendUvarint(b, uint64(len(f.Bands)))
	for _, k := range f.Bands {
		b = binary.LittleEndian.AppendUint64(b, k)
	}
	return b, nil
}

// MarshalBinary is AppendBinary to a new slice, allocated once: its
// capacity is the most AppendBinary can write.
func (f *Features) MarshalBinary() ([]byte, error) {
	const v = binary.MaxVarintLen32
	return f.AppendBinary(make([]byte, 0, 8+8+v+v+(v+1+v+v*len(f.Sketch.h))+v+8*len(f.Bands)))
}

// UnmarshalBinary decodes what MarshalBinary wrote.
func (f *Features) UnmarshalBinary(b []byte) error {
	return (*Arena)(nil).UnmarshalFeatures(f, b)
}

// An Arena allocates the shingle sets of the features it decodes from
// large blocks, advised for huge pages (internal/hugepage), rather than one
// allocation each: loading millions of stored documents, as the service's
// start-up does, then faults in 2 MB pages instead of 4 KB ones, and its
// allocator has a few hundred blocks to track instead of millions of sets.
// A block is freed once none of its sets is referenced, so the set of a
// document removed after a load is freed with the last of the block's
// others: an Arena is for documents loaded to be kept. A nil Arena
// allocates each set on its own. An Arena is not safe for concurrent use.
type Arena struct {
	free []uint32 // the rest of the current block
}

// arenaBlock is the size of an Arena's blocks in hashes: 16 MB.
const arenaBlock = 4 << 20

// alloc returns a slice of n hashes whose capacity is n.
func (a *Arena) alloc(n int) []uint32 {
	if a == nil || n > arenaBlock/16 {
		return make([]uint32, n)
	}
	if len(a.free) < n {
		a.free = make([]uint32, arenaBlock)
		hugepage.Advise(a.free)
	}
	h := a.free[:n:n]
	a.free = a.free[n:]
	return h
}

// UnmarshalFeatures decodes into f what Features.MarshalBinary wrote, as
// Features.UnmarshalBinary does, with f's shingle set allocated from a.
func (a *Arena) UnmarshalFeatures(f *Features, b []byte) error {
	n, err := a.DecodeFeatures(f, b)
	if err != nil {
		return err
	}
	if n != len(b) {
		return fmt.Errorf("%w: features: %d trailing bytes", ErrFeaturesFormat, len(b)-n)
	}
	return nil
}

// DecodeFeatures decodes into f the features that Features.AppendBinary
// wrote at the start of b, with f's shingle set allocated from a, and
// returns the bytes they took: for a file of records one after another (a
// kept-set file). Its errors wrap ErrFeaturesFormat.
func (a *Arena) DecodeFeatures(f *Features, b []byte) (int, error) {
	r := &sliceReader{b: b, arena: a}
	if err := f.readBinary(r); err != nil {
		return 0, fmt.Errorf("%w: features: %v", ErrFeaturesFormat, err)
	}
	return r.i, nil
}

func (f *Features) readBinary(r *sliceReader) error {
	fixed, err := r.next(16)
	if err != nil {
		return err
	}
	*f = Features{FP: binary.LittleEndian.Uint64(fixed[:8]), Exact: binary.LittleEndian.Uint64(fixed[8:])}
	t, err1 := r.uvarint()
	l, err2 := r.uvarint()
	if err := errors.Join(err1, err2); err != nil || t > 1<<32-1 || l > 1<<32-1 {
		return fmt.Errorf("counts")
	}
	f.Tokens, f.Length = uint32(t), uint32(l)
	f.Empty = f.Tokens == 0
	if err := f.Sketch.readBinary(r); err != nil {
		return err
	}
	// The prefilter is a function of the set: recomputed, not stored.
	f.Pre = f.Prefilter()
	nb, err := r.uvarint()
	if err != nil || nb > 4096 {
		return fmt.Errorf("band count")
	}
	if nb > 0 {
		raw, err := r.next(8 * int(nb))
		if err != nil {
			return err
		}
		f.Bands = make([]uint64, nb)
		for i := range f.Bands {
			f.Bands[i] = binary.LittleEndian.Uint64(raw[8*i:])
		}
	}
	return nil
}
