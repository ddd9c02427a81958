package pipeline

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeyBatchRoundTrip adds entries in input order (several keys a
// position, as a reader does) through a batcher that flushes more than once
// and checks that the batches decode to the same entries per partition.
func TestKeyBatchRoundTrip(t *testing.T) {
	const parts = 7
	rng := rand.New(rand.NewPCG(1, 2))
	want := make([][]keyEntry, parts)
	got := make([][]keyEntry, parts)
	var batches int
	kb := newKeyBatcher(parts, func(p int, b []byte) {
		batches++
		var err error
		if got[p], err = appendKeyEntries(got[p], b); err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
	})
	pos := Pos(3, 1)
	for range 400_000 {
		for range 25 {
			k := rng.Uint64()
			kb.add(k, pos)
			want[k%parts] = append(want[k%parts], keyEntry{k >> 32, pos})
		}
		pos += uint64(rng.IntN(3))
		if rng.IntN(1000) == 0 {
			pos = Pos(rangeOf(pos)+1, 1) // the next range
		}
	}
	kb.flush()
	if batches <= parts {
		t.Fatalf("%d batches: want more than one flush", batches)
	}
	for p := range parts {
		if !slices.Equal(got[p], want[p]) {
			t.Errorf("partition %d: got %d entries, want %d (or different ones)", p, len(got[p]), len(want[p]))
		}
	}
}

// TestKeyBatchTruncated refuses a batch cut inside an entry.
func TestKeyBatchTruncated(t *testing.T) {
	var b []byte
	kb := newKeyBatcher(1, func(_ int, x []byte) { b = x })
	kb.add(1<<40, Pos(2, 9))
	kb.flush()
	for n := 1; n < len(b); n++ {
		if _, err := appendKeyEntries(nil, b[:n]); err == nil {
			t.Errorf("a batch cut to %d of %d bytes decoded without an error", n, len(b))
		}
	}
}
