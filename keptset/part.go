package keptset

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"

	"github.com/neardup/neardup/internal/outfile"
	"github.com/neardup/neardup/rule"
)

// A part is an immutable run of kept documents: those with seqs in
// [base, base+span). Its tables and fingerprint column are pointer-free
// slices, mapped from its file (or built in memory by a Set without a
// directory), so the garbage collector never looks at them and start-up maps
// them instead of rebuilding them.
type part struct {
	base uint64
	span uint32
	docs uint32
	keys table
	fps  []uint64 // by slot; 0 where no document
	// pre holds the prefilters by slot, preWords each (nil before format
	// 3). A mapped part reads them from its file (prefilter): their pages
	// are released from memory, as the ids', so that a part costs the
	// process what it did before the prefilter (~145 bytes a document) and
	// the page cache what the matches read.
	pre    []uint64
	prePos int64    // the file offset of pre
	live   []uint64 // bitmap of the slots that hold a document
	// wide is the bitmap of the slots whose documents are found by
	// fingerprint distance, not by keys (Set.wideDoc; format 4; nil before,
	// when the set made none: parts of MethodMinHash).
	wide []uint64
	fpx  fpIndex
	dead []uint64 // bitmap of the slots removed since (in memory; Set.mu)
	// The documents' ids: the id of slot s is ids[idoff[s]:idoff[s+1]].
	// A mapped part reads them from file (its pages are released, as
	// ext's); nil in format 1.
	idoff []uint64
	ids   []byte
	file  *os.File // the part's file, open for reading ids; nil in memory
	idPos [2]int64 // the file offsets of idoff and ids

	data   []byte // the part's file, mapped or in memory; nil for a part built in memory
	mapped bool   // data is mapped
	name   string // file name in the parts directory; "" in memory
}

// The part file (all integers little-endian; every section starts at a
// multiple of 8 bytes, zero-padded):
//
//	header (40 bytes):
//	  magic    [8]byte "NDKPART4" ("NDKPART3": no wide section;
//	                    "NDKPART2": no wide or pre section; "NDKPART1":
//	                    no wide, pre, ext, idoff or ids section)
//	  base     uint64   seq of slot 0
//	  span     uint32   seqs covered
//	  docs     uint32   documents in the part
//	  entries  uint64   key table entries
//	  bits     uint8    key table bucket bits
//	  extbits  uint8    key bits each ext byte holds (top bits; 0 in format 1)
//	  zero     2 bytes
//	  settings uint32   length of the settings string that follows
//	settings  the decision settings the keys were made with (Options.Settings,
//	          and under MethodSimHash the key scheme: recordedSettings)
//	off       (1<<bits + 1) × uint32    key table bucket offsets
//	tag       entries × uint16          key table tags
//	slot      entries × 3 bytes         key table slots
//	fps       span × uint64             fingerprint column
//	live      ⌈span/64⌉ × uint64        bitmap of the slots holding a document
//	wide      ⌈span/64⌉ × uint64        bitmap of the slots whose documents
//	                                    are found by fingerprint distance
//	                                    (format 4 only; all zero under
//	                                    MethodMinHash)
//	fpoff     4 × (65536 + 1) × uint32  fingerprint block tables' offsets
//	fpslot    4 × docs × 3 bytes        fingerprint block tables' slots
//	ext       entries × 1 byte          the key bits after each tag, for
//	                                    merges
//	pre       span × 8 × uint64         prefilter column (rule.Prefilter: two
//	                                    bit planes of 256 bins; zero where no
//	                                    document or unknown; format 3 only)
//	idoff     (span + 1) × uint64       by slot, where its id starts in ids
//	                                    (a slot without a document: none)
//	ids       the documents' ids, end to end
//	                                    (ext, idoff and ids are in formats 2
//	                                    and 3 only, pre in 3, last, so that they are
//	                                    released from memory once the
//	                                    checksum is verified; ids are read
//	                                    from the file)
//	trailer   crc32c (Castagnoli) of everything before it, uint32; "PEND"
const (
	partMagic   = "NDKPART4"
	partMagic3  = "NDKPART3"
	partMagic2  = "NDKPART2"
	partMagic1  = "NDKPART1"
	partHeader  = 40
	partTrailer = "PEND"
)

