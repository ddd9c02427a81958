package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
