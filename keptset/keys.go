package keptset

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
)

// The candidate keys of each method (doc.go, "Methods").
//
// MethodMinHash: Keys (the band keys, or the token-sequence hash of a
// document without bands).
//
// MethodSimHash: the token-sequence hash (exact copies), and under Jaccard
// verification the hashes of the shingle set's prefix: the first
// |A| - ⌈t·|A|⌉ + 1 hashes of the sorted set. Two sets with J(A, B) >= t
// share one of them (the prefix filter of Chaudhuri, Ganti and Kaushik,
// 2006), so the keys find every document the rule can accept, which
// rule.Rule.Duplicates then decides. A document whose set cannot be keyed so
// (no verification, a set sampled at a modulus, no shingle) is wide: found
// by fingerprint distance at rule.Rule.QueryK instead (Set.wide).

// Mixing constants of the key kinds, so that a token-sequence hash and a
// shingle hash never make the same key by design.
const (
	exactMix  = 1 << 32
	prefixMix = 2 << 32
)

// exactKey is the key of a document's token-sequence hash.
func exactKey(f *rule.Features) uint64 { return simhash.Mix64(f.Exact, exactMix) }

// keysOf appends to dst the candidate keys of f under the set's rule; under
// MethodSimHash the first is the exact key (none for a fingerprint-only
// document), the others the prefix's.
func (s *Set) keysOf(dst []uint64, f *rule.Features) []uint64 {
	if !s.simhash {
		return Keys(dst, f, s.nb)
	}
	if f.FingerprintOnly {
		return dst
	}
	dst = append(dst, exactKey(f))
	if s.byPrefix(f) {
		h := f.Sketch.Hashes()
		for _, x := range h[:prefixLen(len(h), s.rule.Threshold())] {
			dst = append(dst, simhash.Mix64(uint64(x), prefixMix))
		}
	}
	return dst
}

// byPrefix reports whether f's near-duplicates are found by the prefix of
// its shingle set: MethodSimHash with Jaccard verification, and an exact
// (not sampled) set that is not empty.
func (s *Set) byPrefix(f *rule.Features) bool {
	return s.prefix && !f.FingerprintOnly && !f.Sketch.Sampled() && len(f.Sketch.Hashes()) > 0
}

// wideDoc reports whether f is found by fingerprint distance rather than by
// its keys: MethodSimHash, not keyed by its prefix, and not exact-only
// (rule.Rule.ExactOnly: such a document matches its exact copies alone,
// which its exact key finds).
func (s *Set) wideDoc(f *rule.Features) bool {
	return s.simhash && !s.byPrefix(f) && !s.rule.ExactOnly(f)
}

// prefixLen is the length of the prefix of an exact set of n hashes at
// threshold t: n - ⌈t·n⌉ + 1, rounded up (a longer prefix only adds
// candidates) so that floating point cannot shorten it below the bound.
func prefixLen(n int, t float64) int {
	return min(n, max(1, n-int(math.Ceil(t*float64(n)-1e-6))+1))
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
