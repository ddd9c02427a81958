package corpus

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Errors reported by the Reader. Errors about one line or file are *Error
// values that wrap one of these and name the place.
var (
	// ErrBinary marks a file skipped because it looks binary.
	ErrBinary = errors.New("corpus: binary file")
	// ErrBrokenLink marks a symbolic link, met while walking a directory,
	// whose target does not exist (or loops).
	ErrBrokenLink = errors.New("corpus: broken symbolic link")
	// ErrMalformed marks a JSONL line that is not a usable JSON object.
	ErrMalformed = errors.New("corpus: malformed line")
	// ErrTooLarge marks a document longer than Options.MaxDocBytes.
	ErrTooLarge = errors.New("corpus: document too large")
	// ErrOptions marks invalid Options.
	ErrOptions = errors.New("corpus: invalid options")
	// ErrBadParquet marks a Parquet file that cannot be read: a corrupt
	// footer, a truncated file, a page that does not decode.
	ErrBadParquet = errors.New("corpus: bad Parquet file")
	// ErrNoColumn marks a Parquet file without a usable text column (or
	// with an id column of a type that is not an id); the error lists the
	// columns the file has.
	ErrNoColumn = errors.New("corpus: no such column")
	// ErrBadWARC marks a damaged WARC archive: a truncated or corrupt
	// gzip member, a record without a version line or a Content-Length,
	// a block shorter than its Content-Length or not followed by the
	// record's closing CRLF CRLF. The error names the byte offset.
	ErrBadWARC = errors.New("corpus: damaged WARC record")
)

// Format says how a source is split into documents.
type Format int

// Formats; the zero value is Auto.
const (
	Auto    Format = iota // JSONL for .jsonl/.ndjson/.json names, else Text; stdin sniffed
	JSONL                 // one JSON object per line
	Text                  // a whole file is one document
	Lines                 // each non-blank line is one document
	Parquet               // Apache Parquet: each row is one document
	WARC                  // WARC 1.0/1.1 (and WET): each HTML or text page is one document
)

var formatNames = [...]string{Auto: "auto", JSONL: "jsonl", Text: "text", Lines: "lines", Parquet: "parquet", WARC: "warc"}

// String returns the format's name as ParseFormat accepts it.
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// ParseFormat returns the format called name: auto, jsonl, text, lines,
// parquet or warc (also wet; "" is auto).
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(name) {
	case "", "auto":
		return Auto, nil
	case "jsonl", "ndjson", "json":
		return JSONL, nil
	case "text", "txt":
		return Text, nil
	case "lines", "line":
		return Lines, nil
	case "parquet", "parq":
		return Parquet, nil
	case "warc", "wet":
		return WARC, nil
	}
	return Auto, fmt.Errorf("%w: unknown format %q (want auto, jsonl, text, lines, parquet or warc)", ErrOptions, name)
}

// DefaultMaxDocBytes is the default limit on one document: 1 GiB, enough for a
// 1 GB single-line document.
const DefaultMaxDocBytes = 1 << 30

// Options control a Reader. The zero value reads Auto format with fields "id"
// and "text" and stops at the first malformed line.
type Options struct {
	Format Format // zero: Auto
	// IDField and TextField name the JSON fields, or the Parquet columns
	// (a dotted path for a column in a nested group: "meta.id"). For WARC,
	// IDField names the WARC header holding the id (any case), "id"
	// meaning WARC-Target-URI; TextField is not used.
	IDField   string // zero: "id"; a missing id becomes "file:line" ("file@offset" for WARC)
	TextField string // zero: "text"

	// SkipBad makes malformed lines, too-large documents and broken symbolic
	// links in directories go to OnBad instead of failing Next (or Open).
	SkipBad bool
	// OnBad receives skipped lines, documents and links (with SkipBad) and
	// skipped binary files (always). nil: ignore them.
	OnBad func(err error)

	MaxDocBytes int64 // zero: DefaultMaxDocBytes (1 GiB)

	// NoRaw leaves Doc.Raw nil for JSONL, for callers that need only the
	// text: an escaped text (most prose has \n) is then decoded over the
	// line's own bytes instead of into a second copy.
	NoRaw bool

	// Rows makes Parquet documents carry their whole row (Doc.Row), every
	// column read, for a caller that copies them. Without it only the text
	// and id columns are read. WARC documents carry their records
	// (Doc.Records): the page's and those that belong with it.
	Rows bool

	// StartOffset is where, in its file, the first byte given to OpenReader
	// is: a WARC file read from a gzip member boundary inside it (a split
	// read) then reports the file's offsets in ids and errors.
	StartOffset int64

	// Columns names more Parquet columns to read beside the text and id
	// (dotted paths, as TextField): Doc.Columns holds their values as JSON
	// text, "null" for a null or a column the file does not have. JSONL
	// documents leave Doc.Columns nil (their fields are in Doc.Raw).
	Columns []string

	// Stdin is read for the path "-". nil: os.Stdin.
	Stdin io.Reader
}

// EnsureDefaults fills in zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.IDField == "" {
		o.IDField = "id"
	}
	if o.TextField == "" {
		o.TextField = "text"
	}
	if o.MaxDocBytes == 0 {
		o.MaxDocBytes = DefaultMaxDocBytes
	}
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	switch {
	case o.Format < Auto || o.Format > WARC:
		return fmt.Errorf("%w: format %d", ErrOptions, o.Format)
	case o.MaxDocBytes < 0:
		return fmt.Errorf("%w: MaxDocBytes %d < 0", ErrOptions, o.MaxDocBytes)
	case o.IDField == o.TextField && o.IDField != "":
		return fmt.Errorf("%w: id and text field are both %q", ErrOptions, o.IDField)
	}
	return nil
}

// Doc is one document. Its fields belong to the caller and stay valid after
// the next call to Next; Text may share memory with Raw, so Raw must not be
// modified.
type Doc struct {
	ID     string // JSONL id field or Parquet id column, "file:line" when missing, or the path for Text
	Text   string // the text, invalid UTF-8 kept as is
	Raw    []byte // JSONL: the line as read, without "\n" or "\r\n"; nil otherwise
	Source string // file name, "-" for standard input
	Line   int    // 1-based line for JSONL and Lines, 1-based row for Parquet, 1-based record for WARC, 0 for Text
	Format Format // the format it was read in: JSONL, Text, Lines, Parquet or WARC

	// Offset is, for WARC, where the page's record starts in the file as
	// stored: its gzip member's offset in a .warc.gz.
	Offset int64
	// Records are, for WARC with Options.Rows, the records read with the
	// page, in file order: the page's own, those that belong with it
	// (Linked) and others met between it and the next page.
	Records []WARCRecord

	// Row is the Parquet row, every column, with Options.Rows; nil otherwise.
	Row parquet.Row
	// Columns are the values of Options.Columns for a Parquet row, as JSON.
	Columns []string
}

// Error is a problem with one file or line. It wraps ErrBinary, ErrMalformed,
// ErrTooLarge or an I/O error.
type Error struct {
	Source string // file name, "-" for standard input
	Line   int    // 1-based line, 0 for the whole file
	Err    error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Source, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Source, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
