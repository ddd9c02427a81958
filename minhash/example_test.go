package minhash_test

import (
	"fmt"

	"github.com/neardup/neardup/minhash"
)

func ExampleEstimate() {
	h := minhash.New(256, 1)
	a := make([]uint64, 0, 100)
	b := make([]uint64, 0, 100)
	for i := range uint64(100) {
		a = append(a, i)
		b = append(b, i+50) // 50 shared of 150: J = 1/3
	}
	j := minhash.Estimate(h.Sign(nil, a), h.Sign(nil, b))
	fmt.Printf("%.1f\n", j)
	// Output: 0.3
}

func ExampleBandsRows() {
	bands, rows := minhash.BandsRows(0.8, 128)
	fmt.Println(bands, rows)
	fmt.Printf("P(candidate | J=0.9) = %.2f\n", minhash.Probability(0.9, bands, rows))
	// Output:
	// 9 13
	// P(candidate | J=0.9) = 0.93
}

func ExampleLSH() {
	h := minhash.New(128, 1)
	l := minhash.NewLSH(32, 4)
	docs := [][]uint64{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 11}, {20, 21, 22}}
	for id, set := range docs {
		if err := l.Add(id, h.Sign(nil, set)); err != nil {
			panic(err)
		}
	}
	l.Pairs(func(a, b int) error {
		fmt.Println(a, b)
		return nil
	})
	// Output: 0 1
}
