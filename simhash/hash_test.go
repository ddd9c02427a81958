package simhash

import (
	"hash/fnv"
	"testing"
)

// Golden vectors: these values are stored in users' indexes, so they must
// never change. The first XXH3 value is the reference implementation's
// XXH3_64bits of "" and "a" with seed 0; the rest pin this implementation.
var golden64 = []struct {
	in         string
	xxh3, fnv1 uint64
}{
	{"", 0x2d06800538d394c2, 0xcbf29ce484222325},
	{"a", 0xe6c632b61e964e1f, 0xaf63dc4c8601ec8c},
	{"the", 0xcb1283631cf33d7d, 0x56f5c9194461d57c},
	{"美国", 0x5e173a6c1a772783, 0x7272bc649c74e5b5},
	{"neardup finds near-duplicate text", 0xce1ff802ed66f985, 0xd180f8a8298c1b5d},
}

func TestHashGolden(t *testing.T) {
	for _, g := range golden64 {
		if got := HashString64(g.in); got != g.xxh3 {
			t.Errorf("HashString64(%q) = %#016x, want %#016x", g.in, got, g.xxh3)
		}
		if got := Hash64([]byte(g.in)); got != g.xxh3 {
			t.Errorf("Hash64(%q) = %#016x, want %#016x", g.in, got, g.xxh3)
		}
	}
}

func TestFNVMatchesStdlib(t *testing.T) {
	for _, g := range golden64 {
		h := fnv.New64a()
		h.Write([]byte(g.in))
		want := h.Sum64()
		if got := FNV1a64([]byte(g.in)); got != want {
			t.Errorf("FNV1a64(%q) = %#x, hash/fnv says %#x", g.in, got, want)
		}
		if got := FNV1aString64(g.in); got != want {
			t.Errorf("FNV1aString64(%q) = %#x, hash/fnv says %#x", g.in, got, want)
		}
	}
}

func TestHash128(t *testing.T) {
	hi, lo := HashString128("abc")
	hi2, lo2 := Hash128([]byte("abc"))
	if hi != hi2 || lo != lo2 || (hi == 0 && lo == 0) {
		t.Fatalf("Hash128 and HashString128 disagree: %x%x %x%x", hi, lo, hi2, lo2)
	}
}

func TestMix64(t *testing.T) {
	if Mix64(1, 2) == Mix64(2, 1) {
		t.Error("Mix64 is symmetric; shingles 'a b' and 'b a' would collide")
	}
	if Mix64(1, 2) != Mix64(1, 2) {
		t.Error("Mix64 not deterministic")
	}
}
