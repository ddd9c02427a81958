package dedup

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/neardup/neardup/rule"
)

// sketchStore holds every document's shingle set for verification, exactly:
// the 32-bit hashes of all sets end to end in one arena, document i's at
// [off[i], off[i+1]). Nothing in it is a pointer, so the collector never
// walks it. The arena stays in memory while it fits the budget
// (Options.SketchBudget); past it, what is held is appended to a temporary
// file and memory starts again, so a run holds at most the budget of sets
// whatever the corpus size, plus 8 bytes a document for the offsets.
// Verification then reads a set back from the file (one pread; the page
// cache keeps the sets read often, such as those of documents with many
// near-copies). No set is ever sampled, so every verdict is exact at every
// corpus size.
//
// Adding is for one goroutine; once the read pass is over, get is safe for
// concurrent use.
type sketchStore struct {
	dir    string
	budget int64
	off    []uint64 // n+1 offsets, in hashes
	mem    []uint32 // hashes from base on
	base   uint64   // hashes in f, before mem
	f      *os.File
}

func newSketchStore(dir string, budget int64) *sketchStore {
	return &sketchStore{dir: dir, budget: budget, off: []uint64{0}}
}

// add appends a set (sorted, unique hashes).
func (s *sketchStore) add(h []uint32) error {
	if int64(len(s.mem)+len(h))*4 > s.budget && len(s.mem) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if need := len(s.mem) + len(h); need > cap(s.mem) {
		// Grow by doubling, but never past the budget (append would), so
		// memory stays within it plus the copy of one doubling.
		c := max(need, min(2*cap(s.mem), int(s.budget/4)), 1024)
		s.mem = append(make([]uint32, 0, c), s.mem...)
	}
	s.mem = append(s.mem, h...)
	s.off = append(s.off, s.off[len(s.off)-1]+uint64(len(h)))
	return nil
}

// spill appends the sets in memory to the file.
func (s *sketchStore) spill() error {
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, "neardup-sketches-*")
		if err != nil {
			return fmt.Errorf("dedup: shingle sets: %w", err)
		}
		os.Remove(f.Name()) // the space comes back when it is closed, however the run ends
		s.f = f
	}
	if _, err := s.f.Write(u32Bytes(s.mem)); err != nil {
		return fmt.Errorf("dedup: shingle sets: writing %s: %w", s.f.Name(), err)
	}
	s.base += uint64(len(s.mem))
	s.mem = s.mem[:0]
	return nil
}

// get returns document i's set. A set in memory is shared, not copied:
// callers must not modify it.
func (s *sketchStore) get(i int) (rule.Sketch, error) {
	lo, hi := s.off[i], s.off[i+1]
	if lo >= s.base {
		h := s.mem[lo-s.base : hi-s.base : hi-s.base]
		return rule.SketchOf(h), nil
	}
	h := make([]uint32, hi-lo)
	if len(h) > 0 {
		if _, err := s.f.ReadAt(u32Bytes(h), int64(lo)*4); err != nil {
			return rule.Sketch{}, fmt.Errorf("dedup: shingle sets: reading %s: %w", s.f.Name(), err)
		}
	}
	return rule.SketchOf(h), nil
}

// len returns the number of sets.
func (s *sketchStore) len() int { return len(s.off) - 1 }

// close releases the file and the memory.
func (s *sketchStore) close() error {
	if s == nil {
		return nil
	}
	var err error
	if s.f != nil {
		err = s.f.Close()
		s.f = nil
	}
	s.mem, s.off = nil, nil
	return err
}

// onDisk reports the bytes of sets in the file.
func (s *sketchStore) onDisk() int64 { return int64(s.base) * 4 }

// u32Bytes views hashes as bytes in the machine's order: the file is
// written and read back by the same process, never kept.
func u32Bytes(h []uint32) []byte {
	if len(h) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&h[0])), len(h)*4)
}
