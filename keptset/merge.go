package keptset

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Merges (doc.go has the policy and its bound). A merge writes the parts of
// a run of adjacent parts as one new part, leaving out the documents removed
// from them, while matches go on reading the old parts; then, under the
// set's lock, it puts the new part in their place, writes the manifest and
// unlinks their files. It reads only the parts: their tables are sorted by
// key prefix, so the merged table is made bucket by bucket, holding one
// bucket's entries at a time, in two passes over the sources' tables (one
// counting, one writing the tags, with the slots and ext bytes set aside in
// temporary files until their sections come).

// mergeFanIn is the number of parts of one tier that are merged into one
// part of the next tier.
const mergeFanIn = 4

// mergeHook, when set (by tests), is called at each step of a merge's
// switch: "part written" (the merged part's file is durable, the manifest
// still lists the sources) and "manifest written" (the manifest lists the
// merged part, the sources' files are still there).
var mergeHook func(step string)

// errMergeStopped ends a merge that Close interrupted.
var errMergeStopped = errors.New("keptset: merge stopped by Close")

// tier is the tier of a part of span seqs: 0 below mergeFanIn deltas'
// spans, then one more for each factor of mergeFanIn.
func (s *Set) tier(p *part) int {
	t := 0
	for x := uint64(s.opt.DeltaSpan) * mergeFanIn; uint64(p.span) >= x; x *= mergeFanIn {
		t++
	}
	return t
}

// pickMergeLocked returns the run of adjacent parts to merge next, or nil
// (mu held): first an older part of a lower tier than its newer neighbour
// (left by a Close, which writes the delta at any size) merged with it; then
// the newest run of mergeFanIn or more parts of one tier, less its oldest
// parts while it is not mergeable; then a part left below PartSpan in the
// top tier (fillMergeLocked).
func (s *Set) pickMergeLocked() []*part {
	if run := s.tierMergeLocked(); run != nil {
		return run
	}
	return s.fillMergeLocked()
}

// fillFraction: a part below PartSpan in the top tier takes the parts after
// it once they span 1/fillFraction of it (fillMergeLocked).
const fillFraction = 8

// fillMergeLocked returns a part of at least PartSpan/mergeFanIn seqs and
// below PartSpan with all the parts after it, once they span a
// fillFraction-th of it, less the newest while the run is not mergeable; or
// nil (mu held). An import or a rebuild ends in such a part (26.7M
// documents are parts of 16.7M and 10M seqs), and so does a merge trimmed
// to PartSpan. The tiers alone would never merge into it: the parts of its
// tier that come after it could not all join it within PartSpan. So the
// adds after it stayed beside it, up to 3 parts a lower tier, and each part
// costs a match 24 key lookups: 7 parts at 30M took 24% of a search's CPU
// (BENCHMARKS.md, "30M stored"). Merging them into it leaves one part
// below PartSpan above the tiers' small parts, and at an eighth (rather
// than a quarter, which left 6 parts at 30M: a 16.7M, an 11.2M and 2.2M
// seqs in four small ones) the adds after it are at most two parts of
// the tiers beside it: searches probe 2 parts where they probed 6. The
// cost is bounded: the part grows by an eighth at least at each such
// merge, so it is rewritten at most log(4)/log(1.125), about 12 times,
// on its way from PartSpan/4 to PartSpan.
func (s *Set) fillMergeLocked() []*part {
	ps := s.parts
	span := uint64(s.opt.PartSpan)
	for i := len(ps) - 2; i >= 0; i-- {
		p := ps[i]
		if uint64(p.span)*mergeFanIn < span || uint64(p.span) >= span {
			continue
		}
		newer := ps[len(ps)-1].base + uint64(ps[len(ps)-1].span) - (p.base + uint64(p.span))
		if newer*fillFraction < uint64(p.span) {
			return nil
		}
		for j := len(ps); j-i >= 2; j-- {
			if s.mergeableLocked(ps[i:j]) {
				return ps[i:j]
			}
		}
		return nil
	}
	return nil
}

