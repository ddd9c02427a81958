package corpus

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
)

// Parquet files (https://parquet.apache.org/docs/file-format/) are read with
// github.com/parquet-go/parquet-go: the footer first (it holds the schema and
// where each row group's column chunks are), then one row group after the
// other, and within a row group only the text and id columns, page by page.
// What a reader holds is a page of each of the two columns, never a whole row
// group or file. With Options.Rows every column is read, as whole rows, for a
// caller that copies them (dedup's output pass): still one page per column.

// parquetMagic starts and ends every Parquet file.
const parquetMagic = "PAR1"

// rowBatch is how many rows are read at a time with Options.Rows.
const rowBatch = 64

// errPanic is what a panic inside parquet-go becomes: the library does not
// check every offset and length it decodes, and a damaged file (found by
// FuzzParquet: a flipped byte in a page header) can make it index out of
// range. Such a file is a bad file, not a crash of the run.
type errPanic struct{ v any }

func (e errPanic) Error() string { return fmt.Sprintf("damaged file (the decoder failed: %v)", e.v) }

// recoverTo turns a panic into an error in *err; it must be deferred.
func recoverTo(err *error) {
	if v := recover(); v != nil {
		*err = errPanic{v}
	}
}

// openFile is parquet.OpenFile that returns an error for a panic.
func openFile(r io.ReaderAt, size int64) (pf *parquet.File, err error) {
	defer recoverTo(&err)
	return parquet.OpenFile(r, size, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
}

// isParquetName reports a name that says Parquet.
func isParquetName(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".parquet" || ext == ".parq"
}

// column is a leaf column chosen for the text or the id.
type column struct {
	name  string // as the caller wrote it (dotted path)
	index int    // leaf column index, -1 when absent
	kind  parquet.Kind
}

// parquetSource is one open Parquet file.
type parquetSource struct {
	name     string
	f        *os.File
	file     *parquet.File
	text, id column
	more     []column // Options.Columns; index -1 for one the file lacks
	wantRows bool
	counter  *atomic.Int64

	group int   // next row group to open
	row   int64 // rows returned so far, over the whole file

	// The current row group: its remaining rows, and either the two
	// columns' page readers or (wantRows) a row reader.
	left       int64
	textCol    columnValues
	idCol      columnValues
	moreCols   []columnValues
	moreVals   []parquet.Value // the current row's values of more
	rows       parquet.Rows
	rowBuf     []parquet.Row
	rowI, rowN int
}

// isParquet reports whether in is read as Parquet: with Format Parquet, or
// Auto and a name ending in .parquet or content that starts with the magic
// bytes. A reader given to OpenReader, or standard input, is Parquet only
// when it can be read at offsets (see readerAt: a file redirected to
// standard input can, a pipe cannot, and openSource refuses a Parquet
// stream: its footer is at the end).
func isParquet(in input, f Format) bool {
	if in.r != nil {
		ra, _, ok := readerAt(in.r)
		if !ok {
			return false
		}
		var magic [4]byte
		_, err := ra.ReadAt(magic[:], 0)
		return f == Parquet || f == Auto && (isParquetName(in.name) || err == nil && string(magic[:]) == parquetMagic)
	}
	switch f {
	case Parquet:
		return true
	case Auto:
		if isParquetName(in.name) {
			return true
		}
		fh, err := os.Open(in.name)
		if err != nil {
			return false // openSource reports it
		}
		defer fh.Close()
		var magic [4]byte
		_, err = io.ReadFull(fh, magic[:])
		return err == nil && string(magic[:]) == parquetMagic
	}
	return false
}

// readerAt returns r as an io.ReaderAt and its size when it can be read at
// offsets: an io.ReaderAt with a Size method (*bytes.Reader,
// *strings.Reader, *io.SectionReader) or an io.ReaderAt that seeks
// (*os.File). What OpenReader needs to read Parquet.
func readerAt(r io.Reader) (io.ReaderAt, int64, bool) {
	switch r := r.(type) {
	case interface {
		io.ReaderAt
		Size() int64
	}:
		return r, r.Size(), true
	case interface {
		io.ReaderAt
		io.Seeker
	}:
		cur, err := r.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, 0, false
		}
		size, err := r.Seek(0, io.SeekEnd)
		if _, err2 := r.Seek(cur, io.SeekStart); err != nil || err2 != nil {
			return nil, 0, false
		}
		return r, size, true
	}
	return nil, 0, false
}

