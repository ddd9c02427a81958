package dedup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/corpus"
)

// outputPass reads the input again and copies the kept documents (with
// Annotate, every document and its annotation) in their input's format:
// JSONL lines untouched, Parquet rows under the input's schema, for Lines
// input the line, for Text input (a file per document) the file's path. Into
// Output all go to one file; into OutputDir each input file has its shard.
func (r *runner) outputPass(ctx context.Context, inputs []string, copt corpus.Options, outs *outputs) error {
	copt.Rows = true // Parquet rows and WARC records are copied whole
	rd, err := corpus.Open(inputs, copt)
	if err != nil {
		return err
	}
	defer rd.Close()
	var sink interface {
		start(d corpus.Doc) error
		skip(d corpus.Doc) error
		docWriter
	}
	if outs.dir != nil {
		names, err := shardNames(inputs)
		if err != nil {
			return err
		}
		sink = &dirSink{dir: outs.dir, names: names, annotate: r.opt.Annotate}
	} else {
		sink = &fileSink{w: outs.output, name: r.opt.Output, annotate: r.opt.Annotate}
	}
	var lead []bool // Annotate under ClusterGreedy: lead[k] when documents were removed in k's favour
	if r.opt.Annotate && r.opt.Cluster == ClusterGreedy {
		lead = make([]bool, r.d.len())
		for i, k := range r.keeper {
			if k >= 0 && int(k) != i {
				lead[k] = true
			}
		}
	}
	total := int64(r.d.len())
	var bytes int64
	source := ""
	ids := r.d.ids.cursor()
	for i := 0; ; i++ {
		doc, err := rd.Next()
		if err == io.EOF {
			if i != r.d.len() {
				return fmt.Errorf("%w: %d documents, first pass read %d", ErrInputChanged, i, r.d.len())
			}
			break
		}
		if err != nil {
			return err
		}
		if i >= r.d.len() {
			return fmt.Errorf("%w: %s", ErrInputChanged, where(doc))
		}
		if id, err := ids.next(); err != nil {
			return err
		} else if doc.ID != id {
			return fmt.Errorf("%w: %s", ErrInputChanged, where(doc))
		}
		bytes += int64(len(doc.Text))
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			r.progress(Progress{Stage: "output", Docs: int64(i), Bytes: bytes, TotalDocs: total,
				Stored: rd.Consumed(), TotalStored: rd.Size()})
		}
		if doc.Source != source || i == 0 {
			source = doc.Source
			if err := sink.start(doc); err != nil {
				return err
			}
		}
		var a *annotation
		if r.opt.Annotate {
			a = r.annotation(i, lead)
		} else if r.removed(i) {
			if err := sink.skip(doc); err != nil {
				return fmt.Errorf("dedup: writing %s: %w", where(doc), err)
			}
			continue
		}
		if err := sink.write(doc, a); err != nil {
			return fmt.Errorf("dedup: writing %s: %w", where(doc), err)
		}
	}
	if err := sink.close(); err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	r.progress(Progress{Stage: "output", Docs: total, Bytes: bytes, TotalDocs: total,
		Stored: rd.Consumed(), TotalStored: rd.Size(), Done: true})
	return nil
}

// annotateScores keeps the Jaccard of each removed document with the one
// kept in its place, for Annotate: the shingle sets are gone by the output
// pass.
func (r *runner) annotateScores() {
	r.scores = make([]float64, r.d.len())
	for i := range r.scores {
		r.scores[i] = math.NaN()
		if r.removed(i) {
			if j := r.duplicate(i).Jaccard; j != nil {
				r.scores[i] = *j
			}
		}
	}
}

