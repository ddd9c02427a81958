package keptfiles

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/neardup/neardup/internal/outfile"
)

// ErrFormat is wrapped by the errors of reading a kept set that is not one,
// is damaged, or was made with other settings.
var ErrFormat = errors.New("keptfiles: bad kept set")

// The directory's entries (doc.go).
const (
	currentName = "CURRENT"
	lockName    = "LOCK"
	storeName   = "store"
	keptsetName = "keptset"
	indexName   = "index"
	currentHead = "neardup kept set 1"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// genDir is the directory of generation gen.
func genDir(dir string, gen uint64) string { return filepath.Join(dir, fmt.Sprintf("%06d", gen)) }

// current is what CURRENT says: the generation that is the set, and the
// settings its features were made with.
type current struct {
	gen      uint64
	settings string
}

// readCurrent reads dir's CURRENT.
func readCurrent(dir string) (current, error) {
	path := filepath.Join(dir, currentName)
	b, err := os.ReadFile(path)
	if err != nil {
		return current{}, fmt.Errorf("keptfiles: %w", err)
	}
	bad := func(why string) error { return fmt.Errorf("%w: %s: %s", ErrFormat, path, why) }
	i := strings.LastIndex(string(b), "crc ")
	if i < 0 {
		return current{}, bad("no checksum line")
	}
	want, err := strconv.ParseUint(strings.TrimSpace(string(b[i+4:])), 10, 32)
	if err != nil || crc32.Checksum(b[:i], castagnoli) != uint32(want) {
		return current{}, bad("checksum mismatch")
	}
	lines := strings.Split(strings.TrimSuffix(string(b[:i]), "\n"), "\n")
	if len(lines) != 3 || lines[0] != currentHead || !strings.HasPrefix(lines[1], "gen ") || !strings.HasPrefix(lines[2], "settings ") {
		return current{}, bad("not a kept set of this version (" + strconv.Quote(lines[0]) + ")")
	}
	gen, err := strconv.ParseUint(strings.TrimPrefix(lines[1], "gen "), 10, 64)
	if err != nil || gen == 0 {
		return current{}, bad("bad generation")
	}
	return current{gen: gen, settings: strings.TrimPrefix(lines[2], "settings ")}, nil
}

// writeCurrent replaces dir's CURRENT: written aside, synced, renamed, the
// directory synced (internal/outfile). The rename is the commit.
func writeCurrent(dir string, c current) error {
	body := fmt.Sprintf("%s\ngen %d\nsettings %s\n", currentHead, c.gen, c.settings)
	body += fmt.Sprintf("crc %d\n", crc32.Checksum([]byte(body), castagnoli))
	return outfile.WriteFile(filepath.Join(dir, currentName), nil, func(w io.Writer) error {
		_, err := io.WriteString(w, body)
		return err
	})
}

// lockDir creates dir if needed and locks it for this process: two runs on
// one kept set at a time would both make the next generation.
func lockDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("keptfiles: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("keptfiles: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("keptfiles: %s is in use by another run", dir)
		}
		return nil, fmt.Errorf("keptfiles: locking %s: %w", dir, err)
	}
	return f, nil
}

// removeStale removes what a crashed run left in dir: every generation but
// keep (0: all of them) and CURRENT's temporary files.
func removeStale(dir string, keep uint64) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("keptfiles: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if name == currentName || name == lockName {
			continue
		}
		if gen, err := strconv.ParseUint(name, 10, 64); err == nil && gen == keep && e.IsDir() {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("keptfiles: removing what a crashed run left: %w", err)
		}
	}
	return nil
}

// linked are the files that their writers never change once written, which
// a copy of a generation shares with it (a hard link): pebble's tables and
// blob files, keptset's parts. Every other file (pebble's WAL, MANIFEST and
// OPTIONS, the store's ACKED, keptset's MANIFEST and deletes, the snapshot)
// is copied: it is appended to, rewritten or recycled in place.
func linked(name string) bool {
	switch filepath.Ext(name) {
	case ".sst", ".blob", ".part":
		return true
	}
	return false
}

// copyGen makes dst a copy of the generation src, which no process has
// open: files that never change are linked, the others copied and synced,
// and every directory synced.
func copyGen(src, dst string) error {
	var dirs []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			dirs = append(dirs, to)
			return os.Mkdir(to, 0o755)
		case d.Name() == "LOCK":
			return nil // pebble's: it makes its own
		case linked(d.Name()):
			if os.Link(p, to) == nil {
				return nil
			}
			return copyFile(p, to) // a file system without hard links
		default:
			return copyFile(p, to)
		}
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := outfile.SyncDir(dirs[i]); err != nil {
			return err
		}
	}
	return outfile.SyncDir(filepath.Dir(dst))
}

// copyFile copies the regular file src to dst, synced.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	return errors.Join(err, out.Close())
}
