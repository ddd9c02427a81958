package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"
)

// The frozen snapshot format (FORMAT.md, "Frozen snapshot"): a header with
// a directory of sections, then the sections, each starting on a 64-byte
// boundary so that a mapping of the file gives every word column its
// natural alignment and each section its own cache lines.
const (
	frozenMagic   = "NDUPFRZ\n"
	frozenVersion = 2 // 2 adds the probe radius to the counts; 1 still opens
	frozenAlign   = 64
	maxSections   = 1 << 10
)

// FrozenOpenOptions configure OpenFrozen and ReadFrozenBytes.
type FrozenOpenOptions struct {
	// NoVerify skips the checksums, so that opening reads only the header,
	// the samples and the high bits of each table (about 2 bits an entry)
	// instead of the whole file. The structural checks still run, and no
	// damage can make a query panic; damage to the low bits or the ids goes
	// unnoticed and gives wrong answers.
	NoVerify bool
}

type section struct {
	tag  [4]byte
	name string
	data []byte // nil while BuildFrozenFile streams the section
	size int64
	crc  uint32
}

func tag(c byte, t int) [4]byte { return [4]byte{c, byte(t), byte(t >> 8), 0} }

// sections lists the Frozen's sections in file order, with their sizes
// (which follow from n, the id width and the plan) and, for the columns
// in memory, their data.
func (f *Frozen) sections() []section {
	plan := appendPlan(nil, f.lay.plan)
	meta := binary.LittleEndian.AppendUint64(nil, f.n)
	meta = binary.LittleEndian.AppendUint64(meta, uint64(f.idBits))
	meta = binary.LittleEndian.AppendUint64(meta, uint64(f.radius))
	hw, lw, sw := efWords(f.n)
	col := func(t [4]byte, name string, w []uint64, words uint64) section {
		return section{tag: t, name: name, data: wordBytes(w), size: 8 * int64(words)}
	}
	secs := []section{
		{tag: tag('P', 0), name: "plan", data: plan, size: int64(len(plan))},
		{tag: tag('M', 0), name: "counts", data: meta, size: int64(len(meta))},
		col(tag('I', 0), "ids", f.ids, idWords(f.n, f.idBits)),
	}
	if f.nameOffs != nil {
		secs = append(secs,
			col(tag('N', 0), "name offsets", f.nameOffs, uint64(len(f.nameOffs))),
			section{tag: tag('B', 0), name: "name bytes", data: f.nameBytes, size: int64(len(f.nameBytes))},
		)
	}
	for t := range f.lay.perms {
		var s efSeq
		if t < len(f.tables) {
			s = f.tables[t]
		}
		secs = append(secs,
			col(tag('S', t), fmt.Sprintf("table %d samples", t), s.samples, sw),
			col(tag('H', t), fmt.Sprintf("table %d high bits", t), s.hi, hw),
			col(tag('L', t), fmt.Sprintf("table %d low bits", t), s.lo, lw),
		)
	}
	return secs
}

// frozenHeader returns the header of a snapshot of secs (whose crc fields
// are set), each section's offset and the file's length.
func frozenHeader(secs []section) (hdr []byte, offs []int64, size int64) {
	hdr = []byte(frozenMagic)
	hdr = binary.LittleEndian.AppendUint32(hdr, frozenVersion)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(secs)))
	off := alignUp(headerSize(len(secs)))
	for _, s := range secs {
		hdr = append(hdr, s.tag[:]...)
		hdr = binary.LittleEndian.AppendUint32(hdr, s.crc)
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(off))
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(s.size))
		offs = append(offs, off)
		off = alignUp(off + s.size)
	}
	hdr = binary.LittleEndian.AppendUint32(hdr, crc32.Checksum(hdr, castagnoli))
	return hdr, offs, off
}

// wordBytes views words as their little-endian bytes (littleEndian is
// checked wherever a Frozen is written or read).
func wordBytes(w []uint64) []byte {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w))
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

var errBigEndian = errors.New("index: frozen snapshots are read in place and need a little-endian machine")

func headerSize(nsec int) int64 { return int64(8 + 4 + 4 + 24*nsec + 4) }

func alignUp(x int64) int64 { return (x + frozenAlign - 1) &^ (frozenAlign - 1) }