// ErrDamaged is wrapped by the errors of a part file that is damaged or
// not a part; the set rebuilds such a part from the store.
var ErrDamaged = errors.New("keptset: damaged part file")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func init() {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		panic("keptset: part files are mapped as little-endian")
	}
}

// bytesOf returns the memory of s as bytes.
func bytesOf[T uint16 | uint32 | uint64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// sliceOf returns b as a slice of T; b must be aligned to T's size.
func sliceOf[T uint16 | uint32 | uint64](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// pad8 is the padding that brings n to a multiple of 8.
func pad8(n int) int { return (8 - n%8) % 8 }

// partHead is what a part file's header holds.
type partHead struct {
	base          uint64
	span, docs    uint32
	entries       uint64
	bits, extBits uint8
}

// A partWriter writes a part file's sections in order, keeping the
// checksum and the alignment; the first error sticks.
type partWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	n   int
	err error
}

func newPartWriter(w io.Writer) *partWriter {
	crc := crc32.New(castagnoli)
	return &partWriter{w: bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20), crc: crc}
}

func (pw *partWriter) put(b []byte) {
	if pw.err == nil {
		_, pw.err = pw.w.Write(b)
		pw.n += len(b)
	}
}

// align starts the next section at a multiple of 8 bytes.
func (pw *partWriter) align() { pw.put(make([]byte, pad8(pw.n))) }

func (pw *partWriter) header(h partHead, settings string) {
	var b [partHeader]byte
	copy(b[:8], partMagic)
	binary.LittleEndian.PutUint64(b[8:], h.base)
	binary.LittleEndian.PutUint32(b[16:], h.span)
	binary.LittleEndian.PutUint32(b[20:], h.docs)
	binary.LittleEndian.PutUint64(b[24:], h.entries)
	b[32], b[33] = h.bits, h.extBits
	binary.LittleEndian.PutUint32(b[36:], uint32(len(settings)))
	pw.put(b[:])
	pw.put([]byte(settings))
	pw.align()
}

// finish writes the trailer and flushes.
func (pw *partWriter) finish() error {
	if pw.err != nil {
		return pw.err
	}
	if err := pw.w.Flush(); err != nil {
		return err
	}
	var tr [8]byte
	binary.LittleEndian.PutUint32(tr[:4], pw.crc.Sum32())
	copy(tr[4:], partTrailer)
	_, err := pw.w.Write(tr[:]) // the checksum sees these bytes too; unread
	if err == nil {
		err = pw.w.Flush()
	}
	return err
}

// writeSections writes p's sections in the file's format.
func (p *part) writeSections(pw *partWriter, settings string) {
	pw.header(partHead{base: p.base, span: p.span, docs: p.docs, entries: uint64(p.keys.entries()),
		bits: p.keys.bits, extBits: p.keys.extBits}, settings)
	pw.put(bytesOf(p.keys.off))
	pw.align()
	pw.put(bytesOf(p.keys.tag))
	pw.align()
	pw.put(p.keys.slot)
	pw.align()
	pw.put(bytesOf(p.fps))
	pw.align()
	pw.put(bytesOf(p.live))
	pw.align()
	if p.wide != nil {
		pw.put(bytesOf(p.wide))
	} else {
		pw.put(make([]byte, 8*len(p.live))) // a part read from format 3 or older
	}
	for t := range fpTables {
		pw.align()
		pw.put(bytesOf(p.fpx.off[t]))
	}
	pw.align()
	for t := range fpTables {
		pw.put(p.fpx.slot[t])
		pw.align()
	}
	pw.put(p.keys.ext)
	pw.align()
	if p.pre != nil {
		pw.put(bytesOf(p.pre))
	} else {
		pw.put(make([]byte, 8*preWords*int(p.span))) // a part read from format 2
	}
	pw.align()
	pw.put(bytesOf(p.idoff))
	pw.align()
	pw.put(p.ids)
	pw.align()
}