// tierMergeLocked is pickMergeLocked's first two rules.
func (s *Set) tierMergeLocked() []*part {
	ps := s.parts
	for i := len(ps) - 2; i >= 0; i-- {
		if s.tier(ps[i]) < s.tier(ps[i+1]) && s.mergeableLocked(ps[i:i+2]) {
			return ps[i : i+2]
		}
	}
	for j := len(ps); j > 0; {
		t := s.tier(ps[j-1])
		i := j - 1
		for i > 0 && s.tier(ps[i-1]) == t {
			i--
		}
		if j-i >= mergeFanIn {
			for k := i; j-k >= 2; k++ {
				if s.mergeableLocked(ps[k:j]) {
					return ps[k:j]
				}
			}
		}
		j = i
	}
	return nil
}

// mergeableLocked reports whether the adjacent parts run can be merged
// (mu held): the merged part spans at most Options.PartSpan seqs, no delta
// being written lies among them, and their tables hold enough bits of each
// key for the merged table's buckets and tags (mergedBits).
func (s *Set) mergeableLocked(run []*part) bool {
	base, end := run[0].base, run[len(run)-1].base+uint64(run[len(run)-1].span)
	if end-base > uint64(s.opt.PartSpan) {
		return false
	}
	for _, d := range s.frozen {
		if d.base >= base && d.base < end {
			return false
		}
	}
	entries := 0
	for _, p := range run {
		if p.idoff == nil {
			return false // format 1
		}
		entries += p.keys.entries()
	}
	_, _, ok := mergedBits(run, entries)
	return ok
}

// mergedBits returns the bucket bits and ext bits of the table merging the
// tables of run into one of entries entries; ok is false when some source
// keeps too few bits of its keys for the merged buckets and 16-bit tags. A
// source table knows the top bits+16+extBits bits of each key: the merged
// table needs its own bits+16, and keeps as ext what remains, at most 8.
func mergedBits(run []*part, entries int) (bits, ext uint8, ok bool) {
	known := 64
	for _, p := range run {
		known = min(known, p.keys.known())
	}
	bits = tableBits(entries)
	if int(bits)+16 > known {
		return 0, 0, false
	}
	return bits, uint8(min(maxExtBits, known-int(bits)-16)), true
}

// maybeMergeLocked starts a merge when none runs and the policy picks a run
// (mu held).
func (s *Set) maybeMergeLocked() {
	if s.merging || s.closing || s.mergeErr != nil || s.bgErr != nil {
		return
	}
	run := s.pickMergeLocked()
	if run == nil {
		return
	}
	run = slices.Clone(run)
	srcs := make([]mergeSrc, len(run))
	for i, p := range run {
		srcs[i] = mergeSrc{p: p, off: uint32(p.base - run[0].base), dead: slices.Clone(p.dead)}
	}
	s.merging = true
	s.bg.Add(1)
	go s.merge(srcs)
}

