package simhash

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkBuilderAdd measures adding one feature; the baseline is the
// textbook loop of seed 002 over all 64 bits with +w/-w.
func BenchmarkBuilderAdd(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	hs := make([]uint64, 1024)
	for i := range hs {
		hs[i] = r.Uint64()
	}
	b.Run("builder", func(b *testing.B) {
		var bl Builder
		for i := 0; i < b.N; i++ {
			bl.Add(hs[i&1023], 1)
		}
		_ = bl.Sum64()
	})
	b.Run("baseline-signed-loop", func(b *testing.B) {
		var v [64]float64
		for i := 0; i < b.N; i++ {
			h := hs[i&1023]
			for j := 0; j < 64; j++ {
				if h>>uint(j)&1 == 1 {
					v[j]++
				} else {
					v[j]--
				}
			}
		}
		_ = v
	})
}

func BenchmarkDistance(b *testing.B) {
	x, y := Fingerprint(0x0123456789abcdef), Fingerprint(0xfedcba9876543210)
	s := 0
	for i := 0; i < b.N; i++ {
		s += x.Distance(y + Fingerprint(i))
	}
	_ = s
}
