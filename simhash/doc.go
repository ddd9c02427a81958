// Package simhash builds and compares SimHash fingerprints (Charikar, "Similarity
// Estimation Techniques from Rounding Algorithms", STOC 2002), as Manku, Jain and
// Das Sarma use them to detect near-duplicate web pages ("Detecting
// Near-Duplicates for Web Crawling", WWW 2007, section 2).
//
// The package knows nothing about text: it turns weighted feature hashes into a
// fingerprint and compares fingerprints. Package features turns text into
// weighted features.
//
//	var b simhash.Builder // zero value: 64 bits
//	for _, f := range feats {
//		b.Add(simhash.Hash64([]byte(f.Text)), f.Weight)
//	}
//	fp := b.Sum64()
//	if fp.Near(other, 3) { ... }
//
// # Building a fingerprint
//
// Every feature is hashed to f bits. For each bit position i, the builder adds
// the feature's weight when bit i of the hash is 1 and subtracts it when bit i
// is 0. Bit i of the fingerprint is 1 when the sum at position i is strictly
// positive, and 0 when it is negative or zero (the tie rule: zero gives 0, as in
// seed 002 and in the Python simhash package). Bit i of the fingerprint always
// corresponds to bit i of the feature hashes (bit 0 is the least significant),
// and every text form writes the most significant bit first, so the six-bit
// string "101011" is the value 0b101011.
//
// # Stability
//
// Fingerprints are stored for years, so everything here is fixed: the feature
// hashes are XXH3 (64 and 128 bits, seed 0) and FNV-1a 64, never a per-process
// seeded hash such as hash/maphash, and golden vectors in the tests pin them.
//
// # Widths
//
// Fingerprint is 64 bits, the default and the width package index works on;
// Fingerprint32 and Fingerprint128 are the other two widths. A 32-bit
// fingerprint uses the low 32 bits of the 64-bit feature hash; a 128-bit one uses
// the 128-bit hash. Builder also accepts any width from 1 to 128 bits, which the
// worked examples in the tests use.
package simhash
