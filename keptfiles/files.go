package keptfiles

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/outfile"
	"github.com/neardup/neardup/keptset"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// Dir is the directory of the kept set that goes with the index snapshot at
// indexPath.
func Dir(indexPath string) string { return indexPath + ".kept.d" }

// LegacyPath is the kept-set file of the same snapshot written by a neardup
// before this package (LEGACY-FORMAT.md, legacy.go), which Load converts.
func LegacyPath(indexPath string) string { return indexPath + ".kept" }

// Files opens the kept set of incremental runs of dedup.Run
// (dedup.Options.KeptFiles; it implements dedup.KeptFiles without
// importing dedup): the directory Dir(path) beside the index snapshot at
// path. The zero value is ready to use; it holds nothing.
type Files struct{}

// Load opens the kept set saved beside the snapshot at path by a run made
// with settings. With update it works on a copy of the saved generation
// (doc.go), which Save makes the current one. A kept-set file of an older
// neardup (LegacyPath) is converted first. A snapshot without a kept set
// (one made by 'neardup index build') cannot be verified against and is an
// error wrapping rule.ErrOptions; when there is neither the error wraps
// fs.ErrNotExist.
func (Files) Load(path string, rl *rule.Rule, settings string, update bool) (rule.KeptSet, error) {
	dir := Dir(path)
	if _, err := os.Stat(filepath.Join(dir, currentName)); errors.Is(err, fs.ErrNotExist) {
		switch err := convertLegacy(path, rl, settings); {
		case errors.Is(err, fs.ErrNotExist):
			if _, serr := os.Stat(path); serr == nil {
				return nil, fmt.Errorf("%w: %s has no kept set %s: its documents cannot be verified against; "+
					"rebuild it with 'neardup dedup --index %s --update-index' over the documents it holds",
					rule.ErrOptions, path, dir, path)
			}
			return nil, fmt.Errorf("keptfiles: index %s: %w", path, fs.ErrNotExist)
		case err != nil:
			return nil, err
		}
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	k, err := open(path, dir, lock, rl, settings, update)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return k, nil
}

// open opens the current generation of dir (lock held): a copy of it with
// update.
func open(path, dir string, lock *os.File, rl *rule.Rule, settings string, update bool) (*Set, error) {
	cur, err := readCurrent(dir)
	if err != nil {
		return nil, err
	}
	if cur.settings != settings {
		return nil, fmt.Errorf("%w: %s was made with %q, this run uses %q", ErrFormat, dir, cur.settings, settings)
	}
	if err := removeStale(dir, cur.gen); err != nil {
		return nil, err
	}
	gen := cur.gen
	if update {
		gen = cur.gen + 1
		if err := copyGen(genDir(dir, cur.gen), genDir(dir, gen)); err != nil {
			os.RemoveAll(genDir(dir, gen))
			return nil, fmt.Errorf("keptfiles: copying %s: %w", genDir(dir, cur.gen), err)
		}
	}
	x, err := index.LoadFile(filepath.Join(genDir(dir, gen), indexName), index.Options{})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return openSet(path, dir, gen, lock, rl, settings, update, x)
}

// New returns an empty set to be saved beside the snapshot at path: in a
// new directory Dir(path), which must hold no saved set.
func (Files) New(path string, rl *rule.Rule, settings string) (rule.KeptSet, error) {
	k, err := newSet(path, rl, settings)
	if err != nil {
		return nil, err
	}
	return k, nil
}

func newSet(path string, rl *rule.Rule, settings string) (*Set, error) {
	dir := Dir(path)
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, currentName)); err == nil {
		lock.Close()
		return nil, fmt.Errorf("keptfiles: %s holds a kept set already", dir)
	}
	if err := removeStale(dir, 0); err != nil {
		lock.Close()
		return nil, err
	}
	x, err := index.New(index.Options{K: max(rl.QueryK(), 1)})
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("keptfiles: index: %w", err)
	}
	k, err := openSet(path, dir, 1, lock, rl, settings, true, x)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return k, nil
}

