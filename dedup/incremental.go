package dedup

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/neardup/neardup/rule"
)

// Incremental mode: the crawler's daily batch of Manku, Jain and Das Sarma
// (WWW 2007, section 3.1.2) checked against everything kept before, under the
// same rule as within a batch. Beside the index snapshot (Options.Index, the
// fingerprints and ids 'neardup index query' reads) the kept set holds what
// verification needs of every stored document, in the order the documents
// were kept; Options.KeptFiles opens it (package keptfiles owns its files:
// keptfiles/doc.go). The stored documents come before the batch in
// priority, so a batch document is removed in favour of the first stored
// document it duplicates, if any; otherwise the batch is deduplicated as
// usual. Only kept documents enter the set. A corpus split in two runs
// therefore gets the verdicts of one run over the concatenation.

// KeptFiles opens the kept set of incremental mode: the index snapshot at
// Options.Index and the kept set beside it (Options.KeptFiles).
// keptfiles.Files is one. The sets it returns are rule.KeptSets (declared
// in package rule), which it saves and closes itself, so that a kept set's
// package implements both without importing this one.
type KeptFiles interface {
	// Load opens the set saved at path by a run whose features were made
	// under settings (a run with other settings would compare different
	// things), its documents judged by the rule rl. With update the run
	// may change the set and Save it; without it the set on disk is left
	// as it is. When there is no set at path the error wraps
	// fs.ErrNotExist; no other error does.
	Load(path string, rl *rule.Rule, settings string, update bool) (rule.KeptSet, error)
	// New returns an empty set to be saved at path, for a snapshot not
	// written yet.
	New(path string, rl *rule.Rule, settings string) (rule.KeptSet, error)
	// Save writes k, which Load with update or New returned, and the
	// snapshot at its path. A crash leaves on disk the set that was
	// opened or the one saved, never a mix.
	Save(k rule.KeptSet) error
	// Close releases k; without a Save, what is on disk is what was
	// opened.
	Close(k rule.KeptSet) error
}

// keptSettings are the options a kept set's features depend on; a run with
// other settings would compare different things.
func keptSettings(o *Options) string {
	s := fmt.Sprintf("method=%s profile=%s verify=%s shingle=%d sketch=%d", o.Method, o.Profile, o.Verify, o.Shingle, rule.SketchVersion)
	if o.Method == rule.MethodMinHash {
		s += fmt.Sprintf(" minhash=%d", rule.MinHashVersion)
	}
	return s
}

// loadKept loads the kept set of Options.Index. A missing snapshot is an
// empty set when UpdateIndex is set.
func (r *runner) loadKept() error {
	o := r.opt
	k, err := o.KeptFiles.Load(o.Index, r.rule, keptSettings(&o), o.UpdateIndex)
	if errors.Is(err, fs.ErrNotExist) {
		if !o.UpdateIndex {
			return fmt.Errorf("dedup: index %s: %w", o.Index, fs.ErrNotExist)
		}
		r.log().Info("index file absent: starting an empty index", "path", o.Index)
		k, err = o.KeptFiles.New(o.Index, r.rule, keptSettings(&o))
	}
	if err != nil {
		return err
	}
	r.kept = k
	return nil
}

// addKept adds the kept documents to the kept set in priority order (an id
// already stored is replaced, and moves last).
func (r *runner) addKept() error {
	k := r.kept
	return r.eachKept(func(id string, _ int, f rule.Features) error {
		k.Remove(id)
		if err := k.Add(id, f); err != nil {
			return fmt.Errorf("dedup: adding to index: %w", err)
		}
		return nil
	})
}

// eachKept calls fn with each kept document in priority order, stopping at
// the first error (or a failed read of the shingle sets).
func (r *runner) eachKept(fn func(id string, doc int, f rule.Features) error) error {
	order := r.priority()
	for p := range r.d.len() {
		i := p
		if order != nil {
			i = int(order[p])
		}
		if r.removed(i) {
			continue
		}
		if err := fn(r.id(i), i, r.feat(i)); err != nil {
			return err
		}
		if err := r.setError(); err != nil {
			return err
		}
	}
	return nil
}

// saveKept saves the kept set of Options.Index.
func (r *runner) saveKept() error {
	return r.opt.KeptFiles.Save(r.kept)
}
