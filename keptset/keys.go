package keptset

import (
	"encoding/binary"
	"fmt"

	"github.com/neardup/neardup/rule"
)

// The candidate keys of each method are the rule's (rule.Rule.CandidateKeys:
// the band keys under MethodMinHash; under MethodSimHash the token-sequence
// hash and the hashes of the shingle set's prefix), which the Redis index
// keys documents by too. A document whose set cannot be keyed by its prefix
// (no verification, a set sampled at a modulus, no shingle) is wide: found
// by fingerprint distance at rule.Rule.QueryK instead (Set.wide).

// wideDoc reports whether f is found by fingerprint distance rather than by
// its keys: MethodSimHash, not keyed by its prefix, and not exact-only
// (rule.Rule.ExactOnly: such a document matches its exact copies alone,
// which its exact key finds).
func (s *Set) wideDoc(f *rule.Features) bool {
	return s.simhash && !s.rule.KeyedByPrefix(f) && !s.rule.ExactOnly(f)
}

// recordedSettings is what the parts and the manifest record as the
// settings their keys were made with: the caller's, and under MethodSimHash
// the key scheme and the threshold the prefixes were cut at (the caller's
// settings name what the records depend on, which the threshold is not).
// MethodMinHash records the caller's alone, as before there were other
// schemes, so that its parts keep working.
func recordedSettings(rl *rule.Rule, settings string) string {
	if rl.Method() != rule.MethodSimHash {
		return settings
	}
	return fmt.Sprintf("%s keys=simhash-exact-prefix-1 verify=%s threshold=%g", settings, rl.Verification(), rl.Threshold())
}

// Ids of the wide index (Set.wide): a kind byte, then the stored
// document's seq or the fingerprint-only document's position, big-endian.
const (
	wideStored = 'S'
	wideFPOnly = 'F'
)

func storedWideID(seq uint64) string {
	var b [9]byte
	b[0] = wideStored
	binary.BigEndian.PutUint64(b[1:], seq)
	return string(b[:])
}

func fpOnlyWideID(pos uint32) string {
	var b [5]byte
	b[0] = wideFPOnly
	binary.BigEndian.PutUint32(b[1:], pos)
	return string(b[:])
}

// parseWideID returns the kind and number of a wide index id.
func parseWideID(id string) (kind byte, n uint64) {
	switch {
	case len(id) == 9 && id[0] == wideStored:
		return wideStored, binary.BigEndian.Uint64([]byte(id[1:]))
	case len(id) == 5 && id[0] == wideFPOnly:
		return wideFPOnly, uint64(binary.BigEndian.Uint32([]byte(id[1:])))
	}
	return 0, 0
}
