package index

import (
	"bytes"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/outfile/outfiletest"
)

var update = flag.Bool("update", false, "rewrite index/testdata/v1.snapshot")

func snapshotBytes(t testing.TB, x *Index) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := x.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo = %d, %v; wrote %d", n, err, buf.Len())
	}
	return buf.Bytes()
}

func TestSnapshotRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 50, 5000} {
		fps := plantedSet(r, n, 5)
		ids := numberedIDs(n)
		x, err := New(Options{Memtable: 100})
		if err != nil {
			t.Fatal(err)
		}
		for i := range fps {
			if err := x.Add(ids[i], fps[i]); err != nil {
				t.Fatal(err)
			}
		}
		alive := make([]bool, n)
		for i := range alive {
			alive[i] = i%7 != 3
			if !alive[i] {
				x.Remove(ids[i])
			}
		}
		data := snapshotBytes(t, x)
		y, err := Read(bytes.NewReader(data), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if y.Len() != x.Len() || !planEqual(y.Plan(), x.Plan()) {
			t.Fatalf("n=%d: loaded len %d plan %v, want %d %v", n, y.Len(), y.Plan(), x.Len(), x.Plan())
		}
		if n > 0 {
			checkQueries(t, y, ids, fps, alive, r, 3, 200)
		}
		// Same contents give the same bytes.
		if again := snapshotBytes(t, y); !bytes.Equal(again, data) {
			t.Fatalf("n=%d: snapshot of the loaded index differs", n)
		}
		// A different plan can be asked for on load.
		z, err := Read(bytes.NewReader(data), Options{Layout: "manku-20"})
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			checkQueries(t, z, ids, fps, alive, r, 3, 100)
		}
		// Deltas of 4300 random 64-bit values take 8 bytes; ids 7 or 8.
		if n == 5000 && len(data) > x.Len()*16 {
			t.Errorf("snapshot of %d is %d bytes; want under 16 per item", x.Len(), len(data))
		}
	}
}

func planEqual(a, b Plan) bool {
	return a.K == b.K && slices.Equal(a.Blocks, b.Blocks) && slices.EqualFunc(a.Tables, b.Tables, slices.Equal)
}

func TestSaveLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.ndx")
	x, _ := Build([]string{"a", "b"}, []uint64{1, 3}, Options{})
	if err := x.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	y, err := LoadFile(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := y.Query(0, 2, 0)
	want := []Match{{"a", 1, 1}, {"b", 3, 2}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temp files left behind: %v", ents)
	}
	if err := x.SaveFile(filepath.Join(dir, "no", "such", "dir")); err == nil {
		t.Fatal("SaveFile into a missing directory succeeded")
	}
}

// TestSaveFileNotRegular saves to a device node and a FIFO: both are written
// in place and stay what they were, and the FIFO's reader gets the snapshot.
func TestSaveFileNotRegular(t *testing.T) {
	x, _ := Build([]string{"a", "b"}, []uint64{1, 3}, Options{})
	want := snapshotBytes(t, x)
	t.Run("device", func(t *testing.T) {
		null := outfiletest.CharDevice(t, "null")
		if err := x.SaveFile(null); err != nil {
			t.Fatal(err)
		}
		outfiletest.CheckCharDevice(t, null)
	})
	t.Run("fifo", func(t *testing.T) {
		fifo := outfiletest.FIFO(t, "fifo")
		got := outfiletest.ReadFIFO(t, fifo)
		if err := x.SaveFile(fifo); err != nil {
			t.Fatal(err)
		}
		outfiletest.CheckFIFO(t, fifo)
		if b := <-got; b != string(want) {
			t.Errorf("the FIFO's reader got %d bytes, want the %d of WriteTo", len(b), len(want))
		}
	})
}

