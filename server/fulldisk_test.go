package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/neardup/neardup/store"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory and returns it;
// the test is skipped when that cannot be done (not root, no mount).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("mount -t tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestPebbleFullDisk fills the disk under a pebble store: writes fail with
// 503 and /readyz says not ready; once space is freed, /readyz is ready and
// writes succeed again, and every write acknowledged is there after a
// restart. Before, a failed WAL sync refused every write until a restart
// while /readyz answered 200.
func TestPebbleFullDisk(t *testing.T) {
	// 4 MiB: memtables flush (and fail to) while the disk fills; the
	// default 64 MiB: the WAL alone fills it.
	for _, memtable := range []uint64{4 << 20, store.DefaultPebbleMemTable} {
		t.Run(fmt.Sprint("MemTable", memtable>>20, "MiB"), func(t *testing.T) { testPebbleFullDisk(t, memtable) })
	}
}

func testPebbleFullDisk(t *testing.T, memtable uint64) {
	mnt := mountTmpfs(t, 20<<20)
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 6<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mnt, "data")
	open := func() *store.PebbleStore {
		s, err := store.OpenPebble(dir, store.PebbleOptions{MemTableSize: memtable})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	srv, err := New(open(), Options{Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	meta := strings.Repeat("x", 64<<10)
	post := func(i int) int {
		body := fmt.Sprintf(`{"id":"d%d","text":"document %d words w%d v%d u%d","mode":"add","meta":{"pad":%q}}`, i, i, i, i*3, i*7, meta)
		return call(t, h, "POST", "/v1/documents", body, nil)
	}
	var acked []string
	i := 0
	for ; ; i++ {
		if i == 2000 {
			t.Fatal("2000 documents of 64 KiB on a 20 MiB disk and no write failed")
		}
		code := post(i)
		if code == http.StatusServiceUnavailable {
			break
		}
		if code != http.StatusCreated {
			t.Fatalf("POST d%d: %d", i, code)
		}
		acked = append(acked, fmt.Sprint("d", i))
	}
	t.Logf("disk full after %d documents", len(acked))
	if code := call(t, h, "GET", "/readyz", "", nil); code != http.StatusServiceUnavailable {
		t.Errorf("GET /readyz with the disk full = %d, want 503", code)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	ready := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if call(t, h, "GET", "/readyz", "", nil) == http.StatusOK {
			ready = true
			break
		}
	}
	if !ready {
		t.Fatal("GET /readyz still 503 after space was freed")
	}
	for j := 0; j < 5; j++ {
		i++
		if code := post(i); code != http.StatusCreated {
			t.Fatalf("POST d%d after space was freed: %d, want 201", i, code)
		}
		acked = append(acked, fmt.Sprint("d", i))
	}
	if err := srv.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	s := open()
	defer s.Close()
	for _, id := range acked {
		if _, err := s.Get(context.Background(), id); err != nil {
			t.Errorf("acknowledged %s after a restart: %v", id, err)
		}
	}
}
