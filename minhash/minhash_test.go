package minhash

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sets returns two random sets of size n sharing about j of their union.
func sets(r *rand.Rand, n int, j float64) (a, b []uint64, exact float64) {
	// |A∩B| = c, |A|=|B|=n, J = c/(2n-c) -> c = 2nJ/(1+J).
	c := int(math.Round(2 * float64(n) * j / (1 + j)))
	for range c {
		x := r.Uint64()
		a = append(a, x)
		b = append(b, x)
	}
	for range n - c {
		a = append(a, r.Uint64())
		b = append(b, r.Uint64())
	}
	return a, b, float64(c) / float64(2*n-c)
}

// estimateErrors signs trials pairs of sets of n elements at Jaccard about
// want, each trial with the Hasher of its own seed, and returns the mean and
// the variance of Estimate's error and the pairs' exact Jaccard.
func estimateErrors(r *rand.Rand, hasher func(seed uint64) *Hasher, n int, want float64, trials int) (mean, variance, exact float64) {
	var sum, sq float64
	for trial := range trials {
		h := hasher(uint64(trial))
		a, b, e := sets(r, n, want)
		exact = e
		d := Estimate(h.Sign(nil, a), h.Sign(nil, b)) - e
		sum += d
		sq += d * d
	}
	mean = sum / float64(trials)
	return mean, sq/float64(trials) - mean*mean, exact
}

func TestEstimateAccuracy(t *testing.T) {
	// With independent min-wise permutations the estimate is Binomial(perms, J)/perms:
	// mean J, variance J(1-J)/perms. Check the mean within 4 standard errors of the
	// mean over trials and the variance within 30%.
	r := rand.New(rand.NewPCG(1, 2))
	const perms, trials = 128, 300
	for _, want := range []float64{0.1, 0.5, 0.8, 0.95} {
		mean, variance, exact := estimateErrors(r, func(seed uint64) *Hasher { return New(perms, seed) }, 200, want, trials)
		theory := exact * (1 - exact) / perms
		if se := math.Sqrt(theory / trials); math.Abs(mean) > 4*se {
			t.Errorf("J=%.2f: mean error %.4f, want |error| <= %.4f", exact, mean, 4*se)
		}
		if variance < 0.7*theory || variance > 1.3*theory {
			t.Errorf("J=%.2f: variance %.6f, want about %.6f", exact, variance, theory)
		}
	}
}

func TestSignatureProperties(t *testing.T) {
	h := New(0, 7)
	if got := h.Perms(); got != DefaultPerms {
		t.Fatalf("Perms() = %d, want %d", got, DefaultPerms)
	}
	a := h.Sign(nil, []uint64{1, 2, 3})
	b := h.Sign(nil, []uint64{3, 2, 1, 1})
	if got := Estimate(a, b); got != 1 {
		t.Errorf("order and duplicates: Estimate = %v, want 1", got)
	}
	e1, e2 := h.Sign(nil, nil), h.Sign(nil, []uint64{})
	if got := Estimate(e1, e2); got != 1 {
		t.Errorf("two empty sets: Estimate = %v, want 1", got)
	}
	short := New(64, 7).Sign(nil, []uint64{1, 2, 3})
	for i := range short {
		if short[i] != a[i] {
			t.Fatalf("64-permutation signature is not the prefix of the 128 one at %d", i)
		}
	}
	if got := Estimate(nil, a); got != 0 {
		t.Errorf("Estimate(nil, a) = %v, want 0", got)
	}
	// Golden values pin the permutation family across releases.
	if got, want := New(4, 1).Sign(nil, []uint64{1, 2, 3}), golden; !equal(got, want) {
		t.Errorf("golden signature = %#v, want %#v", got, want)
	}
}

var golden = Signature{0x27ec4e47d6e80d7c, 0x16827ece316d481c, 0xa404a9e0934f965c, 0x7d4653bc9b1673d9}

