package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/neardup/neardup/corpus"
)

// maxLine bounds a line number in a position: position = file<<lineBits | line.
const lineBits = 40

// Pos returns the position of line (1-based; 0 for a whole-file document) of
// the file-th input: input order is position order.
func Pos(file, line int) uint64 { return uint64(file)<<lineBits | uint64(line) }

// inputFile is one input file and its index in input order.
type inputFile struct {
	Index int
	Path  string
}

// Doc is a document as read: its position, id, text, and the line the
// output copies when it is kept (the JSONL line; the line for Lines input;
// the path for a whole file).
type Doc struct {
	Pos  uint64
	ID   string
	Text string
	Out  []byte
}

// expandInputs lists the files of the inputs' globs, in the order given and
// sorted within a glob, as their indices.
func expandInputs(ctx context.Context, inputs []string) ([]inputFile, error) {
	var files []inputFile
	for _, in := range inputs {
		fs, err := filesystem.New(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("pipeline: %s: %w", in, err)
		}
		names, err := fs.List(ctx, in)
		fs.Close()
		if err != nil {
			return nil, fmt.Errorf("pipeline: listing %s: %w", in, err)
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("pipeline: %s: no such file", in)
		}
		sort.Strings(names)
		for _, n := range names {
			files = append(files, inputFile{Index: len(files), Path: n})
		}
	}
	if len(files) >= 1<<(64-lineBits) {
		return nil, fmt.Errorf("pipeline: %d input files, at most %d", len(files), 1<<(64-lineBits)-1)
	}
	return files, nil
}

var (
	docsRead  = beam.NewCounter("neardup", "documents")
	badInputs = beam.NewCounter("neardup", "bad_inputs")
)

// readFn reads one input file with package corpus, as dedup.Run reads it.
type readFn struct {
	Format             string
	IDField, TextField string
	SkipBad            bool
}

func (f *readFn) ProcessElement(ctx context.Context, in inputFile, emit func(Doc)) error {
	format, err := corpus.ParseFormat(f.Format)
	if err != nil {
		return err
	}
	fs, err := filesystem.New(ctx, in.Path)
	if err != nil {
		return err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, in.Path)
	if err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	defer r.Close()
	opt := corpus.Options{Format: format, IDField: f.IDField, TextField: f.TextField, SkipBad: f.SkipBad,
		OnBad: func(error) { badInputs.Inc(ctx, 1) }}
	rd, err := corpus.OpenReader(r, in.Path, opt)
	if err != nil {
		return err
	}
	defer rd.Close()
	for {
		doc, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var ce *corpus.Error
			if errors.As(err, &ce) {
				return err // names file and line
			}
			return fmt.Errorf("pipeline: %s: %w", in.Path, err)
		}
		if doc.Line >= 1<<lineBits {
			return fmt.Errorf("pipeline: %s: more than %d lines", in.Path, 1<<lineBits-1)
		}
		d := Doc{Pos: Pos(in.Index, doc.Line), ID: doc.ID, Text: doc.Text}
		switch {
		case doc.Raw != nil:
			d.Out = append([]byte(nil), doc.Raw...)
		case doc.Line > 0:
			d.Out = []byte(doc.Text)
		default:
			d.Out = []byte(doc.Source)
		}
		docsRead.Inc(ctx, 1)
		emit(d)
	}
}

// Read reads the documents of the input files (as listed by expandInputs)
// with the options' format, fields and bad-line handling.
func Read(s beam.Scope, opt Options) (beam.PCollection, error) {
	s = s.Scope("Read JSONL")
	files, err := expandInputs(context.Background(), opt.Inputs)
	if err != nil {
		return beam.PCollection{}, err
	}
	list := beam.CreateList(s, files)
	// One file per worker: spread the files before reading them.
	list = beam.Reshuffle(s, list)
	return beam.ParDo(s, &readFn{Format: opt.Format, IDField: opt.IDField, TextField: opt.TextField, SkipBad: opt.SkipBad}, list), nil
}
