package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/neardup/neardup/internal/outfile"
)

// Snapshot format; FORMAT.md in this directory documents it.
const (
	snapshotMagic   = "NDUPIDX\n"
	snapshotVersion = 1
	secPlan         = 'P'
	secFingerprints = 'F'
	secIDs          = 'I'
	secEnd          = 'Z'
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes a snapshot of the index to w in the format of FORMAT.md:
// the plan, the live fingerprints sorted and delta-encoded as varints, and
// their ids, each section with a CRC-32C. Only one sorted copy of the
// fingerprints is written; Read rebuilds the tables. It writes the version
// current when it starts, which is immutable, so it takes no lock: writes,
// merges and queries go on meanwhile and the snapshot holds none of the
// writes made after it started.
func (x *Index) WriteTo(w io.Writer) (int64, error) {
	v := x.cur.Load()
	fps, iids := v.items()
	if !sortedPairs(fps, iids) {
		radixSortPairs(fps, iids, make([]uint64, len(fps)), make([]uint32, len(fps)))
	}

	bw := &countWriter{w: bufio.NewWriterSize(w, 1<<20)}
	bw.write([]byte(snapshotMagic))
	bw.write(binary.LittleEndian.AppendUint32(nil, snapshotVersion))

	// Plan.
	pb := appendPlan(nil, x.lay.plan)
	bw.section(secPlan, int64(len(pb)), func(sw *sectionWriter) { sw.write(pb) })

	// Fingerprints: count, then the first value and the gaps between sorted
	// neighbours as uvarints (Manku et al. section 3.3 compress the same way).
	size := int64(uvarintLen(uint64(len(fps))))
	prev := uint64(0)
	for _, f := range fps {
		size += int64(uvarintLen(f - prev))
		prev = f
	}
	bw.section(secFingerprints, size, func(sw *sectionWriter) {
		sw.uvarint(uint64(len(fps)))
		prev := uint64(0)
		for _, f := range fps {
			sw.uvarint(f - prev)
			prev = f
		}
	})

	// Ids, in the order of the fingerprints: length and bytes. The size does
	// not depend on the order, so it is summed over the live iids in arena
	// order rather than at random.
	size = int64(uvarintLen(uint64(len(iids))))
	for i := range v.ids.count() {
		if !v.dead.has(uint32(i)) {
			l := len(v.ids.id(uint32(i)))
			size += int64(uvarintLen(uint64(l)) + l)
		}
	}
	bw.section(secIDs, size, func(sw *sectionWriter) {
		sw.uvarint(uint64(len(iids)))
		writeIDs(sw, &v.ids, iids)
	})
	bw.section(secEnd, 0, func(*sectionWriter) {})
	if bw.err == nil {
		bw.err = bw.w.(*bufio.Writer).Flush()
	}
	return bw.n, bw.err
}

// writeIDs writes the ids of iids, in that order, as length and bytes.
// Fingerprint order is random in the arena, so it works in chunks: within a
// chunk it copies the ids out in ascending iid order (forward through the
// offsets and the arena, which the hardware prefetches) and then emits them
// in fingerprint order from the copy. At 100 million ids that is several
// times faster than fetching each id where it lies.
func writeIDs(sw *sectionWriter, ids *idView, iids []uint32) {
	// About 32 MiB of ids per chunk, from the average id length.
	chunk := 1 << 18
	if n := ids.count(); n > 0 {
		avg := max(1, len(ids.arena)/n)
		chunk = max(1024, min(chunk, (32<<20)/avg))
	}
	m := min(chunk, len(iids))
	keys := make([]uint64, 0, m)
	tmp := make([]uint64, m)
	starts := make([]uint32, m)
	lens := make([]uint32, m)
	var buf []byte
	for c := 0; c < len(iids); c += chunk {
		part := iids[c:min(c+chunk, len(iids))]
		keys = keys[:0]
		for j, iid := range part {
			keys = append(keys, uint64(iid)<<32|uint64(j))
		}
		radixSort(keys, tmp)
		buf = buf[:0]
		for _, k := range keys {
			j := uint32(k)
			id := ids.id(uint32(k >> 32))
			starts[j], lens[j] = uint32(len(buf)), uint32(len(id))
			buf = append(buf, id...)
		}
		for j := range part {
			sw.uvarint(uint64(lens[j]))
			sw.write(buf[starts[j] : starts[j]+lens[j]])
		}
	}
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
}

// sectionWriter encodes a section's payload into a buffer that it
// checksums and writes out in 1 MiB chunks: per-value writes and CRC updates
// cost more than the encoding.
type sectionWriter struct {
	cw  *countWriter
	crc uint32
	n   int64
	buf []byte
}

func (s *sectionWriter) flush() {
	s.crc = crc32.Update(s.crc, castagnoli, s.buf)
	s.n += int64(len(s.buf))
	s.cw.write(s.buf)
	s.buf = s.buf[:0]
}

func (s *sectionWriter) write(b []byte) {
	if len(s.buf)+len(b) > cap(s.buf) {
		s.flush()
	}
	if len(b) > cap(s.buf) {
		s.crc = crc32.Update(s.crc, castagnoli, b)
		s.n += int64(len(b))
		s.cw.write(b)
		return
	}
	s.buf = append(s.buf, b...)
}

func (s *sectionWriter) uvarint(v uint64) {
	if len(s.buf)+binary.MaxVarintLen64 > cap(s.buf) {
		s.flush()
	}
	s.buf = binary.AppendUvarint(s.buf, v)
}

// section writes tag, the payload length, the payload body writes, and the
// CRC-32C of tag and payload.
func (c *countWriter) section(tag byte, size int64, body func(*sectionWriter)) {
	var hdr [9]byte
	hdr[0] = tag
	binary.LittleEndian.PutUint64(hdr[1:], uint64(size))
	c.write(hdr[:])
	sw := &sectionWriter{cw: c, crc: crc32.Update(0, castagnoli, hdr[:1]), buf: make([]byte, 0, 1<<20)}
	body(sw)
	sw.flush()
	if sw.n != size && c.err == nil {
		c.err = fmt.Errorf("index: snapshot section %c: wrote %d bytes, planned %d", tag, sw.n, size)
	}
	c.write(binary.LittleEndian.AppendUint32(nil, sw.crc))
}

// SaveFile writes a snapshot to path atomically: to a temporary file in the
// same directory, synced, then renamed over path (and the directory synced).
// A reader of path sees the old snapshot or the new one, never a mix. A path
// that is not a regular file (a device, a FIFO) is written in place instead,
// never replaced (see internal/outfile).
func (x *Index) SaveFile(path string) error {
	return outfile.WriteFile(path, nil, func(w io.Writer) error {
		_, err := x.WriteTo(w)
		return err
	})
}

// LoadFile reads a snapshot written by SaveFile or WriteTo.
func LoadFile(path string, opt Options) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x, err := Read(f, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return x, nil
}

// Read reads a snapshot and rebuilds the index. The snapshot's plan is used
// unless opt sets Plan or Layout (the snapshot holds only the fingerprints,
// so any plan can be rebuilt from it); opt's other fields apply as in New.
// Corrupt or truncated input gives an error wrapping ErrFormat (or
// ErrVersion), never a panic.
func Read(r io.Reader, opt Options) (*Index, error) {
	p, fps, ids, err := decodeSnapshot(r)
	if err != nil {
		return nil, err
	}
	return build(p, fps, ids, opt)
}

// ReadItems reads a snapshot's ids and fingerprints without building an
// index: ids[i] has fingerprint fps[i], in the snapshot's order (ascending
// fingerprints). It checks the input as Read does, duplicate ids included. It
// is what a caller that keeps the fingerprints in a structure of its own
// wants (the online service's start-up from a snapshot).
func ReadItems(r io.Reader) (ids []string, fps []uint64, err error) {
	_, fps, store, err := decodeSnapshot(r)
	if err != nil {
		return nil, nil, err
	}
	if dup, ok := store.insertRange(0); !ok {
		return nil, nil, fmt.Errorf("%w: duplicate id %q", ErrFormat, dup)
	}
	ids = make([]string, len(fps))
	for i := range ids {
		ids[i] = store.get(uint32(i))
	}
	return ids, fps, nil
}

// ReadItemsFile is ReadItems of the snapshot file at path.
func ReadItemsFile(path string) (ids []string, fps []uint64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if ids, fps, err = ReadItems(f); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return ids, fps, nil
}

// decodeSnapshot reads and checks a snapshot: its plan, its fingerprints in
// ascending order and their ids (not yet in the hash table).
func decodeSnapshot(r io.Reader) (Plan, []uint64, idStore, error) {
	var p Plan
	var ids idStore
	fps, err := decodeSnapshotInto(r, &p, &ids)
	return p, fps, ids, err
}

func decodeSnapshotInto(r io.Reader, pp *Plan, idsOut *idStore) ([]uint64, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var hdr [12]byte
	n, err := io.ReadFull(br, hdr[:])
	if n < len(snapshotMagic) || string(hdr[:8]) != snapshotMagic {
		return nil, fmt.Errorf("%w: not an index snapshot (bad magic)", ErrFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrFormat, noEOF(err))
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != snapshotVersion {
		return nil, fmt.Errorf("%w: version %d (this build reads %d)", ErrVersion, v, snapshotVersion)
	}

	// Plan.
	sr, err := openSection(br, secPlan)
	if err != nil {
		return nil, err
	}
	p := pp
	k, err := sr.uvarint()
	if err != nil {
		return nil, err
	}
	nb, err := sr.uvarint()
	if err != nil || nb > 64 {
		return nil, fmt.Errorf("%w: plan: %d blocks (%v)", ErrFormat, nb, err)
	}
	p.K = int(min(k, 64))
	for range nb {
		w, err := sr.uvarint()
		if err != nil {
			return nil, err
		}
		p.Blocks = append(p.Blocks, int(min(w, 65)))
	}
	nt, err := sr.uvarint()
	if err != nil || nt > maxPlanTables {
		return nil, fmt.Errorf("%w: plan: %d tables (%v)", ErrFormat, nt, err)
	}
	for range nt {
		m, err := sr.uvarint()
		if err != nil || m > 64 {
			return nil, fmt.Errorf("%w: plan: table of %d blocks (%v)", ErrFormat, m, err)
		}
		t := make([]int, m)
		for i := range t {
			b, err := sr.uvarint()
			if err != nil {
				return nil, err
			}
			t[i] = int(min(b, 65))
		}
		p.Tables = append(p.Tables, t)
	}
	if err := sr.finish(); err != nil {
		return nil, err
	}
	// Validate enumerates the C(blocks, k) ways to differ; refuse plans for
	// which that alone would take too long.
	if c, ok := binomial(len(p.Blocks), min(p.K, len(p.Blocks))); !ok || c > 1<<20 {
		return nil, fmt.Errorf("%w: plan with k=%d over %d blocks is too large", ErrFormat, p.K, len(p.Blocks))
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}

	// Fingerprints.
	if sr, err = openSection(br, secFingerprints); err != nil {
		return nil, err
	}
	var n64 uint64
	n64, err = sr.uvarint()
	if err != nil {
		return nil, err
	}
	if n64 > uint64(sr.size) || n64 > MaxItems {
		return nil, fmt.Errorf("%w: %d fingerprints cannot fit in %d bytes", ErrFormat, n64, sr.size)
	}
	n = int(n64)
	fps := make([]uint64, 0, min(n, 1<<22))
	prev := uint64(0)
	for range n {
		d, err := sr.uvarint()
		if err != nil {
			return nil, err
		}
		if prev+d < prev {
			return nil, fmt.Errorf("%w: fingerprints overflow", ErrFormat)
		}
		prev += d
		fps = append(fps, prev)
	}
	if err := sr.finish(); err != nil {
		return nil, err
	}

	// Ids.
	if sr, err = openSection(br, secIDs); err != nil {
		return nil, err
	}
	m, err := sr.uvarint()
	if err != nil {
		return nil, err
	}
	if m != n64 {
		return nil, fmt.Errorf("%w: %d ids for %d fingerprints", ErrFormat, m, n)
	}
	ids := idsOut
	for range n {
		l, err := sr.uvarint()
		if err != nil {
			return nil, err
		}
		if l == 0 || l > MaxIDBytes {
			return nil, fmt.Errorf("%w: id of %d bytes", ErrFormat, l)
		}
		b, err := sr.bytes(int(l))
		if err != nil {
			return nil, err
		}
		ids.appendBytes(b)
	}
	if err := sr.finish(); err != nil {
		return nil, err
	}
	if sr, err = openSection(br, secEnd); err != nil {
		return nil, err
	}
	if err := sr.finish(); err != nil {
		return nil, err
	}
	return fps, nil
}

// build makes the index of a decoded snapshot.
func build(p Plan, fps []uint64, ids idStore, opt Options) (*Index, error) {
	n := len(fps)
	if opt.Plan == nil && (opt.Layout == "" || opt.Layout == "auto") {
		opt.Plan = &p
	}
	if opt.ExpectedN == 0 {
		opt.ExpectedN = max(n, 1)
	}
	x, err := New(opt)
	if err != nil {
		return nil, err
	}
	// As in AddBulk: hash the ids while the tables are built, unless the
	// scratch of doing both at once would be too much.
	iids := make([]uint32, n)
	for i := range iids {
		iids[i] = uint32(i)
	}
	var seg *segment
	var dup string
	var ok bool
	if n < concurrentBulk {
		var wg sync.WaitGroup
		if n > 0 {
			wg.Go(func() { seg = buildSegment(x.lay, fps, iids, x.workers) })
		}
		dup, ok = ids.insertRange(0)
		wg.Wait()
	} else if dup, ok = ids.insertRange(0); ok {
		seg = buildSegment(x.lay, fps, iids, x.workers)
	}
	if !ok {
		return nil, fmt.Errorf("%w: duplicate id %q", ErrFormat, dup)
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.commitLocked(func() {
		x.ids = ids
		x.live = n
		if seg != nil {
			x.segs = []*segment{seg}
		}
	})
	return x, nil
}

// sectionReader reads one section's payload in chunks, checking its length
// and CRC-32C.
type sectionReader struct {
	r    io.Reader
	tag  byte
	size int64 // payload length
	left int64 // payload bytes not read from r yet
	buf  []byte
	pos  int
	crc  uint32
}

func openSection(r io.Reader, tag byte) (*sectionReader, error) {
	var hdr [9]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: section %c: %w", ErrFormat, tag, noEOF(err))
	}
	if hdr[0] != tag {
		return nil, fmt.Errorf("%w: found section %q where %c was expected", ErrFormat, hdr[0], tag)
	}
	size := binary.LittleEndian.Uint64(hdr[1:])
	if size > 1<<50 {
		return nil, fmt.Errorf("%w: section %c of %d bytes", ErrFormat, tag, size)
	}
	return &sectionReader{r: r, tag: tag, size: int64(size), left: int64(size), crc: crc32.Update(0, castagnoli, hdr[:1])}, nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// fill makes at least need bytes available in buf[pos:], or all that is left.
func (s *sectionReader) fill(need int) error {
	have := len(s.buf) - s.pos
	if have >= need || s.left == 0 {
		return nil
	}
	want := int(min(s.left, int64(max(need-have, 1<<20))))
	var nb []byte
	if cap(s.buf) >= have+want {
		nb = s.buf[:have+want]
		copy(nb, s.buf[s.pos:])
	} else {
		nb = make([]byte, have+want)
		copy(nb, s.buf[s.pos:])
	}
	got, err := io.ReadFull(s.r, nb[have:have+want])
	s.crc = crc32.Update(s.crc, castagnoli, nb[have:have+got])
	s.buf, s.pos = nb[:have+got], 0
	s.left -= int64(got)
	if err != nil {
		return fmt.Errorf("%w: section %c truncated: %w", ErrFormat, s.tag, noEOF(err))
	}
	return nil
}

func (s *sectionReader) uvarint() (uint64, error) {
	if err := s.fill(binary.MaxVarintLen64); err != nil {
		return 0, err
	}
	v, n := binary.Uvarint(s.buf[s.pos:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: section %c: bad varint", ErrFormat, s.tag)
	}
	s.pos += n
	return v, nil
}

func (s *sectionReader) bytes(n int) ([]byte, error) {
	if err := s.fill(n); err != nil {
		return nil, err
	}
	if len(s.buf)-s.pos < n {
		return nil, fmt.Errorf("%w: section %c: field runs past the end", ErrFormat, s.tag)
	}
	b := s.buf[s.pos : s.pos+n]
	s.pos += n
	return b, nil
}

// finish checks that the payload was consumed exactly and its checksum.
func (s *sectionReader) finish() error {
	if s.left != 0 || s.pos != len(s.buf) {
		return fmt.Errorf("%w: section %c: %d bytes of trailing data", ErrFormat, s.tag, s.left+int64(len(s.buf)-s.pos))
	}
	var c [4]byte
	if _, err := io.ReadFull(s.r, c[:]); err != nil {
		return fmt.Errorf("%w: section %c checksum: %w", ErrFormat, s.tag, noEOF(err))
	}
	if got := binary.LittleEndian.Uint32(c[:]); got != s.crc {
		return fmt.Errorf("%w: section %c checksum mismatch (stored %08x, computed %08x)", ErrFormat, s.tag, got, s.crc)
	}
	return nil
}

// appendPlan appends the encoding of p that section P of a snapshot (and of
// a frozen snapshot) holds: K, the block widths and each table's blocks,
// every number and count a uvarint.
func appendPlan(b []byte, p Plan) []byte {
	b = binary.AppendUvarint(b, uint64(p.K))
	b = binary.AppendUvarint(b, uint64(len(p.Blocks)))
	for _, w := range p.Blocks {
		b = binary.AppendUvarint(b, uint64(w))
	}
	b = binary.AppendUvarint(b, uint64(len(p.Tables)))
	for _, t := range p.Tables {
		b = binary.AppendUvarint(b, uint64(len(t)))
		for _, w := range t {
			b = binary.AppendUvarint(b, uint64(w))
		}
	}
	return b
}