// writePart writes p to path (through a temporary file, synced and renamed).
func writePart(path string, p *part, settings string) error {
	return createPart(path, func(pw *partWriter) { p.writeSections(pw, settings) })
}

// createPart writes a part file at path with write (which writes its
// sections through pw), through a temporary file, synced and renamed.
func createPart(path string, write func(pw *partWriter)) (err error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	pw := newPartWriter(f)
	write(pw)
	if err = pw.finish(); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return outfile.SyncDir(filepath.Dir(path))
}

// openPart maps the part file at path and checks it: its checksum, its
// sizes, and that it was made with settings. Errors wrap ErrDamaged. The
// ext section, read by merges only, is released from the process's memory
// once checked (it stays in the file and the page cache).
func openPart(path, settings string) (p *part, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size < partHeader+8 || size > 1<<40 {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrDamaged, path, size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("keptset: mapping %s: %w", path, err)
	}
	if p, err = parsePart(data, path, settings); err != nil {
		syscall.Munmap(data)
		return nil, err
	}
	p.mapped = true
	if p.idoff != nil {
		p.file = f
		p.idPos = [2]int64{offsetIn(data, bytesOf(p.idoff)), offsetIn(data, p.ids)}
		p.prePos = offsetIn(data, bytesOf(p.pre))
	} else {
		f.Close()
	}
	if p.idoff != nil {
		// From the first whole page of ext (or of pre or idoff, when ext
		// is empty) to the end of the file.
		start := offsetIn(data, bytesOf(p.idoff))
		if len(p.pre) > 0 {
			start = offsetIn(data, bytesOf(p.pre))
		}
		if len(p.keys.ext) > 0 {
			start = offsetIn(data, p.keys.ext)
		}
		page := int64(os.Getpagesize())
		if start = (start + page - 1) / page * page; start < int64(len(data)) {
			syscall.Madvise(data[start:], syscall.MADV_DONTNEED) // advice: an error costs memory only
		}
	}
	return p, nil
}

