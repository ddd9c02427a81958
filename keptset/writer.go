package keptset

import (
	"fmt"
	"os"

	"github.com/neardup/neardup/rule"
)

// A Writer writes the parts of a new set from documents given in ascending
// seq order, as a bulk import makes them: each part is sorted once, with no
// delta and no store reads. Open then maps them.
type Writer struct {
	s    *Set
	b    *builder
	keys []uint64
}

// NewWriter returns a Writer of a set in opt.Dir, which must hold no set.
func NewWriter(rl *rule.Rule, opt Options) (*Writer, error) {
	opt.ensureDefaults()
	if opt.Dir == "" {
		return nil, fmt.Errorf("keptset: a Writer needs a directory")
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, err
	}
	if parts, _, _, err := readManifest(opt.Dir); err != nil || len(parts) > 0 {
		return nil, fmt.Errorf("keptset: %s already holds a kept set", opt.Dir)
	}
	if len(opt.FingerprintOnly.IDs) > 0 {
		return nil, fmt.Errorf("keptset: a Writer writes stored documents only (fingerprint-only documents are given to Open)")
	}
	return &Writer{s: newSet(rl, nil, opt), b: newBuilder(0)}, nil
}

// Add adds document seq with id and features f.
func (w *Writer) Add(seq uint64, id string, f *rule.Features) error {
	if seq < w.b.base+uint64(w.b.span()) {
		return fmt.Errorf("keptset: seq %d added after %d", seq, w.b.base+uint64(w.b.span())-1)
	}
	for seq-w.b.base >= uint64(w.s.opt.PartSpan) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	if f.FingerprintOnly {
		return fmt.Errorf("keptset: document %q: a stored document must have its features", id)
	}
	w.keys = w.s.rule.CandidateKeys(w.keys[:0], f)
	pre := prefilterOf(f)
	w.b.add(seq, id, w.keys, f.FP, &pre, w.s.wideDoc(f))
	return nil
}

// flush writes the builder's part and starts the next one where it ends
// (at a full span when it ends in a gap, so parts tile the seqs).
func (w *Writer) flush() error {
	end := w.b.base + uint64(w.s.opt.PartSpan)
	if w.b.docs > 0 {
		if err := w.s.installBuilt(w.b, nil); err != nil {
			return err
		}
		end = w.b.base + uint64(w.b.span())
	}
	w.b = newBuilder(end)
	return nil
}

// Close writes the last part and the manifest.
func (w *Writer) Close() error {
	err := w.flush()
	if err == nil {
		err = w.s.writeManifest()
	}
	for _, p := range w.s.parts {
		p.close()
	}
	return err
}