func TestCorruptSnapshots(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	fps := plantedSet(r, 300, 4)
	x, _ := Build(numberedIDs(300), fps, Options{})
	data := snapshotBytes(t, x)
	// Every truncation fails.
	for i := 0; i < len(data); i += 1 + i/50 {
		if _, err := Read(bytes.NewReader(data[:i]), Options{}); !errors.Is(err, ErrFormat) {
			t.Fatalf("truncated to %d of %d: got %v, want ErrFormat", i, len(data), err)
		}
	}
	// Every single-byte change fails (the CRCs catch the payloads).
	for i := 0; i < len(data); i += 1 + i/100 {
		bad := slices.Clone(data)
		bad[i] ^= 0x5a
		_, err := Read(bytes.NewReader(bad), Options{})
		if err == nil {
			t.Fatalf("byte %d flipped: no error", i)
		}
	}
	bad := slices.Clone(data)
	bad[8] = 9
	if _, err := Read(bytes.NewReader(bad), Options{}); !errors.Is(err, ErrVersion) {
		t.Fatalf("version 9: got %v, want ErrVersion", err)
	}
	if _, err := Read(bytes.NewReader(append(slices.Clone(data), 0)), Options{}); err != nil {
		t.Fatalf("trailing bytes after the end section should be ignored: %v", err)
	}
}

// TestSnapshotV1 loads a version 1 snapshot kept in testdata so later
// versions keep reading it. Regenerate (only when the format is meant to
// change) with go test -run TestSnapshotV1 -update.
func TestSnapshotV1(t *testing.T) {
	path := filepath.Join("testdata", "v1.snapshot")
	ids := []string{"alpha", "beta", "gamma", "delta", "epsilon", "日本"}
	fps := []uint64{0x0123456789abcdef, 0x0123456789abcdee, 0xfedcba9876543210, 0xfedcba9876543211, 0, 0x0123456789abcdef}
	if *update {
		x, err := Build(ids, fps, Options{Layout: "seeds-4x16"})
		if err != nil {
			t.Fatal(err)
		}
		if err := x.SaveFile(path); err != nil {
			t.Fatal(err)
		}
	}
	x, err := LoadFile(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !planEqual(x.Plan(), Seeds4x16) || x.Len() != len(ids) {
		t.Fatalf("plan %v len %d", x.Plan(), x.Len())
	}
	got, _ := x.Query(0x0123456789abcdef, 3, 0)
	want := []Match{{"alpha", 0x0123456789abcdef, 0}, {"日本", 0x0123456789abcdef, 0}, {"beta", 0x0123456789abcdee, 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func FuzzReadSnapshot(f *testing.F) {
	x, _ := Build([]string{"a", "bb", "ccc"}, []uint64{1, 1 << 40, 1<<40 | 3}, Options{})
	var buf bytes.Buffer
	x.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(snapshotMagic))
	if data, err := os.ReadFile(filepath.Join("testdata", "v1.snapshot")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := Read(bytes.NewReader(data), Options{})
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error not ErrFormat/ErrVersion: %v", err)
			}
			return
		}
		// What loads writes back and loads again to the same index.
		var out bytes.Buffer
		if _, err := x.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		y, err := Read(bytes.NewReader(out.Bytes()), Options{})
		if err != nil || y.Len() != x.Len() {
			t.Fatalf("round trip: %v (len %d vs %d)", err, y.Len(), x.Len())
		}
		x.Query(0, x.K(), 10)
	})
}

// TestReadItems reads the ids and fingerprints of the v1 snapshot without an
// index, in the snapshot's order (ascending fingerprints), and refuses a
// truncated file.
func TestReadItems(t *testing.T) {
	ids, fps, err := ReadItemsFile(filepath.Join("testdata", "v1.snapshot"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"alpha": 0x0123456789abcdef, "beta": 0x0123456789abcdee, "gamma": 0xfedcba9876543210,
		"delta": 0xfedcba9876543211, "epsilon": 0, "日本": 0x0123456789abcdef}
	if len(ids) != len(want) || len(fps) != len(ids) {
		t.Fatalf("got %d ids, %d fingerprints; want %d", len(ids), len(fps), len(want))
	}
	for i, id := range ids {
		if fp, ok := want[id]; !ok || fp != fps[i] {
			t.Errorf("item %d: %q %016x, want %016x (known: %v)", i, id, fps[i], fp, ok)
		}
	}
	if !slices.IsSorted(fps) {
		t.Errorf("fingerprints %x not in snapshot (ascending) order", fps)
	}

	x, _ := Build([]string{"a", "b"}, []uint64{1, 2}, Options{})
	data := snapshotBytes(t, x)
	if _, _, err := ReadItems(bytes.NewReader(data[:len(data)-3])); !errors.Is(err, ErrFormat) {
		t.Errorf("truncated: got %v, want ErrFormat", err)
	}
}
