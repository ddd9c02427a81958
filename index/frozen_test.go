package index

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// frozenData returns n fingerprints: random ones, near-copies of earlier
// ones (1 to 6 bits flipped) and exact duplicates, with distinct random ids.
func frozenData(n int, seed uint64) (fps, ids []uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	fps = make([]uint64, n)
	ids = make([]uint64, n)
	for i := range fps {
		switch {
		case i > 0 && r.IntN(10) == 0:
			fps[i] = flip(r, fps[r.IntN(i)], 1+r.IntN(6))
		case i > 0 && r.IntN(50) == 0:
			fps[i] = fps[r.IntN(i)]
		default:
			fps[i] = r.Uint64()
		}
		ids[i] = uint64(i)*2654435761 + 17 // distinct, not in order
	}
	return fps, ids
}

// scanMatches is the brute-force answer.
func scanMatches(fps, ids []uint64, q uint64, k int) []FrozenMatch {
	var out []FrozenMatch
	for i, x := range fps {
		if d := bits.OnesCount64(x ^ q); d <= k {
			out = append(out, FrozenMatch{ID: ids[i], Fingerprint: x, Distance: d})
		}
	}
	slices.SortFunc(out, func(a, b FrozenMatch) int {
		if a.Distance != b.Distance {
			return a.Distance - b.Distance
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

func buildFrozen(t testing.TB, fps, ids []uint64, opt FrozenOptions) *Frozen {
	t.Helper()
	f, err := BuildFrozen(context.Background(), SliceSource(fps, ids), opt)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// checkFrozen compares f's answers with a scan and, when x is not nil, with
// the Index x (whose ids are the decimal ids).
func checkFrozen(t *testing.T, f *Frozen, x *Index, fps, ids []uint64, k, queries int) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(len(fps)), uint64(k)))
	for q := range queries {
		var y uint64
		if q%4 == 3 {
			y = r.Uint64()
		} else {
			y = flip(r, fps[r.IntN(len(fps))], r.IntN(k+1))
		}
		got, err := f.Query(y, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := scanMatches(fps, ids, y, k)
		if !slices.Equal(got, want) {
			t.Fatalf("query %#x k=%d: got %v, want (scan) %v", y, k, got, want)
		}
		if x == nil {
			continue
		}
		m, err := x.Query(y, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != len(got) {
			t.Fatalf("query %#x k=%d: got %d matches, Index has %d", y, k, len(got), len(m))
		}
		seen := map[uint64]int{}
		for _, g := range got {
			seen[g.ID] = g.Distance
		}
		for _, mm := range m {
			id, _ := strconv.ParseUint(mm.ID, 10, 64)
			if d, ok := seen[id]; !ok || d != mm.Distance {
				t.Fatalf("query %#x: Index match %v missing from %v", y, mm, got)
			}
		}
	}
}

func TestFrozenMatchesIndexAndScan(t *testing.T) {
	for _, tc := range []struct {
		n      int
		k      int
		layout string
	}{
		{0, 3, ""}, {1, 3, ""}, {5, 3, ""}, {300, 3, ""}, {20_000, 3, ""}, {200_000, 3, ""},
		{50_000, 3, "manku-20"}, {50_000, 6, ""}, {50_000, 2, "blocks:2:5"}, {3000, 0, ""},
		{200_000, 3, "seeds-4x16"}, {50_000, 3, "flip:3:3"}, {50_000, 2, "flip:2:2"},
		{20_000, 4, "flip:4:2"}, {50_000, 5, "flip:5:3"}, {300, 1, "flip:1:1"},
		{50_000, 9, "flip:9:5"}, // 13-bit keys probed within 1 bit: runs of buckets
	} {
		t.Run(fmt.Sprintf("n=%d/k=%d/%s", tc.n, tc.k, tc.layout), func(t *testing.T) {
			fps, ids := frozenData(tc.n, 1)
			f := buildFrozen(t, fps, ids, FrozenOptions{K: tc.k, Layout: tc.layout})
			if f.Len() != tc.n {
				t.Fatalf("Len = %d, want %d", f.Len(), tc.n)
			}
			if tc.n == 0 {
				if m, err := f.Query(1, tc.k, 0); err != nil || m != nil {
					t.Fatalf("empty: got %v, %v", m, err)
				}
				return
			}
			sids := make([]string, tc.n)
			for i, id := range ids {
				sids[i] = strconv.FormatUint(id, 10)
			}
			var x *Index
			if tc.n <= 50_000 {
				var err error
				layout := tc.layout
				if _, _, probed, _ := parseFrozenLayout(layout); probed {
					layout = "" // the Index has no probed layouts
				}
				x, err = Build(sids, fps, Options{K: tc.k, Layout: layout})
				if err != nil {
					t.Fatal(err)
				}
			}
			def := enumerateBits
			for _, eb := range []uint{1, 11, 64} { // both ways of scanning a key's buckets
				enumerateBits = eb
				checkFrozen(t, f, x, fps, ids, tc.k, 300)
			}
			enumerateBits = def
		})
	}
}

// TestFrozenSmallSortMemory forces many sort runs per table (the external
// sort merges 25 runs of 4,096) and position ids.
func TestFrozenSmallSortMemory(t *testing.T) {
	fps, _ := frozenData(100_000, 2)
	f := buildFrozen(t, fps, nil, FrozenOptions{SortMemory: 64 << 10})
	ids := positions(0, len(fps))
	checkFrozen(t, f, nil, fps, ids, 3, 300)
	var got []uint64
	f.All(func(id, fp uint64) bool {
		if fps[id] != fp {
			t.Fatalf("All: id %d has %#x, want %#x", id, fp, fps[id])
		}
		got = append(got, fp)
		return true
	})
	want := slices.Sorted(slices.Values(fps))
	if !slices.Equal(got, want) {
		t.Fatal("All: not the fingerprints in order")
	}
}

func TestFrozenLimitAndDistance(t *testing.T) {
	fps := []uint64{0, 1, 3, 7, 15, 1 << 63}
	f := buildFrozen(t, fps, []uint64{10, 11, 12, 13, 14, 15}, FrozenOptions{})
	m, err := f.Query(0, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []FrozenMatch{{10, 0, 0}, {11, 1, 1}}
	if !slices.Equal(m, want) {
		t.Fatalf("got %v, want %v", m, want)
	}
	if _, err := f.Query(0, 4, 0); !errors.Is(err, ErrDistance) {
		t.Fatalf("k=4: got %v, want ErrDistance", err)
	}
}

func TestFrozenSnapshot(t *testing.T) {
	fps, ids := frozenData(30_000, 3)
	f := buildFrozen(t, fps, ids, FrozenOptions{})
	path := filepath.Join(t.TempDir(), "x.ndf")
	if err := f.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []FrozenOpenOptions{{}, {NoVerify: true}} {
		g, err := OpenFrozen(path, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkFrozen(t, g, nil, fps, ids, 3, 200)
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// String names of position ids, mapped.
	names := make([]string, len(fps))
	for i := range names {
		names[i] = "doc-" + strconv.Itoa(i)
	}
	f = buildFrozen(t, fps, nil, FrozenOptions{})
	if err := f.SetNames(names); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	g, err := OpenFrozen(path, FrozenOpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Query(fps[77], 0, 0)
	if err != nil || len(m) == 0 {
		t.Fatalf("query: %v, %v", m, err)
	}
	if name, ok := g.Name(m[0].ID); !ok || name != names[m[0].ID] || fps[m[0].ID] != fps[77] {
		t.Fatalf("Name(%d) = %q, %v; want %q", m[0].ID, name, ok, names[m[0].ID])
	}
	if _, ok := g.Name(uint64(len(fps))); ok {
		t.Fatal("Name past the last id: ok")
	}
	g.Close()

	// Damage one byte in each section: a clear error naming it.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	secs := f.sections()
	for i, s := range secs {
		off := int64(binary64(data[16+24*i+8:]))
		bad := bytes.Clone(data)
		bad[off+int64(len(s.data))/2] ^= 0x10
		_, err := ReadFrozenBytes(bad, FrozenOpenOptions{})
		if !errors.Is(err, ErrFormat) || !bytes.Contains([]byte(err.Error()), []byte(s.name)) {
			t.Errorf("damaged %s: got %v, want ErrFormat naming it", s.name, err)
		}
	}
	for _, n := range []int{0, 8, 100, len(data) / 2, len(data) - 1} {
		if _, err := ReadFrozenBytes(data[:n], FrozenOpenOptions{}); !errors.Is(err, ErrFormat) {
			t.Errorf("truncated to %d: got %v, want ErrFormat", n, err)
		}
	}
}

func binary64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// FuzzFrozenSnapshot: no input makes opening or querying panic. Run it
// with -fuzzminimizetime 0: minimizing an input of a few kilobytes that
// found new coverage otherwise stalls the fuzzer for a minute at a time.
func FuzzFrozenSnapshot(f *testing.F) {
	for _, n := range []int{0, 1, 100} {
		fps, ids := frozenData(n, 5)
		x := buildFrozen(f, fps, ids, FrozenOptions{})
		var buf bytes.Buffer
		if _, err := x.WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, opt := range []FrozenOpenOptions{{}, {NoVerify: true}} {
			x, err := ReadFrozenBytes(b, opt)
			if err != nil {
				if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrVersion) {
					t.Fatalf("error %v wraps neither ErrFormat nor ErrVersion", err)
				}
				continue
			}
			for _, q := range []uint64{0, ^uint64(0), 0x0123456789abcdef} {
				if _, err := x.Query(q, x.Plan().K, 0); err != nil {
					t.Fatal(err)
				}
			}
			x.All(func(id, fp uint64) bool { return true })
		}
	})
}

// TestFrozen1M compares the default Frozen (flip-2x32) with the Index and a
// scan at a million random and a million clustered fingerprints.
func TestFrozen1M(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	for _, data := range []func(int, uint64) ([]uint64, []uint64){frozenData, clusteredData} {
		compareAtScale(t, data, 1_000_000, 300)
	}
}

// TestFrozen10M compares the Frozen with the Index and a scan at 10
// million fingerprints (NEARDUP_TEST_10M=1; about a minute and 3 GB).
func TestFrozen10M(t *testing.T) {
	if os.Getenv("NEARDUP_TEST_10M") == "" {
		t.Skip("NEARDUP_TEST_10M not set")
	}
	compareAtScale(t, frozenData, 10_000_000, 200)
}

func compareAtScale(t *testing.T, data func(int, uint64) ([]uint64, []uint64), n, queries int) {
	fps, ids := data(n, 10)
	f := buildFrozen(t, fps, ids, FrozenOptions{SortMemory: 256 << 20})
	sids := make([]string, n)
	for i, id := range ids {
		sids[i] = strconv.FormatUint(id, 10)
	}
	x, err := Build(sids, fps, Options{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	sids = nil
	checkFrozen(t, f, x, fps, ids, 3, queries)
}

func TestSelect64(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 10000 {
		x := r.Uint64() & r.Uint64()
		if x == 0 {
			continue
		}
		y, rank := x, uint64(0)
		for y != 0 {
			want := uint64(bits.TrailingZeros64(y))
			if got := select64(x, rank); got != want {
				t.Fatalf("select64(%#x, %d) = %d, want %d", x, rank, got, want)
			}
			y &= y - 1
			rank++
		}
	}
}

// TestFrozenConcurrent queries one mapped Frozen from several goroutines
// (run with -race).
func TestFrozenConcurrent(t *testing.T) {
	fps, ids := frozenData(20_000, 9)
	path := filepath.Join(t.TempDir(), "x.ndf")
	if err := buildFrozen(t, fps, ids, FrozenOptions{}).SaveFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFrozen(path, FrozenOpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 200 {
				q := flip(r, fps[r.IntN(len(fps))], r.IntN(4))
				got, err := f.Query(q, 3, 0)
				if err == nil && !slices.Equal(got, scanMatches(fps, ids, q, 3)) {
					err = fmt.Errorf("query %#x: got %v", q, got)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// clusteredData returns n fingerprints in tight clusters that defeat the
// tables' keys: a few hundred centres, each copied with up to 5 bits
// flipped, and runs of fingerprints sharing one 32-bit half (one bucket of
// a flip-2x32 table, thousands long) or one 16-bit block.
func clusteredData(n int, seed uint64) (fps, ids []uint64) {
	r := rand.New(rand.NewPCG(seed, 8))
	centres := make([]uint64, 300)
	for i := range centres {
		centres[i] = r.Uint64()
	}
	fps, ids = make([]uint64, n), make([]uint64, n)
	for i := range fps {
		c := centres[r.IntN(len(centres))]
		switch r.IntN(4) {
		case 0:
			fps[i] = flip(r, c, r.IntN(6))
		case 1:
			fps[i] = c&^0xffffffff | r.Uint64()&0xffffffff // same top half
		case 2:
			fps[i] = c&0xffffffff | r.Uint64()&^0xffffffff // same bottom half
		default:
			fps[i] = c&0xffff0000ffff0000 | r.Uint64()&0x0000ffff0000ffff
		}
		ids[i] = uint64(n - i)
	}
	return fps, ids
}

// TestFrozenClustered compares the probed layout (the default), the four
// exact tables of seeds-4x16 and a scan on clustered fingerprints, with
// queries near the clusters.
func TestFrozenClustered(t *testing.T) {
	fps, ids := clusteredData(60_000, 4)
	def := buildFrozen(t, fps, ids, FrozenOptions{})
	if def.Radius() != 1 || len(def.Plan().Tables) != 2 {
		t.Fatalf("default layout %s, want %s", def.Layout(), FlipLayout)
	}
	seeds := buildFrozen(t, fps, ids, FrozenOptions{Layout: "seeds-4x16"})
	r := rand.New(rand.NewPCG(4, 4))
	for q := range 400 {
		y := flip(r, fps[r.IntN(len(fps))], r.IntN(4))
		k := q % 4
		want := scanMatches(fps, ids, y, k)
		for _, f := range []*Frozen{def, seeds} {
			got, err := f.Query(y, k, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: query %#x k=%d: got %d matches, want (scan) %d", f.Layout(), y, k, len(got), len(want))
			}
		}
	}
}

// TestFrozenVersion1 opens a version 1 snapshot (seeds-4x16, written
// before probed layouts existed, by 'neardup index build --frozen --raw
// --plan seeds-4x16' of frozenData(3000, 11) as 8-byte values) and checks
// its answers against a scan.
func TestFrozenVersion1(t *testing.T) {
	f, err := OpenFrozen(filepath.Join("testdata", "frozen-v1.ndf"), FrozenOpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Radius() != 0 || len(f.Plan().Tables) != 4 {
		t.Fatalf("version 1 layout %s, want seeds-4x16", f.Layout())
	}
	fps, _ := frozenData(3000, 11)
	checkFrozen(t, f, nil, fps, positions(0, len(fps)), 3, 300)
	// A version from the future: a one-line error.
	b, err := os.ReadFile(filepath.Join("testdata", "frozen-v1.ndf"))
	if err != nil {
		t.Fatal(err)
	}
	b[8] = 9
	if _, err := ReadFrozenBytes(b, FrozenOpenOptions{}); !errors.Is(err, ErrVersion) {
		t.Fatalf("version 9: got %v, want ErrVersion", err)
	}
}

// TestProbeRanges: the probed buckets are the keys within the radius, cut
// to the high bits or spread over them, each once, ascending.
func TestProbeRanges(t *testing.T) {
	y := uint64(0xdeadbeef12345678)
	for _, tc := range []struct {
		kb, h  uint
		radius int
		want   int
	}{
		{32, 27, 1, 28}, {32, 30, 1, 31}, {32, 34, 1, 33}, {16, 27, 0, 1}, {21, 27, 1, 22}, {32, 27, 2, 1 + 27 + 27*26/2},
	} {
		rs := probeRanges(nil, y, tc.kb, tc.h, tc.radius)
		if len(rs) != tc.want {
			t.Fatalf("kb=%d h=%d r=%d: %d ranges, want %d", tc.kb, tc.h, tc.radius, len(rs), tc.want)
		}
		m := min(tc.kb, tc.h)
		yk := y >> (64 - m)
		for i, r := range rs {
			if i > 0 && r.b0 < rs[i-1].b1 {
				t.Fatalf("kb=%d h=%d: ranges %v not ascending and disjoint", tc.kb, tc.h, rs)
			}
			if r.b1-r.b0 != 1<<(tc.h-m) {
				t.Fatalf("range %v: width %d, want %d", r, r.b1-r.b0, 1<<(tc.h-m))
			}
			if d := bits.OnesCount64(r.b0>>(tc.h-m) ^ yk); d > tc.radius {
				t.Fatalf("range %v: key %d bits from the query's", r, d)
			}
		}
	}
}

func TestFrozenLayoutErrors(t *testing.T) {
	for _, tc := range []struct {
		opt  FrozenOptions
		want error
	}{
		{FrozenOptions{Layout: "flip:x:2"}, ErrLayout},
		{FrozenOptions{Layout: "flip:3:0"}, ErrLayout},
		{FrozenOptions{Layout: "flip:3:1"}, ErrPlan},
		{FrozenOptions{Layout: "flip-2x32", K: 4}, ErrOptions},
		{FrozenOptions{Plan: &Plan{K: 3, Blocks: []int{32, 32}, Tables: [][]int{{0}, {1}}}}, ErrPlan},
		{FrozenOptions{Plan: &Plan{K: 3, Blocks: []int{32, 32}, Tables: [][]int{{0, 1}}}, Radius: 1}, ErrPlan},
		{FrozenOptions{Plan: &Plan{K: 4, Blocks: []int{32, 32}, Tables: [][]int{{0}, {1}}}, Radius: 1}, ErrPlan},
		{FrozenOptions{Plan: &Plan{K: 6, Blocks: []int{32, 32}, Tables: [][]int{{0}, {1}}}, Radius: 6}, ErrPlan},
	} {
		if _, err := BuildFrozen(context.Background(), SliceSource([]uint64{1, 2}, nil), tc.opt); !errors.Is(err, tc.want) {
			t.Errorf("%+v: got %v, want %v", tc.opt, err, tc.want)
		}
	}
	p := Plan{K: 3, Blocks: []int{32, 32}, Tables: [][]int{{0}, {1}}}
	f := buildFrozen(t, []uint64{1, 2, 1 << 40}, nil, FrozenOptions{Plan: &p, Radius: 1})
	if m, err := f.Query(7, 3, 0); err != nil || len(m) != 2 {
		t.Fatalf("plan with radius 1: got %v, %v", m, err)
	}
}

// TestBuildFrozenFile: the snapshot written while the merge runs is the
// one BuildFrozen and WriteTo write, byte for byte, for the default and
// an exact layout, with several sort runs.
func TestBuildFrozenFile(t *testing.T) {
	fps, ids := frozenData(50_000, 12)
	dir := t.TempDir()
	for _, layout := range []string{"", "seeds-4x16"} {
		opt := FrozenOptions{Layout: layout, SortMemory: 256 << 10, TempDir: dir}
		path := filepath.Join(dir, "stream.ndf")
		g, err := BuildFrozenFile(context.Background(), SliceSource(fps, ids), path, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkFrozen(t, g, nil, fps, ids, 3, 200)
		g.Close()
		var want bytes.Buffer
		if _, err := buildFrozen(t, fps, ids, opt).WriteTo(&want); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("layout %q: streamed snapshot (%d bytes) differs from WriteTo's (%d)", layout, len(got), want.Len())
		}
		if _, err := OpenFrozen(path, FrozenOpenOptions{}); err != nil {
			t.Fatalf("checksums: %v", err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "neardup-frozen-*")); len(left) != 0 {
			t.Fatalf("sort runs left behind: %v", left)
		}
	}
}
