package dedup

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestIDStore: ids of every length (empty, and past the one-byte length)
// read back the same in memory and from the file past a small budget, one
// by one and in order, and find names the first document with an id.
func TestIDStore(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ids []string
	for i := range 3000 {
		var id string
		switch {
		case i%97 == 0:
			id = ""
		case i%211 == 0:
			id = strings.Repeat("x", 255+r.IntN(2000)) // past the length byte
		default:
			id = fmt.Sprintf("doc-%d-%s", i, strings.Repeat("y", r.IntN(40)))
		}
		ids = append(ids, id)
	}
	for _, budget := range []int{1 << 30, 1000} {
		s := newIDStore(t.TempDir(), budget)
		for _, id := range ids {
			if err := s.add(id); err != nil {
				t.Fatal(err)
			}
		}
		if (s.f != nil) != (budget < 1<<30) {
			t.Fatalf("budget %d: file %v", budget, s.f != nil)
		}
		for i, want := range ids {
			if got, err := s.get(i); err != nil || got != want {
				t.Fatalf("budget %d: get(%d) = %q, %v; want %q", budget, i, got, err, want)
			}
		}
		for range 2 { // twice: cursors are independent
			c := s.cursor()
			for i, want := range ids {
				if got, err := c.next(); err != nil || got != want {
					t.Fatalf("budget %d: cursor at %d = %q, %v; want %q", budget, i, got, err, want)
				}
			}
			if _, err := c.next(); err != io.EOF {
				t.Fatalf("budget %d: cursor past the end: %v", budget, err)
			}
		}
		if j, ok, err := s.find(ids[1234]); err != nil || !ok || j != 1234 {
			t.Fatalf("find = %d, %v, %v; want 1234", j, ok, err)
		}
		if _, ok, _ := s.find("no such id"); ok {
			t.Fatal("found an id that is not there")
		}
		if err := s.close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPositions: runs of consecutive lines cost one entry, and every
// document is named as it was read: JSONL lines (with skipped lines), whole
// files, several sources.
func TestPositions(t *testing.T) {
	type at struct {
		src  string
		line int
	}
	var docs []at
	for l := 1; l <= 100; l++ {
		if l != 40 && l != 41 { // two bad lines skipped
			docs = append(docs, at{"a.jsonl", l})
		}
	}
	docs = append(docs, at{"dir/x.txt", 0}, at{"dir/y.txt", 0})
	for l := 1; l <= 10; l++ {
		docs = append(docs, at{"b.jsonl", l})
	}
	var p positions
	for i, d := range docs {
		p.add(i, d.src, d.line)
	}
	if len(p.runs) != 5 {
		t.Errorf("%d runs, want 5 (a before and after the skip, two files, b)", len(p.runs))
	}
	for i, d := range docs {
		want := d.src
		if d.line > 0 {
			want = fmt.Sprintf("%s:%d", d.src, d.line)
		}
		if got := p.where(i); got != want {
			t.Fatalf("where(%d) = %q, want %q", i, got, want)
		}
	}
}

// TestTables: the id hashes' set reports repeats (a hash of 0 too), and the
// twin table finds each document by the key its column holds, across
// growths.
func TestTables(t *testing.T) {
	var hs hashSet
	for i := range uint64(10000) {
		if hs.add(i * 0x9e3779b97f4a7c15) {
			t.Fatalf("%d reported seen", i)
		}
	}
	for i := range uint64(10000) {
		if !hs.add(i * 0x9e3779b97f4a7c15) {
			t.Fatalf("%d not reported seen", i)
		}
	}
	var keys []uint64
	key := func(d int32) uint64 { return keys[d] }
	var dt docTable
	r := rand.New(rand.NewPCG(3, 4))
	for d := range int32(5000) {
		k := r.Uint64()
		keys = append(keys, k)
		if _, ok := dt.get(k, key); ok {
			t.Fatalf("key of %d found before it was inserted", d)
		}
		dt.insert(k, d, key)
	}
	for d, k := range keys {
		if got, ok := dt.get(k, key); !ok || got != int32(d) {
			t.Fatalf("get(key of %d) = %d, %v", d, got, ok)
		}
	}
	var c chunked[int64]
	for i := range 3*chunkLen + 5 {
		c.append(int64(i) * 3)
	}
	for _, i := range []int{0, chunkLen - 1, chunkLen, 3*chunkLen + 4} {
		if c.get(i) != int64(i)*3 || *c.ref(i) != int64(i)*3 {
			t.Fatalf("chunked: element %d = %d", i, c.get(i))
		}
	}
}

// TestSortBandEnts: the radix sort orders entries by key, then position,
// as a comparison sort does, on partitions of every size, with repeated
// keys and positions out of order (a keep policy's priority order).
func TestSortBandEnts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var tmp []bandEnt
	for _, n := range []int{0, 1, 255, 256, 5000, 100000} {
		var a []bandEnt
		for range n {
			key := r.Uint64()>>bandPartBits | uint64(3)<<(64-bandPartBits) // one partition
			if r.IntN(10) == 0 && len(a) > 0 {
				key = a[r.IntN(len(a))].key // a shared key
			}
			a = append(a, bandEnt{key: key, pos: int32(r.IntN(1 << 30))})
		}
		want := slices.Clone(a)
		slices.SortFunc(want, compareBandEnts)
		tmp = sortBandEnts(a, tmp)
		if !slices.Equal(a, want) {
			t.Fatalf("%d entries: the radix sort's order differs", n)
		}
	}
}
