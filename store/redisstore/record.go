package redisstore

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// Record encodings (REDIS.md, "Records"). Both start with a version byte,
// the time the record was written (Unix ms, uvarint), the id and the
// metadata (uvarint lengths); then
//
//   - version 1: the features as rule.Features.AppendBinary writes them
//     (the shingle set as uvarint deltas, ~3.8 bytes a hash, and the band
//     keys, 8 bytes each). Written for a sampled shingle set; read always.
//   - version 2 (packed): the fingerprint and the token-sequence hash (8
//     bytes each, little-endian), the token and byte counts (uvarints), a
//     flags byte, the count of the shingle set's hashes (uvarint) and, when
//     there are any, the Golomb-Rice parameter k (a byte) and the gaps
//     between the sorted hashes, Rice-coded (~3.2 bytes a hash: within a
//     few percent of the entropy of a set of random 32-bit values); then
//     the band keys (uvarint count, 8 bytes each) only when flagBands is
//     set. Otherwise they are recomputed from the set (rule.Bander), with
//     the hash 0 added to the signed set when flagZero is set: the encoder
//     keeps a record's bands out only when that gives them back exactly.
const (
	recordV1 = 1
	recordV2 = 2
)

// Flags of a version 2 record.
const (
	flagBands = 1 << iota // the band keys follow the set
	flagZero              // recompute the bands with the hash 0 in the set
)

// encodeRecord returns r's record, written at now: version 2 unless r's
// shingle set is sampled (version 1).
func (s *Store) encodeRecord(r *store.Record, now time.Time) ([]byte, error) {
	f := &r.Features
	b := make([]byte, 0, 48+len(r.ID)+len(r.Meta)+4*len(f.Sketch.Hashes()))
	v := byte(recordV2)
	if f.Sketch.Sampled() {
		v = recordV1
	}
	b = append(b, v)
	b = binary.AppendUvarint(b, uint64(now.UnixMilli()))
	b = binary.AppendUvarint(b, uint64(len(r.ID)))
	b = append(b, r.ID...)
	b = binary.AppendUvarint(b, uint64(len(r.Meta)))
	b = append(b, r.Meta...)
	if v == recordV1 {
		return f.AppendBinary(b)
	}
	b = binary.LittleEndian.AppendUint64(b, f.FP)
	b = binary.LittleEndian.AppendUint64(b, f.Exact)
	b = binary.AppendUvarint(b, uint64(f.Tokens))
	b = binary.AppendUvarint(b, uint64(f.Length))
	hs := f.Sketch.Hashes()
	flags := byte(flagBands)
	if len(f.Bands) == 0 {
		flags = 0 // none to keep, none to recompute (decode gives none: Tokens or the rule)
	} else if s.bander != nil && f.Tokens > 0 {
		switch {
		case slices.Equal(s.bander.AppendBands(nil, hs, false), f.Bands):
			flags = 0
		case slices.Equal(s.bander.AppendBands(nil, hs, true), f.Bands):
			flags = flagZero
		}
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(hs)))
	b = appendRice(b, hs)
	if flags&flagBands != 0 {
		b = binary.AppendUvarint(b, uint64(len(f.Bands)))
		for _, k := range f.Bands {
			b = binary.LittleEndian.AppendUint64(b, k)
		}
	}
	return b, nil
}

