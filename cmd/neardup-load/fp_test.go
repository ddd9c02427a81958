package main

import (
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadFingerprintFileRoundTrip(t *testing.T) {
	want := []stored{{0, 0}, {7, 0x0123456789abcdef}, {1000000, ^uint64(0)}}
	path := filepath.Join(t.TempDir(), "fps.txt")
	if err := writeFingerprints(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := readFingerprints(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
}

func TestLoadFingerprintFileSimdFormat(t *testing.T) {
	// simd reads "ID HEX" with strconv.Atoi and ParseUint(HEX, 16, 64).
	got, err := parseFingerprints(strings.NewReader("3 00000000000000ff\n12 ffffffffffffffff\n"), "x")
	if err != nil {
		t.Fatal(err)
	}
	if want := []stored{{3, 0xff}, {12, ^uint64(0)}}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"1\n", "x 00ff\n", "1 xyz\n", "1 2 3\n"} {
		if _, err := parseFingerprints(strings.NewReader(bad), "x"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestLoadQueriesWithinK(t *testing.T) {
	fps := []stored{{1, 0x0123456789abcdef}, {2, 0xfedcba9876543210}}
	for _, k := range []int{0, 3, 6} {
		qs := queries(fps, k, 1000, rand.New(rand.NewPCG(2, 2)))
		seen := map[int]bool{}
		for _, q := range qs {
			d := min(bits.OnesCount64(q^fps[0].fp), bits.OnesCount64(q^fps[1].fp))
			if d > k {
				t.Fatalf("k %d: query %016x is %d bits from every stored fingerprint", k, q, d)
			}
			seen[d] = true
		}
		if len(seen) != k+1 {
			t.Errorf("k %d: distances %v, want every one of 0..%d", k, seen, k)
		}
		if again := queries(fps, k, 1000, rand.New(rand.NewPCG(2, 2))); !slices.Equal(qs, again) {
			t.Errorf("k %d: same seed, different queries", k)
		}
	}
}

func TestLoadMemory(t *testing.T) {
	rss, anon, err := memory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || anon <= 0 || anon > rss {
		t.Errorf("VmRSS %d, RssAnon %d", rss, anon)
	}
}