// openSet opens the store and the keptset of generation gen, with x its
// snapshot. On an error x is closed.
func openSet(path, dir string, gen uint64, lock *os.File, rl *rule.Rule, settings string, update bool, x *index.Index) (*Set, error) {
	g := genDir(dir, gen)
	st, err := store.OpenPebble(filepath.Join(g, storeName), store.PebbleOptions{Settings: settings})
	if err != nil {
		x.Close()
		return nil, fmt.Errorf("keptfiles: %w", err)
	}
	ks, err := keptset.Open(context.Background(), rl, store.SeqRecords{Store: st}, keptset.Options{
		Dir: filepath.Join(g, keptsetName), Settings: settings,
	})
	if err != nil {
		x.Close()
		st.Close()
		return nil, fmt.Errorf("keptfiles: %w", err)
	}
	return &Set{path: path, dir: dir, gen: gen, update: update, lock: lock, settings: settings,
		st: st, ks: ks, x: x, next: ks.Next(), pending: map[string]int{}}, nil
}

// Set is a kept set of incremental runs open on disk (a rule.KeptSet):
// its documents' records in a store, their candidate keys in a keptset.Set
// over it, their ids and fingerprints in an index.Index (the snapshot).
// Matches are safe for concurrent use; the other methods are called one at
// a time (as dedup.Run does).
type Set struct {
	path, dir, settings string
	gen                 uint64 // the generation open: the current one, or its copy with update
	update              bool
	lock                *os.File

	st   *store.PebbleStore
	ks   *keptset.Set
	x    *index.Index
	next uint64 // the seq of the next document added

	// The records added since the last flush, written to the store in one
	// synced batch (store.PebbleStore.PutBulk); the keptset reads them from
	// itself meanwhile. pending maps their ids to their place in buf.
	buf     []store.Record
	bufSize int
	pending map[string]int

	err          error // the first error of a method that cannot return one
	saved, ended bool
	noPublish    bool // Save writes no snapshot at path (a conversion's)
}

var _ rule.KeptSet = (*Set)(nil)

// Save saves k, a *Set that Load with update or New returned: Set.Save.
func (Files) Save(k rule.KeptSet) error {
	s, ok := k.(*Set)
	if !ok {
		return fmt.Errorf("keptfiles: cannot save a %T, only a *keptfiles.Set", k)
	}
	return s.Save()
}

// Close closes k, a *Set: Set.Close.
func (Files) Close(k rule.KeptSet) error {
	s, ok := k.(*Set)
	if !ok {
		return fmt.Errorf("keptfiles: cannot close a %T, only a *keptfiles.Set", k)
	}
	return s.Close()
}

// flushAt is the records or bytes of sketches buffered before they are
// written to the store.
const (
	flushAt     = 4096
	flushAtSize = 16 << 20
)

// Len returns the number of documents in the set.
func (k *Set) Len() int { return k.x.Len() }

// Contains reports whether id is in the set.
func (k *Set) Contains(id string) bool { return k.x.Contains(id) }

// Get returns the features of id.
func (k *Set) Get(id string) (rule.Features, bool) {
	if i, ok := k.pending[id]; ok {
		return k.buf[i].Features, true
	}
	rec, err := k.st.Get(context.Background(), id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			k.fail(err)
		}
		return rule.Features{}, false
	}
	return rec.Features, true
}

// Match returns the first document of the set, in priority order, that f
// duplicates under the set's rule.
func (k *Set) Match(f *rule.Features) (rule.KeptMatch, bool, error) {
	return k.ks.Match(context.Background(), f)
}

