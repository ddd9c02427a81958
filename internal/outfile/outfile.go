// Package outfile creates output files that appear whole or not at all,
// without ever replacing what is not a regular file.
//
//	f, err := outfile.Create("kept.jsonl")
//	if err != nil { ... }
//	defer f.Abort()                  // no-op after Commit
//	... write to f ...
//	if err := f.Commit(); err != nil { ... }
//
// A regular file, or a path that does not exist yet, is written to a
// temporary file beside it, synced, and renamed over it on Commit (the
// directory is synced too); Abort removes the temporary file, so a failed or
// interrupted run leaves the old file, or none, never a half-written one.
//
// Anything else — a character device such as /dev/null, a FIFO, a terminal,
// /dev/stdout, or a symlink to one of those — is opened and written in place:
// renaming over it would replace the device node or pipe with a regular file
// (as root, /dev/null itself), and a FIFO's reader would wait forever. Such a
// target has no "old version" to keep, so Commit only flushes and closes, and
// Abort closes without removing it; what was written before a failure has
// been written.
//
// A symlink to a regular file keeps the symlink: the temporary file is made
// beside the file it points to and renamed over that file.
//
// [CreateOrStdout] adds the command-line convention that "-" names standard
// output.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Stdout is the path that [CreateOrStdout] and [WriteFile] read as standard
// output.
const Stdout = "-"

// bufSize is the write buffer: outputs are written in many small pieces
// (a JSON line at a time).
const bufSize = 256 << 10

// File is an output being written. It is not safe for concurrent use.
type File struct {
	path string        // the name the caller gave
	dst  string        // the file renamed over (path with symlinks resolved); "" when writing in place
	f    *os.File      // the temporary file, the target opened in place, or nil for a plain writer
	w    *bufio.Writer // buffers writes to f or to the plain writer
	done bool          // Commit or Abort has run
}

// Create returns a File that writes path: through a temporary file renamed
// into place on Commit when path is a regular file or does not exist, and in
// place otherwise (see the package documentation). Opening a FIFO blocks
// until it has a reader, as a shell redirection does.
func Create(path string) (*File, error) {
	fi, err := os.Stat(path) // follows symlinks: /dev/stdout is whatever fd 1 is
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return createInPlace(path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	dst := path
	if err == nil {
		// An existing regular file: rename over the file itself, not over a
		// symlink that leads to it.
		if dst, err = filepath.EvalSymlinks(path); err != nil {
			return nil, err
		}
	}
	dir, base := filepath.Split(dst)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &File{path: path, dst: dst, f: f, w: bufio.NewWriterSize(f, bufSize)}, nil
}

func createInPlace(path string) (*File, error) {
	// No O_TRUNC: a device or pipe has nothing to truncate, and O_CREATE is
	// left out so that a target that vanished since Stat is an error rather
	// than a file created without the temporary-file guarantee.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	return &File{path: path, f: f, w: bufio.NewWriterSize(f, bufSize)}, nil
}

// NewWriter returns a File that writes to w, such as standard output: Commit
// flushes (it does not close w), Abort drops what is still buffered.
func NewWriter(w io.Writer, name string) *File {
	return &File{path: name, w: bufio.NewWriterSize(w, bufSize)}
}

// CreateOrStdout is [Create], except that the path "-" writes to stdout (as
// [NewWriter]).
func CreateOrStdout(path string, stdout io.Writer) (*File, error) {
	if path == Stdout {
		return NewWriter(stdout, "standard output"), nil
	}
	return Create(path)
}

// Name returns the path the File was created with.
func (f *File) Name() string { return f.path }

// InPlace reports whether the File writes its target directly rather than
// through a temporary file: a device, FIFO or standard output.
func (f *File) InPlace() bool { return f.dst == "" }

// Write buffers p for the target.
func (f *File) Write(p []byte) (int, error) { return f.w.Write(p) }

// WriteString buffers s for the target.
func (f *File) WriteString(s string) (int, error) { return f.w.WriteString(s) }

// Commit finishes the output: a temporary file is flushed, synced, made
// readable (0644) and renamed over the target, then the directory is synced;
// an in-place target is flushed and closed. On error nothing is renamed and
// the temporary file is removed. Commit after Commit or Abort does nothing.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.w.Flush()
	if f.f == nil {
		return f.wrap(err)
	}
	if f.dst == "" {
		if cerr := f.f.Close(); err == nil {
			err = cerr
		}
		return f.wrap(err)
	}
	tmp := f.f.Name()
	if err == nil {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// CreateTemp makes the file 0600; outputs are ordinary files.
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, f.dst)
	}
	if err != nil {
		os.Remove(tmp)
		return f.wrap(err)
	}
	// Sync the directory so that the rename itself survives a crash; not
	// every platform can, so a failure here is not an error.
	if d, derr := os.Open(filepath.Dir(f.dst)); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort abandons the output: a temporary file is closed and removed, leaving
// the target as it was; an in-place target is closed (never removed) with
// whatever was already flushed to it. Abort after Commit does nothing, so it
// can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	if f.f == nil {
		f.w.Reset(io.Discard)
		return
	}
	f.f.Close()
	if f.dst != "" {
		os.Remove(f.f.Name())
	}
}

func (f *File) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("writing %s: %w", f.path, err)
}

// WriteFile writes path (standard output for "-", when stdout is not nil)
// with write, committing only when write succeeds.
func WriteFile(path string, stdout io.Writer, write func(io.Writer) error) error {
	var f *File
	var err error
	if stdout != nil {
		f, err = CreateOrStdout(path, stdout)
	} else {
		f, err = Create(path)
	}
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// SyncDir syncs the directory dir, so that the entries made in it (a
// rename, a new file) survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
