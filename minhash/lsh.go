package minhash

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Probability returns the probability that two sets of Jaccard similarity s
// share at least one band: 1 - (1 - s^rows)^bands.
func Probability(s float64, bands, rows int) float64 {
	return 1 - math.Pow(1-math.Pow(s, float64(rows)), float64(bands))
}

// BandsRows returns the bands and rows (bands·rows ≤ perms; perms 0 means
// DefaultPerms) that minimise the false-positive area ∫₀ᵗ P(s) ds plus the
// false-negative area ∫ₜ¹ 1-P(s) ds, weighted equally, where P is Probability
// and t the threshold. This is datasketch's MinHashLSH._optimal_param (also used
// by text-dedup); the integrals are computed with Simpson's rule. A threshold
// outside (0, 1) is clamped into it.
func BandsRows(threshold float64, perms int) (bands, rows int) {
	return BandsRowsWeighted(threshold, perms, 0.5, 0.5)
}

// BandsRowsWeighted is BandsRows with the weights of the false-positive and
// false-negative areas given, as datasketch's weights=(fp, fn) parameter: a
// larger fnWeight buys recall with more candidates, which suits a pipeline that
// verifies every candidate exactly.
func BandsRowsWeighted(threshold float64, perms int, fpWeight, fnWeight float64) (bands, rows int) {
	if perms <= 0 {
		perms = DefaultPerms
	}
	t := min(max(threshold, 1e-6), 1-1e-6)
	best := math.Inf(1)
	for b := 1; b <= perms; b++ {
		for r := 1; r <= perms/b; r++ {
			fp := simpson(func(s float64) float64 { return Probability(s, b, r) }, 0, t)
			fn := simpson(func(s float64) float64 { return 1 - Probability(s, b, r) }, t, 1)
			if e := fpWeight*fp + fnWeight*fn; e < best {
				best, bands, rows = e, b, r
			}
		}
	}
	return bands, rows
}

// simpson integrates f over [a, b] with the composite Simpson rule.
func simpson(f func(float64) float64, a, b float64) float64 {
	const n = 64 // even; the integrands are smooth polynomials in s
	h := (b - a) / n
	sum := f(a) + f(b)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(a+float64(i)*h)
	}
	return sum * h / 3
}

// LSH is a banding index over signatures. Add signatures, then call Pairs. It
// is not safe for concurrent use.
type LSH struct {
	bands, rows int
	ids         []int
	keys        []uint64 // keys[i*bands+b]: band b of the i-th added signature
}

// NewLSH returns an empty index with the given bands and rows (each at least 1).
func NewLSH(bands, rows int) *LSH {
	return &LSH{bands: max(bands, 1), rows: max(rows, 1)}
}

// Bands returns the number of bands.
func (l *LSH) Bands() int { return l.bands }

// Rows returns the number of rows per band.
func (l *LSH) Rows() int { return l.rows }

// Len returns the number of signatures added.
func (l *LSH) Len() int { return len(l.ids) }

// Add adds the signature of the item id. The signature needs at least
// bands·rows values; only those are used. The signature is not retained.
func (l *LSH) Add(id int, sig Signature) error {
	if len(sig) < l.bands*l.rows {
		return fmt.Errorf("%w: %d values, want %d×%d", ErrShape, len(sig), l.bands, l.rows)
	}
	l.ids = append(l.ids, id)
	l.keys, _ = l.BandKeys(l.keys, sig)
	return nil
}

// BandKeys appends to dst the key of each band of sig, in band order: two
// signatures collide in band b exactly when their b-th keys are equal, as
// Pairs sees them. It is for callers that bucket signatures themselves (a
// distributed join keyed by band); the signature needs at least bands·rows
// values.
func (l *LSH) BandKeys(dst []uint64, sig Signature) ([]uint64, error) {
	if len(sig) < l.bands*l.rows {
		return dst, fmt.Errorf("%w: %d values, want %d×%d", ErrShape, len(sig), l.bands, l.rows)
	}
	for b := range l.bands {
		dst = append(dst, bandKey(sig[b*l.rows:(b+1)*l.rows]))
	}
	return dst, nil
}

// bandKey hashes one band's rows to a 64-bit key, so a band compares in one
// instruction whatever rows is.
func bandKey(rows []uint64) uint64 {
	k := uint64(len(rows))
	for _, v := range rows {
		k = mix(k*0x9e3779b97f4a7c15 ^ v)
	}
	return k
}

type entry struct {
	key uint64
	i   int32
}

// Pairs calls emit once for every pair of ids whose signatures agree on all
// rows of at least one band, with a < b when the ids were added in increasing
// order (in general a is the id added first). It stops at the first error emit
// returns and returns it. Each pair is reported in the first band where it
// collides: for a run of equal keys in band b, a pair is skipped when an
// earlier band's keys also agree.
func (l *LSH) Pairs(emit func(a, b int) error) error {
	n := len(l.ids)
	ent := make([]entry, n)
	for b := range l.bands {
		for i := range ent {
			ent[i] = entry{l.keys[i*l.bands+b], int32(i)}
		}
		slices.SortFunc(ent, func(x, y entry) int {
			if c := cmp.Compare(x.key, y.key); c != 0 {
				return c
			}
			return cmp.Compare(x.i, y.i)
		})
		for lo := 0; lo < n; {
			hi := lo + 1
			for hi < n && ent[hi].key == ent[lo].key {
				hi++
			}
			for x := lo; x < hi; x++ {
				i := int(ent[x].i)
				ki := l.keys[i*l.bands : i*l.bands+b]
				for y := x + 1; y < hi; y++ {
					j := int(ent[y].i)
					if earlier(ki, l.keys[j*l.bands:j*l.bands+b]) {
						continue
					}
					if err := emit(l.ids[i], l.ids[j]); err != nil {
						return err
					}
				}
			}
			lo = hi
		}
	}
	return nil
}

// earlier reports whether two signatures already collided in an earlier band.
func earlier(a, b []uint64) bool {
	for k := range a {
		if a[k] == b[k] {
			return true
		}
	}
	return false
}