// merge writes the merged part of srcs and puts it in their place.
func (s *Set) merge(srcs []mergeSrc) {
	t0 := time.Now()
	base := srcs[0].p.base
	last := srcs[len(srcs)-1].p
	span := uint32(last.base + uint64(last.span) - base)
	write := func(pw *partWriter) {
		pw.err = writeMerged(pw, srcs, base, span, s.opt.Settings, s.opt.Dir, s.stopMerge.Load)
	}
	var (
		p   *part
		err error
	)
	if s.opt.Dir != "" {
		path := filepath.Join(s.opt.Dir, partName(base, span))
		if err = createPart(path, write); err == nil {
			p, err = openPart(path, s.opt.Settings)
		}
	} else {
		var buf bytes.Buffer
		pw := newPartWriter(&buf)
		write(pw)
		if err = pw.finish(); err == nil {
			p, err = parsePart(buf.Bytes(), "merged part", s.opt.Settings)
		}
	}
	if err == nil && mergeHook != nil {
		mergeHook("part written")
	}

	s.mu.Lock()
	defer s.bg.Done()
	defer s.mu.Unlock()
	s.merging = false
	if err != nil {
		if !errors.Is(err, errMergeStopped) {
			s.mergeErr = fmt.Errorf("keptset: merging parts: %w", err)
			s.opt.Logger.Warn("kept set merge failed: parts are no longer merged until a restart", "err", err)
		}
		return
	}
	i := slices.Index(s.parts, srcs[0].p)
	if i < 0 || len(s.parts) < i+len(srcs) {
		panic("keptset: merged parts left the set")
	}
	// Removals during the merge.
	for _, src := range srcs {
		for w, d := range src.p.dead {
			if w < len(src.dead) {
				d &^= src.dead[w]
			}
			for ; d != 0; d &= d - 1 {
				if m := src.off + uint32(w*64+bits.TrailingZeros64(d)); p.has(m) {
					p.kill(m)
				}
			}
		}
	}
	s.parts = slices.Replace(s.parts, i, i+len(srcs), p)
	s.merges++
	if s.opt.Dir != "" {
		if err := s.writeManifest(); err != nil {
			// The old manifest still lists the sources, whose files stay:
			// the next successful manifest, or the next Open, drops them.
			s.mergeErr = err
			s.opt.Logger.Warn("kept set merge: manifest not written: parts are no longer merged until a restart", "err", err)
		} else {
			if mergeHook != nil {
				mergeHook("manifest written")
			}
			for _, src := range srcs {
				if err := os.Remove(filepath.Join(s.opt.Dir, src.p.name)); err != nil {
					s.opt.Logger.Warn("kept set merge: removing a merged part's file", "part", src.p.name, "err", err)
				}
			}
		}
	}
	for _, src := range srcs {
		src.p.close() // no reader holds it: they read parts under mu
	}
	s.opt.Logger.Debug("kept set parts merged", "parts", len(srcs), "base", base, "span", span,
		"docs", p.docs, "seconds", time.Since(t0).Seconds())
	s.maybeMergeLocked()
}

// isLive reports whether slot s held a document when the part was written.
func (p *part) isLive(s uint32) bool { return p.live[s/64]&(1<<(s%64)) != 0 }

// A mergeSrc is a part being merged: its slots are the merged part's from
// off on, and dead is its removals when the merge started.
type mergeSrc struct {
	p    *part
	off  uint32
	dead []uint64
}

func (m *mergeSrc) isDead(s uint32) bool {
	return int(s/64) < len(m.dead) && m.dead[s/64]&(1<<(s%64)) != 0
}

// has reports whether slot s of the source goes into the merged part.
func (m *mergeSrc) has(s uint32) bool { return m.p.isLive(s) && !m.isDead(s) }

// A mergeEntry is a key table entry of a merged bucket, packed so that
// entries sort as buildTable sorts them (tag, then slot): tag<<40 |
// slot<<8 | ext.
type mergeEntry uint64

func (e mergeEntry) tag() uint16  { return uint16(e >> 40) }
func (e mergeEntry) slot() uint32 { return uint32(e>>8) & (maxSpan - 1) }
func (e mergeEntry) ext() byte    { return byte(e) }

// mergeTable walks the sources' key tables as the merged table's buckets.
type mergeTable struct {
	srcs          []mergeSrc
	bits, extBits uint8
	stop          func() bool
}

// each calls fn with each bucket of the merged table in order, and its
// entries, sorted when sorted is set. A source's entries are sorted by
// their top bits+16 bits (bucket, then tag), which include the merged
// bucket's bits (mergedBits): so each source's entries of a merged bucket
// follow those of the bucket before, and one cursor a source suffices.
func (m *mergeTable) each(sorted bool, fn func(b int, es []mergeEntry)) error {
	type cursor struct{ i, b int }
	cur := make([]cursor, len(m.srcs))
	var es []mergeEntry
	extMask := ^byte(0) << (8 - m.extBits)
	for b := range 1 << m.bits {
		if b%(1<<14) == 0 && m.stop() {
			return errMergeStopped
		}
		es = es[:0]
		for k := range m.srcs {
			src, c := &m.srcs[k], &cur[k]
			t := &src.p.keys
			for ; c.i < len(t.tag); c.i++ {
				for t.off[c.b+1] <= uint32(c.i) {
					c.b++
				}
				key := uint64(c.b)<<(64-t.bits) | uint64(t.tag[c.i])<<(48-t.bits)
				if len(t.ext) > 0 {
					key |= uint64(t.ext[c.i]) << (40 - t.bits)
				}
				if int(key>>(64-m.bits)) != b {
					break
				}
				if sl := getSlot(t.slot, c.i); !src.isDead(sl) { // a table holds live slots only
					tag, ext := uint16(key>>(48-m.bits)), byte(key>>(40-m.bits))&extMask
					es = append(es, mergeEntry(uint64(tag)<<40|uint64(src.off+sl)<<8|uint64(ext)))
				}
			}
		}
		if sorted {
			slices.Sort(es)
		}
		fn(b, es)
	}
	return nil
}