// openParquet opens the Parquet file in and finds its text and id columns.
// A file that is not valid Parquet, or has no text column, fails here, before
// any document is read.
func openParquet(in input, opt *Options, counter *atomic.Int64) (*parquetSource, error) {
	name := in.name
	var ra io.ReaderAt
	var size int64
	var f *os.File
	if in.r != nil {
		var ok bool
		if ra, size, ok = readerAt(in.r); !ok {
			return nil, &Error{Source: name, Err: fmt.Errorf("%w: Parquet needs a reader that reads at offsets", ErrBadParquet)}
		}
	} else {
		var err error
		if f, err = os.Open(name); err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, &Error{Source: name, Err: err}
		}
		ra, size = f, fi.Size()
	}
	pf, err := openFile(ra, size)
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, &Error{Source: name, Err: fmt.Errorf("%w: %w", ErrBadParquet, err)}
	}
	s := &parquetSource{name: name, f: f, file: pf, wantRows: opt.Rows, counter: counter}
	s.more = make([]column, len(opt.Columns))
	fail := func(err error) (*parquetSource, error) {
		s.close()
		return nil, &Error{Source: name, Err: err}
	}
	schema := pf.Schema()
	if s.text, err = lookupColumn(schema, opt.TextField, "text"); err != nil {
		return fail(err)
	}
	if s.text.index < 0 {
		return fail(fmt.Errorf("%w: no text column %q; the columns are %s",
			ErrNoColumn, opt.TextField, columnList(schema)))
	}
	if s.text.kind != parquet.ByteArray {
		return fail(fmt.Errorf("%w: text column %q holds %v, not strings",
			ErrNoColumn, opt.TextField, s.text.kind))
	}
	if s.id, err = lookupColumn(schema, opt.IDField, "id"); err != nil {
		return fail(err)
	}
	for i, c := range opt.Columns {
		if s.more[i], err = lookupColumn(schema, c, "column"); err != nil {
			return fail(err)
		}
	}
	switch s.id.kind {
	case parquet.ByteArray, parquet.FixedLenByteArray, parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
	default:
		if s.id.index >= 0 {
			return fail(fmt.Errorf("%w: id column %q holds %v, not strings or numbers",
				ErrNoColumn, opt.IDField, s.id.kind))
		}
	}
	return s, nil
}

// lookupColumn finds the leaf column named by field: a dotted path into
// nested groups ("meta.body"), or a top-level name that itself holds dots. A
// column under a repeated field (a list) has no single value per row and is
// refused. It returns index -1 when there is no such column.
func lookupColumn(schema *parquet.Schema, field, what string) (column, error) {
	c := column{name: field, index: -1}
	leaf, ok := schema.Lookup(strings.Split(field, ".")...)
	if !ok {
		leaf, ok = schema.Lookup(field)
	}
	if !ok || leaf.Node == nil || !leaf.Node.Leaf() {
		return c, nil
	}
	if leaf.MaxRepetitionLevel > 0 {
		return c, fmt.Errorf("%w: %s column %q is inside a repeated field (a list): it has no single value per row",
			ErrNoColumn, what, field)
	}
	c.index = leaf.ColumnIndex
	c.kind = leaf.Node.Type().Kind()
	return c, nil
}

