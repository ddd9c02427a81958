package keptset

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/neardup/neardup/rule"
)

// FingerprintDocs are documents known by their fingerprints alone (the ids
// and fingerprints of an index snapshot): IDs[i] has fingerprint FPs[i].
type FingerprintDocs struct {
	IDs []string
	FPs []uint64
}

// fpOnly holds a set's fingerprint-only documents (Options.FingerprintOnly)
// by position, their priority, in pointer-free columns: fingerprints, ids
// end to end, and the positions sorted by id for lookups by id. They are
// found through the set's wide index (Set.wide) and decided in memory: the
// rule needs nothing of them but their fingerprints.
type fpOnly struct {
	fps   []uint64
	ids   []byte
	idEnd []uint64 // by position: the end of its id in ids
	byID  []uint32 // positions, ascending by id
	dead  []uint64 // bitmap of the removed positions
	live  int
}

// newFPOnly returns the columns of d; an id given twice is an error.
func newFPOnly(d FingerprintDocs) (fpOnly, error) {
	if len(d.IDs) != len(d.FPs) {
		return fpOnly{}, fmt.Errorf("keptset: %d fingerprint-only ids, %d fingerprints", len(d.IDs), len(d.FPs))
	}
	if len(d.IDs) >= 1<<32 {
		return fpOnly{}, fmt.Errorf("keptset: %d fingerprint-only documents, more than 2^32", len(d.IDs))
	}
	o := fpOnly{fps: slices.Clone(d.FPs), idEnd: make([]uint64, len(d.IDs)), byID: make([]uint32, len(d.IDs)),
		dead: make([]uint64, (len(d.IDs)+63)/64), live: len(d.IDs)}
	n := 0
	for _, id := range d.IDs {
		n += len(id)
	}
	o.ids = make([]byte, 0, n)
	for i, id := range d.IDs {
		o.ids = append(o.ids, id...)
		o.idEnd[i] = uint64(len(o.ids))
		o.byID[i] = uint32(i)
	}
	slices.SortFunc(o.byID, func(a, b uint32) int { return bytes.Compare(o.idBytes(a), o.idBytes(b)) })
	for i := 1; i < len(o.byID); i++ {
		if bytes.Equal(o.idBytes(o.byID[i-1]), o.idBytes(o.byID[i])) {
			return fpOnly{}, fmt.Errorf("keptset: fingerprint-only id %q given twice", o.idBytes(o.byID[i]))
		}
	}
	return o, nil
}

func (o *fpOnly) idBytes(pos uint32) []byte {
	start := uint64(0)
	if pos > 0 {
		start = o.idEnd[pos-1]
	}
	return o.ids[start:o.idEnd[pos]]
}

// id returns the id of position pos.
func (o *fpOnly) id(pos uint32) string { return string(o.idBytes(pos)) }

// has reports whether pos holds a document not removed.
func (o *fpOnly) has(pos uint32) bool {
	return int(pos) < len(o.fps) && o.dead[pos/64]&(1<<(pos%64)) == 0
}

// find returns the position of the live document id.
func (o *fpOnly) find(id string) (uint32, bool) {
	if len(o.byID) == 0 {
		return 0, false
	}
	key := []byte(id)
	i, found := slices.BinarySearchFunc(o.byID, key, func(pos uint32, key []byte) int {
		return bytes.Compare(o.idBytes(pos), key)
	})
	if !found || !o.has(o.byID[i]) {
		return 0, false
	}
	return o.byID[i], true
}

// A fpoCand is a fingerprint-only candidate of a match.
type fpoCand struct {
	pos uint32
	fp  uint64
	id  string
}

// FingerprintOnly returns the fingerprint of the fingerprint-only document
// id (Options.FingerprintOnly); ok is false when the set holds none (never,
// or removed).
func (s *Set) FingerprintOnly(id string) (fp uint64, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pos, ok := s.fpo.find(id)
	if !ok {
		return 0, false
	}
	return s.fpo.fps[pos], true
}

// RemoveFingerprintOnly removes the fingerprint-only document id, reporting
// whether it was in the set. The set keeps no record of it: the caller
// records the removal where the documents come from (the service, in its
// store), and gives the set the documents without it at the next Open.
func (s *Set) RemoveFingerprintOnly(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, ErrClosed
	}
	pos, ok := s.fpo.find(id)
	if !ok {
		return false, nil
	}
	s.fpo.dead[pos/64] |= 1 << (pos % 64)
	s.fpo.live--
	s.live--
	return true, s.wide.Remove(fpOnlyWideID(pos))
}

// FingerprintOnlyLen returns the number of fingerprint-only documents in
// the set (counted in Len too).
func (s *Set) FingerprintOnlyLen() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fpo.live
}

// errFingerprintOnly: fingerprint-only documents under MethodMinHash.
var errFingerprintOnly = fmt.Errorf("%w: fingerprint-only documents need method %s (%s has no fingerprints)",
	rule.ErrOptions, rule.MethodSimHash, rule.MethodMinHash)
