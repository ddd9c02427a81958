package dedup

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"unsafe"
)

// idStore holds every document's id, in input order, in about a byte a
// document of memory: the ids' bytes stay in memory up to a budget and past
// it go to a temporary file (as the shingle sets do), and what memory keeps
// per document is its id's length (one byte; longer ids in a map) and, every
// idMark documents, the offset of the next id. At 10^8 documents of
// 11-byte ids that is 112 MB where a string each, or even an arena with an
// 8-byte reference each, took 1.9 GB. Reports and the output pass, which need
// the ids, read them back: in order through a cursor (one sequential read),
// or one by one (a pread each) for the few that are named out of order (the
// kept document of a removed one).
//
// Adding is for one goroutine; once adding is over, get and cursors are safe
// for concurrent use.
type idStore struct {
	dir    string
	budget int

	lens  chunked[uint8]   // the length of each id; longID for one of 255 bytes or more
	long  map[int32]uint32 // the lengths of ids of 255 bytes or more
	marks []uint64         // marks[k]: the offset of id k·idMark
	mem   []byte           // the ids from base on
	base  uint64           // bytes in f
	f     *os.File         // nil before the first spill
	end   uint64           // the offset after the last id
}

const (
	idMark = 64
	longID = 255
)

func newIDStore(dir string, budget int) *idStore {
	return &idStore{dir: dir, budget: budget}
}

// add appends id.
func (s *idStore) add(id string) error {
	n := s.lens.len()
	if n%idMark == 0 {
		s.marks = append(s.marks, s.end)
	}
	if len(id) >= longID {
		if s.long == nil {
			s.long = map[int32]uint32{}
		}
		s.long[int32(n)] = uint32(len(id))
		s.lens.append(longID)
	} else {
		s.lens.append(uint8(len(id)))
	}
	if len(s.mem)+len(id) > s.budget && len(s.mem) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.mem = append(s.mem, id...)
	s.end += uint64(len(id))
	return nil
}

func (s *idStore) spill() error {
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, "neardup-ids-*")
		if err != nil {
			return fmt.Errorf("dedup: ids: %w", err)
		}
		os.Remove(f.Name()) // the space comes back when it is closed, however the run ends
		s.f = f
	}
	if _, err := s.f.Write(s.mem); err != nil {
		return fmt.Errorf("dedup: ids: writing %s: %w", s.f.Name(), err)
	}
	s.base += uint64(len(s.mem))
	s.mem = s.mem[:0]
	return nil
}

// len returns the number of ids.
func (s *idStore) len() int { return s.lens.len() }

// length returns the length of id i.
func (s *idStore) length(i int) uint64 {
	if l := s.lens.get(i); l != longID {
		return uint64(l)
	}
	return uint64(s.long[int32(i)])
}

// offset returns where id i starts.
func (s *idStore) offset(i int) uint64 {
	off := s.marks[i/idMark]
	for j := i - i%idMark; j < i; j++ {
		off += s.length(j)
	}
	return off
}

// get returns id i.
func (s *idStore) get(i int) (string, error) {
	off, l := s.offset(i), s.length(i)
	if off >= s.base {
		b := s.mem[off-s.base : off-s.base+l]
		return string(b), nil
	}
	b := make([]byte, l)
	if _, err := s.f.ReadAt(b, int64(off)); err != nil {
		return "", fmt.Errorf("dedup: ids: reading %s: %w", s.f.Name(), err)
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// must returns id i; a read error is recorded with fail and gives "".
func (s *idStore) must(i int, fail func(error)) string {
	id, err := s.get(i)
	if err != nil {
		fail(err)
	}
	return id
}

// find returns the first document whose id is id, scanning them all: the
// duplicate-id check's rare case (a hash seen before).
func (s *idStore) find(id string) (int, bool, error) {
	c := s.cursor()
	for i := range s.len() {
		got, err := c.next()
		if err != nil {
			return 0, false, err
		}
		if got == id {
			return i, true, nil
		}
	}
	return 0, false, nil
}

// cursor returns a reader of the ids in order from the first.
func (s *idStore) cursor() *idCursor {
	c := &idCursor{s: s}
	if s.f != nil {
		c.r = bufio.NewReaderSize(io.NewSectionReader(s.f, 0, int64(s.base)), 1<<20)
	}
	return c
}

// close releases the file and the memory.
func (s *idStore) close() error {
	var err error
	if s.f != nil {
		err = s.f.Close()
		s.f = nil
	}
	*s = idStore{dir: s.dir, budget: s.budget}
	return err
}

// idCursor reads the ids in order. Not safe for concurrent use.
type idCursor struct {
	s   *idStore
	i   int
	off uint64
	r   *bufio.Reader
	buf []byte
}

// next returns the next id.
func (c *idCursor) next() (string, error) {
	s := c.s
	if c.i >= s.len() {
		return "", io.EOF
	}
	l := s.length(c.i)
	c.i++
	off := c.off
	c.off += l
	if off >= s.base {
		return string(s.mem[off-s.base : off-s.base+l]), nil
	}
	c.buf = slices.Grow(c.buf[:0], int(l))[:l]
	if _, err := io.ReadFull(c.r, c.buf); err != nil {
		return "", fmt.Errorf("dedup: ids: reading %s: %w", s.f.Name(), err)
	}
	return string(c.buf), nil
}

// positions records where each document was read, for error messages, in
// runs: a new run starts where a document is not on the line after the
// previous one's in the same source (a new file, a skipped line, a whole
// file or a Parquet row), so a JSONL file costs one run, not 8 bytes a
// document.
type positions struct {
	runs    []posRun
	sources []string
	index   map[string]int32
}

type posRun struct {
	doc, src, line int32 // line 0: whole files (each document its own run)
}

func (p *positions) add(doc int, source string, line int) {
	src, ok := p.index[source]
	if !ok {
		if p.index == nil {
			p.index = map[string]int32{}
		}
		src = int32(len(p.sources))
		p.sources = append(p.sources, source)
		p.index[source] = src
	}
	l := int32(min(line, 1<<31-1))
	if n := len(p.runs); n > 0 {
		r := p.runs[n-1]
		if r.src == src && r.line > 0 && l == r.line+int32(doc)-r.doc {
			return
		}
	}
	p.runs = append(p.runs, posRun{doc: int32(doc), src: src, line: l})
}

// where names document doc's position as corpus documents are named.
func (p *positions) where(doc int) string {
	k := sort.Search(len(p.runs), func(k int) bool { return p.runs[k].doc > int32(doc) }) - 1
	r := p.runs[k]
	if r.line > 0 {
		return fmt.Sprintf("%s:%d", p.sources[r.src], r.line+int32(doc)-r.doc)
	}
	return p.sources[r.src]
}
