package index

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// flip returns x with n distinct random bits flipped.
func flip(r *rand.Rand, x uint64, n int) uint64 {
	for _, b := range r.Perm(64)[:n] {
		x ^= 1 << uint(b)
	}
	return x
}

// plantedSet returns n fingerprints: random ones and near-copies of earlier
// ones with 0..maxFlip bits flipped, plus exact duplicates.
func plantedSet(r *rand.Rand, n, maxFlip int) []uint64 {
	fps := make([]uint64, 0, n)
	for len(fps) < n {
		if len(fps) > 0 && r.IntN(3) == 0 {
			fps = append(fps, flip(r, fps[r.IntN(len(fps))], r.IntN(maxFlip+1)))
		} else {
			fps = append(fps, r.Uint64())
		}
	}
	return fps
}

func bruteForce(ids []string, fps []uint64, alive []bool, q uint64, k int) []Match {
	var out []Match
	for i, f := range fps {
		if alive != nil && !alive[i] {
			continue
		}
		if d := bits.OnesCount64(f ^ q); d <= k {
			out = append(out, Match{ID: ids[i], Fingerprint: f, Distance: d})
		}
	}
	slices.SortFunc(out, func(a, b Match) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.ID, b.ID))
	})
	return out
}

func numberedIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "doc" + strconv.Itoa(i)
	}
	return ids
}

// checkQueries compares the index with brute force on queries near stored
// fingerprints and random ones, for every k' <= k.
func checkQueries(t *testing.T, x *Index, ids []string, fps []uint64, alive []bool, r *rand.Rand, k, queries int) {
	t.Helper()
	for range queries {
		var q uint64
		if r.IntN(4) == 0 {
			q = r.Uint64()
		} else {
			q = flip(r, fps[r.IntN(len(fps))], r.IntN(k+3))
		}
		kq := r.IntN(k + 1)
		got, err := x.Query(q, kq, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteForce(ids, fps, alive, q, kq)
		if !slices.Equal(got, want) {
			t.Fatalf("plan %v: Query(%016x, %d) = %v, want %v", x.Plan(), q, kq, got, want)
		}
	}
}

func layoutsFor(k int) []Plan {
	var ps []Plan
	for b := k + 1; b <= k+3 && b <= 64; b++ {
		if n, _ := binomial(b, k); n <= 220 {
			ps = append(ps, mustPlan(BlockPlan(k, b)))
		}
	}
	if k <= 3 {
		ps = append(ps, Seeds4x16, Manku20)
	}
	for _, n := range []int{1000, 1 << 20} {
		c, err := Choose(n, k, 0)
		if err != nil {
			panic(err)
		}
		ps = append(ps, c.Plan)
	}
	return ps
}

func TestQueryMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := 0; k <= 8; k++ {
		for _, p := range layoutsFor(k) {
			t.Run(fmt.Sprintf("k=%d/%v", k, p), func(t *testing.T) {
				n := 3000
				fps := plantedSet(r, n, k+2)
				ids := numberedIDs(n)
				x, err := Build(ids, fps, Options{Plan: &p})
				if err != nil {
					t.Fatal(err)
				}
				checkQueries(t, x, ids, fps, nil, r, k, 300)
			})
		}
	}
}

// TestBigSegment covers bucket bits 16 (entries of 6 bytes) and keys shorter
// and longer than the buckets.
func TestBigSegment(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	r := rand.New(rand.NewPCG(3, 4))
	n := 300_000
	fps := plantedSet(r, n, 8)
	ids := numberedIDs(n)
	layouts := []string{"seeds-4x16", "blocks:6:7", "blocks:2:4", "blocks:0:1"}
	if raceEnabled {
		layouts = layouts[:2]
	}
	for _, layout := range layouts {
		p, err := ParseLayout(layout)
		if err != nil {
			t.Fatal(err)
		}
		x, err := Build(ids, fps, Options{Plan: &p})
		if err != nil {
			t.Fatal(err)
		}
		if bb := x.cur.Load().segs[0].prim.bb; bb != 16 {
			t.Fatalf("bucket bits %d, want 16", bb)
		}
		checkQueries(t, x, ids, fps, nil, r, p.K, 100)
	}
}

