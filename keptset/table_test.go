package keptset

import (
	"math/rand/v2"
	"testing"
)

// TestSmallTableMergeable: a table of a few entries (what a Close makes of
// a small delta) keeps enough bits of each key for a merge into the table
// of the largest part: maxSpan seqs with 32 keys each.
func TestSmallTableMergeable(t *testing.T) {
	need := int(tableBits(maxSpan*32)) + 16
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 100, 10_000, 100_000} {
		keys, slots := make([]uint64, n), make([]uint32, n)
		for i := range keys {
			keys[i], slots[i] = r.Uint64(), uint32(i)
		}
		tb := buildTable(keys, slots)
		if known := int(tb.bits) + 16 + int(tb.extBits); known < need {
			t.Errorf("table of %d entries: %d bucket bits keep %d key bits, a merge into the largest table needs %d",
				n, tb.bits, known, need)
		}
		var dst []uint32
		for i, h := range keys {
			if dst = tb.find(dst[:0], h); !contains(dst, slots[i]) {
				t.Fatalf("table of %d entries: key %d not found", n, i)
			}
		}
	}
}

func contains(s []uint32, v uint32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