// annotation describes document i for Annotate. lead is set under
// ClusterGreedy (see outputPass).
func (r *runner) annotation(i int, lead []bool) *annotation {
	a := &annotation{}
	k := int(r.keeper[i])
	switch {
	case k < 0: // a stored document's duplicate
		a.dupOf = r.stored[i].ID
		a.cluster, a.inCluster = a.dupOf, true
	case k != i:
		a.dupOf = r.id(k)
	}
	if s := r.scores[i]; !math.IsNaN(s) {
		a.jaccard, a.hasJacc = s, true
	}
	switch {
	case k < 0:
	case r.opt.Cluster == ClusterComponents:
		if r.uf.Size(i) > 1 {
			a.cluster, a.inCluster = r.id(k), true
		}
	case k != i || lead[i]:
		a.cluster, a.inCluster = r.id(k), true
	}
	return a
}

// newWriter returns the writer for the documents of d's file into w:
// Parquet rows under its layout, WARC records (compressed as name says),
// else lines (compressed as name says when compressed is set).
func newWriter(w io.Writer, d corpus.Doc, name string, compressed, annotate bool) (docWriter, *corpus.ParquetLayout, error) {
	if d.Format == corpus.WARC {
		ww, err := newWARCWriter(w, name)
		return ww, nil, err
	}
	if d.Format != corpus.Parquet {
		lw, err := newLineWriter(w, name, compressed)
		return lw, nil, err
	}
	l, err := corpus.ReadParquetLayout(d.Source)
	if err != nil {
		return nil, nil, err
	}
	return newParquetWriter(w, l, annotate), &l, nil
}

// fileSink writes every document to one file (Output): the first document
// sets the format, and Parquet files after the first must have its schema.
type fileSink struct {
	w        io.Writer
	name     string // the output's path: a WARC output is compressed as it says
	annotate bool
	dw       docWriter
	layout   *corpus.ParquetLayout // the schema of a Parquet output
	warc     bool                  // a WARC output
	first    string                // the file that set it
}

// skipper is a docWriter that takes what it needs of a removed document:
// the WARC writer keeps a removed page's warcinfo records.
type skipper interface {
	skip(d corpus.Doc) error
}

func (s *fileSink) skip(d corpus.Doc) error {
	if sk, ok := s.dw.(skipper); ok {
		return sk.skip(d)
	}
	return nil
}

func (s *dirSink) skip(d corpus.Doc) error {
	if sk, ok := s.cur.dw.(skipper); ok {
		return sk.skip(d)
	}
	return nil
}

func (s *fileSink) start(d corpus.Doc) error {
	if s.dw == nil {
		name := ""
		if d.Format == corpus.WARC {
			name = s.name
		}
		dw, l, err := newWriter(s.w, d, name, false, s.annotate)
		if err != nil {
			return err
		}
		s.dw, s.layout, s.first, s.warc = dw, l, d.Source, d.Format == corpus.WARC
		return nil
	}
	if (d.Format == corpus.WARC) != s.warc {
		return fmt.Errorf("%w: %s and %s: the kept file would mix WARC and other formats; "+
			"write one shard per input (--output-dir)", ErrMixedFormats, s.first, d.Source)
	}
	if (d.Format == corpus.Parquet) != (s.layout != nil) {
		return fmt.Errorf("%w: %s and %s: the kept file would mix Parquet and other formats; "+
			"write one shard per input (--output-dir)", ErrMixedFormats, s.first, d.Source)
	}
	if s.layout != nil {
		l, err := corpus.ReadParquetLayout(d.Source)
		if err != nil {
			return err
		}
		if !parquet.EqualNodes(l.Schema, s.layout.Schema) {
			return fmt.Errorf("%w: %s and %s have different Parquet schemas: the kept file can hold one; "+
				"write one shard per input (--output-dir)", ErrMixedFormats, s.first, d.Source)
		}
	}
	return nil
}

func (s *fileSink) write(d corpus.Doc, a *annotation) error { return s.dw.write(d, a) }

func (s *fileSink) close() error {
	if s.dw == nil {
		return nil
	}
	return s.dw.close()
}

