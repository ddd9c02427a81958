package simhash_test

import (
	"fmt"
	"strings"

	"github.com/neardup/neardup/simhash"
)

// Build a fingerprint from words weighted by their counts, and compare two texts.
func Example() {
	fingerprint := func(text string) simhash.Fingerprint {
		counts := map[string]int{}
		for _, w := range strings.Fields(text) {
			counts[w]++
		}
		var b simhash.Builder
		for w, n := range counts {
			b.Add(simhash.HashString64(w), float64(n))
		}
		return b.Sum64()
	}
	a := fingerprint("the quick brown fox jumps over the lazy dog near the river bank today")
	b := fingerprint("the quick brown fox jumps over the lazy dog near the river bank")
	d := a.Distance(b)
	fmt.Println(d < a.Distance(fingerprint("an entirely different sentence about stock markets")))
	// Output: true
}

// Seed 002's example: two features with six-bit hashes and weights 4 and 5.
func ExampleBuilder() {
	b, _ := simhash.NewBuilder(6)
	b.Add(0b100101, 4)       // 美国
	b.Add(0b101011, 5)       // 51区
	fmt.Println(b.Sums(nil)) // bit 0 first
	fmt.Println(simhash.Bits(uint64(b.Sum64()), 6))
	// Output:
	// [9 1 -1 1 -9 9]
	// 101011
}

func ExampleFingerprint_Distance() {
	a, b := simhash.Fingerprint(0b10101), simhash.Fingerprint(0b00110)
	fmt.Println(a.Distance(b), a.Near(b, 3), simhash.Percent(a.Distance(b), 64))
	// Output: 3 true 95.31
}

func ExampleParse() {
	for _, s := range []string{"00c8f1a3e7b2d9c4", "0xc8f1a3e7b2d9c4", "56560681611352516"} {
		f, err := simhash.Parse(s)
		fmt.Println(f, err)
	}
	// Output:
	// 00c8f1a3e7b2d9c4 <nil>
	// 00c8f1a3e7b2d9c4 <nil>
	// 0000000000000000 simhash: invalid fingerprint syntax: "56560681611352516": want 16 hex digits, 0x and hex digits, or 0b and 64 binary digits (decimal is read only when asked for)
}

// Decimal fingerprints, as seomoz/simhash-cpp writes them, need the caller to
// say so: the same 16 digits are another value in hex.
func ExampleParseFormat() {
	for _, f := range []simhash.Format{simhash.FormatDecimal, simhash.FormatHex} {
		fp, err := simhash.ParseFormat("1234567890123456", f)
		fmt.Println(f, fp.Decimal(), err)
	}
	// Output:
	// decimal 1234567890123456 <nil>
	// hex 1311768467284833366 <nil>
}

func ExampleParseDecimal() {
	f, err := simhash.ParseDecimal("56560681611352516")
	fmt.Println(f, err)
	// Output: 00c8f1a3e7b2d9c4 <nil>
}
