package dedup

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/corpus"
)

// The output pass writes documents in their input's format: a docWriter per
// output file (or per output shard with OutputDir), chosen by the format of
// the first document that goes to it.

// docWriter writes the kept (or, with Annotate, all) documents of one output.
type docWriter interface {
	// write adds d; a is its annotation with Options.Annotate, else nil.
	write(d corpus.Doc, a *annotation) error
	// close finishes the format (a Parquet footer, a zstd frame); it does
	// not close the file below.
	close() error
}

// annotation is what Options.Annotate adds to a document; each part may be
// absent (null).
type annotation struct {
	dupOf     string // the document kept in its place; "" when it is kept
	jaccard   float64
	hasJacc   bool
	cluster   string // the kept document of its cluster; "" when in none
	inCluster bool
}

// Annotation columns, in the order they are added.
const (
	colDupOf   = "dup_of"
	colJaccard = "jaccard"
	colCluster = "cluster"
)

// lineWriter writes JSONL lines as read (with Annotate, with the fields
// added), Lines' lines, or whole files' paths, one per line.
type lineWriter struct {
	w      io.Writer
	finish func() error // closes a compressor; nil for none
	buf    []byte
}

// newLineWriter writes lines to w, compressed as a file called name would be
// (.zst: zstd, .gz: gzip) when compress is set.
func newLineWriter(w io.Writer, name string, compressed bool) (*lineWriter, error) {
	lw := &lineWriter{w: w}
	if !compressed {
		return lw, nil
	}
	switch {
	case strings.HasSuffix(name, ".zst") || strings.HasSuffix(name, ".zstd"):
		zw, err := zstd.NewWriter(w)
		if err != nil {
			return nil, err
		}
		lw.w, lw.finish = zw, zw.Close
	case strings.HasSuffix(name, ".gz"):
		gw := gzip.NewWriter(w)
		lw.w, lw.finish = gw, gw.Close
	}
	return lw, nil
}

func (lw *lineWriter) write(d corpus.Doc, a *annotation) error {
	b := lw.buf[:0]
	switch {
	case d.Raw != nil && a != nil:
		b = annotateJSON(b, d.Raw, a)
	case d.Raw != nil:
		b = append(b, d.Raw...)
	case a != nil:
		return fmt.Errorf("%w: %s is not JSON: only JSONL and Parquet documents can be annotated", ErrOptions, where(d))
	case d.Line > 0:
		b = append(b, d.Text...)
	default:
		b = append(b, d.Source...)
	}
	b = append(b, '\n')
	lw.buf = b[:0]
	_, err := lw.w.Write(b)
	return err
}

func (lw *lineWriter) close() error {
	if lw.finish != nil {
		return lw.finish()
	}
	return nil
}

// annotateJSON appends the JSON object line with the annotation's fields
// added before its closing brace.
func annotateJSON(b, line []byte, a *annotation) []byte {
	end := bytes.LastIndexByte(line, '}')
	if end < 0 { // corpus only yields objects
		end = len(line)
	}
	b = append(b, line[:end]...)
	if len(bytes.TrimSpace(line[bytes.IndexByte(line, '{')+1:end])) > 0 {
		b = append(b, ',')
	}
	str := func(s string, ok bool) {
		if !ok {
			b = append(b, "null"...)
			return
		}
		q, _ := json.Marshal(s)
		b = append(b, q...)
	}
	b = append(b, `"`+colDupOf+`":`...)
	str(a.dupOf, a.dupOf != "")
	b = append(b, `,"`+colJaccard+`":`...)
	if a.hasJacc {
		b = strconv.AppendFloat(b, a.jaccard, 'g', -1, 64)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"`+colCluster+`":`...)
	str(a.cluster, a.inCluster)
	return append(b, line[end:]...)
}

// parquetWriter copies Parquet rows under the schema, compression and
// metadata of the file they came from, flushing a row group every
// RowsPerGroup rows so that it holds no more than a reader of the file does.
type parquetWriter struct {
	w        *parquet.Writer
	columns  int // leaf columns of the input schema
	annotate bool
	perGroup int64
	inGroup  int64
	rows     []parquet.Row
}

const rowsPerWrite = 64

func newParquetWriter(w io.Writer, l corpus.ParquetLayout, annotate bool) *parquetWriter {
	schema := l.Schema
	if annotate {
		schema = parquet.NewSchema(l.Schema.Name(), appendFields(l.Schema, []parquet.Field{
			field{parquet.Optional(parquet.String()), colDupOf},
			field{parquet.Optional(parquet.Leaf(parquet.DoubleType)), colJaccard},
			field{parquet.Optional(parquet.String()), colCluster},
		}))
	}
	opts := []parquet.WriterOption{schema, parquet.Compression(l.Compression)}
	for _, kv := range l.Metadata {
		// pyarrow's schema would not describe the added columns; without it
		// readers take the Parquet schema, which does.
		if annotate && kv.Key == "ARROW:schema" {
			continue
		}
		opts = append(opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
	}
	return &parquetWriter{
		w:        parquet.NewWriter(w, opts...),
		columns:  len(l.Schema.Columns()),
		annotate: annotate,
		perGroup: max(l.RowsPerGroup, 1),
	}
}

func (pw *parquetWriter) write(d corpus.Doc, a *annotation) error {
	if d.Row == nil {
		return fmt.Errorf("dedup: %s: no Parquet row to copy", where(d))
	}
	row := d.Row
	if pw.annotate {
		n := pw.columns
		opt := func(v parquet.Value, ok bool, col int) parquet.Value {
			if !ok {
				return parquet.NullValue().Level(0, 0, col)
			}
			return v.Level(0, 1, col)
		}
		row = append(row,
			opt(parquet.ByteArrayValue([]byte(a.dupOf)), a.dupOf != "", n),
			opt(parquet.DoubleValue(a.jaccard), a.hasJacc, n+1),
			opt(parquet.ByteArrayValue([]byte(a.cluster)), a.inCluster, n+2))
	}
	pw.rows = append(pw.rows, row)
	pw.inGroup++
	if len(pw.rows) == rowsPerWrite || pw.inGroup == pw.perGroup {
		return pw.flush()
	}
	return nil
}

func (pw *parquetWriter) flush() error {
	if len(pw.rows) > 0 {
		if _, err := pw.w.WriteRows(pw.rows); err != nil {
			return err
		}
		clear(pw.rows)
		pw.rows = pw.rows[:0]
	}
	if pw.inGroup >= pw.perGroup {
		pw.inGroup = 0
		return pw.w.Flush()
	}
	return nil
}

func (pw *parquetWriter) close() error {
	pw.inGroup = 0 // Close flushes the last row group
	if err := pw.flush(); err != nil {
		return err
	}
	return pw.w.Close()
}

// field names a node as a field of a group.
type field struct {
	parquet.Node
	name string
}

func (f field) Name() string                      { return f.name }
func (f field) Value(reflect.Value) reflect.Value { return reflect.Value{} }

// appendedGroup is a group node with fields added after its own: the input's
// schema in its own column order, then the annotation columns.
// (parquet.Group would sort the fields by name.)
type appendedGroup struct {
	parquet.Node
	extra []parquet.Field
}

func appendFields(n parquet.Node, extra []parquet.Field) parquet.Node {
	return appendedGroup{Node: n, extra: extra}
}

func (g appendedGroup) Fields() []parquet.Field {
	return append(append([]parquet.Field(nil), g.Node.Fields()...), g.extra...)
}