// writeMerged writes the sections of the part merging srcs, which has base
// and span, through pw, with temporary files in tmpDir ("": in memory).
// stop reports that the merge is to be abandoned.
func writeMerged(pw *partWriter, srcs []mergeSrc, base uint64, span uint32, settings, tmpDir string, stop func() bool) error {
	run := make([]*part, len(srcs))
	entries := 0
	for i := range srcs {
		run[i] = srcs[i].p
		t := &srcs[i].p.keys
		for e := range t.tag {
			if !srcs[i].isDead(getSlot(t.slot, e)) {
				entries++
			}
		}
	}
	bits, extBits, ok := mergedBits(run, entries)
	if !ok {
		return fmt.Errorf("keptset: parts keep too few key bits to merge")
	}
	mt := &mergeTable{srcs: srcs, bits: bits, extBits: extBits, stop: stop}

	// The fingerprint column, the live bitmap and the block tables' counts.
	docs := uint32(0)
	live := make([]uint64, (int(span)+63)/64)
	wide := make([]uint64, len(live))
	var fpoff [fpTables][]uint32
	for t := range fpTables {
		fpoff[t] = make([]uint32, fpBuckets+1)
	}
	for _, src := range srcs {
		for sl := range src.p.span {
			if src.has(sl) {
				m := src.off + sl
				live[m/64] |= 1 << (m % 64)
				if src.p.isWide(sl) {
					wide[m/64] |= 1 << (m % 64)
				}
				docs++
				for t := range fpTables {
					fpoff[t][fpBlockOf(src.p.fps[sl], t)+1]++
				}
			}
		}
	}
	for t := range fpTables {
		for i := 1; i < len(fpoff[t]); i++ {
			fpoff[t][i] += fpoff[t][i-1]
		}
	}

	off := make([]uint32, (1<<bits)+1)
	if err := mt.each(false, func(b int, es []mergeEntry) { off[b+1] = off[b] + uint32(len(es)) }); err != nil {
		return err
	}
	pw.header(partHead{base: base, span: span, docs: docs, entries: uint64(entries), bits: bits, extBits: extBits}, settings)
	pw.put(bytesOf(off))
	pw.align()
	// One sorted pass writes the tags here and the slots and ext bytes
	// aside (in tmpDir; in memory when ""), copied in at their sections.
	slots, err := newSideFile(tmpDir)
	if err != nil {
		return err
	}
	defer slots.close()
	exts, err := newSideFile(tmpDir)
	if err != nil {
		return err
	}
	defer exts.close()
	var buf []byte
	flush := func() {
		pw.put(buf)
		buf = buf[:0]
	}
	var sb, xb []byte
	if err := mt.each(true, func(_ int, es []mergeEntry) {
		for _, e := range es {
			buf = binary.LittleEndian.AppendUint16(buf, e.tag())
			sl := e.slot()
			sb = append(sb, byte(sl), byte(sl>>8), byte(sl>>16))
			xb = append(xb, e.ext())
		}
		if len(buf) >= 1<<16 {
			flush()
			slots.write(sb)
			exts.write(xb)
			sb, xb = sb[:0], xb[:0]
		}
	}); err != nil {
		return err
	}
	flush()
	slots.write(sb)
	exts.write(xb)
	pw.align()
	if err := slots.copyTo(pw); err != nil {
		return err
	}
	pw.align()
	m := uint32(0) // the merged slot written next
	for _, src := range srcs {
		for ; m < src.off; m++ {
			buf = binary.LittleEndian.AppendUint64(buf, 0) // a gap between parts
			if len(buf) >= 1<<16 {
				flush()
			}
		}
		for sl := range src.p.span {
			fp := uint64(0)
			if src.has(sl) {
				fp = src.p.fps[sl]
			}
			buf = binary.LittleEndian.AppendUint64(buf, fp)
			if len(buf) >= 1<<16 {
				flush()
			}
		}
		m += src.p.span
	}
	flush()
	pw.align()
	pw.put(bytesOf(live))
	pw.align()
	pw.put(bytesOf(wide))
	for t := range fpTables {
		pw.align()
		pw.put(bytesOf(fpoff[t]))
	}
	pw.align()
	for t := range fpTables {
		for b := range fpBuckets {
			for _, src := range srcs {
				o, sls := src.p.fpx.off[t], src.p.fpx.slot[t]
				for i := o[b]; i < o[b+1]; i++ {
					if sl := getSlot(sls, int(i)); src.has(sl) {
						m := src.off + sl
						buf = append(buf, byte(m), byte(m>>8), byte(m>>16))
					}
				}
			}
			if len(buf) >= 1<<16 {
				flush()
			}
		}
		flush()
		pw.align()
		if stop() {
			return errMergeStopped
		}
	}
	if err := exts.copyTo(pw); err != nil {
		return err
	}
	pw.align()
	// The prefilter column: zero in the gaps, and for sources of format 2
	// (which kept none).
	zero := make([]uint64, preWords)
	m = 0
	for _, src := range srcs {
		for ; m < src.off; m++ {
			buf = append(buf, bytesOf(zero)...)
			if len(buf) >= 1<<16 {
				flush()
			}
		}
		for sl := range src.p.span {
			pre := zero
			if src.has(sl) && src.p.pre != nil {
				pre = src.p.pre[preWords*int(sl) : preWords*(int(sl)+1)]
			}
			buf = append(buf, bytesOf(pre)...)
			if len(buf) >= 1<<16 {
				flush()
			}
		}
		m += src.p.span
	}
	flush()
	pw.align()
	// The ids: where each merged slot's starts, then those of the live slots.
	at := uint64(0)
	m = 0
	for _, src := range srcs {
		for ; m < src.off; m++ {
			buf = binary.LittleEndian.AppendUint64(buf, at)
		}
		for sl := range src.p.span {
			buf = binary.LittleEndian.AppendUint64(buf, at)
			if src.has(sl) {
				at += src.p.idoff[sl+1] - src.p.idoff[sl]
			}
			if len(buf) >= 1<<16 {
				flush()
			}
		}
		m += src.p.span
	}
	buf = binary.LittleEndian.AppendUint64(buf, at)
	flush()
	pw.align()
	for _, src := range srcs {
		for sl := range src.p.span {
			if src.has(sl) {
				buf = append(buf, src.p.ids[src.p.idoff[sl]:src.p.idoff[sl+1]]...)
			}
			if len(buf) >= 1<<16 {
				flush()
			}
		}
	}
	flush()
	pw.align()
	return pw.err
}