// columnList names a schema's leaf columns as dotted paths, for errors.
func columnList(schema *parquet.Schema) string {
	var names []string
	for _, path := range schema.Columns() {
		names = append(names, strconv.Quote(strings.Join(path, ".")))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func (s *parquetSource) close() error {
	var errs []error
	errs = append(errs, s.closeGroup())
	if s.f != nil {
		errs = append(errs, s.f.Close())
		s.f = nil
	}
	return errors.Join(errs...)
}

func (s *parquetSource) closeGroup() (err error) {
	defer recoverTo(&err) // after a decoder panic
	var errs []error
	errs = append(errs, s.textCol.close(), s.idCol.close())
	for i := range s.moreCols {
		errs = append(errs, s.moreCols[i].close())
	}
	if s.rows != nil {
		errs = append(errs, s.rows.Close())
		s.rows = nil
	}
	s.rowI, s.rowN = 0, 0
	return errors.Join(errs...)
}

// openGroup opens the next row group with rows in it; io.EOF after the last.
func (s *parquetSource) openGroup() error {
	groups := s.file.RowGroups()
	for s.group < len(groups) {
		rg := groups[s.group]
		s.group++
		if rg.NumRows() == 0 {
			continue
		}
		s.left = rg.NumRows()
		if s.counter != nil {
			s.counter.Add(groupBytes(s.file.Metadata(), s.group-1))
		}
		if s.wantRows {
			s.rows = rg.Rows()
			if s.rowBuf == nil {
				s.rowBuf = make([]parquet.Row, rowBatch)
			}
			return nil
		}
		chunks := rg.ColumnChunks()
		s.textCol = columnValues{pages: chunks[s.text.index].Pages()}
		if s.id.index >= 0 {
			s.idCol = columnValues{pages: chunks[s.id.index].Pages()}
		}
		s.moreCols = s.moreCols[:0]
		for _, c := range s.more {
			var cv columnValues
			if c.index >= 0 {
				cv.pages = chunks[c.index].Pages()
			}
			s.moreCols = append(s.moreCols, cv)
		}
		return nil
	}
	return io.EOF
}

// groupBytes is the stored size of row group i, for progress.
func groupBytes(md *format.FileMetaData, i int) int64 {
	if i < len(md.RowGroups) {
		if n := md.RowGroups[i].TotalCompressedSize; n > 0 {
			return n
		}
		return md.RowGroups[i].TotalByteSize
	}
	return 0
}

// next returns the next row's text and id values (and the row itself with
// Options.Rows), io.EOF after the last row.
func (s *parquetSource) next() (text, id parquet.Value, row parquet.Row, err error) {
	defer recoverTo(&err)
	for s.left == 0 {
		if err := s.closeGroup(); err != nil {
			return text, id, nil, err
		}
		if err := s.openGroup(); err != nil {
			return text, id, nil, err
		}
	}
	s.left--
	s.row++
	id = parquet.NullValue()
	if s.wantRows {
		if s.rowI == s.rowN {
			n, err := s.rows.ReadRows(s.rowBuf)
			if n == 0 {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF // NumRows promised more
				}
				return text, id, nil, err
			}
			s.rowI, s.rowN = 0, n
		}
		row = s.rowBuf[s.rowI].Clone()
		s.rowI++
		text = parquet.NullValue()
		s.moreVals = s.moreVals[:0]
		for range s.more {
			s.moreVals = append(s.moreVals, parquet.NullValue())
		}
		for _, v := range row {
			switch v.Column() {
			case s.text.index:
				text = v
			case s.id.index:
				id = v
			}
			for i, c := range s.more {
				if v.Column() == c.index {
					s.moreVals[i] = v
				}
			}
		}
		return text, id, row, nil
	}
	s.moreVals = s.moreVals[:0]
	for i := range s.more {
		v := parquet.NullValue()
		if s.more[i].index >= 0 {
			if v, err = s.moreCols[i].next(); err != nil {
				return text, id, nil, err
			}
		}
		s.moreVals = append(s.moreVals, v)
	}
	if text, err = s.textCol.next(); err != nil {
		return text, id, nil, err
	}
	if s.id.index >= 0 {
		if id, err = s.idCol.next(); err != nil {
			return text, id, nil, err
		}
	}
	return text, id, nil, nil
}

// columnValues reads one column chunk's values a page at a time. The values
// of a column outside repeated fields are one per row, nulls included.
type columnValues struct {
	pages  parquet.Pages
	page   parquet.Page
	values parquet.ValueReader
	buf    []parquet.Value
	i, n   int
}

const valueBatch = 256

func (c *columnValues) next() (parquet.Value, error) {
	for c.i == c.n {
		if c.values == nil {
			if c.page != nil {
				parquet.Release(c.page)
				c.page = nil
			}
			p, err := c.pages.ReadPage()
			if err == io.EOF {
				return parquet.Value{}, io.ErrUnexpectedEOF // the row group promised more rows
			}
			if err != nil {
				return parquet.Value{}, err
			}
			c.page, c.values = p, p.Values()
		}
		if c.buf == nil {
			c.buf = make([]parquet.Value, valueBatch)
		}
		n, err := c.values.ReadValues(c.buf)
		c.i, c.n = 0, n
		if err == io.EOF || err == nil && n == 0 { // a page done (or empty: never spin on it)
			c.values = nil
		} else if err != nil {
			return parquet.Value{}, err
		}
	}
	v := c.buf[c.i]
	c.i++
	return v, nil
}

func (c *columnValues) close() error {
	if c.page != nil {
		parquet.Release(c.page)
	}
	var err error
	if c.pages != nil {
		err = c.pages.Close()
	}
	*c = columnValues{}
	return err
}

// nextParquet turns the next row of s into a Doc.
func (r *Reader) nextParquet(s *parquetSource) (Doc, error) {
	text, id, row, err := s.next()
	if err == io.EOF {
		return Doc{}, io.EOF
	}
	line := int(min(s.row, 1<<62))
	if err != nil {
		return Doc{}, &Error{Source: s.name, Line: line, Err: fmt.Errorf("%w: %w", ErrBadParquet, err)}
	}
	if text.IsNull() {
		return Doc{}, &Error{Source: s.name, Line: line, Err: fmt.Errorf("%w: text column %q is null", ErrMalformed, s.text.name)}
	}
	b := text.ByteArray()
	if int64(len(b)) > r.opt.MaxDocBytes {
		return Doc{}, &Error{Source: s.name, Line: line, Err: fmt.Errorf("%w: text longer than %d bytes", ErrTooLarge, r.opt.MaxDocBytes)}
	}
	d := Doc{Text: string(b), Source: s.name, Line: line, Format: Parquet, Row: row}
	if len(s.more) > 0 {
		d.Columns = make([]string, len(s.more))
		for i, v := range s.moreVals {
			d.Columns[i] = jsonValue(v)
		}
	}
	switch {
	case id.IsNull():
		d.ID = s.name + ":" + strconv.Itoa(line)
	case id.Kind() == parquet.ByteArray:
		d.ID = string(id.ByteArray())
	case id.Kind() == parquet.FixedLenByteArray: // a UUID, a hash: binary
		d.ID = hex.EncodeToString(id.ByteArray())
	default:
		d.ID = jsonValue(id) // a number
	}
	return d, nil
}

// jsonValue writes a Parquet value as JSON text: strings quoted, numbers
// and booleans as literals (a timestamp as its integer), null as null.
func jsonValue(v parquet.Value) string {
	if v.IsNull() {
		return "null"
	}
	switch v.Kind() {
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean())
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10)
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10)
	case parquet.Float:
		return strconv.FormatFloat(float64(v.Float()), 'g', -1, 32)
	case parquet.Double:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case parquet.ByteArray, parquet.FixedLenByteArray:
		b, _ := json.Marshal(string(v.ByteArray()))
		return string(b)
	}
	b, _ := json.Marshal(v.String())
	return string(b)
}