func TestAddRemoveUpdate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{0, 3, 6} {
		c, _ := Choose(5000, k, 0)
		x, err := New(Options{Plan: &c.Plan, Memtable: 64})
		if err != nil {
			t.Fatal(err)
		}
		n := 5000
		fps := plantedSet(r, n, k+2)
		ids := numberedIDs(n)
		alive := make([]bool, n)
		// Half in bulk, half one by one; then remove and update at random.
		if err := x.AddBulk(ids[:n/2], fps[:n/2]); err != nil {
			t.Fatal(err)
		}
		for i := range n / 2 {
			alive[i] = true
		}
		for i := n / 2; i < n; i++ {
			if err := x.Add(ids[i], fps[i]); err != nil {
				t.Fatal(err)
			}
			alive[i] = true
		}
		for range 3000 {
			i := r.IntN(n)
			switch r.IntN(3) {
			case 0:
				err := x.Remove(ids[i])
				if alive[i] != (err == nil) || (err != nil && !errors.Is(err, ErrNotFound)) {
					t.Fatalf("Remove(%s) alive=%v: %v", ids[i], alive[i], err)
				}
				alive[i] = false
			case 1:
				fps[i] = flip(r, fps[i], r.IntN(k+2))
				if err := x.Update(ids[i], fps[i]); err != nil {
					t.Fatal(err)
				}
				alive[i] = true
			case 2:
				err := x.Add(ids[i], fps[i])
				if alive[i] != errors.Is(err, ErrDuplicateID) {
					t.Fatalf("Add(%s) alive=%v: %v", ids[i], alive[i], err)
				}
				alive[i] = true
			}
		}
		live := 0
		for _, a := range alive {
			if a {
				live++
			}
		}
		if x.Len() != live {
			t.Fatalf("Len = %d, want %d", x.Len(), live)
		}
		checkQueries(t, x, ids, fps, alive, r, k, 300)
		x.Compact()
		if st := x.Stats(); st.Segments != 1 || st.Removed != 0 || st.Len != live {
			t.Fatalf("after Compact: %+v", st)
		}
		checkQueries(t, x, ids, fps, alive, r, k, 300)
	}
}

func TestAddBulkDuplicates(t *testing.T) {
	x, _ := New(Options{})
	if err := x.AddBulk([]string{"a", "b"}, []uint64{1, 2}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ids  []string
	}{
		{"existing", []string{"c", "a"}},
		{"within batch", []string{"c", "d", "c"}},
	}
	for _, tt := range tests {
		ids := tt.ids
		fps := make([]uint64, len(ids))
		if err := x.AddBulk(ids, fps); !errors.Is(err, ErrDuplicateID) {
			t.Errorf("%s: got %v, want ErrDuplicateID", tt.name, err)
		}
		if x.Len() != 2 || x.Contains("c") {
			t.Errorf("%s: failed AddBulk changed the index: len %d", tt.name, x.Len())
		}
	}
	// A large batch takes the sorted bulk path.
	ids := numberedIDs(10000)
	ids[9999] = ids[17]
	if err := x.AddBulk(ids, make([]uint64, len(ids))); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("large batch: got %v, want ErrDuplicateID", err)
	}
	if x.Len() != 2 || x.Contains("doc5") {
		t.Errorf("failed large AddBulk changed the index")
	}
	if err := x.AddBulk(numberedIDs(10000), make([]uint64, 10000)); err != nil {
		t.Fatal(err)
	}
	if x.Len() != 10002 {
		t.Fatalf("Len = %d", x.Len())
	}
	for _, id := range numberedIDs(10000) {
		if !x.Contains(id) {
			t.Fatalf("bulk-added %s not found", id)
		}
	}
}

