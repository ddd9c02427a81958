package keptset

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/neardup/neardup/internal/outfile"
)

// The directory (Options.Dir):
//
//	MANIFEST          the parts, in seq order, and the seq after the last:
//	                  text lines "neardup keptset 1", "settings S",
//	                  "part NAME BASE SPAN DOCS" per part, "end SEQ", then
//	                  "crc C" (crc32c of the lines before it, decimal);
//	                  replaced atomically (written aside, synced, renamed)
//	B-E.part          one part (part.go), named by its first seq and the
//	                  seq after its span, in hex (16 digits each; parts
//	                  written before merges are named B.part); a part made
//	                  by a merge starts where its first source does
//	deletes           the seqs removed from parts since they were written,
//	                  8 bytes each, little-endian: appended, not synced (the
//	                  store is the truth: a candidate removed there but not
//	                  here is skipped when its record is not found)
//
// Start-up maps the parts the manifest lists and replays the store from its
// end; a damaged or missing part, or one made with other settings, is
// rebuilt from the store from its base on, with a log line saying so.
const (
	manifestName = "MANIFEST"
	deletesName  = "deletes"
	manifestHead = "neardup keptset 1"
)

// partName names the part of seqs [base, base+span): a merged part starts
// where its first source does, so the end is in the name too.
func partName(base uint64, span uint32) string {
	return fmt.Sprintf("%016x-%016x.part", base, base+uint64(span))
}

type manifestPart struct {
	name       string
	base       uint64
	span, docs uint32
}

// readManifest reads the manifest; a missing one is no parts.
func readManifest(dir string) (parts []manifestPart, settings string, end uint64, err error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", 0, nil
	}
	if err != nil {
		return nil, "", 0, err
	}
	bad := func(why string) error {
		return fmt.Errorf("%w: %s: %s", ErrDamaged, filepath.Join(dir, manifestName), why)
	}
	i := bytes.LastIndex(b, []byte("crc "))
	if i < 0 {
		return nil, "", 0, bad("no checksum line")
	}
	want, perr := strconv.ParseUint(strings.TrimSpace(string(b[i+4:])), 10, 32)
	if perr != nil || crc32.Checksum(b[:i], castagnoli) != uint32(want) {
		return nil, "", 0, bad("checksum mismatch")
	}
	lines := strings.Split(strings.TrimSuffix(string(b[:i]), "\n"), "\n")
	if len(lines) < 3 || lines[0] != manifestHead || !strings.HasPrefix(lines[1], "settings ") {
		return nil, "", 0, bad("bad header")
	}
	settings = strings.TrimPrefix(lines[1], "settings ")
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		switch {
		case len(f) == 5 && f[0] == "part":
			base, e1 := strconv.ParseUint(f[2], 10, 64)
			span, e2 := strconv.ParseUint(f[3], 10, 32)
			docs, e3 := strconv.ParseUint(f[4], 10, 32)
			if errors.Join(e1, e2, e3) != nil {
				return nil, "", 0, bad("bad line " + strconv.Quote(l))
			}
			parts = append(parts, manifestPart{f[1], base, uint32(span), uint32(docs)})
		case len(f) == 2 && f[0] == "end":
			if end, err = strconv.ParseUint(f[1], 10, 64); err != nil {
				return nil, "", 0, bad("bad line " + strconv.Quote(l))
			}
		default:
			return nil, "", 0, bad("bad line " + strconv.Quote(l))
		}
	}
	return parts, settings, end, nil
}

// writeManifest replaces the manifest with the set's parts (mu held, or
// before the set is shared): those before the first delta still being
// written, since start-up replays the store from the end of the last part
// listed. A part written before an older one (their writers run side by
// side) is listed once the older one is.
func (s *Set) writeManifest() error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nsettings %s\n", manifestHead, s.opt.Settings)
	end := uint64(0)
	limit := uint64(math.MaxUint64)
	for _, d := range s.frozen {
		limit = min(limit, d.base)
	}
	for _, p := range s.parts {
		if p.base >= limit {
			break
		}
		fmt.Fprintf(&b, "part %s %d %d %d\n", p.name, p.base, p.span, p.docs)
		end = p.base + uint64(p.span)
	}
	fmt.Fprintf(&b, "end %d\n", end)
	fmt.Fprintf(&b, "crc %d\n", crc32.Checksum([]byte(b.String()), castagnoli))
	path := filepath.Join(s.opt.Dir, manifestName)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = outfile.SyncDir(s.opt.Dir)
	}
	if err != nil {
		return fmt.Errorf("keptset: writing %s: %w", path, err)
	}
	return nil
}

