package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// runServe runs "neardup serve" on dir in a child process until it exits
// and returns its exit code, stdout and stderr.
func runServe(t *testing.T, dir string, extra ...string) (int, string, string) {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--log-level", "warn"}, extra...)
	// A child that starts serves until killed: the test then fails.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveChildEnv+"="+strings.Join(args, "\t"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// fillStore puts n documents into s.
func fillStore(t *testing.T, s store.Store, n int) {
	t.Helper()
	ex, err := rule.NewExtractor(rule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := store.Record{Seq: uint64(i), ID: fmt.Sprint("d", i),
			Features: ex.Extract(fmt.Sprintf("document %d words alpha%d beta%d gamma%d", i, i, i*7, i*13))}
		if err := s.Put(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func flip(t *testing.T, file string, off int64) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0xff
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func glob(t *testing.T, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(pattern)
	if len(m) != 1 {
		t.Fatalf("%s: %v, want one file", pattern, m)
	}
	return m[0]
}

// TestServeDamagedStore starts "neardup serve" on damaged and locked data
// directories: it exits 1 with one line on stderr naming the file (no
// goroutine trace), before printing "listening on". Pebble's fatal log and
// bbolt's panics used to end it with a trace after it listened.
func TestServeDamagedStore(t *testing.T) {
	openPebble := func(dir string) store.Store {
		s, err := store.OpenPebble(dir, store.PebbleOptions{MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	openBolt := func(dir string) store.Store {
		s, err := store.OpenBolt(dir, store.BoltOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name string
		// damage makes the store in dir and damages it; it returns the
		// file stderr must name.
		damage func(t *testing.T, dir string) string
	}{
		{"PebbleSSTable", func(t *testing.T, dir string) string {
			s := openPebble(dir)
			fillStore(t, s, 40)
			s.Close()
			f := glob(t, filepath.Join(dir, "pebble", "*.sst"))
			flip(t, f, 100)
			return filepath.Base(f)
		}},
		{"PebbleSSTableFooter", func(t *testing.T, dir string) string {
			s := openPebble(dir)
			fillStore(t, s, 40)
			s.Close()
			f := glob(t, filepath.Join(dir, "pebble", "*.sst"))
			fi, _ := os.Stat(f)
			flip(t, f, fi.Size()-10)
			return filepath.Base(f)
		}},
		{"BoltPage", func(t *testing.T, dir string) string {
			s := openBolt(dir)
			fillStore(t, s, 40)
			s.Close()
			// Every page's id but the meta pages': bbolt panicked on
			// the pages in use.
			file := filepath.Join(dir, "neardup.db")
			fi, _ := os.Stat(file)
			for off := int64(2 * 4096); off < fi.Size(); off += 4096 {
				flip(t, file, off+1)
			}
			return "neardup.db"
		}},
		{"PebbleLocked", func(t *testing.T, dir string) string {
			s := openPebble(dir)
			t.Cleanup(func() { s.Close() })
			return "locked by another process: " + dir
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			want := tc.damage(t, dir)
			code, stdout, stderr := runServe(t, dir)
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if strings.Contains(stdout, "listening on") {
				t.Errorf("stdout %q: listened on a damaged store", stdout)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], want) || strings.Contains(stderr, "goroutine") {
				t.Errorf("stderr:\n%s\nwant one line naming %s", stderr, want)
			}
		})
	}
}

// TestServeForceRecover starts "neardup serve" on a pebble store whose WAL
// lost acknowledged writes: refused, naming the WAL; with --force-recover it
// starts and logs the documents dropped.
func TestServeForceRecover(t *testing.T) {
	src := t.TempDir()
	s, err := store.OpenPebble(src, store.PebbleOptions{MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	fillStore(t, s, 40)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil { // open: what kill -9 leaves
		t.Fatal(err)
	}
	s.Close()
	os.Remove(filepath.Join(dir, "pebble", "LOCK"))
	wal := glob(t, filepath.Join(dir, "pebble", "*.log"))
	flip(t, wal, 2400)
	code, stdout, stderr := runServe(t, dir)
	if code != 1 || strings.Contains(stdout, "listening on") ||
		!strings.Contains(stderr, filepath.Base(wal)) || !strings.Contains(stderr, "acknowledged writes are missing") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1, nothing, the WAL named", code, stdout, stderr)
	}
	c := startServe(t, dir, "--force-recover")
	resp, err := http.Get(c.base + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var stats struct{ Documents int }
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil {
		t.Fatal(err)
	}
	if stats.Documents == 0 || stats.Documents >= 40 {
		t.Errorf("recovered store holds %d documents, want those before the damage (some, not 40)", stats.Documents)
	}
}
