package minhash

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkSign(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{100, 1000, 10000} {
		set := make([]uint64, n)
		for i := range set {
			set[i] = r.Uint64()
		}
		b.Run(fmt.Sprintf("features=%d", n), func(b *testing.B) {
			h := New(128, 1)
			var sig Signature
			b.ReportAllocs()
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				sig = h.Sign(sig, set)
			}
		})
	}
}

func BenchmarkLSHPairs(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	h := New(128, 1)
	for _, n := range []int{1000, 10000, 100000} {
		sigs := make([]Signature, n)
		for i := range sigs {
			set := make([]uint64, 20)
			for j := range set {
				set[j] = r.Uint64()
			}
			sigs[i] = h.Sign(nil, set)
		}
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l := NewLSH(32, 4)
				for i, s := range sigs {
					l.Add(i, s)
				}
				l.Pairs(func(a, b int) error { return nil })
			}
		})
	}
}

// BenchmarkSignBaseline is the obvious alternative the permutation family is
// measured against: a full SplitMix64 finaliser of x XOR seed_i for every
// permutation (three multiplications instead of one).
func BenchmarkSignBaseline(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	set := make([]uint64, 1000)
	for i := range set {
		set[i] = r.Uint64()
	}
	h := New(128, 1)
	sig := make(Signature, 128)
	b.ReportAllocs()
	b.SetBytes(int64(8 * len(set)))
	for b.Loop() {
		for i := range sig {
			sig[i] = ^uint64(0)
		}
		for _, x := range set {
			for i := range sig {
				if v := mix(x ^ h.xor[i]); v < sig[i] {
					sig[i] = v
				}
			}
		}
	}
}

// BenchmarkSignDensified is BenchmarkSign with one permutation hashing: one
// hash per feature instead of one per feature and permutation.
func BenchmarkSignDensified(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("features=%d", n), func(b *testing.B) {
			h := NewDensified(DefaultPerms, 1)
			set := make([]uint64, n)
			for i := range set {
				set[i] = uint64(i) * 0x9e3779b97f4a7c15
			}
			var sig Signature
			b.SetBytes(int64(8 * n))
			b.ReportAllocs()
			for b.Loop() {
				sig = h.Sign(sig, set)
			}
		})
	}
}
