package minhash

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// A densified signature agrees with another at each position with
// probability equal to the Jaccard similarity of the sets, for sets much
// longer than the signature (few empty bins), about as long, and much shorter
// (most bins borrowed): the mean estimate over many seeds is J within four
// standard errors. For long sets the spread is the binomial one of
// independent permutations (within 30%, as TestEstimateAccuracy asks of New).
func TestDensifiedUnbiased(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const perms, trials = 128, 400
	for _, n := range []int{20, 128, 2000} {
		for _, want := range []float64{0.2, 0.5, 0.8, 0.95} {
			mean, variance, exact := estimateErrors(r, func(seed uint64) *Hasher { return NewDensified(perms, seed) }, n, want, trials)
			theory := exact * (1 - exact) / perms
			// Borrowed positions repeat a bin: for short sets the spread is that
			// of about n independent positions, not perms.
			spread := exact * (1 - exact) / float64(min(n, perms))
			if se := math.Sqrt(spread / trials); math.Abs(mean) > 4*se {
				t.Errorf("n=%d J=%.2f: mean error %.4f, want |error| <= %.4f", n, exact, mean, 4*se)
			}
			if n > 10*perms && (variance < 0.7*theory || variance > 1.3*theory) {
				t.Errorf("n=%d J=%.2f: variance %.6f, want about %.6f", n, exact, variance, theory)
			}
		}
	}
}

// Signatures depend on the set only (order and repeats do not matter), on the
// seed, and not on anything else: the golden values pin them across releases,
// since stores keep band keys made from them.
func TestDensifiedProperties(t *testing.T) {
	h := NewDensified(0, 7)
	if h.Perms() != DefaultPerms || !h.Densified() || New(0, 7).Densified() {
		t.Fatalf("Perms %d Densified %v", h.Perms(), h.Densified())
	}
	a := h.Sign(nil, []uint64{1, 2, 3})
	b := h.Sign(nil, []uint64{3, 2, 1, 1})
	if !slices.Equal(a, b) {
		t.Error("order or repeats changed the signature")
	}
	if slices.Equal(a, NewDensified(0, 8).Sign(nil, []uint64{1, 2, 3})) {
		t.Error("another seed gave the same signature")
	}
	for _, v := range a {
		if v == math.MaxUint64 {
			t.Fatal("a position of a non-empty set's signature is empty")
		}
	}
	empty := h.Sign(nil, nil)
	for _, v := range empty {
		if v != math.MaxUint64 {
			t.Fatal("the empty set's signature is not all MaxUint64")
		}
	}
	set := make([]uint64, 500)
	for i := range set {
		set[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	for _, tc := range []struct {
		set  []uint64
		want Signature
	}{
		{set, Signature{0xe57d89314c6b9e, 0x101f4331565c57de, 0x2001c892b6c8f80c, 0x30355d133853634a, 0x4050239f44477d9e,
			0x507168ea6415990d, 0x6073b5d81ddb2d28, 0x711c8e1bdfbcf660, 0x809d9771ea96430d, 0x9011826329decd4f,
			0xa03bcac49a78eab7, 0xb02de84198d469aa, 0xc029134c37663377, 0xd0671cac3fc470b4, 0xe07379762e4cff5c,
			0xf018102840693800}},
		// Five features in 16 bins: the densification's probes are pinned too.
		{set[:5], Signature{4502232740367924808, 16437932360992420061, 4502232740367924808, 4502232740367924808,
			15725170628542402737, 11819246400964699513, 16437932360992420061, 8396538576685608165, 8396538576685608165,
			8396538576685608165, 11819246400964699513, 4502232740367924808, 11819246400964699513, 15725170628542402737,
			16437932360992420061, 16437932360992420061}},
	} {
		if got := NewDensified(16, 1).Sign(nil, tc.set); !slices.Equal(got, tc.want) {
			t.Errorf("golden signature of %d features changed:\n got %#v\nwant %#v", len(tc.set), got, tc.want)
		}
	}
}
