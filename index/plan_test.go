package index

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

func TestBlockPlanValid(t *testing.T) {
	for k := 0; k <= 8; k++ {
		for blocks := k + 1; blocks <= k+4 && blocks <= 16; blocks++ {
			p, err := BlockPlan(k, blocks)
			if err != nil {
				t.Fatalf("BlockPlan(%d, %d): %v", k, blocks, err)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("BlockPlan(%d, %d) = %v: %v", k, blocks, p, err)
			}
		}
	}
}

func TestNamedPlans(t *testing.T) {
	tests := []struct {
		name         string
		p            Plan
		tables, keyL int
		keyH         int
	}{
		{"Seeds4x16", Seeds4x16, 4, 16, 16},
		{"Manku20", Manku20, 20, 31, 33},
	}
	for _, tt := range tests {
		if err := tt.p.Validate(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if len(tt.p.Tables) != tt.tables {
			t.Errorf("%s: %d tables, want %d", tt.name, len(tt.p.Tables), tt.tables)
		}
		for i := range tt.p.Tables {
			if kb := tt.p.KeyBits(i); kb < tt.keyL || kb > tt.keyH {
				t.Errorf("%s table %d: key bits %d, want %d..%d", tt.name, i, kb, tt.keyL, tt.keyH)
			}
		}
	}
}

func TestValidateRejects(t *testing.T) {
	bad := []Plan{
		{K: 3, Blocks: []int{16, 16, 16, 15}, Tables: [][]int{{0}, {1}, {2}, {3}}}, // 63 bits
		{K: 3, Blocks: []int{16, 16, 16, 16}, Tables: [][]int{{0}, {1}, {2}}},      // a 3-block difference hits all
		{K: 2, Blocks: []int{32, 32}, Tables: [][]int{{0}, {1}}},                   // k >= blocks
		{K: 1, Blocks: []int{32, 32}, Tables: nil},                                 // no tables
		{K: 1, Blocks: []int{32, 32}, Tables: [][]int{{1, 0}}},                     // not ascending
		{K: -1, Blocks: []int{64}, Tables: [][]int{{0}}},                           // negative k
		{K: 0, Blocks: []int{0, 64}, Tables: [][]int{{1}}},                         // empty block
	}
	for i, p := range bad {
		if err := p.Validate(); err == nil {
			t.Errorf("plan %d (%v): Validate accepted it", i, p)
		}
	}
}

func TestPermutation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range []Plan{Seeds4x16, Manku20, mustPlan(BlockPlan(6, 8))} {
		for ti := range p.Tables {
			perm := p.Permutation(ti)
			mask := p.KeyMask(ti)
			if bits.OnesCount64(mask) != perm.KeyBits() {
				t.Fatalf("%v table %d: mask has %d bits, key %d", p, ti, bits.OnesCount64(mask), perm.KeyBits())
			}
			for range 200 {
				x, y := r.Uint64(), r.Uint64()
				px, py := perm.Apply(x), perm.Apply(y)
				if perm.Invert(px) != x {
					t.Fatalf("%v table %d: Invert(Apply(%x)) = %x", p, ti, x, perm.Invert(px))
				}
				if distance(px, py) != distance(x, y) {
					t.Fatalf("%v table %d: permutation changed a distance", p, ti)
				}
				// Keys agree exactly when the masked bits agree.
				y2 := y&^mask | x&mask
				if perm.Key(perm.Apply(y2)) != perm.Key(px) {
					t.Fatalf("%v table %d: same masked bits, different keys", p, ti)
				}
				if (x^y)&mask != 0 && perm.Key(px) == perm.Key(py) {
					t.Fatalf("%v table %d: different masked bits, same key", p, ti)
				}
			}
		}
	}
}