// parsePart checks the part file held in data (mapped, or in memory) and
// returns the part whose sections point into it; path names it in errors.
func parsePart(data []byte, path, settings string) (p *part, err error) {
	size := len(data)
	if size < partHeader+8 {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrDamaged, path, size)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrDamaged, path, fmt.Sprintf(format, a...))
	}
	body, tr := data[:size-8], data[size-8:]
	if string(tr[4:]) != partTrailer {
		return nil, bad("no trailer (a cut file?)")
	}
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(tr[:4]) {
		return nil, bad("checksum mismatch")
	}
	version := 4
	switch string(body[:8]) {
	case partMagic:
	case partMagic3:
		version = 3
	case partMagic2:
		version = 2
	case partMagic1:
		version = 1
	default:
		return nil, bad("not a part file")
	}
	p = &part{
		base: binary.LittleEndian.Uint64(body[8:]),
		span: binary.LittleEndian.Uint32(body[16:]),
		docs: binary.LittleEndian.Uint32(body[20:]),
		data: data,
		name: filepath.Base(path),
	}
	entries := binary.LittleEndian.Uint64(body[24:])
	p.keys.bits = body[32]
	if version >= 2 {
		p.keys.extBits = body[33]
	}
	sl := int(binary.LittleEndian.Uint32(body[36:]))
	if p.span > maxSpan || p.docs > p.span || p.keys.bits > 32 || p.keys.extBits > maxExtBits ||
		entries > 1<<40 || sl > 1<<16 {
		return nil, bad("bad header")
	}
	off := partHeader
	take := func(n int) []byte {
		if err != nil || off+n > len(body) {
			if err == nil {
				err = bad("%d bytes, shorter than its header says", size)
			}
			return nil
		}
		b := body[off : off+n : off+n]
		off += n
		off += pad8(off)
		return b
	}
	if s := string(take(sl)); err == nil && s != settings {
		return nil, fmt.Errorf("%w: %s: made with other settings (%s; now %s)", ErrDamaged, path, s, settings)
	}
	p.keys.off = sliceOf[uint32](take(4 * ((1 << p.keys.bits) + 1)))
	p.keys.tag = sliceOf[uint16](take(2 * int(entries)))
	p.keys.slot = take(slotBytes * int(entries))
	p.fps = sliceOf[uint64](take(8 * int(p.span)))
	p.live = sliceOf[uint64](take(8 * ((int(p.span) + 63) / 64)))
	if version >= 4 {
		p.wide = sliceOf[uint64](take(8 * ((int(p.span) + 63) / 64)))
	}
	for t := range fpTables {
		p.fpx.off[t] = sliceOf[uint32](take(4 * (fpBuckets + 1)))
	}
	for t := range fpTables {
		p.fpx.slot[t] = take(slotBytes * int(p.docs))
	}
	if version >= 2 {
		p.keys.ext = take(int(entries))
		if version >= 3 {
			p.pre = sliceOf[uint64](take(8 * preWords * int(p.span)))
		}
		p.idoff = sliceOf[uint64](take(8 * (int(p.span) + 1)))
		if err == nil {
			if n := p.idoff[p.span]; n > uint64(len(body)) {
				err = bad("ids of %d bytes", n)
			} else {
				p.ids = take(int(n))
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if off != len(body) {
		return nil, bad("%d bytes after its sections", len(body)-off)
	}
	// The offsets are the one thing a lookup trusts to index the other
	// sections: check that they are ascending and within them.
	if err := checkOffsets(p.keys.off, uint32(entries)); err != nil {
		return nil, bad("key table: %v", err)
	}
	for t := range fpTables {
		if err := checkOffsets(p.fpx.off[t], p.docs); err != nil {
			return nil, bad("fingerprint table %d: %v", t, err)
		}
	}
	if p.idoff != nil {
		if p.idoff[0] != 0 {
			return nil, bad("ids: offsets do not start at 0")
		}
		for i := 1; i < len(p.idoff); i++ {
			if p.idoff[i] < p.idoff[i-1] {
				return nil, bad("ids: offsets not ascending at %d", i)
			}
		}
	}
	return p, nil
}

// offsetIn is the offset of b, a section of data, in data.
func offsetIn(data, b []byte) int64 {
	if len(b) == 0 {
		return int64(len(data))
	}
	return int64(uintptr(unsafe.Pointer(&b[0])) - uintptr(unsafe.Pointer(&data[0])))
}

// prefilter returns the prefilter of slot s into dst, or nil when the part
// keeps none (format 2 or older): from the file for a mapped part, whose
// prefilter pages are not kept in memory (a pread of 64 bytes, from the page
// cache once read: still 10 to 20 times cheaper than the record read it
// saves).
func (p *part) prefilter(s uint32, dst *rule.Prefilter) (*rule.Prefilter, error) {
	if p.pre == nil {
		return nil, nil
	}
	if p.file == nil {
		return prefilterAt(p.pre, s), nil
	}
	var b [8 * preWords]byte
	if _, err := p.file.ReadAt(b[:], p.prePos+int64(8*preWords)*int64(s)); err != nil {
		return nil, fmt.Errorf("keptset: reading a prefilter of %s: %w", p.name, err)
	}
	for w := range dst {
		dst[w] = binary.LittleEndian.Uint64(b[8*w:])
	}
	return dst, nil
}

// errNoIDs: a part of format 1 keeps no ids.
var errNoIDs = errors.New("keptset: part keeps no ids")

// id returns the id of slot s, which holds a document: from the file for a
// mapped part, whose id pages are not kept in memory.
func (p *part) id(s uint32) (string, error) {
	if p.idoff == nil {
		return "", errNoIDs
	}
	if p.file == nil {
		return string(p.ids[p.idoff[s]:p.idoff[s+1]]), nil
	}
	var o [16]byte
	if _, err := p.file.ReadAt(o[:], p.idPos[0]+8*int64(s)); err != nil {
		return "", fmt.Errorf("keptset: reading an id of %s: %w", p.name, err)
	}
	a, b := binary.LittleEndian.Uint64(o[:]), binary.LittleEndian.Uint64(o[8:])
	if a > b || b > uint64(len(p.ids)) {
		return "", fmt.Errorf("%w: %s: id offsets %d, %d", ErrDamaged, p.name, a, b)
	}
	id := make([]byte, b-a)
	if _, err := p.file.ReadAt(id, p.idPos[1]+int64(a)); err != nil {
		return "", fmt.Errorf("keptset: reading an id of %s: %w", p.name, err)
	}
	return unsafe.String(unsafe.SliceData(id), len(id)), nil
}

func checkOffsets(off []uint32, n uint32) error {
	if off[0] != 0 || off[len(off)-1] != n {
		return fmt.Errorf("offsets do not span the entries")
	}
	for i := 1; i < len(off); i++ {
		if off[i] < off[i-1] {
			return fmt.Errorf("offsets not ascending at %d", i)
		}
	}
	return nil
}

// close unmaps the part's file.
func (p *part) close() error {
	var err error
	if p.file != nil {
		err = p.file.Close()
		p.file = nil
	}
	if !p.mapped {
		return err
	}
	err = errors.Join(err, syscall.Munmap(p.data))
	p.data, p.mapped = nil, false
	return err
}

// bytes is the memory the part's sections take.
func (p *part) bytes() int64 {
	n := int64(len(p.keys.off)*4 + len(p.keys.tag)*2 + len(p.keys.slot) + len(p.fps)*8 + len(p.live)*8 + len(p.wide)*8 +
		len(p.dead)*8)
	if p.file == nil {
		n += int64(len(p.pre) * 8) // in memory, not read from the file
	}
	for t := range fpTables {
		n += int64(len(p.fpx.off[t])*4 + len(p.fpx.slot[t]))
	}
	return n
}

// fingerprint returns the slots within k bits of fp (k <= fpMaxK through the
// block tables, a scan of the column beyond), each once, calling fn.
func (p *part) fingerprint(fp uint64, k int, fn func(slot uint32, d int)) {
	if k > fpMaxK {
		for s, g := range p.fps {
			if d := bits.OnesCount64(g ^ fp); d <= k && p.has(uint32(s)) {
				fn(uint32(s), d)
			}
		}
		return
	}
	for t := range fpTables {
		b := fpBlockOf(fp, t)
		off, sl := p.fpx.off[t], p.fpx.slot[t]
		for i := off[b]; i < off[b+1]; i++ {
			s := getSlot(sl, int(i))
			g := p.fps[s]
			d := bits.OnesCount64(g ^ fp)
			if d > k || !p.has(s) {
				continue
			}
			if firstTable(g, fp, t) {
				fn(s, d)
			}
		}
	}
}

// isWide reports whether slot s holds a document found by fingerprint
// distance (removed or not).
func (p *part) isWide(s uint32) bool {
	return int(s/64) < len(p.wide) && p.wide[s/64]&(1<<(s%64)) != 0
}

// has reports whether slot s holds a document not removed.
func (p *part) has(s uint32) bool {
	return p.live[s/64]&(1<<(s%64)) != 0 && (int(s/64) >= len(p.dead) || p.dead[s/64]&(1<<(s%64)) == 0)
}
