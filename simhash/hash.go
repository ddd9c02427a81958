package simhash

import "github.com/zeebo/xxh3"

// Feature hashes. All are fixed functions of the bytes (no per-process seed), so
// fingerprints built from them are the same on every machine and in every
// release; golden vectors in hash_test.go pin them.

// Hash64 returns the 64-bit XXH3 hash (seed 0) of b, the default feature hash.
func Hash64(b []byte) uint64 { return xxh3.Hash(b) }

// HashString64 is Hash64 of a string, without copying it.
func HashString64(s string) uint64 { return xxh3.HashString(s) }

// Hash128 returns the 128-bit XXH3 hash (seed 0) of b, for 128-bit fingerprints.
func Hash128(b []byte) (hi, lo uint64) {
	h := xxh3.Hash128(b)
	return h.Hi, h.Lo
}

// HashString128 is Hash128 of a string, without copying it.
func HashString128(s string) (hi, lo uint64) {
	h := xxh3.HashString128(s)
	return h.Hi, h.Lo
}

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// FNV1a64 returns the 64-bit FNV-1a hash of b, the same as hash/fnv's New64a,
// without an allocation. Some existing fingerprint stores use it.
func FNV1a64(b []byte) uint64 {
	h := uint64(fnvOffset64)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	return h
}

// FNV1aString64 is FNV1a64 of a string.
func FNV1aString64(s string) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// Mix64 combines two 64-bit hashes into one, for features built from other
// features (word shingles hash their words' hashes rather than their text). It
// is not symmetric: Mix64(a, b) != Mix64(b, a) in general.
func Mix64(a, b uint64) uint64 {
	// The multiply-xorshift finaliser of SplitMix64 (Steele, Lea, Flood 2014)
	// applied to a rotated combination: cheap and well mixed.
	x := a*0x9e3779b97f4a7c15 ^ (b<<31 | b>>33)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