// decodeRecord decodes b, the record of seq, and returns when it was written.
func (s *Store) decodeRecord(seq uint64, b string) (store.Record, time.Time, error) {
	bad := func(what string) (store.Record, time.Time, error) {
		return store.Record{}, time.Time{}, fmt.Errorf("%w: redis record %d: %s", store.ErrStoreFormat, seq, what)
	}
	if len(b) == 0 || b[0] != recordV1 && b[0] != recordV2 {
		return bad("unknown version")
	}
	v := b[0]
	p := []byte(b[1:])
	ms, n := binary.Uvarint(p)
	if n <= 0 {
		return bad("time")
	}
	p = p[n:]
	field := func() ([]byte, bool) {
		l, n := binary.Uvarint(p)
		if n <= 0 || uint64(len(p)-n) < l {
			return nil, false
		}
		v := p[n : n+int(l)]
		p = p[n+int(l):]
		return v, true
	}
	id, ok := field()
	if !ok {
		return bad("id")
	}
	meta, ok := field()
	if !ok {
		return bad("metadata")
	}
	r := store.Record{Seq: seq, ID: string(id)}
	if len(meta) > 0 {
		r.Meta = slices.Clone(meta)
	}
	if v == recordV1 {
		if err := r.Features.UnmarshalBinary(p); err != nil {
			return bad(err.Error())
		}
		return r, time.UnixMilli(int64(ms)), nil
	}
	if err := s.decodePacked(&r.Features, p); err != nil {
		return bad(err.Error())
	}
	return r, time.UnixMilli(int64(ms)), nil
}

// decodePacked decodes the features of a version 2 record.
func (s *Store) decodePacked(f *rule.Features, p []byte) error {
	if len(p) < 16 {
		return fmt.Errorf("fingerprint")
	}
	f.FP = binary.LittleEndian.Uint64(p)
	f.Exact = binary.LittleEndian.Uint64(p[8:])
	p = p[16:]
	var counts [2]uint64
	for i := range counts {
		v, n := binary.Uvarint(p)
		if n <= 0 || v > 1<<32-1 {
			return fmt.Errorf("counts")
		}
		counts[i], p = v, p[n:]
	}
	f.Tokens, f.Length = uint32(counts[0]), uint32(counts[1])
	f.Empty = f.Tokens == 0
	if len(p) < 1 {
		return fmt.Errorf("flags")
	}
	flags := p[0]
	p = p[1:]
	c, n := binary.Uvarint(p)
	if n <= 0 || c > uint64(8*len(p)) {
		return fmt.Errorf("set count")
	}
	p = p[n:]
	hs, used, err := readRice(p, int(c))
	if err != nil {
		return err
	}
	p = p[used:]
	f.Sketch = rule.SketchOf(hs)
	f.Pre = f.Prefilter()
	switch {
	case flags&flagBands != 0:
		nb, n := binary.Uvarint(p)
		if n <= 0 || nb > 4096 || uint64(len(p)-n) < 8*nb {
			return fmt.Errorf("band count")
		}
		p = p[n:]
		f.Bands = make([]uint64, nb)
		for i := range f.Bands {
			f.Bands[i] = binary.LittleEndian.Uint64(p[8*i:])
		}
		p = p[8*nb:]
	case s.bander != nil && f.Tokens > 0:
		f.Bands = s.bander.AppendBands(make([]uint64, 0, s.nb), hs, flags&flagZero != 0)
	}
	if len(p) != 0 {
		return fmt.Errorf("%d trailing bytes", len(p))
	}
	return nil
}

// appendRice appends the sorted, distinct hashes hs as Golomb-Rice codes of
// their gaps (the first hash, then each one's distance from the previous
// less one), after the parameter k that makes them shortest (a byte):
// each gap g as g>>k one bits, a zero bit, then its k low bits, most
// significant bit first; the last byte padded with zeros.
func appendRice(b []byte, hs []uint32) []byte {
	if len(hs) == 0 {
		return b
	}
	gap := func(i int) uint64 {
		if i == 0 {
			return uint64(hs[0])
		}
		return uint64(hs[i] - hs[i-1] - 1)
	}
	// The best k is near log2 of the mean gap: try around it.
	mean := (uint64(hs[len(hs)-1]) + 1) / uint64(len(hs))
	k0 := bits.Len64(mean)
	best, bestBits := 0, uint64(1<<63)
	for k := max(k0-3, 0); k <= min(k0+1, 32); k++ {
		var t uint64
		for i := range hs {
			t += gap(i)>>k + 1 + uint64(k)
		}
		if t < bestBits {
			best, bestBits = k, t
		}
	}
	b = append(b, byte(best))
	var acc uint64 // bits not yet written, left-aligned in nacc
	nacc := 0
	put := func(v uint64, n int) { // n <= 32
		acc = acc<<n | v&(1<<n-1)
		nacc += n
		for nacc >= 8 {
			nacc -= 8
			b = append(b, byte(acc>>nacc))
		}
	}
	for i := range hs {
		g := gap(i)
		for q := g >> best; q > 0; {
			n := min(q, 32)
			put(1<<n-1, int(n))
			q -= n
		}
		put(0, 1)
		put(g, best)
	}
	if nacc > 0 {
		b = append(b, byte(acc<<(8-nacc)))
	}
	return b
}