// WriteTo writes the Frozen as a snapshot that OpenFrozen maps.
func (f *Frozen) WriteTo(w io.Writer) (int64, error) {
	if !littleEndian {
		return 0, errBigEndian
	}
	secs := f.sections()
	for i := range secs {
		if int64(len(secs[i].data)) != secs[i].size {
			return 0, fmt.Errorf("index: frozen section %s: %d bytes, want %d", secs[i].name, len(secs[i].data), secs[i].size)
		}
		secs[i].crc = crc32.Checksum(secs[i].data, castagnoli)
	}
	hdr, _, _ := frozenHeader(secs)
	bw := bufio.NewWriterSize(w, 1<<20)
	var written int64
	pad := make([]byte, frozenAlign)
	put := func(b []byte) error {
		m, err := bw.Write(b)
		written += int64(m)
		return err
	}
	if err := put(hdr); err != nil {
		return written, err
	}
	for _, s := range secs {
		if err := put(pad[:alignUp(written)-written]); err != nil {
			return written, err
		}
		if err := put(s.data); err != nil {
			return written, err
		}
	}
	// The file ends on a boundary too, so that its length is checked.
	if err := put(pad[:alignUp(written)-written]); err != nil {
		return written, err
	}
	return written, bw.Flush()
}

// SaveFile writes the snapshot to path through a temporary file and a
// rename (in place when path exists and is not a regular file).
func (f *Frozen) SaveFile(path string) (err error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		out, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteTo(out)
		return errors.Join(err, out.Close())
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := f.WriteTo(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// OpenFrozen maps a snapshot written by SaveFile or WriteTo, read-only; a
// query reads the mapping in place, so opening costs no copy and the
// resident memory is the pages the queries touch. Close unmaps it. A
// damaged snapshot gives an error wrapping ErrFormat that names the
// damaged section.
func OpenFrozen(path string, opt FrozenOpenOptions) (*Frozen, error) {
	if !littleEndian {
		return nil, errBigEndian
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < headerSize(0) || int64(int(size)) != size {
		return nil, fmt.Errorf("%w: %s: %d bytes is too short", ErrFormat, path, size)
	}
	data, err := syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("index: mapping %s: %w", path, err)
	}
	f, err := parseFrozen(data, opt)
	if err != nil {
		syscall.Munmap(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.mapped = data
	return f, nil
}

// ReadFrozenBytes returns the Frozen held by b, a snapshot in memory; the
// Frozen reads b in place (or a copy, when b is not 8-byte aligned), so b
// must not change while it is used.
func ReadFrozenBytes(b []byte, opt FrozenOpenOptions) (*Frozen, error) {
	if !littleEndian {
		return nil, errBigEndian
	}
	return parseFrozen(b, opt)
}

func formatErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, a...)...)
}

// parseFrozen checks b's structure (and its checksums unless opt.NoVerify)
// and returns the Frozen that reads it.
func parseFrozen(b []byte, opt FrozenOpenOptions) (*Frozen, error) {
	if len(b) < int(headerSize(0)) || string(b[:8]) != frozenMagic {
		return nil, formatErr("not a frozen index snapshot (bad magic)")
	}
	version := binary.LittleEndian.Uint32(b[8:])
	if version < 1 || version > frozenVersion {
		return nil, fmt.Errorf("%w: frozen snapshot version %d, this build reads 1 to %d", ErrVersion, version, frozenVersion)
	}
	nsec := binary.LittleEndian.Uint32(b[12:])
	if nsec > maxSections || headerSize(int(nsec)) > int64(len(b)) {
		return nil, formatErr("header: %d sections do not fit", nsec)
	}
	hs := int(headerSize(int(nsec)))
	if crc32.Checksum(b[:hs-4], castagnoli) != binary.LittleEndian.Uint32(b[hs-4:]) {
		return nil, formatErr("header: checksum mismatch")
	}
	type entry struct {
		data []byte
		crc  uint32
	}
	dir := map[[4]byte]entry{}
	end := int64(hs)
	for i := range int(nsec) {
		e := b[16+24*i:]
		var t [4]byte
		copy(t[:], e)
		off, n := binary.LittleEndian.Uint64(e[8:]), binary.LittleEndian.Uint64(e[16:])
		if off%8 != 0 || off < uint64(hs) || off > uint64(len(b)) || n > uint64(len(b))-off {
			return nil, formatErr("section %q: offset %d and length %d outside the %d-byte file", t[:], off, n, len(b))
		}
		if _, dup := dir[t]; dup {
			return nil, formatErr("section %q twice", t[:])
		}
		dir[t] = entry{b[off : off+n], binary.LittleEndian.Uint32(e[4:])}
		end = max(end, int64(off+n))
	}
	if int64(len(b)) != alignUp(end) {
		return nil, formatErr("%d bytes, want %d: truncated or extended", len(b), alignUp(end))
	}
	get := func(t [4]byte, name string, verify bool) ([]byte, error) {
		e, ok := dir[t]
		if !ok {
			return nil, formatErr("%s: section missing", name)
		}
		if verify && crc32.Checksum(e.data, castagnoli) != e.crc {
			return nil, formatErr("%s: checksum mismatch", name)
		}
		return e.data, nil
	}
	words := func(t [4]byte, name string, want uint64) ([]uint64, error) {
		d, err := get(t, name, !opt.NoVerify)
		if err != nil {
			return nil, err
		}
		if uint64(len(d)) != 8*want {
			return nil, formatErr("%s: %d bytes, want %d", name, len(d), 8*want)
		}
		if want == 0 {
			return nil, nil
		}
		if uintptr(unsafe.Pointer(&d[0]))%8 != 0 {
			w := make([]uint64, want)
			copy(wordBytes(w), d)
			return w, nil
		}
		return unsafe.Slice((*uint64)(unsafe.Pointer(&d[0])), want), nil
	}

	// The plan is checked even with NoVerify: it is a few bytes, and a
	// damaged one could ask Validate for an enumeration without end.
	pb, err := get(tag('P', 0), "plan", true)
	if err != nil {
		return nil, err
	}
	p, err := decodePlanBytes(pb)
	if err != nil {
		return nil, err
	}
	mb, err := get(tag('M', 0), "counts", true)
	if err != nil {
		return nil, err
	}
	// Version 1: n and the id width; version 2 adds the probe radius.
	if want := 8 * (1 + int(version)); len(mb) != want {
		return nil, formatErr("counts: %d bytes, want %d", len(mb), want)
	}
	n, idBits := binary.LittleEndian.Uint64(mb), binary.LittleEndian.Uint64(mb[8:])
	radius := uint64(0)
	if version >= 2 {
		radius = binary.LittleEndian.Uint64(mb[16:])
	}
	if radius > uint64(p.K) {
		return nil, formatErr("counts: probe radius %d with k=%d", radius, p.K)
	}
	if err := checkProbed(p, int(radius)); err != nil {
		return nil, formatErr("plan: %v", err)
	}
	lay := newLayout(p)
	if lay.ident < 0 {
		return nil, formatErr("plan: %v", errNoIdentity)
	}
	// Every table holds at least two bits an entry, so n is bounded by the
	// file's length before any size is computed from it.
	if idBits > 64 || n > uint64(len(b))*4 {
		return nil, formatErr("counts: %d entries of %d-bit ids in a %d-byte file", n, idBits, len(b))
	}
	f := &Frozen{lay: lay, radius: int(radius), n: n, idBits: uint(idBits), tables: make([]efSeq, len(p.Tables))}
	if f.ids, err = words(tag('I', 0), "ids", (n*idBits+63)/64+1); err != nil {
		return nil, err
	}
	if _, ok := dir[tag('N', 0)]; ok {
		d, err := get(tag('N', 0), "name offsets", !opt.NoVerify)
		if err != nil {
			return nil, err
		}
		if len(d)%8 != 0 || len(d) < 8 {
			return nil, formatErr("name offsets: %d bytes, not a positive multiple of 8", len(d))
		}
		if f.nameOffs, err = words(tag('N', 0), "name offsets", uint64(len(d)/8)); err != nil {
			return nil, err
		}
		if f.nameBytes, err = get(tag('B', 0), "name bytes", !opt.NoVerify); err != nil {
			return nil, err
		}
	}
	hw, lw, sw := efWords(n)
	h := efHighBits(n)
	for t := range f.tables {
		s := efSeq{n: n, h: h, l: 64 - h}
		name := fmt.Sprintf("table %d", t)
		if s.samples, err = words(tag('S', t), name+" samples", sw); err != nil {
			return nil, err
		}
		if s.hi, err = words(tag('H', t), name+" high bits", hw); err != nil {
			return nil, err
		}
		if s.lo, err = words(tag('L', t), name+" low bits", lw); err != nil {
			return nil, err
		}
		if err := s.check(); err != nil {
			return nil, formatErr("%s: %v", name, err)
		}
		f.tables[t] = s
	}
	return f, nil
}

// check verifies the structure a query relies on to find its buckets: n
// ones in the high bits, n + 2^h bits in all, and samples that point where
// the zeros say. It reads the high bits and the samples, about 2 bits an
// entry.
func (s *efSeq) check() error {
	ones := uint64(0)
	for _, w := range s.hi {
		ones += uint64(bits.OnesCount64(w))
	}
	if ones != s.n {
		return fmt.Errorf("high bits hold %d entries, want %d", ones, s.n)
	}
	total := s.n + 1<<s.h
	if last := s.hi[len(s.hi)-1]; last != 0 || (total%64 != 0 && s.hi[total/64]>>(total%64) != 0) {
		return fmt.Errorf("high bits set past their end")
	}
	// Recompute the samples from the zeros and compare.
	zeros, j := uint64(0), 1
	if s.samples[0] != 0 {
		return fmt.Errorf("sample 0 is %d, want 0", s.samples[0])
	}
	for wi, word := range s.hi {
		z := ^word
		if c := uint64(bits.OnesCount64(z)); zeros+c < uint64(j)<<sampleShift || j >= len(s.samples) {
			zeros += c
			continue
		}
		for ; z != 0 && j < len(s.samples); z &= z - 1 {
			zeros++
			if zeros == uint64(j)<<sampleShift {
				if want := uint64(wi)*64 + uint64(bits.TrailingZeros64(z)) + 1; s.samples[j] != want {
					return fmt.Errorf("sample %d is %d, want %d", j, s.samples[j], want)
				}
				j++
			}
		}
	}
	if j != len(s.samples) {
		return fmt.Errorf("%d of %d samples past the high bits", len(s.samples)-j, len(s.samples))
	}
	return nil
}

// decodePlanBytes reads the plan section: the encoding of section P of
// the version 1 snapshot. It checks the plan's shape; its exactness
// (which depends on the probe radius) is the caller's to check.
func decodePlanBytes(b []byte) (Plan, error) {
	r := b
	next := func() (int, error) {
		v, m := binary.Uvarint(r)
		if m <= 0 || v > 1<<16 {
			return 0, formatErr("plan: bad number")
		}
		r = r[m:]
		return int(v), nil
	}
	var p Plan
	var err error
	if p.K, err = next(); err != nil {
		return p, err
	}
	nb, err := next()
	if err != nil {
		return p, err
	}
	for range nb {
		w, err := next()
		if err != nil {
			return p, err
		}
		p.Blocks = append(p.Blocks, w)
	}
	nt, err := next()
	if err != nil {
		return p, err
	}
	for range nt {
		m, err := next()
		if err != nil {
			return p, err
		}
		tab := make([]int, m)
		for i := range tab {
			if tab[i], err = next(); err != nil {
				return p, err
			}
		}
		p.Tables = append(p.Tables, tab)
	}
	if len(r) != 0 {
		return p, formatErr("plan: %d bytes left over", len(r))
	}
	if len(p.Blocks) > 64 || len(p.Tables) > maxPlanTables {
		return p, formatErr("plan: %d blocks, %d tables", len(p.Blocks), len(p.Tables))
	}
	// Validate enumerates the C(blocks, k) ways to differ.
	if c, ok := binomial(len(p.Blocks), min(p.K, len(p.Blocks))); !ok || c > 1<<20 {
		return p, formatErr("plan: k=%d over %d blocks is too large", p.K, len(p.Blocks))
	}
	return p, nil
}

// IsFrozenSnapshot reports whether header, the first bytes of a file, starts
// a frozen snapshot rather than an Index snapshot.
func IsFrozenSnapshot(header []byte) bool {
	return len(header) >= len(frozenMagic) && string(header[:len(frozenMagic)]) == frozenMagic
}
