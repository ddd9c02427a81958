// Package outfiletest makes the targets that an output must not replace — a
// character device and a FIFO — for tests of the code that writes outputs.
//
//	null := outfiletest.CharDevice(t, "out.jsonl") // skips unless root
//	fifo := outfiletest.FIFO(t, "out.jsonl")
//	got := outfiletest.ReadFIFO(t, fifo)
//	... run the command with null and fifo as outputs ...
//	outfiletest.CheckCharDevice(t, null)
//	outfiletest.CheckFIFO(t, fifo)
//	data := <-got
package outfiletest

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// CharDevice makes a copy of /dev/null (character device 1:3) called name in
// a new temporary directory and returns its path. Only root may make device
// nodes: the test is skipped otherwise.
func CharDevice(t testing.TB, name string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a character device node (mknod) needs root")
	}
	path := filepath.Join(t.TempDir(), name)
	if err := mknodNull(path); err != nil {
		// As root in a container without CAP_MKNOD, for one.
		t.Skipf("mknod %s: %v", path, err)
	}
	return path
}

// FIFO makes a named pipe called name in a new temporary directory and
// returns its path.
func FIFO(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := mkfifo(path); err != nil {
		t.Skipf("mkfifo %s: %v", path, err)
	}
	// A second name for the same pipe lets Cleanup release a reader that is
	// still waiting for a writer even when the code under test replaced path.
	if err := os.Link(path, path+".keep"); err != nil {
		t.Fatal(err)
	}
	return path
}

// ReadFIFO starts a reader of the FIFO at path (made by FIFO) and returns a
// channel that receives everything read once the writer closes. Opening a
// FIFO blocks until both ends are open, so start the reader before the code
// that writes it. A reader still waiting when the test ends is released.
func ReadFIFO(t testing.TB, path string) <-chan string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			got <- "open error: " + err.Error()
			return
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			got <- "read error: " + err.Error()
			return
		}
		got <- string(b)
	}()
	t.Cleanup(func() { releaseReader(path + ".keep") })
	return got
}

// CheckCharDevice fails the test unless path is still a character device.
func CheckCharDevice(t testing.TB, path string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: mode %v, %v", path, modeOf(fi), err)
	}
}

// CheckFIFO fails the test unless path is still a FIFO.
func CheckFIFO(t testing.TB, path string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s is no longer a FIFO: mode %v, %v", path, modeOf(fi), err)
	}
}

func modeOf(fi os.FileInfo) os.FileMode {
	if fi == nil {
		return 0
	}
	return fi.Mode()
}
