package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
)

// keptLine passes on a document's output line unless it was removed.
func keptLine(pos uint64, lines func(*[]byte) bool, removed func(*int) bool, emit func(Line)) {
	var r int
	if removed(&r) {
		return
	}
	var b []byte
	for lines(&b) {
		emit(Line{Pos: pos, Data: append(b, '\n')})
	}
}

func removedPos(l Line) (uint64, int) { return l.Pos, 1 }

// Kept returns the output lines of the documents not removed.
func Kept(s beam.Scope, outLines, dups beam.PCollection) beam.PCollection {
	s = s.Scope("Kept")
	return beam.ParDo(s, keptLine, beam.CoGroupByKey(s, outLines, beam.ParDo(s, removedPos, dups)))
}

// writeFn writes its side input's lines to Path in position order. It runs
// once (on an impulse), so the file exists, empty, when there are no lines.
// The lines are sorted in the memory of one worker: the file is in input
// order, as dedup.Run writes it.
type writeFn struct{ Path string }

func (f *writeFn) ProcessElement(ctx context.Context, _ []byte, lines func(*Line) bool) (err error) {
	var all []Line
	var l Line
	for lines(&l) {
		all = append(all, l)
	}
	slices.SortFunc(all, func(a, b Line) int { return cmpU64(a.Pos, b.Pos) })
	fs, err := filesystem.New(ctx, f.Path)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, f.Path)
	if err != nil {
		return fmt.Errorf("pipeline: creating %s: %w", f.Path, err)
	}
	defer func() { err = errors.Join(err, w.Close()) }()
	for _, l := range all {
		if _, err := w.Write(l.Data); err != nil {
			return fmt.Errorf("pipeline: writing %s: %w", f.Path, err)
		}
	}
	return nil
}

// Write writes lines to path in position order.
func Write(s beam.Scope, path string, lines beam.PCollection) {
	s = s.Scope("Write " + path)
	beam.ParDo0(s, &writeFn{Path: path}, beam.Impulse(s), beam.SideInput{Input: lines})
}

// checkOutputs refuses, while the pipeline is built, the output paths its
// last stage would fail on (or that two outputs share), so that a bad path
// fails in a moment rather than after the whole run. Only local paths are
// checked: a remote file system (gs://) is the runner's to reach. The local
// file system makes missing directories, so the nearest existing one must
// be a directory this process can create files in.
func checkOutputs(opt Options) error {
	seen := map[string]string{}
	for _, o := range []struct{ flag, path string }{
		{"output", opt.Output}, {"duplicates", opt.Duplicates}, {"clusters", opt.Clusters},
	} {
		if o.path == "" {
			continue
		}
		key := filepath.Clean(o.path)
		if other, ok := seen[key]; ok {
			return fmt.Errorf("%w: --%s %s is also the --%s file", ErrOutput, o.flag, o.path, other)
		}
		seen[key] = o.flag
		if strings.Contains(o.path, "://") {
			continue
		}
		if err := checkLocalOutput(o.path); err != nil {
			return fmt.Errorf("%w: --%s %s: %w", ErrOutput, o.flag, o.path, err)
		}
	}
	return nil
}

// checkLocalOutput checks that path can be created or truncated.
func checkLocalOutput(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return errors.New("is a directory")
	case err == nil && fi.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY, 0) // no O_TRUNC: nothing changes yet
		if err != nil {
			return err
		}
		return f.Close()
	case err == nil:
		return nil // a device or a FIFO: opening it now could block or consume
	case !errors.Is(err, fs.ErrNotExist):
		return err // ENOTDIR: a file where a directory should be
	}
	dir := filepath.Dir(path)
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		dir = filepath.Dir(dir)
	}
	probe, err := os.CreateTemp(dir, ".neardup-beam-probe-*")
	if err != nil {
		return err
	}
	return errors.Join(probe.Close(), os.Remove(probe.Name()))
}
