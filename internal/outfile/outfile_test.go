package outfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/outfile/outfiletest"
)

// tmpFiles lists the temporary files left in dir.
func tmpFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestRegularFileCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.InPlace() {
		t.Error("a regular file is written in place, want through a temporary file")
	}
	io.WriteString(f, "new\n")
	// Until Commit the old content stays and the new one is beside it.
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("before Commit the file holds %q, want %q", b, "old\n")
	}
	if n := len(tmpFiles(t, dir)); n != 1 {
		t.Errorf("%d temporary files beside the target, want 1", n)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new\n" {
		t.Errorf("after Commit the file holds %q, want %q", b, "new\n")
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if left := tmpFiles(t, dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	f.Abort() // after Commit: nothing happens
	if _, err := os.Stat(path); err != nil {
		t.Errorf("Abort after Commit: %v", err)
	}
}

func TestRegularFileAbort(t *testing.T) {
	dir := t.TempDir()
	for _, exists := range []bool{false, true} {
		path := filepath.Join(dir, "out.txt")
		if exists {
			os.WriteFile(path, []byte("old\n"), 0o644)
		}
		f, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(bytes.Repeat([]byte("x"), 3*bufSize)) // more than the buffer: some reaches the temporary file
		f.Abort()
		b, err := os.ReadFile(path)
		switch {
		case exists && string(b) != "old\n":
			t.Errorf("existing file after Abort holds %q (%v), want the old content", b, err)
		case !exists && !errors.Is(err, os.ErrNotExist):
			t.Errorf("new file after Abort: %v, want it absent", err)
		}
		if left := tmpFiles(t, dir); len(left) != 0 {
			t.Errorf("temporary files left: %v", left)
		}
		if err := f.Commit(); err != nil {
			t.Errorf("Commit after Abort: %v, want nil (no-op)", err)
		}
		if _, err := os.Stat(path); exists == errors.Is(err, os.ErrNotExist) {
			t.Errorf("Commit after Abort changed the target (exists %v, stat %v)", exists, err)
		}
	}
}

func TestMissingDirectory(t *testing.T) {
	if _, err := Create(filepath.Join(t.TempDir(), "no", "such", "out.txt")); err == nil {
		t.Error("Create in a missing directory succeeded")
	}
}

// TestSymlinkToRegularFile checks that the link survives and the file it
// points to gets the new content.
func TestSymlinkToRegularFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.txt")
	link := filepath.Join(dir, "link.txt")
	os.WriteFile(real, []byte("old\n"), 0o644)
	if err := os.Symlink("real.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, nil, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link after the write: %v, %v; want a symlink", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new\n" {
		t.Errorf("target holds %q, want %q", b, "new\n")
	}
}

func TestCharDevice(t *testing.T) {
	path := outfiletest.CharDevice(t, "null")
	for _, commit := range []bool{true, false} {
		f, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if !f.InPlace() {
			t.Error("a device is written through a temporary file, want in place")
		}
		io.WriteString(f, "discarded\n")
		if commit {
			if err := f.Commit(); err != nil {
				t.Fatalf("Commit: %v", err)
			}
		} else {
			f.Abort()
		}
		outfiletest.CheckCharDevice(t, path)
		if left := tmpFiles(t, filepath.Dir(path)); len(left) != 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
}

func TestFIFO(t *testing.T) {
	path := outfiletest.FIFO(t, "fifo")
	const line = "a line of output\n"
	want := strings.Repeat(line, 50000) // several buffers
	for _, commit := range []bool{true, false} {
		got := outfiletest.ReadFIFO(t, path)
		f, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if !f.InPlace() {
			t.Error("a FIFO is written through a temporary file, want in place")
		}
		for range 50000 { // line by line, as the commands write
			io.WriteString(f, line)
		}
		if commit {
			if err := f.Commit(); err != nil {
				t.Fatalf("Commit: %v", err)
			}
		} else {
			f.Abort()
		}
		outfiletest.CheckFIFO(t, path) // before waiting: a replaced FIFO never gets a writer
		s := <-got
		if commit && s != want {
			t.Errorf("reader got %d bytes, want %d", len(s), len(want))
		}
		if !commit && (len(s) >= len(want) || !strings.HasPrefix(want, s)) {
			// Abort drops what is still buffered; what was flushed stays.
			t.Errorf("after Abort the reader got %d bytes, want a prefix shorter than %d", len(s), len(want))
		}
	}
}

func TestStdout(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteFile("-", &buf, func(w io.Writer) error { _, err := io.WriteString(w, "hello\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "hello\n" {
		t.Errorf("stdout got %q, want %q", buf.String(), "hello\n")
	}
	buf.Reset()
	wantErr := errors.New("boom")
	if err := WriteFile("-", &buf, func(w io.Writer) error { io.WriteString(w, "partial"); return wantErr }); err != wantErr {
		t.Errorf("error %v, want %v", err, wantErr)
	}
	if buf.Len() != 0 {
		t.Errorf("a failed write sent %q to stdout, want the buffer dropped", buf.String())
	}
	// Without a stdout writer "-" is an ordinary file name.
	dir := t.TempDir()
	t.Chdir(dir)
	if err := WriteFile("-", nil, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "-")); string(b) != "x" {
		t.Errorf("file named -: %q, %v", b, err)
	}
}

func TestWriteFileError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	wantErr := errors.New("boom")
	if err := WriteFile(path, nil, func(w io.Writer) error { io.WriteString(w, "partial"); return wantErr }); err != wantErr {
		t.Errorf("error %v, want %v", err, wantErr)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed write left %s (%v)", path, err)
	}
	if left := tmpFiles(t, dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
