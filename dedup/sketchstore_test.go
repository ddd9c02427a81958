package dedup

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Past the budget the sets go to the temporary file and come back exactly:
// what get returns is what was added, from memory or from the file.
func TestSketchStoreSpill(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	s := newSketchStore(t.TempDir(), 400<<10)
	defer s.close()
	var sets [][]uint32
	for i := range 300 {
		h := randomSet(rng, rng.IntN(5000))
		if i%50 == 0 {
			h = nil // empty sets too
		}
		h = slices.Compact(h)
		sets = append(sets, h)
		if err := s.add(h); err != nil {
			t.Fatal(err)
		}
		if held := int64(len(s.mem)) * 4; held > s.budget && len(h)*4 <= int(s.budget) {
			t.Fatalf("after set %d: %d bytes in memory, budget %d", i, held, s.budget)
		}
	}
	if s.onDisk() == 0 {
		t.Fatal("nothing spilled past the budget")
	}
	for i, want := range sets {
		got, err := s.get(i)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Hashes(), want) || got.Sampled() {
			t.Fatalf("set %d: got %d hashes (sampled %v), want %d", i, len(got.Hashes()), got.Sampled(), len(want))
		}
	}
}

func randomSet(rng *rand.Rand, n int) []uint32 {
	a := make([]uint32, n)
	for i := range a {
		a[i] = rng.Uint32()
	}
	return a
}
