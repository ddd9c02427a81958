// Package minhash estimates the Jaccard similarity of sets of 64-bit feature
// hashes with MinHash signatures (Broder, "On the resemblance and containment of
// documents", 1997) and finds candidate pairs with locality-sensitive hashing by
// banding (Leskovec, Rajaraman, Ullman, "Mining of Massive Datasets", chapter 3.4).
//
//	h := minhash.New(128, 1)                  // 128 permutations, seed 1
//	a := h.Sign(nil, setA)                    // setA: feature hashes, e.g. features.ShingleHashes
//	b := h.Sign(nil, setB)
//	j := minhash.Estimate(a, b)               // ≈ |A∩B| / |A∪B|
//
//	bands, rows := minhash.BandsRows(0.8, 128)
//	l := minhash.NewLSH(bands, rows)
//	l.Add(0, a)
//	l.Add(1, b)
//	err := l.Pairs(func(x, y int) error { ...; return nil })
//
// # Permutations
//
// A signature holds, for each of perms hash functions, the minimum of that
// function over the set. The functions are a fixed family, the same in every
// process and release: each feature hash x is first mixed once with the
// SplitMix64 finaliser (Steele, Lea, Flood 2014), g = mix(x), and permutation i
// is then the bijection g ↦ (g XOR s_i) · a_i mod 2^64, with s_i and a_i (odd)
// drawn from a SplitMix64 stream started at the seed. The first mix makes the
// input well distributed whatever the caller's hash is; the per-permutation
// xor-multiply costs one multiplication per feature and permutation, and the
// tests check that the estimates have the binomial variance J(1-J)/perms that
// independent min-wise permutations would give. Permutation i does not depend on
// perms, so a 64-permutation signature is the prefix of the 128-permutation one
// with the same seed.
//
// # Banding
//
// LSH cuts a signature into bands of rows values; two sets become a candidate
// pair when all rows of at least one band agree, which happens with probability
// 1-(1-s^rows)^bands for sets of Jaccard similarity s (Probability). BandsRows
// picks bands and rows for a threshold the way datasketch's
// MinHashLSH._optimal_param and text-dedup do: among all bands·rows ≤ perms, the
// pair minimising the area under the S-curve below the threshold (false
// positives) plus the area above it that the curve misses (false negatives),
// each weighted ½.
//
// LSH hashes each band of each signature to a 64-bit key. Pairs sorts the
// (key, id) entries of one band at a time, so memory is one key per band and
// signature plus one band's entries; each run of equal keys gives its pairs, and
// a pair is reported only in the first band where it collides (earlier bands'
// keys are compared), so every pair comes out once without a set of seen pairs.
package minhash