// loadParts maps the manifest's parts and returns the seq the store's
// replay starts from. Parts it cannot use are removed.
func (s *Set) loadParts() (from uint64, err error) {
	dir := s.opt.Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	log := s.opt.Logger
	listed, settings, _, err := readManifest(dir)
	switch {
	case err != nil:
		log.Warn("kept set manifest damaged: rebuilding the kept set from the store", "err", err)
		listed = nil
	case len(listed) > 0 && settings != s.opt.Settings:
		log.Warn("kept set made with other settings: rebuilding it from the store",
			"was", settings, "now", s.opt.Settings)
		listed = nil
	}
	for _, mp := range listed {
		if mp.base < from {
			log.Warn("kept set part out of sequence: rebuilding from the store", "part", mp.name, "from", from)
			break
		}
		p, err := openPart(filepath.Join(dir, mp.name), s.opt.Settings)
		if err == nil && (p.base != mp.base || p.span != mp.span || p.docs != mp.docs) {
			p.close()
			err = fmt.Errorf("%w: %s: not the part the manifest lists", ErrDamaged, mp.name)
		}
		if err == nil && p.idoff != nil && p.keys.known() < mergeKnownBits && int(p.span) < s.opt.PartSpan {
			// Made by a merge of a part from before minTableBits: it can
			// never be merged into a part as large as the largest, and
			// would stay beside the others for good, costing every match.
			// (A part of PartSpan seqs is never merged: it stays.)
			p.close()
			err = fmt.Errorf("%s: its key table keeps %d bits of each key, fewer than the %d a merge needs: it could never be merged",
				mp.name, p.keys.known(), mergeKnownBits)
		}
		if err != nil {
			log.Warn("kept set part unusable: rebuilding it from the store", "part", mp.name, "from", from, "err", err)
			break
		}
		s.parts = append(s.parts, p)
		s.live += int(p.docs)
		from = p.base + uint64(p.span)
	}
	// Remove the files no kept part names (damaged parts, parts of other
	// settings, a part written but not yet listed when the process died).
	keep := map[string]bool{}
	for _, p := range s.parts {
		keep[p.name] = true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		if n := e.Name(); (strings.HasSuffix(n, ".part") || strings.HasSuffix(n, ".tmp")) && !keep[n] {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return 0, err
			}
		}
	}
	s.dels, err = openDeleteLog(filepath.Join(dir, deletesName), func(seq uint64) bool {
		if seq >= from {
			return false // rebuilt from the store, which has the delete
		}
		p := s.partOf(seq)
		if p == nil || !p.has(uint32(seq-p.base)) {
			return false
		}
		p.kill(uint32(seq - p.base))
		s.live--
		return true
	})
	return from, err
}

// writeAndMap writes the part built in memory to the directory and returns
// it mapped from there.
func (s *Set) writeAndMap(p *part) (*part, error) {
	path := filepath.Join(s.opt.Dir, partName(p.base, p.span))
	if err := writePart(path, p, s.opt.Settings); err != nil {
		return nil, fmt.Errorf("keptset: writing part: %w", err)
	}
	return openPart(path, s.opt.Settings)
}

// freezeLocked hands the delta to a part writer and starts a new one at
// base (mu held).
func (s *Set) freezeLocked(base uint64) error {
	if s.bgErr != nil {
		return s.bgErr
	}
	d := s.delta
	s.delta = newDelta(base)
	if d.docs == 0 {
		return nil
	}
	s.frozen = append(s.frozen, d)
	dead := slices.Clone(d.dead)
	isDead := func(sl uint32) bool { return int(sl/64) < len(dead) && dead[sl/64]&(1<<(sl%64)) != 0 }
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		p := d.build(isDead)
		var err error
		if s.opt.Dir != "" {
			p, err = s.writeAndMap(p)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			if s.bgErr == nil {
				s.bgErr = err
			}
			return // the delta stays frozen and queried; writes are refused
		}
		s.frozen = slices.DeleteFunc(s.frozen, func(x *delta) bool { return x == d })
		i, _ := slices.BinarySearchFunc(s.parts, p.base, func(q *part, b uint64) int { return cmp.Compare(q.base, b) })
		s.parts = slices.Insert(s.parts, i, p)
		// Removals during the build.
		for sl := range d.span() {
			if d.isDead(sl) && !isDead(sl) && p.has(sl) {
				p.kill(sl)
				if s.dels != nil && s.bgErr == nil {
					s.bgErr = s.dels.append(p.base + uint64(sl))
				}
			}
		}
		if s.opt.Dir != "" && !s.closed {
			if err := s.writeManifest(); err != nil && s.bgErr == nil {
				s.bgErr = err
			}
		}
		s.maybeMergeLocked()
	}()
	return nil
}

// deleteLog is the deletes file.
type deleteLog struct {
	f *os.File
	w *bufio.Writer
}

// openDeleteLog replays the log through apply, rewrites it with the
// entries apply kept, and opens it for appending.
func openDeleteLog(path string, apply func(seq uint64) bool) (*deleteLog, error) {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var kept []byte
	for i := 0; i+8 <= len(b); i += 8 { // a torn last entry is dropped
		if apply(binary.LittleEndian.Uint64(b[i:])) {
			kept = append(kept, b[i:i+8]...)
		}
	}
	if len(kept) != len(b) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, kept, 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &deleteLog{f: f, w: bufio.NewWriterSize(f, 4096)}, nil
}

func (l *deleteLog) append(seq uint64) error {
	if _, err := l.w.Write(binary.LittleEndian.AppendUint64(nil, seq)); err != nil {
		return err
	}
	return l.w.Flush()
}

func (l *deleteLog) close() error { return errors.Join(l.w.Flush(), l.f.Close()) }
