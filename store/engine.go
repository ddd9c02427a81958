package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/internal/outfile"
)

// Engines of the embedded store, as 'neardup serve --engine' names them.
const (
	EngineBolt   = "bbolt"  // BoltStore: one B+tree file, DATA/neardup.db
	EnginePebble = "pebble" // PebbleStore: an LSM tree in DATA/pebble
)

// DefaultEngine is the engine of a new data directory when none is asked
// for: pebble, whose group commit is one sequential WAL append and fsync
// where bbolt rewrites B+tree pages (BENCHMARKS.md, "Embedded store: bbolt
// vs pebble").
const DefaultEngine = EnginePebble

// DataEngine returns the engine of the store in the data directory dir: the
// one its engine file names, else the one its files show, else "" (no store
// there yet, or no directory).
func DataEngine(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, engineFile))
	switch {
	case err == nil:
		return strings.TrimSpace(string(b)), nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("store: data directory: %w", err)
	}
	return dirEngine(dir), nil
}

// engineFile, in the data directory, names the engine that made it: one line,
// "bbolt" or "pebble". Directories made before it existed hold only
// neardup.db, which identifies bbolt.
const engineFile = "ENGINE"

// dirEngine tells the engine of the store in dir from its contents, for a
// directory without an engine file: "" when it holds no store.
func dirEngine(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, boltFile)); err == nil {
		return EngineBolt
	}
	if _, err := os.Stat(filepath.Join(dir, pebbleDir)); err == nil {
		return EnginePebble
	}
	return ""
}

// claimEngine makes sure the data directory dir is engine's: it records
// engine in dir's engine file when the directory has none, and refuses, with
// an error wrapping ErrStoreFormat, a directory made by another engine. Each
// engine would otherwise start empty beside the other's data, and the
// service would accept again every document stored before.
func claimEngine(dir, engine string) error {
	path := filepath.Join(dir, engineFile)
	for range 2 {
		b, err := os.ReadFile(path)
		if err == nil {
			if got := strings.TrimSpace(string(b)); got != engine {
				return fmt.Errorf("%w: data directory %s holds a %s store, not %s", ErrStoreFormat, dir, got, engine)
			}
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("store: data directory: %w", err)
		}
		if got := dirEngine(dir); got != "" && got != engine {
			return fmt.Errorf("%w: data directory %s holds a %s store, not %s", ErrStoreFormat, dir, got, engine)
		}
		// Written aside and linked into place: the link fails if another
		// process claimed the directory meanwhile, and a reader never sees
		// a half-written file. The loop then reads the winner's claim.
		err = writeEngineFile(dir, path, engine)
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return fmt.Errorf("store: data directory %s: engine file keeps changing", dir)
}

func writeEngineFile(dir, path, engine string) error {
	tmp, err := os.CreateTemp(dir, engineFile+".tmp*")
	if err != nil {
		return fmt.Errorf("store: data directory: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(engine + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if err = errors.Join(err, tmp.Close()); err != nil {
		return fmt.Errorf("store: data directory: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("store: data directory: %w", err)
	}
	if err := outfile.SyncDir(dir); err != nil {
		return fmt.Errorf("store: data directory: %w", err)
	}
	return nil
}
