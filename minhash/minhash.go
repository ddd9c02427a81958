package minhash

import (
	"errors"
	"math"
)

// Errors returned by this package.
var (
	// ErrShape is returned when a signature's length does not fit the LSH's
	// bands × rows.
	ErrShape = errors.New("minhash: signature length does not match bands × rows")
)

// DefaultPerms is the number of permutations New uses when asked for 0.
const DefaultPerms = 128

// Signature is a MinHash signature: element i is the minimum of permutation i
// over the set.
type Signature []uint64

// Hasher computes signatures with a fixed family of permutations. It is
// immutable after New and safe for concurrent use.
type Hasher struct {
	seed uint64
	xor  []uint64 // s_i
	mul  []uint64 // a_i, odd

	// One permutation hashing (NewDensified, oph.go).
	oph      bool
	perms    int
	ophSeed  uint64 // mixed into every feature hash
	ophProbe uint64 // seeds the densification probes
}

// New returns a Hasher with perms permutations (0 means DefaultPerms) derived
// from seed. The same perms and seed give the same signatures everywhere.
func New(perms int, seed uint64) *Hasher {
	if perms <= 0 {
		perms = DefaultPerms
	}
	h := &Hasher{seed: seed, xor: make([]uint64, perms), mul: make([]uint64, perms)}
	state := seed
	for i := range perms {
		h.xor[i] = splitmix(&state)
		h.mul[i] = splitmix(&state) | 1
	}
	return h
}

// Perms returns the number of permutations, the length of every signature.
func (h *Hasher) Perms() int {
	if h.oph {
		return h.perms
	}
	return len(h.mul)
}

// Seed returns the seed the permutations were derived from.
func (h *Hasher) Seed() uint64 { return h.seed }

// Sign returns the signature of set, reusing dst's storage when it is large
// enough. set holds feature hashes; duplicates do not matter. The signature of
// the empty set is all math.MaxUint64, so two empty sets estimate as 1, as
// measure.Jaccard defines them.
func (h *Hasher) Sign(dst Signature, set []uint64) Signature {
	if h.oph {
		return h.signOPH(dst, set)
	}
	n := len(h.mul)
	if cap(dst) < n {
		dst = make(Signature, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = math.MaxUint64
	}
	xor, mul := h.xor[:n], h.mul[:n]
	for _, x := range set {
		g := mix(x)
		for i := range dst {
			if v := (g ^ xor[i]) * mul[i]; v < dst[i] {
				dst[i] = v
			}
		}
	}
	return dst
}

// Estimate returns the fraction of positions where a and b agree, an unbiased
// estimate of the Jaccard similarity of their sets when both come from the same
// Hasher. Signatures of different lengths are compared on their common prefix
// (valid when the seeds match); an empty comparison gives 0.
func Estimate(a, b Signature) float64 {
	n := min(len(a), len(b))
	if n == 0 {
		return 0
	}
	same := 0
	for i := range n {
		if a[i] == b[i] {
			same++
		}
	}
	return float64(same) / float64(n)
}

// splitmix advances a SplitMix64 state and returns the next output (Steele, Lea,
// Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
func splitmix(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	return mix(*state)
}

// mix is the SplitMix64 finaliser: a bijection on 64-bit values whose output
// bits each depend on every input bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
