package rule

import "math/bits"

// KeptMatch is a kept document that a new document duplicates: the answer of
// a kept set's match (KeptSet; keptset.Set; the Redis store).
type KeptMatch struct {
	ID       string
	Seq      uint64  // its position in the order of addition
	Distance int     // Hamming distance of the fingerprints
	Score    float64 // the verification measure (Jaccard), NaN without verification or when Unverified
	Exact    bool    // same token sequence
	// Unverified is set when either document is fingerprint-only: the match
	// rests on the fingerprint distance alone (Rule.Verified).
	Unverified bool
}

// KeptMatch describes the match of doc with the kept document kept, named id
// at priority seq: what every kept set and store answers once the rule has
// accepted the pair (Duplicates), so that they all describe it alike.
func (r *Rule) KeptMatch(id string, seq uint64, kept, doc *Features) KeptMatch {
	verified := r.Verified(kept, doc)
	return KeptMatch{ID: id, Seq: seq, Distance: bits.OnesCount64(kept.FP ^ doc.FP), Score: r.Score(kept, doc),
		Exact: verified && kept.Exact == doc.Exact, Unverified: !verified}
}

// A KeptSet is a set of kept documents, in priority order, with their
// features, that a document is matched against under a rule: the kept set
// of earlier runs that the batch's incremental mode (dedup.Options.Index)
// matches a batch against and, with dedup.Options.UpdateIndex, adds the
// batch's kept documents to. keptfiles.Set is one. dedup.Run calls Match from
// several goroutines at once, and the other methods from one at a time. It
// is declared here, beside the match it answers, so that a kept set can
// implement it (and dedup.KeptFiles, which hands one over) without
// importing the batch runner.
type KeptSet interface {
	// Len returns the number of documents in the set.
	Len() int
	// Contains reports whether id is in the set.
	Contains(id string) bool
	// Get returns the features of id.
	Get(id string) (Features, bool)
	// Match returns the first document of the set, in priority order, that
	// f duplicates under the set's rule.
	Match(f *Features) (KeptMatch, bool, error)
	// Add adds id, last in priority; an id in the set is an error.
	Add(id string, f Features) error
	// Remove removes id and reports whether it was there.
	Remove(id string) bool
}