// A sideFile holds a section of a merged part until its turn comes: a
// temporary file, or memory.
type sideFile struct {
	f   *os.File // nil: in buf
	w   *bufio.Writer
	buf bytes.Buffer
	err error
}

func newSideFile(dir string) (*sideFile, error) {
	sf := &sideFile{}
	if dir == "" {
		return sf, nil
	}
	f, err := os.CreateTemp(dir, "merge-*.tmp") // Open removes .tmp files left by a crash
	if err != nil {
		return nil, err
	}
	sf.f, sf.w = f, bufio.NewWriterSize(f, 1<<20)
	return sf, nil
}

func (sf *sideFile) write(b []byte) {
	switch {
	case sf.err != nil:
	case sf.f == nil:
		sf.buf.Write(b)
	default:
		_, sf.err = sf.w.Write(b)
	}
}

// copyTo writes what was written to pw.
func (sf *sideFile) copyTo(pw *partWriter) error {
	if sf.err != nil {
		return sf.err
	}
	if sf.f == nil {
		pw.put(sf.buf.Bytes())
		return pw.err
	}
	if err := sf.w.Flush(); err != nil {
		return err
	}
	if _, err := sf.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(sf.f, 1<<20)
	b := make([]byte, 1<<20)
	for pw.err == nil {
		n, err := r.Read(b)
		pw.put(b[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	return pw.err
}

func (sf *sideFile) close() {
	if sf.f != nil {
		sf.f.Close()
		os.Remove(sf.f.Name())
	}
}
