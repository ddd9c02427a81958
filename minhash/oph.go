package minhash

import "math"

// One permutation hashing. A classic signature costs one multiplication per
// feature and permutation: 128 permutations over the ~150 shingles of a 1 KB
// document are ~19,000 of them, more than the rest of the document's
// processing. One permutation hashing (Li, Owen, Zhang, "One Permutation
// Hashing", NIPS 2012) hashes each feature once and splits the hash range
// into perms bins: position i of the signature is the minimum hash of the
// features that fall in bin i, so a signature costs one hash per feature plus
// one pass over the bins. Bins that no feature falls in (a set shorter than
// perms has many) are filled by optimal densification (Shrivastava, "Optimal
// Densification for Fast and Accurate Minwise Hashing", ICML 2017): an empty
// bin i takes the value of the first non-empty bin among j_1, j_2, ..., a
// sequence of bins drawn from a hash of (seed, i, attempt) that is the same
// for every set. For any two sets, position i then agrees with probability
// equal to their Jaccard similarity, as for classic MinHash, so Estimate and
// LSH banding work unchanged; positions borrowed from one bin are correlated,
// which widens the spread of estimates for sets much shorter than perms.

// NewDensified returns a Hasher of perms positions (0 means DefaultPerms)
// computed by one permutation hashing with optimal densification from seed.
// Its signatures are not those of New's Hasher with the same seed: the two
// must not be compared.
func NewDensified(perms int, seed uint64) *Hasher {
	if perms <= 0 {
		perms = DefaultPerms
	}
	state := seed ^ 0x6f70682d64656e73 // "oph-dens": another stream than New's
	return &Hasher{seed: seed, oph: true, perms: perms, ophSeed: splitmix(&state), ophProbe: splitmix(&state)}
}

// Densified reports whether the Hasher uses one permutation hashing.
func (h *Hasher) Densified() bool { return h.oph }

// signOPH is Sign for a densified Hasher.
func (h *Hasher) signOPH(dst Signature, set []uint64) Signature {
	n := h.perms
	if cap(dst) < n {
		dst = make(Signature, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = math.MaxUint64
	}
	// Position i holds the minimum over bin i of g = mix(x ^ seed); a bin is
	// the top 32 bits of g scaled to n. full marks the bins a feature fell in
	// (a value of MaxUint64 is a feature too).
	var small [16]uint64
	full := small[:]
	if words := (n + 63) / 64; words > len(small) {
		full = make([]uint64, words)
	}
	filled := 0
	for _, x := range set {
		g := mix(x ^ h.ophSeed)
		b := (g >> 32 * uint64(n)) >> 32
		if full[b/64]&(1<<(b%64)) == 0 {
			full[b/64] |= 1 << (b % 64)
			filled++
		}
		if g < dst[b] {
			dst[b] = g
		}
	}
	if filled == 0 || filled == n {
		return dst // the empty set: every position MaxUint64, as New's Hasher gives it
	}
	// Densify: an empty bin borrows from the first bin of its probe sequence
	// that a feature fell in. The sequence of bin i is the same for every set,
	// uniform draws, so it reaches a full bin after n/filled draws on average.
	for i := range uint64(n) {
		if full[i/64]&(1<<(i%64)) != 0 {
			continue
		}
		for attempt := uint64(1); ; attempt++ {
			j := (mix(h.ophProbe^i<<32^attempt) >> 32 * uint64(n)) >> 32
			if full[j/64]&(1<<(j%64)) != 0 {
				dst[i] = dst[j]
				break
			}
		}
	}
	return dst
}
