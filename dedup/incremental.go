package dedup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/neardup/neardup/internal/outfile"
)

// Incremental mode: the crawler's daily batch of Manku, Jain and Das Sarma
// (WWW 2007, section 3.1.2) checked against everything kept before, under the
// same rule as within a batch. Beside the index snapshot (Options.Index, the
// fingerprints and ids 'neardup index query' reads) a kept-set file
// (KeptPath: FORMAT.md) holds what verification needs of every stored
// document, in the order the documents were kept. The stored documents come
// before the batch in priority, so a batch document is removed in favour of
// the first stored document it duplicates, if any; otherwise the batch is
// deduplicated as usual. Only kept documents enter the set. A corpus split in
// two runs therefore gets the verdicts of one run over the concatenation.

// KeptPath is the kept-set file that goes with the index snapshot at path.
func KeptPath(indexPath string) string { return indexPath + ".kept" }

// loadKept loads the kept set of Options.Index. A missing snapshot is an
// empty set when UpdateIndex is set; a snapshot without its kept-set file
// (one made by 'neardup index build') cannot be verified against and is an
// error.
func (r *runner) loadKept() error {
	o := r.opt
	path := KeptPath(o.Index)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(o.Index); serr == nil {
			return fmt.Errorf("%w: %s has no kept-set file %s: its documents cannot be verified against; "+
				"rebuild it with 'neardup dedup --index %s --update-index' over the documents it holds",
				ErrOptions, o.Index, path, o.Index)
		}
		if !o.UpdateIndex {
			return fmt.Errorf("dedup: index %s: %w", o.Index, fs.ErrNotExist)
		}
		r.log().Info("index file absent: starting an empty index", "path", o.Index)
		r.kept, err = NewKept(r.rule, 1)
		return err
	}
	if err != nil {
		return fmt.Errorf("dedup: loading kept set: %w", err)
	}
	defer f.Close()
	r.kept, err = readKept(f, r.rule, keptSettings(&o))
	if err != nil {
		return fmt.Errorf("dedup: loading %s: %w", path, err)
	}
	if _, err := os.Stat(o.Index); err != nil {
		return fmt.Errorf("dedup: kept set %s without its index: %w", path, err)
	}
	return nil
}

// addKept adds the kept documents to the kept set in priority order (an id
// already stored is replaced, and moves last).
func (r *runner) addKept() error {
	k := r.kept
	return r.eachKept(func(id string, _ int, f Features) error {
		k.Remove(id)
		if err := k.Add(id, f); err != nil {
			return fmt.Errorf("dedup: adding to index: %w", err)
		}
		return nil
	})
}

// eachKept calls fn with each kept document in priority order, stopping at
// the first error (or a failed read of the shingle sets).
func (r *runner) eachKept(fn func(id string, doc int, f Features) error) error {
	order := r.priority()
	for p := range r.d.len() {
		i := p
		if order != nil {
			i = int(order[p])
		}
		if r.removed(i) {
			continue
		}
		if err := fn(r.d.ids.get(i), i, r.feat(i)); err != nil {
			return err
		}
		if err := r.setError(); err != nil {
			return err
		}
	}
	return nil
}

// saveKept saves the kept-set file and the index snapshot, each written to a
// temporary file and renamed. The kept-set file is renamed first; both name
// the same documents.
func (r *runner) saveKept() error {
	k := r.kept
	err := outfile.WriteFile(KeptPath(r.opt.Index), nil, func(w io.Writer) error {
		return k.writeTo(w, keptSettings(&r.opt))
	})
	if err != nil {
		return fmt.Errorf("dedup: writing kept set: %w", err)
	}
	if err := k.Index().SaveFile(r.opt.Index); err != nil {
		return fmt.Errorf("dedup: saving index: %w", err)
	}
	return nil
}