// readRice decodes c hashes that appendRice wrote at the start of p and
// returns them and the bytes they took. It reads the bits 64 at a time:
// a gap's unary part is counted with one LeadingZeros, its k low bits
// taken with one shift.
func readRice(p []byte, c int) ([]uint32, int, error) {
	if c == 0 {
		return nil, 0, nil
	}
	if len(p) < 1 || p[0] > 32 {
		return nil, 0, fmt.Errorf("set parameter")
	}
	k := uint(p[0])
	r := bitReader{p: p[1:]}
	out := make([]uint32, c)
	var prev uint64
	for i := range out {
		var q uint64
		for {
			r.fill()
			if r.n == 0 {
				return nil, 0, fmt.Errorf("set hash %d", i)
			}
			ones := uint(bits.LeadingZeros64(^r.buf))
			if ones < r.n {
				q += uint64(ones)
				r.skip(ones + 1)
				break
			}
			q += uint64(r.n)
			r.skip(r.n)
			if q > 1<<32 {
				return nil, 0, fmt.Errorf("set hash %d", i)
			}
		}
		r.fill()
		if r.n < k {
			return nil, 0, fmt.Errorf("set hash %d", i)
		}
		var low uint64
		if k > 0 {
			low = r.buf >> (64 - k)
			r.skip(k)
		}
		g := q<<k | low
		h := g
		if i > 0 {
			h = prev + 1 + g
		}
		if h > 1<<32-1 {
			return nil, 0, fmt.Errorf("set hash %d", i)
		}
		out[i], prev = uint32(h), h
	}
	return out, 1 + int((r.used+7)/8), nil
}

// bitReader reads p's bits, most significant first: buf holds the next n
// of them, left-aligned; used counts the bits consumed.
type bitReader struct {
	p    []byte
	i    int
	buf  uint64
	n    uint
	used uint
}

// fill tops buf up to at least 57 bits, or to the end of p.
func (r *bitReader) fill() {
	for r.n <= 56 && r.i < len(r.p) {
		r.buf |= uint64(r.p[r.i]) << (56 - r.n)
		r.i++
		r.n += 8
	}
}

// skip consumes n <= r.n bits.
func (r *bitReader) skip(n uint) {
	if n >= 64 {
		r.buf = 0
	} else {
		r.buf <<= n
	}
	r.n -= n
	r.used += n
}

// recordHead returns the id and the fingerprint of a record of either
// version, without decoding the rest: what a fingerprint search names its
// hits with.
func recordHead(b string) (id string, fp uint64, ok bool) {
	if len(b) == 0 || b[0] != recordV1 && b[0] != recordV2 {
		return "", 0, false
	}
	p := []byte(b[1:])
	if _, n := binary.Uvarint(p); n > 0 {
		p = p[n:]
	} else {
		return "", 0, false
	}
	var fields [2][]byte
	for i := range fields {
		l, n := binary.Uvarint(p)
		if n <= 0 || uint64(len(p)-n) < l {
			return "", 0, false
		}
		fields[i], p = p[n:n+int(l)], p[n+int(l):]
	}
	if len(p) < 8 {
		return "", 0, false
	}
	// Both versions start the features with the fingerprint (8 bytes,
	// little-endian).
	return string(fields[0]), binary.LittleEndian.Uint64(p), true
}
