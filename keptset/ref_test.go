package keptset_test

import (
	"fmt"

	"github.com/neardup/neardup/rule"
)

// refSet is the decision by its definition, which the set must give: every
// kept document in priority order, and a new document's matches the kept
// documents that rule.Rule.Duplicates accepts, found by testing every one
// of them (rule.Rule.Match's scan). No candidate keys, no prefilter, no
// fingerprint check: what the set skips must be what this scan rejects.
type refSet struct {
	rl   *rule.Rule
	docs []refDoc
	ids  map[string]int
}

type refDoc struct {
	id   string
	f    rule.Features
	live bool
}

func newRefSet(rl *rule.Rule) *refSet { return &refSet{rl: rl, ids: map[string]int{}} }

// matchAll returns f's matches in priority order, at most limit when
// limit > 0.
func (k *refSet) matchAll(f *rule.Features, limit int) []rule.KeptMatch {
	var out []rule.KeptMatch
	for i := range k.docs {
		d := &k.docs[i]
		if !d.live || !k.rl.Duplicates(&d.f, f) {
			continue
		}
		out = append(out, k.rl.KeptMatch(d.id, uint64(i), &d.f, f))
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// match returns f's first match in priority order.
func (k *refSet) match(f *rule.Features) (rule.KeptMatch, bool) {
	if ms := k.matchAll(f, 1); len(ms) > 0 {
		return ms[0], true
	}
	return rule.KeptMatch{}, false
}

// add adds id last in priority.
func (k *refSet) add(id string, f rule.Features) error {
	if _, ok := k.ids[id]; ok {
		return fmt.Errorf("id %q added twice", id)
	}
	k.ids[id] = len(k.docs)
	k.docs = append(k.docs, refDoc{id: id, f: f, live: true})
	return nil
}

// addIfNew adds id unless f duplicates a kept document, which it returns.
func (k *refSet) addIfNew(id string, f rule.Features) (rule.KeptMatch, bool, error) {
	if m, dup := k.match(&f); dup {
		return m, true, nil
	}
	return rule.KeptMatch{}, false, k.add(id, f)
}

// addFingerprints adds fingerprint-only documents, as an index snapshot's.
func (k *refSet) addFingerprints(ids []string, fps []uint64) error {
	for i, id := range ids {
		if err := k.add(id, rule.Features{FP: fps[i], FingerprintOnly: true}); err != nil {
			return err
		}
	}
	return nil
}

// remove removes id and reports whether it was there.
func (k *refSet) remove(id string) bool {
	i, ok := k.ids[id]
	if ok {
		k.docs[i].live = false
		delete(k.ids, id)
	}
	return ok
}

// len returns the number of documents, and of fingerprint-only ones.
func (k *refSet) len() (n, fpOnly int) {
	for _, d := range k.docs {
		if d.live {
			n++
			if d.f.FingerprintOnly {
				fpOnly++
			}
		}
	}
	return n, fpOnly
}
