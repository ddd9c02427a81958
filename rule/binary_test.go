package rule

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFeaturesBinaryRoundTrip encodes features whose sketch deltas take
// every varint length (1 to 5 bytes, the largest hash included), decodes
// them back, and checks that every truncation and many corruptions of the
// encoding are errors or decode without a panic, as the store's records and
// kept-set files need.
func TestFeaturesBinaryRoundTrip(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: one goroutine, no concurrency to check; the run without it asserts this")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	edges := []uint32{0, 1, 127, 128, 129, 1<<14 - 1, 1 << 14, 1<<21 - 1, 1 << 21, 1<<28 - 1, 1 << 28, 1<<32 - 2, 1<<32 - 1}
	for round := range 300 {
		var h []uint32
		switch round {
		case 0:
			h = slices.Clone(edges)
		case 1:
		default:
			n := rng.IntN(300)
			for range n {
				// Spread the values so that deltas take every length.
				h = append(h, rng.Uint32()>>rng.IntN(32))
			}
			slices.Sort(h)
			h = slices.Compact(h)
		}
		f := Features{FP: rng.Uint64(), Exact: rng.Uint64(), Tokens: uint32(len(h) + 4), Length: 1000,
			Sketch: Sketch{h: h, n: uint32(len(h)) + uint32(rng.IntN(3)), shift: 0}}
		if round%7 == 3 {
			f.Bands = []uint64{rng.Uint64(), rng.Uint64()}
		}
		b, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var g Features
		if err := g.UnmarshalBinary(b); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if g.FP != f.FP || g.Exact != f.Exact || g.Tokens != f.Tokens || g.Length != f.Length ||
			!slices.Equal(g.Sketch.h, f.Sketch.h) || g.Sketch.n != f.Sketch.n || !slices.Equal(g.Bands, f.Bands) {
			t.Fatalf("round %d: decoded %+v, encoded %+v", round, g, f)
		}
		if round < 20 {
			for cut := range len(b) {
				if err := new(Features).UnmarshalBinary(b[:cut]); err == nil {
					t.Fatalf("round %d: %d of %d bytes decoded", round, cut, len(b))
				}
			}
		}
		for range 20 {
			c := slices.Clone(b)
			c[rng.IntN(len(c))] ^= byte(1 << rng.IntN(8))
			_ = new(Features).UnmarshalBinary(c) // an error or other features, never a panic
		}
	}
}

// TestUvarint compares the sketch's varint decoder with binary.Uvarint on
// every length from 1 to 10 bytes, minimal or not, and truncated: it
// decodes what binary.Uvarint decodes in up to 5 bytes, and declines the
// rest.
func TestUvarint(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: one goroutine, no concurrency to check; the run without it asserts this")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(b []byte) {
		t.Helper()
		b = append(b, make([]byte, max(0, 8-len(b)))...) // it reads 8 bytes
		v, n := uvarint8(binary.LittleEndian.Uint64(b))
		wv, wn := binary.Uvarint(b)
		if n > 0 && (v != wv || n != wn) || n == 0 && wn > 0 && wn <= 5 {
			t.Fatalf("% x: %d, %d; binary.Uvarint %d, %d", b, v, n, wv, wn)
		}
	}
	for range 200000 {
		var v uint64
		switch rng.IntN(3) {
		case 0:
			v = rng.Uint64() >> rng.IntN(64)
		case 1:
			v = uint64(rng.Uint32()) >> rng.IntN(32)
		default:
			v = 1<<(7*rng.IntN(10)) - uint64(rng.IntN(2)) // the edges of each length
		}
		b := binary.AppendUvarint(nil, v)
		if rng.IntN(4) == 0 && len(b) < 10 { // a non-minimal encoding: a zero group more
			b[len(b)-1] |= 0x80
			b = append(b, 0)
		}
		tail := make([]byte, rng.IntN(10))
		for i := range tail {
			tail[i] = byte(rng.Uint32())
		}
		check(append(b, tail...))
		check(b)
		check(b[:rng.IntN(len(b))]) // truncated
	}
	all := make([]byte, 12)
	for i := range all {
		all[i] = 0x80 // no end: an error, as binary.Uvarint says
	}
	check(all)
}

// TestArenaUnmarshalFeatures decodes sketches through an Arena across
// several of its blocks, and one too large for a block: each equals what
// UnmarshalBinary decodes, owns exactly its length (an append to one does
// not write into the next), and the sets stay intact after the rest of the
// blocks are filled.
func TestArenaUnmarshalFeatures(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: one goroutine, no concurrency to check; the run without it asserts this")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	var a Arena
	var want, got []Features
	total := 0
	for i := 0; total < 3*arenaBlock; i++ {
		n := 1 + rng.IntN(4000)
		if i == 5 {
			n = arenaBlock/16 + 1 // allocated on its own
		}
		h := make([]uint32, n)
		for j := range h {
			h[j] = rng.Uint32()
		}
		slices.Sort(h)
		h = slices.Compact(h)
		f := Features{FP: rng.Uint64(), Tokens: uint32(len(h)), Sketch: Sketch{h: h, n: uint32(len(h))}}
		b, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var g Features
		if err := a.UnmarshalFeatures(&g, b); err != nil {
			t.Fatal(err)
		}
		if cap(g.Sketch.h) != len(g.Sketch.h) {
			t.Fatalf("set %d: capacity %d for %d hashes", i, cap(g.Sketch.h), len(g.Sketch.h))
		}
		if i > 0 {
			// Writes into a copy, never into the next set.
			_ = append(got[i-1].Sketch.h, 0)
		}
		want, got = append(want, f), append(got, g)
		total += len(h)
	}
	for i := range got {
		if !slices.Equal(got[i].Sketch.h, want[i].Sketch.h) || got[i].FP != want[i].FP {
			t.Fatalf("set %d differs after %d more were decoded", i, len(got)-i-1)
		}
	}
	if len(a.free) == arenaBlock {
		t.Fatal("the last block is unused: the test did not fill blocks")
	}
}