// dirSink writes each input file's documents to its own shard.
type dirSink struct {
	dir      *shardDir
	names    func(source string) (string, error)
	annotate bool
	cur      *shardFile
}

type shardFile struct {
	f  *os.File
	bw *bufio.Writer
	dw docWriter
}

func (s *dirSink) start(d corpus.Doc) error {
	if d.Format == corpus.Text {
		return fmt.Errorf("%w: %s is a whole text file: an output directory holds JSONL, Lines or Parquet shards",
			ErrOptions, d.Source)
	}
	if err := s.close(); err != nil {
		return err
	}
	rel, err := s.names(d.Source)
	if err != nil {
		return err
	}
	f, err := s.dir.create(rel)
	if err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	dw, _, err := newWriter(bw, d, rel, true, s.annotate)
	if err != nil {
		f.Close()
		return err
	}
	s.cur = &shardFile{f: f, bw: bw, dw: dw}
	return nil
}

func (s *dirSink) write(d corpus.Doc, a *annotation) error { return s.cur.dw.write(d, a) }

func (s *dirSink) close() error {
	c := s.cur
	if c == nil {
		return nil
	}
	s.cur = nil
	err := c.dw.close()
	if err == nil {
		err = c.bw.Flush()
	}
	if err == nil {
		err = c.f.Sync()
	}
	return errors.Join(err, c.f.Close())
}

// shardNames returns the function that names the shard of an input file:
// its path relative to the directory given as input that holds it, or the
// base name of a file given itself. Two files with one name are an error.
func shardNames(inputs []string) (func(string) (string, error), error) {
	var dirs []string
	for _, in := range inputs {
		if fi, err := os.Stat(in); err == nil && fi.IsDir() {
			dirs = append(dirs, filepath.Clean(in))
		}
	}
	used := map[string]string{}
	return func(source string) (string, error) {
		rel := filepath.Base(source)
		for _, d := range dirs {
			if r, err := filepath.Rel(d, source); err == nil && r != "." && !strings.HasPrefix(r, "..") &&
				strings.HasPrefix(filepath.Clean(source), d+string(filepath.Separator)) {
				rel = r
				break
			}
		}
		if other, ok := used[rel]; ok && other != source {
			return "", fmt.Errorf("%w: %s and %s would both be written as %s in the output directory",
				ErrOptions, other, source, rel)
		}
		used[rel] = source
		return rel, nil
	}, nil
}

// shardDir is an output directory being written: shards go to a hidden
// temporary directory inside it and are renamed into place by commit, so a
// failed run leaves the directory as it was.
type shardDir struct {
	dir, stage string
	created    bool     // dir did not exist: abort removes it (when empty)
	shards     []string // relative names, in the order written
}

func newShardDir(dir string) (*shardDir, error) {
	_, err := os.Stat(dir)
	created := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	stage, err := os.MkdirTemp(dir, ".neardup-tmp-")
	if err != nil {
		return nil, err
	}
	return &shardDir{dir: dir, stage: stage, created: created}, nil
}

func (s *shardDir) create(rel string) (*os.File, error) {
	p := filepath.Join(s.stage, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	s.shards = append(s.shards, rel)
	return f, nil
}

// commit renames every shard into place. A target that exists and is not a
// regular file is an error, before anything is renamed.
func (s *shardDir) commit() error {
	for _, rel := range s.shards {
		dst := filepath.Join(s.dir, rel)
		if fi, err := os.Lstat(dst); err == nil && !fi.Mode().IsRegular() {
			s.abort()
			return fmt.Errorf("%s exists and is not a regular file", dst)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.abort()
			return err
		}
	}
	var errs []error
	for _, rel := range s.shards {
		dst := filepath.Join(s.dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Rename(filepath.Join(s.stage, rel), dst); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, os.RemoveAll(s.stage))
	return errors.Join(errs...)
}

func (s *shardDir) abort() {
	os.RemoveAll(s.stage)
	if s.created {
		os.Remove(s.dir) // only if empty
	}
}