func TestBadInput(t *testing.T) {
	x, _ := New(Options{})
	if err := x.Add("", 1); !errors.Is(err, ErrBadID) {
		t.Errorf("empty id: %v", err)
	}
	if _, err := x.Query(0, 4, 0); !errors.Is(err, ErrDistance) {
		t.Errorf("k above plan: %v", err)
	}
	if _, err := x.Query(0, -1, 0); !errors.Is(err, ErrDistance) {
		t.Errorf("negative k: %v", err)
	}
	if err := x.Remove("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("remove absent: %v", err)
	}
	if _, err := New(Options{Layout: "nope"}); !errors.Is(err, ErrLayout) {
		t.Errorf("bad layout: %v", err)
	}
}

func TestQueryLimitAndOrder(t *testing.T) {
	ids := []string{"e", "d", "c", "b", "a"}
	fps := []uint64{0b111, 0b1, 0, 0b11, 0b1}
	x, err := Build(ids, fps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := x.Query(0, 3, 3)
	want := []Match{{"c", 0, 0}, {"a", 1, 1}, {"d", 1, 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestQueryBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fps := plantedSet(r, 20000, 5)
	ids := numberedIDs(len(fps))
	x, err := Build(ids, fps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	qs := fps[:1000]
	got, err := x.QueryBatch(qs, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range qs {
		want, _ := x.Query(q, 3, 5)
		if !slices.Equal(got[i], want) {
			t.Fatalf("batch %d: got %v, want %v", i, got[i], want)
		}
	}
}

func TestRadixSort(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 100, 255, 256, 5000, 70000} {
		for _, mask := range []uint64{^uint64(0), 0xff00ff, 0} {
			a := make([]uint64, n)
			v := make([]uint32, n)
			for i := range a {
				a[i] = r.Uint64() & mask
				v[i] = uint32(i)
			}
			b := slices.Clone(a)
			radixSort(b, make([]uint64, n))
			if !slices.IsSorted(b) {
				t.Fatalf("n=%d mask=%x: not sorted", n, mask)
			}
			c := slices.Clone(a)
			radixSortPairs(c, v, make([]uint64, n), make([]uint32, n))
			for i := range c {
				if a[v[i]] != c[i] || (i > 0 && (c[i-1] > c[i] || c[i-1] == c[i] && v[i-1] > v[i])) {
					t.Fatalf("n=%d mask=%x: pairs not sorted stably at %d", n, mask, i)
				}
			}
		}
	}
}

func TestRadixSortTop(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	n := 70000
	for _, kb := range []int{1, 9, 16, 22, 26, 33, 63, 64} {
		a := make([]uint64, n)
		for i := range a {
			a[i] = r.Uint64()
		}
		want := slices.Clone(a)
		slices.Sort(want)
		radixSortTop(a, make([]uint64, n), kb)
		top := func(v uint64) uint64 { return v >> (64 - kb) }
		for i := 1; i < n; i++ {
			if top(a[i-1]) > top(a[i]) {
				t.Fatalf("kb=%d: not sorted by top bits at %d", kb, i)
			}
		}
		got := slices.Clone(a)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("kb=%d: not a permutation", kb)
		}
	}
}

// TestBuckets24 forces the 24-bit buckets and 5-byte entries that only
// indexes of 64 million fingerprints get on their own.
func TestBuckets24(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("allocates 64 MiB per table")
	}
	testBucketBits = 24
	defer func() { testBucketBits = 0 }()
	r := rand.New(rand.NewPCG(17, 18))
	n := 20000
	fps := plantedSet(r, n, 8)
	ids := numberedIDs(n)
	for _, layout := range []string{"seeds-4x16", "blocks:6:7", "blocks:2:4"} {
		p, _ := ParseLayout(layout)
		x, err := Build(ids, fps, Options{Plan: &p})
		if err != nil {
			t.Fatal(err)
		}
		if w := x.cur.Load().segs[0].prim.w; w != 5 {
			t.Fatalf("entry bytes %d, want 5", w)
		}
		checkQueries(t, x, ids, fps, nil, r, p.K, 200)
	}
}
