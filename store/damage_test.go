package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/rule"
)

// putRecords puts n small records (ids d0, d1, ...) into s.
func putRecords(t testing.TB, s Store, n int) {
	t.Helper()
	ex, err := rule.NewExtractor(rule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := Record{Seq: uint64(i), ID: fmt.Sprint("d", i),
			Features: ex.Extract(fmt.Sprintf("document number %d with words alpha%d beta%d gamma%d", i, i, i*7, i*13))}
		if err := s.Put(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func countRecords(t testing.TB, s Store) int {
	t.Helper()
	n := 0
	if err := s.Load(context.Background(), func(Record) error { n++; return nil }); err != nil {
		t.Fatalf("Load: %v", err)
	}
	return n
}

// copyDir copies the regular files of the tree src to dst: taken while a
// store is open, the copy is what kill -9 would leave on disk.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// flipByte inverts the byte at off of file (off < 0 counts from the end).
func flipByte(t testing.TB, file string, off int64) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	if off < 0 || off >= int64(len(b)) {
		t.Fatalf("%s: offset %d outside its %d bytes", file, off, len(b))
	}
	b[off] ^= 0xff
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// glob1 returns the one file of dir matching pattern.
func glob1(t testing.TB, dir, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(m) != 1 {
		t.Fatalf("%s in %s: %v, %v; want one file", pattern, dir, m, err)
	}
	return m[0]
}

// wantDamaged checks that err wraps ErrDamaged, names file and is one line.
func wantDamaged(t testing.TB, err error, file string) {
	t.Helper()
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("open error = %v, want ErrDamaged", err)
	}
	if msg := err.Error(); !strings.Contains(msg, filepath.Base(file)) || strings.Contains(msg, "\n") {
		t.Errorf("open error = %q, want one line naming %s", msg, filepath.Base(file))
	}
}

// TestPebbleWALDamage damages the WAL of a store killed after 40
// acknowledged writes: start-up refuses it, naming the WAL and the writes
// missing, and Recover opens it, logging how many were dropped. Pebble
// alone opened it with the writes before the damage and said nothing.
func TestPebbleWALDamage(t *testing.T) {
	const n = 40
	src := t.TempDir()
	s, err := OpenPebble(src, PebbleOptions{MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	putRecords(t, s, n)
	killed := t.TempDir()
	copyDir(t, src, killed)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wal := glob1(t, filepath.Join(killed, pebbleDir), "*.log")
	fi, err := os.Stat(wal)
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	for _, tc := range []struct {
		name   string
		damage func(wal string)
	}{
		{"FlipStart", func(wal string) { flipByte(t, wal, 200) }},
		{"Flip2400", func(wal string) { flipByte(t, wal, 2400) }},
		{"FlipMiddle", func(wal string) { flipByte(t, wal, size/2) }},
		{"FlipLastWrite", func(wal string) { flipByte(t, wal, -20) }},
		{"Cut2400", func(wal string) { os.Truncate(wal, 2400) }},
		{"CutLastWrite", func(wal string) { os.Truncate(wal, size-20) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, killed, dir)
			tc.damage(filepath.Join(dir, pebbleDir, filepath.Base(wal)))
			_, err := OpenPebble(dir, PebbleOptions{MemTableSize: 1 << 20})
			wantDamaged(t, err, wal)
			if !strings.Contains(fmt.Sprint(err), "acknowledged writes are missing") {
				t.Errorf("open error = %v, want the count of writes missing", err)
			}

			var log bytes.Buffer
			s, err := OpenPebble(dir, PebbleOptions{MemTableSize: 1 << 20, Recover: true,
				Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatalf("open with Recover: %v", err)
			}
			got := countRecords(t, s)
			if got >= n {
				t.Errorf("recovered %d records of %d: the damage lost none?", got, n)
			}
			if want := fmt.Sprintf("documents_dropped=%d", n-got); !strings.Contains(log.String(), want) {
				t.Errorf("log %q, want %s", log.String(), want)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// Recovered, the store opens again without Recover.
			s, err = OpenPebble(dir, PebbleOptions{MemTableSize: 1 << 20})
			if err != nil {
				t.Fatalf("open after recovery: %v", err)
			}
			if again := countRecords(t, s); again != got {
				t.Errorf("after recovery and restart: %d records, want %d", again, got)
			}
			s.Close()
		})
	}

	t.Run("Intact", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, killed, dir)
		s, err := OpenPebble(dir, PebbleOptions{MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if got := countRecords(t, s); got != n {
			t.Errorf("after kill: %d records, want %d", got, n)
		}
	})
}

// TestStoreFileDamage flips bytes in a closed store's files: OpenPebble and
// OpenBolt return ErrDamaged naming the file, in one line, and do not panic.
func TestStoreFileDamage(t *testing.T) {
	type damage struct {
		file    string // glob under the data directory
		off     int64
		damaged bool // must be refused (else: refused, or opened with every record)
	}
	for _, tc := range []struct {
		engine  string
		open    func(dir string) (Store, error)
		damages []damage
	}{
		{EnginePebble, func(dir string) (Store, error) { return OpenPebble(dir, PebbleOptions{MemTableSize: 1 << 20}) },
			[]damage{{"pebble/MANIFEST-*", 10, true}, {"pebble/MANIFEST-*", 40, false}, {"pebble/MANIFEST-*", -10, false},
				{"pebble/*.sst", 100, true}, {"pebble/*.sst", 2000, true}, {"pebble/*.sst", -10, true},
				{"pebble/*.sst", -60, true}}},
		{EngineBolt, func(dir string) (Store, error) { return OpenBolt(dir, BoltOptions{}) },
			[]damage{{boltFile, 16, true}, {boltFile, 4096 + 16, false}, {boltFile, 2*4096 + 8, false},
				{boltFile, 3*4096 + 20, false}, {boltFile, 4*4096 + 10, false}, {boltFile, 5*4096 + 3, false},
				{boltFile, 6*4096 + 9, false}, {boltFile, 7*4096 + 100, false}, {boltFile, 8*4096 + 40, false}}},
		// No page header is damaged past the meta pages: bbolt's own walk of
		// the pages when it opens the file for writing (freepages: the free
		// list is not stored) reports a bad overflow count and then races
		// its own rollback on a goroutine of its own, which ends the process
		// (about one run in sixty with 8*4096+12 here). store/doc.go,
		// "Damage", says so.
	} {
		src := t.TempDir()
		s, err := tc.open(src)
		if err != nil {
			t.Fatal(err)
		}
		putRecords(t, s, 40)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		for _, d := range tc.damages {
			t.Run(fmt.Sprintf("%s/%s@%d", tc.engine, filepath.Base(d.file), d.off), func(t *testing.T) {
				if raceEnabled && tc.engine == EngineBolt {
					// On some damaged pages bbolt's own freelist walk
					// (DB.freepages) reads a transaction that its deferred
					// rollback is closing on another goroutine: a race
					// inside bbolt's failure path, which the detector
					// reports. The pass without it asserts the behaviour.
					t.Skip("race detector: bbolt's freepages races its own rollback on a damaged page")
				}
				dir := t.TempDir()
				copyDir(t, src, dir)
				file := glob1(t, dir, d.file)
				flipByte(t, file, d.off)
				s, err := tc.open(dir)
				if err == nil {
					// A byte no read depends on (a free page, the end of
					// a record nothing needs): all there, or refused.
					// bbolt has no checksums: a damaged record shows
					// when it is decoded, as loading does.
					defer s.Close()
					n := 0
					err := s.Load(context.Background(), func(Record) error { n++; return nil })
					if err == nil && (n != 40 || d.damaged) {
						t.Fatalf("opened the damaged store with %d records of 40", n)
					}
					if err != nil {
						wantDamaged(t, err, file)
					}
					return
				}
				wantDamaged(t, err, file)
			})
		}
	}
}

// TestStoreLocked opens a data directory twice: the second open says the
// directory is locked by another process and names it.
func TestStoreLocked(t *testing.T) {
	for _, tc := range []struct {
		engine string
		open   func(dir string) (Store, error)
	}{
		{EnginePebble, func(dir string) (Store, error) { return OpenPebble(dir, PebbleOptions{MemTableSize: 1 << 20}) }},
		{EngineBolt, func(dir string) (Store, error) { return OpenBolt(dir, BoltOptions{Timeout: 50 * time.Millisecond}) }},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			dir := t.TempDir()
			s, err := tc.open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			s2, err := tc.open(dir)
			if err == nil {
				s2.Close()
			}
			if !errors.Is(err, ErrLocked) || !strings.Contains(fmt.Sprint(err), dir) {
				t.Errorf("second open: %v, want ErrLocked naming %s", err, dir)
			}
		})
	}
}

// TestBoltMetaDamage damages the newer of bbolt's two meta pages: bbolt
// opens the older one, without the last commit, and says nothing; OpenBolt
// refuses it, and Recover opens it, logging the writes dropped.
func TestBoltMetaDamage(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenBolt(dir, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	putRecords(t, s, 40)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	flipByte(t, filepath.Join(dir, boltFile), 16) // meta page 0, the newer here
	_, err = OpenBolt(dir, BoltOptions{})
	wantDamaged(t, err, boltFile)
	var log bytes.Buffer
	s, err = OpenBolt(dir, BoltOptions{Recover: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatalf("open with Recover: %v", err)
	}
	defer s.Close()
	if got := countRecords(t, s); got != 39 {
		t.Errorf("recovered %d records, want 39", got)
	}
	if !strings.Contains(log.String(), "documents_dropped=1") {
		t.Errorf("log %q, want documents_dropped=1", log.String())
	}
}
