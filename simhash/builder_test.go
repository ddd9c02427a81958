package simhash

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestSeed000Example is the worked example of seed 000: five features with
// 3-bit hashes and weights (1,2,0,3,0) sum to (-4,-2,6) and give 001.
func TestSeed000Example(t *testing.T) {
	// Hash vectors written as in the seed, first position first: (1,-1,1) is
	// the bit string "101", whose first position is the most significant bit.
	feats := []struct {
		bits string
		w    float64
	}{
		{"101", 1}, {"011", 2}, {"100", 0}, {"001", 3}, {"110", 0},
	}
	b, err := NewBuilder(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range feats {
		b.Add(mustBits(t, f.bits), f.w)
	}
	// Sums come out bit 0 first; the seed writes the first position first.
	sums := b.Sums(nil)
	slices.Reverse(sums)
	if want := []float64{-4, -2, 6}; !slices.Equal(sums, want) {
		t.Errorf("sums (first position first) = %v, want %v", sums, want)
	}
	if got := Bits(uint64(b.Sum64()), 3); got != "001" {
		t.Errorf("fingerprint = %s, want 001", got)
	}
}

// TestSeed002Example is seed 002's six-bit example: "美国" hashes to 100101
// with weight 4, "51区" to 101011 with weight 5; the sums are (9,-9,1,-1,1,9)
// and the fingerprint 101011.
func TestSeed002Example(t *testing.T) {
	b, _ := NewBuilder(6)
	b.Add(mustBits(t, "100101"), 4)
	b.Add(mustBits(t, "101011"), 5)
	sums := b.Sums(nil)
	slices.Reverse(sums)
	if want := []float64{9, -9, 1, -1, 1, 9}; !slices.Equal(sums, want) {
		t.Errorf("sums = %v, want %v", sums, want)
	}
	if got := Bits(uint64(b.Sum64()), 6); got != "101011" {
		t.Errorf("fingerprint = %s, want 101011", got)
	}
}

// TestSeed002Distance: 10101 and 00110 differ in three positions.
func TestSeed002Distance(t *testing.T) {
	a, b := mustBits(t, "10101"), mustBits(t, "00110")
	if d := Distance(a, b); d != 3 {
		t.Errorf("Distance(10101, 00110) = %d, want 3", d)
	}
	if d := Fingerprint(a).Distance(Fingerprint(b)); d != 3 {
		t.Errorf("Fingerprint.Distance = %d, want 3", d)
	}
}

func mustBits(t testing.TB, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 2, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTieRule(t *testing.T) {
	// Two features with equal weight and complementary hashes sum to zero on
	// every bit: the tie rule gives 0 everywhere.
	var b Builder
	b.Add(0xf0f0f0f0f0f0f0f0, 2)
	b.Add(0x0f0f0f0f0f0f0f0f, 2)
	if got := b.Sum64(); got != 0 {
		t.Errorf("tied sums gave %v, want 0", got)
	}
	b.Add(0xff, 0.5)
	if got := b.Sum64(); got != 0xff {
		t.Errorf("after breaking the tie on the low byte: %v, want 00000000000000ff", got)
	}
}

func TestEmptyBuilder(t *testing.T) {
	var b Builder
	if !b.Empty() || b.Sum64() != 0 {
		t.Fatalf("zero Builder: Empty %v, Sum64 %v; want true, 0", b.Empty(), b.Sum64())
	}
	b.Add(1, 0) // zero weight adds nothing
	if !b.Empty() {
		t.Error("a zero-weight feature made the builder non-empty")
	}
	b.Add(1, 1)
	if b.Empty() {
		t.Error("Empty after adding a feature")
	}
	b.Reset()
	if !b.Empty() || b.Sum64() != 0 {
		t.Error("Reset did not clear the builder")
	}
}

func TestNewBuilderWidths(t *testing.T) {
	for _, w := range []int{0, -1, 129} {
		if _, err := NewBuilder(w); err == nil {
			t.Errorf("NewBuilder(%d) accepted", w)
		}
	}
	for _, w := range []int{1, 32, 64, 100, 128} {
		b, err := NewBuilder(w)
		if err != nil || b.Width() != w {
			t.Errorf("NewBuilder(%d) = %v, %v", w, b, err)
		}
	}
}

// signedSums is the textbook form of seed 002: +w where the bit is 1, -w where 0.
func signedSums(hs []uint64, ws []float64, width int) uint64 {
	v := make([]float64, width)
	for j, h := range hs {
		for i := 0; i < width; i++ {
			if h>>uint(i)&1 == 1 {
				v[i] += ws[j]
			} else {
				v[i] -= ws[j]
			}
		}
	}
	var fp uint64
	for i := range v {
		if v[i] > 0 {
			fp |= 1 << uint(i)
		}
	}
	return fp
}

// TestBuilderMatchesSignedSums checks the ones/total form against the
// textbook signed sums on random integer weights, for several widths.
func TestBuilderMatchesSignedSums(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for _, width := range []int{3, 32, 64} {
		for trial := 0; trial < 200; trial++ {
			n := 1 + r.IntN(40)
			hs, ws := make([]uint64, n), make([]float64, n)
			b, _ := NewBuilder(width)
			for i := range hs {
				hs[i], ws[i] = r.Uint64(), float64(r.IntN(6))
				b.Add(hs[i], ws[i])
			}
			want := signedSums(hs, ws, width)
			if got := uint64(b.Sum64()); got != want {
				t.Fatalf("width %d trial %d: Builder %x, signed sums %x", width, trial, got, want)
			}
		}
	}
}

func TestBuilder128(t *testing.T) {
	b, _ := NewBuilder(128)
	b.Add128(0x8000000000000001, 0x3, 1)
	b.Add128(0x8000000000000000, 0x1, 1)
	b.Add128(0x0000000000000001, 0x0, 0.5)
	got := b.Sum128()
	// Bit 127 has 2 of 2.5: set. Hi bit 0 has 1.5 of 2.5: set. Lo bit 0 has 2: set.
	// Lo bit 1 has 1 of 2.5: clear.
	if want := (Fingerprint128{Hi: 0x8000000000000001, Lo: 0x1}); got != want {
		t.Errorf("Sum128 = %v, want %v", got, want)
	}
	if b.Sum64() != Fingerprint(got.Lo) {
		t.Errorf("Sum64 %v is not the low half of %v", b.Sum64(), got)
	}
}

func TestSimilarity(t *testing.T) {
	tests := []struct {
		d, f    int
		sim, pc float64
	}{
		{0, 64, 1, 100},
		{3, 64, 1 - 3.0/64, 95.31},
		{32, 64, 0.5, 50},
		{64, 64, 0, 0},
		{1, 4, 0.75, 75},
	}
	for _, tt := range tests {
		if got := Similarity(tt.d, tt.f); got != tt.sim {
			t.Errorf("Similarity(%d, %d) = %v, want %v", tt.d, tt.f, got, tt.sim)
		}
		if got := Percent(tt.d, tt.f); got != tt.pc {
			t.Errorf("Percent(%d, %d) = %v, want %v", tt.d, tt.f, got, tt.pc)
		}
	}
	a, b := Fingerprint(0), Fingerprint(0b111)
	if !a.Near(b, 3) || a.Near(b, 2) {
		t.Errorf("Near at distance 3: k=3 %v k=2 %v, want true false", a.Near(b, 3), a.Near(b, 2))
	}
	if got := Fingerprint32(0).Similarity(Fingerprint32(0xffff)); got != 0.5 {
		t.Errorf("Fingerprint32 similarity %v, want 0.5", got)
	}
	x, y := Fingerprint128{Hi: 1}, Fingerprint128{Lo: 1}
	if x.Distance(y) != 2 || !x.Near(y, 2) || x.Similarity(y) != 1-2.0/128 {
		t.Errorf("Fingerprint128 distance %d similarity %v", x.Distance(y), x.Similarity(y))
	}
}

// TestBuilderWeightPaths covers the three weight paths (SWAR integer lanes,
// fractional, integer above 255) mixed in one fingerprint, and the lane flush
// after many features. Weights are multiples of 1/4 so float sums are exact.
func TestBuilderWeightPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		n := 1 + r.IntN(600)
		hs, ws := make([]uint64, n), make([]float64, n)
		var b Builder
		for i := range hs {
			hs[i] = r.Uint64()
			switch r.IntN(3) {
			case 0:
				ws[i] = float64(1 + r.IntN(255))
			case 1:
				ws[i] = float64(r.IntN(40)) / 4
			default:
				ws[i] = float64(256 + r.IntN(5000))
			}
			b.Add(hs[i], ws[i])
		}
		if got, want := uint64(b.Sum64()), signedSums(hs, ws, 64); got != want {
			t.Fatalf("trial %d: Builder %x, signed sums %x", trial, got, want)
		}
	}
}