// Add adds id, last in priority; an id in the set is an error.
func (k *Set) Add(id string, f rule.Features) error {
	if k.err != nil {
		return k.err
	}
	if !k.update {
		return errors.New("keptfiles: the set was opened without update")
	}
	if err := k.x.Add(id, f.FP); err != nil {
		return err
	}
	seq := k.next
	if err := k.ks.Add(seq, id, f); err != nil {
		k.x.Remove(id)
		return err
	}
	k.next++
	f.Sig = nil // not stored
	k.pending[id] = len(k.buf)
	k.buf = append(k.buf, store.Record{Seq: seq, ID: id, Features: f})
	k.bufSize += 4 * len(f.Sketch.Hashes())
	if len(k.buf) >= flushAt || k.bufSize >= flushAtSize {
		return k.flush()
	}
	return nil
}

// flush writes the buffered records to the store.
func (k *Set) flush() error {
	if len(k.buf) == 0 {
		return nil
	}
	if err := k.st.PutBulk(context.Background(), k.buf); err != nil {
		return k.fail(err)
	}
	for _, r := range k.buf {
		k.ks.Written(r.Seq)
	}
	clear(k.buf)
	k.buf, k.bufSize = k.buf[:0], 0
	clear(k.pending)
	return nil
}

// Remove removes id and reports whether it was there.
func (k *Set) Remove(id string) bool {
	if k.err != nil || !k.update || !k.x.Contains(id) {
		return false
	}
	if _, ok := k.pending[id]; ok {
		if k.flush() != nil {
			return false
		}
	}
	ctx := context.Background()
	rec, err := k.st.Get(ctx, id)
	if err != nil {
		k.fail(err)
		return false
	}
	if _, err := k.ks.Remove(rec.Seq); err != nil {
		k.fail(err)
		return false
	}
	if err := k.st.Delete(ctx, id); err != nil {
		k.fail(err)
		return false
	}
	if err := k.x.Remove(id); err != nil {
		k.fail(err)
		return false
	}
	return true
}

// fail keeps the first error of a method that cannot return one; Add and
// Save return it.
func (k *Set) fail(err error) error {
	if k.err == nil {
		k.err = fmt.Errorf("keptfiles: %s: %w", k.dir, err)
	}
	return k.err
}

// Save writes the set as the current generation of its directory and then
// the snapshot at its path: a crash leaves the set that was loaded or the
// one saved (doc.go). A crash between the two leaves the snapshot of the
// set loaded, which the next Save replaces.
func (k *Set) Save() error {
	if k.ended {
		return errors.New("keptfiles: Save after Close or Save")
	}
	if !k.update {
		return errors.New("keptfiles: the set was opened without update")
	}
	if err := k.flush(); err != nil {
		return err
	}
	if k.err != nil {
		return k.err
	}
	k.ended = true
	g := genDir(k.dir, k.gen)
	err := errors.Join(k.ks.Close(), k.st.Close())
	if err == nil {
		err = k.x.SaveFile(filepath.Join(g, indexName))
	}
	if err == nil {
		err = outfile.SyncDir(g)
	}
	if err == nil {
		err = writeCurrent(k.dir, current{gen: k.gen, settings: k.settings})
	}
	if err != nil {
		return fmt.Errorf("keptfiles: saving %s: %w", k.dir, err)
	}
	k.saved = true
	// The set saved is the current one: what follows only tidies up and
	// publishes the snapshot.
	if k.gen > 1 {
		os.RemoveAll(genDir(k.dir, k.gen-1))
	}
	if k.noPublish {
		return nil
	}
	if err := k.x.SaveFile(k.path); err != nil {
		return fmt.Errorf("keptfiles: saving index: %w", err)
	}
	return nil
}

// Close releases the set. Without a Save the set on disk stays the one
// loaded: an update's copy is removed.
func (k *Set) Close() error {
	var err error
	if !k.ended {
		k.ended = true
		err = errors.Join(k.ks.Close(), k.st.Close())
	}
	if k.x != nil {
		k.x.Close()
		k.x = nil
	}
	if k.update && !k.saved {
		err = errors.Join(err, os.RemoveAll(genDir(k.dir, k.gen)))
	}
	if k.lock != nil {
		err = errors.Join(err, k.lock.Close())
		k.lock = nil
	}
	return err
}
