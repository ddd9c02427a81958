package pipeline

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/neardup/neardup/corpus"
)

// Outputs are written per read range by the worker that writes the range:
// it gets the range's removed documents' lines (duplicates and clusters,
// keyed by the range of the document they are written at), sorts them by
// position (the range's own, at most one line per document of the range)
// and reads the range again, writing each document's output line unless
// it was removed. Nothing is sorted globally: a part's lines are in input
// order and parts follow the ranges. Unless Options.Parts, one worker then
// concatenates each output's parts in order (streaming, constant memory)
// into the file named, as dedup.Run writes it.

// partName is the file of range i of n of the output path.
func partName(path string, i, n int) string { return fmt.Sprintf("%s-%05d-of-%05d", path, i, n) }

func rangeByIndex(r inputRange) (uint64, inputRange) { return uint64(r.Index), r }

// writeRangeFn writes a range's part of each output named. Its paths are
// the outputs' part bases (partBase).
type writeRangeFn struct {
	rangeDocs
	Output, Duplicates, Clusters string
	Ranges                       int
}

func (f *writeRangeFn) ProcessElement(ctx context.Context, _ uint64, rangeIter func(*inputRange) bool, dupIter func(*Line) bool,
	clusterIter func(*Line) bool, emit func(int, int)) (err error) {
	var r inputRange
	if !rangeIter(&r) {
		return errors.New("pipeline: output lines for a range that was not read")
	}
	collect := func(iter func(*Line) bool) []Line {
		var ls []Line
		var l Line
		for iter(&l) {
			ls = append(ls, l)
		}
		slices.SortFunc(ls, func(a, b Line) int { return cmp.Compare(a.Pos, b.Pos) })
		return ls
	}
	dups, clusters := collect(dupIter), collect(clusterIter)
	for _, o := range []struct {
		path  string
		lines []Line
	}{{f.Duplicates, dups}, {f.Clusters, clusters}} {
		if o.path == "" {
			continue
		}
		if err := writeLines(ctx, partName(o.path, r.Index, f.Ranges), o.lines); err != nil {
			return err
		}
	}
	if f.Output != "" {
		if err := f.writeKept(ctx, r, dups); err != nil {
			return err
		}
	}
	emit(0, r.Index)
	return nil
}

// writeKept reads range r again and writes the output line of every
// document not in removed (sorted by position). Positions need no line
// counts (rangeDocs.read).
func (f *writeRangeFn) writeKept(ctx context.Context, r inputRange, removed []Line) (err error) {
	path := partName(f.Output, r.Index, f.Ranges)
	return writeFile(ctx, path, func(w io.Writer) error {
		return f.read(ctx, r, -1, false, func(pos uint64, _ *corpus.Doc, out []byte) error {
			for len(removed) > 0 && removed[0].Pos < pos {
				removed = removed[1:]
			}
			if len(removed) > 0 && removed[0].Pos == pos {
				return nil
			}
			if _, err := w.Write(out); err != nil {
				return err
			}
			_, err := w.Write([]byte{'\n'})
			return err
		})
	})
}

func writeLines(ctx context.Context, path string, lines []Line) error {
	return writeFile(ctx, path, func(w io.Writer) error {
		for _, l := range lines {
			if _, err := w.Write(l.Data); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeFile creates path and writes it with fn, buffered.
func writeFile(ctx context.Context, path string, fn func(io.Writer) error) (err error) {
	fsys, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fsys.Close()
	wc, err := fsys.OpenWrite(ctx, path)
	if err != nil {
		return fmt.Errorf("pipeline: creating %s: %w", path, err)
	}
	defer func() { err = errors.Join(err, wc.Close()) }()
	bw := bufio.NewWriterSize(wc, 1<<20)
	if err := fn(bw); err != nil {
		return fmt.Errorf("pipeline: writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("pipeline: writing %s: %w", path, err)
	}
	return nil
}

// ErrNoDocuments fails a run whose inputs hold no document, as dedup.Run
// fails with dedup.ErrNoDocuments, rather than write empty outputs.
var ErrNoDocuments = errors.New("pipeline: no documents in the inputs")

// finishFn runs once all parts are written: it fails the run when no
// document was read, and unless Parts concatenates each output's parts
// into the file named, in range order, removing them. It gets the ranges'
// document counts and the ranges written grouped under one key, not as
// side inputs: prism's scheduler spins while a stage that reads a side
// input runs a bundle, and the concatenation is a long one.
type finishFn struct {
	Inputs         []string
	Outputs, Bases []string // the files named, their parts' bases
	Ranges         int
	Parts          bool
}

func (f *finishFn) ProcessElement(ctx context.Context, _ int, counts func(*int) bool, written func(*int) bool) error {
	docs, n := 0, 0
	var c int
	for counts(&c) {
		docs += c
	}
	if docs == 0 {
		return fmt.Errorf("%w: %s (empty, or every line skipped)", ErrNoDocuments, strings.Join(f.Inputs, ", "))
	}
	for written(&c) {
		n++
	}
	if n != f.Ranges {
		return fmt.Errorf("pipeline: %d of %d ranges written", n, f.Ranges)
	}
	if f.Parts {
		return nil
	}
	for i, out := range f.Outputs {
		if err := concat(ctx, out, f.Bases[i], f.Ranges); err != nil {
			return err
		}
	}
	return nil
}

// concat copies the n parts of base into out and removes them.
func concat(ctx context.Context, out, base string, n int) error {
	fsys, err := filesystem.New(ctx, out)
	if err != nil {
		return err
	}
	defer fsys.Close()
	err = writeFile(ctx, out, func(w io.Writer) error {
		for i := range n {
			part := partName(base, i, n)
			r, err := fsys.OpenRead(ctx, part)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, r)
			if err = errors.Join(err, r.Close()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if rm, ok := fsys.(filesystem.Remover); ok {
		for i := range n {
			if err := rm.Remove(ctx, partName(base, i, n)); err != nil {
				return fmt.Errorf("pipeline: removing a part of %s: %w", out, err)
			}
		}
	}
	return nil
}

// Write writes the outputs per range and finishes them.
func Write(s beam.Scope, opt Options, ranges, counts, dups, clusters beam.PCollection, nRanges int) {
	s = s.Scope("Write")
	var outs, bases []string
	base := func(path string) string {
		if path == "" {
			return ""
		}
		b := partBase(path)
		outs, bases = append(outs, path), append(bases, b)
		return b
	}
	f := &writeRangeFn{
		rangeDocs: rangeDocs{Format: opt.Format, IDField: opt.IDField, TextField: opt.TextField, SkipBad: opt.SkipBad},
		Output:    base(opt.Output), Duplicates: base(opt.Duplicates), Clusters: base(opt.Clusters), Ranges: nRanges,
	}
	written := beam.ParDo(s, f, beam.CoGroupByKey(s, ranges, dups, clusters))
	beam.ParDo0(s, &finishFn{Inputs: opt.Inputs, Outputs: outs, Bases: bases, Ranges: nRanges, Parts: opt.Parts},
		beam.CoGroupByKey(s, beam.ParDo(s, underZero, counts), written))
}

// underZero keys a range's document count by 0, the finish's one key.
func underZero(n int) (int, int) { return 0, n }

// partBase is where the parts of output path go: beside it, but for a
// local path that is not a regular file (/dev/null, /dev/stdout, a FIFO),
// which is written in place as dedup.Run writes it: its parts go to the
// temporary directory, since only a run on this machine can write there.
func partBase(path string) string {
	if strings.Contains(path, "://") {
		return path
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return path
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("neardup-beam-%d-%s", os.Getpid(), filepath.Base(path)))
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