// ParquetLayout is what a copy of a Parquet file's rows needs to be laid out
// as the file was: its schema (column order, types, repetition and logical
// types as stored), its compression and its key-value metadata (such as the
// "ARROW:schema" that pyarrow writes).
type ParquetLayout struct {
	Schema      *parquet.Schema
	Compression compress.Codec // the codec of the first column chunk; Uncompressed when there is none
	Metadata    []format.KeyValue
	// RowsPerGroup is the most rows in one of its row groups (at least 1):
	// a copy that flushes row groups at this size holds no more in memory
	// than a reader of the file does.
	RowsPerGroup int64
}

// ReadParquetLayout reads the footer of the Parquet file name. Its error names
// the file and wraps ErrBadParquet when the file is not valid Parquet.
func ReadParquetLayout(name string) (ParquetLayout, error) {
	f, err := os.Open(name)
	if err != nil {
		return ParquetLayout{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ParquetLayout{}, err
	}
	pf, err := openFile(f, fi.Size())
	if err != nil {
		return ParquetLayout{}, &Error{Source: name, Err: fmt.Errorf("%w: %w", ErrBadParquet, err)}
	}
	md := pf.Metadata()
	l := ParquetLayout{Schema: pf.Schema(), Compression: &parquet.Uncompressed, Metadata: md.KeyValueMetadata, RowsPerGroup: 1}
	codec := false
	for _, rg := range md.RowGroups {
		if len(rg.Columns) > 0 && !codec {
			if c := parquet.LookupCompressionCodec(rg.Columns[0].MetaData.Codec); c != nil {
				l.Compression = c
			}
			codec = true
		}
		l.RowsPerGroup = max(l.RowsPerGroup, rg.NumRows)
	}
	return l, nil
}
