package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
)

// BuildFrozenFile builds the Frozen of the Source's items as BuildFrozen
// does, but writes each table and the id column to the snapshot at path
// while the merge yields them, so that the build never holds the tables:
// its memory is opt.SortMemory and the merge's buffers, whatever n (1B
// fingerprints build in about 2 GB). It writes a temporary file beside
// path, syncs it and renames it, then returns the snapshot mapped
// (OpenFrozen without the checksums, which it has just computed); the
// caller closes it.
func BuildFrozenFile(ctx context.Context, src Source, path string, opt FrozenOptions) (_ *Frozen, err error) {
	if !littleEndian {
		return nil, errBigEndian
	}
	f, runs, err := sortRuns(ctx, src, opt)
	if err != nil {
		return nil, err
	}
	defer runs.remove()
	opt.EnsureDefaults()
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	secs := f.sections()
	_, offs, size := frozenHeader(secs)
	if err := tmp.Truncate(size); err != nil {
		return nil, err
	}
	sinks := make([]*fileSink, len(secs))
	for i := range secs {
		sinks[i] = &fileSink{fd: tmp, off: offs[i], buf: make([]byte, 0, 1<<20)}
	}
	byTag := map[[4]byte]*fileSink{}
	for i, s := range secs {
		byTag[s.tag] = sinks[i]
		if s.data != nil {
			sinks[i].write(s.data)
		}
	}
	err = runs.mergeAll(ctx, opt.Workers, func(t int) (*efWriter, *bitPacker, func()) {
		w := newEFWriter(f.n, byTag[tag('H', t)], byTag[tag('L', t)], byTag[tag('S', t)])
		var ids *bitPacker
		if t == f.lay.ident {
			ids = &bitPacker{sink: byTag[tag('I', 0)], width: f.idBits, words: idWords(f.n, f.idBits)}
		}
		return w, ids, w.finish
	})
	if err != nil {
		return nil, err
	}
	for i, s := range sinks {
		if err := s.flush(); err != nil {
			return nil, fmt.Errorf("index: writing %s: %w", tmp.Name(), err)
		}
		if s.written != secs[i].size {
			return nil, fmt.Errorf("index: frozen section %s: wrote %d bytes, want %d", secs[i].name, s.written, secs[i].size)
		}
		secs[i].crc = s.crc
	}
	hdr, _, _ := frozenHeader(secs)
	if _, err := tmp.WriteAt(hdr, 0); err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, err
	}
	return OpenFrozen(path, FrozenOpenOptions{NoVerify: true})
}

// A fileSink writes one section of a snapshot at its offset through a
// buffer, and sums its checksum.
type fileSink struct {
	fd      *os.File
	off     int64
	buf     []byte
	crc     uint32
	written int64
	err     error
}

func (s *fileSink) put(w uint64) {
	if len(s.buf)+8 > cap(s.buf) {
		s.flush()
	}
	s.buf = binary.LittleEndian.AppendUint64(s.buf, w)
}

func (s *fileSink) write(b []byte) {
	for len(b) > 0 {
		if len(s.buf) == cap(s.buf) {
			s.flush()
		}
		m := copy(s.buf[len(s.buf):cap(s.buf)], b)
		s.buf = s.buf[:len(s.buf)+m]
		b = b[m:]
	}
}

func (s *fileSink) flush() error {
	if len(s.buf) > 0 && s.err == nil {
		_, s.err = s.fd.WriteAt(s.buf, s.off+s.written)
		s.crc = crc32.Update(s.crc, castagnoli, s.buf)
		s.written += int64(len(s.buf))
	}
	s.buf = s.buf[:0]
	return s.err
}
