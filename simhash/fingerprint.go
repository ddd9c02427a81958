package simhash

import "math/bits"

// Fingerprint is a 64-bit SimHash fingerprint, the default width.
type Fingerprint uint64

// Fingerprint32 is a 32-bit SimHash fingerprint.
type Fingerprint32 uint32

// Fingerprint128 is a 128-bit SimHash fingerprint: Hi holds bits 127..64, Lo bits 63..0.
type Fingerprint128 struct{ Hi, Lo uint64 }

// Distance returns the Hamming distance between f and g: the number of bits in
// which they differ (the popcount of f XOR g).
func (f Fingerprint) Distance(g Fingerprint) int { return bits.OnesCount64(uint64(f ^ g)) }

// Similarity returns 1 - d/64, where d is the Hamming distance between f and g.
func (f Fingerprint) Similarity(g Fingerprint) float64 { return Similarity(f.Distance(g), 64) }

// Near reports whether f and g are near-duplicates: within k bits of each other.
func (f Fingerprint) Near(g Fingerprint, k int) bool { return f.Distance(g) <= k }

// Distance returns the Hamming distance between f and g.
func (f Fingerprint32) Distance(g Fingerprint32) int { return bits.OnesCount32(uint32(f ^ g)) }

// Similarity returns 1 - d/32, where d is the Hamming distance between f and g.
func (f Fingerprint32) Similarity(g Fingerprint32) float64 { return Similarity(f.Distance(g), 32) }

// Near reports whether f and g are within k bits of each other.
func (f Fingerprint32) Near(g Fingerprint32, k int) bool { return f.Distance(g) <= k }

// Distance returns the Hamming distance between f and g.
func (f Fingerprint128) Distance(g Fingerprint128) int {
	return bits.OnesCount64(f.Hi^g.Hi) + bits.OnesCount64(f.Lo^g.Lo)
}

// Similarity returns 1 - d/128, where d is the Hamming distance between f and g.
func (f Fingerprint128) Similarity(g Fingerprint128) float64 {
	return Similarity(f.Distance(g), 128)
}

// Near reports whether f and g are within k bits of each other.
func (f Fingerprint128) Near(g Fingerprint128, k int) bool { return f.Distance(g) <= k }

// Similarity turns a Hamming distance d between two f-bit fingerprints into a
// similarity in [0, 1]: 1 - d/f.
func Similarity(d, f int) float64 {
	if f <= 0 {
		return 0
	}
	return 1 - float64(d)/float64(f)
}

// Percent returns the similarity of a Hamming distance d between two f-bit
// fingerprints as a percentage rounded to two decimals, as seed 000 prints it:
// (1 - d/f) * 100.
func Percent(d, f int) float64 {
	p := Similarity(d, f) * 100
	return float64(int64(p*100+0.5)) / 100
}

// Distance returns the Hamming distance between two bit strings held in uint64s;
// it is Fingerprint.Distance for values that are not fingerprints.
func Distance(a, b uint64) int { return bits.OnesCount64(a ^ b) }