func equal(a, b Signature) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBandsRows(t *testing.T) {
	tests := []struct {
		threshold float64
		perms     int
	}{{0.5, 128}, {0.7, 128}, {0.8, 128}, {0.9, 256}, {0.8, 64}}
	for _, tt := range tests {
		b, r := BandsRows(tt.threshold, tt.perms)
		if b < 1 || r < 1 || b*r > tt.perms {
			t.Errorf("BandsRows(%v, %d) = %d×%d, want 1 <= b·r <= perms", tt.threshold, tt.perms, b, r)
			continue
		}
		// The S-curve's steepest point (1/b)^(1/r) should sit near the threshold.
		mid := math.Pow(1/float64(b), 1/float64(r))
		if math.Abs(mid-tt.threshold) > 0.12 {
			t.Errorf("BandsRows(%v, %d) = %d×%d: S-curve midpoint %.3f, want near %v", tt.threshold, tt.perms, b, r, mid, tt.threshold)
		}
		if p := Probability(tt.threshold+0.1, b, r); tt.threshold+0.1 < 1 && p < 0.8 {
			t.Errorf("BandsRows(%v, %d) = %d×%d: P(t+0.1) = %.3f, want >= 0.8", tt.threshold, tt.perms, b, r, p)
		}
	}
}

func TestLSHFindsSimilarPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h := New(128, 1)
	b, rows := BandsRows(0.7, 128) // P(0.9) = 0.999
	l := NewLSH(b, rows)
	// 100 pairs at J≈0.9 (ids 2i, 2i+1) and unrelated sets; every similar pair
	// should be found (miss probability per pair is tiny), and no pair twice.
	const pairs = 100
	for i := range pairs {
		x, y, _ := sets(r, 100, 0.9)
		if err := l.Add(2*i, h.Sign(nil, x)); err != nil {
			t.Fatal(err)
		}
		if err := l.Add(2*i+1, h.Sign(nil, y)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[[2]int]int{}
	if err := l.Pairs(func(a, b int) error {
		seen[[2]int{a, b}]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	found := 0
	for p, c := range seen {
		if c != 1 {
			t.Errorf("pair %v reported %d times, want once", p, c)
		}
		if p[0] >= p[1] {
			t.Errorf("pair %v not ordered", p)
		}
		if p[0]%2 == 0 && p[1] == p[0]+1 {
			found++
		}
	}
	if found < pairs-1 {
		t.Errorf("found %d of %d similar pairs", found, pairs)
	}
	if extra := len(seen) - found; extra > 5 {
		t.Errorf("%d unrelated pairs reported, want few", extra)
	}
}

func TestLSHDuplicatesOnce(t *testing.T) {
	h := New(16, 1)
	l := NewLSH(4, 4)
	sig := h.Sign(nil, []uint64{1, 2, 3})
	for i := range 5 {
		l.Add(i, sig)
	}
	n := 0
	l.Pairs(func(a, b int) error { n++; return nil })
	if n != 10 {
		t.Errorf("5 identical signatures gave %d pairs, want 10", n)
	}
	if err := l.Add(9, sig[:3]); err == nil {
		t.Error("short signature accepted, want ErrShape")
	}
}

func TestBandsRowsWeighted(t *testing.T) {
	b1, r1 := BandsRows(0.8, 128)
	b2, r2 := BandsRowsWeighted(0.8, 128, 0.1, 0.9)
	if p1, p2 := Probability(0.8, b1, r1), Probability(0.8, b2, r2); p2 <= p1 {
		t.Errorf("recall-weighted %d×%d gives P(0.8)=%.3f, want more than balanced %d×%d's %.3f", b2, r2, p2, b1, r1, p1)
	}
}

// TestBandKeysMatchPairs checks that bucketing signatures by BandKeys finds
// the pairs Pairs reports: the distributed pipeline relies on it.
func TestBandKeysMatchPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h := New(32, 1)
	l := NewLSH(8, 4)
	var keys [][]uint64
	base, _, _ := sets(r, 40, 0)
	for i := range 30 {
		set := append([]uint64(nil), base...)
		for range i % 7 {
			set[r.IntN(len(set))] = r.Uint64()
		}
		sig := h.Sign(nil, set)
		if err := l.Add(i, sig); err != nil {
			t.Fatal(err)
		}
		k, err := l.BandKeys(nil, sig)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	want := map[[2]int]bool{}
	l.Pairs(func(a, b int) error { want[[2]int{a, b}] = true; return nil })
	got := map[[2]int]bool{}
	for a := range keys {
		for b := a + 1; b < len(keys); b++ {
			for band := range keys[a] {
				if keys[a][band] == keys[b][band] {
					got[[2]int{a, b}] = true
				}
			}
		}
	}
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("BandKeys buckets give %d pairs, Pairs %d (want equal, > 0)", len(got), len(want))
	}
	for p := range want {
		if !got[p] {
			t.Errorf("pair %v from Pairs not found by BandKeys", p)
		}
	}
	if _, err := l.BandKeys(nil, keys[0][:3]); err == nil {
		t.Error("short signature accepted, want ErrShape")
	}
}
