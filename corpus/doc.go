// Package corpus reads documents from files, directories and standard input,
// in JSON Lines or plain text, compressed with gzip or zstd or not, or from
// Parquet files, one document at a time so that memory is bounded by the
// largest document (for Parquet, by a page of each column read) rather than
// by the corpus.
//
//	r, err := corpus.Open([]string{"news.jsonl.zst", "more/"}, corpus.Options{
//		TextField: "body",
//		SkipBad:   true,
//		OnBad:     func(err error) { log.Print(err) },
//	})
//	if err != nil { ... }
//	defer r.Close()
//	for {
//		doc, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil { ... } // names file:line
//		use(doc.ID, doc.Text)
//	}
//
// # Sources
//
// Each path is a file, a directory or "-" for standard input. Directories are
// walked recursively in lexical order (filepath.WalkDir), skipping entries
// whose names start with "." (such as .git), so a run over a directory is
// reproducible. Compression is recognised by its magic bytes, not by the
// name: gzip (RFC 1952, multi-member) and zstd (RFC 8878; windows up to 2 GiB
// are accepted because the shared corpora use zstd --long). Text is UTF-8;
// UTF-16 that starts with a byte order mark (little or big endian) is decoded
// to UTF-8 as it is read, so Doc.Text and Doc.Raw are UTF-8 for it too.
//
// # Formats
//
//   - JSONL: one JSON object per line. The document's text is the string field
//     Options.TextField ("text"), its id the field Options.IDField ("id"), a
//     string or a number (kept as written, so 007 stays distinct from 7.0); a
//     missing or null id becomes "file:line". Every other field is left alone:
//     Doc.Raw is the line exactly as read, without its line terminator. A line
//     that is not a JSON object, whose text field is missing or not a string,
//     or whose id is neither string nor number is malformed. Blank lines are
//     skipped. Strings are decoded as encoding/json does (lone surrogates
//     become U+FFFD) except that invalid UTF-8 is passed through untouched: the
//     feature cleanup replaces it, and Raw must round-trip.
//   - Text: a whole file is one document whose id is its path (an empty
//     standard input is no document).
//   - Lines: each non-blank line is a document whose id is "file:line".
//   - Parquet (https://parquet.apache.org/docs/file-format/): each row is a
//     document. Options.TextField names the text column, a string (or
//     binary) column, and Options.IDField the id column: a string, a number
//     or a fixed-length binary (a UUID, written in hex). A dotted path names
//     a column inside a nested group ("meta.body"); a column inside a list
//     is refused. A missing id column or a null id becomes "file:row"
//     (Doc.Line is the 1-based row); a null text is malformed. The footer is
//     read first, then row group after row group, and of each only the text
//     and id columns (and Options.Columns), a page at a time: memory is
//     bounded by a page of each, whatever the file's size. With Options.Rows
//     every column is read and Doc.Row holds the row (parquet.Row) for a
//     caller that copies it; ReadParquetLayout gives the schema, codec and
//     key-value metadata to copy it under. Parquet is read at offsets: a
//     named file, a file redirected to standard input, or through
//     OpenReader an io.ReaderAt with a Size or a Seek method (*os.File,
//     *bytes.Reader); a pipe or other stream is refused, the footer being at
//     the end. Read with github.com/parquet-go/parquet-go (BENCHMARKS.md,
//     "Parquet", says why it and not arrow-go).
//   - WARC (ISO 28500, 1.0 and 1.1) and WET: each page is a document: a
//     WET conversion record, or a 2xx response record whose HTTP payload
//     is HTML or plain text (its text extracted: see html.go). Other
//     records are counted (Reader.SkippedRecords). The id is
//     WARC-Target-URI, or the header Options.IDField names. Doc.Offset is
//     the record's stored offset (its gzip member's); with Options.Rows,
//     Doc.Records holds the page's records byte for byte. A damaged
//     archive is an *Error wrapping ErrBadWARC that names the offset.
//     Recognised by a .warc/.wet name (before .gz or .zst) or content.
//   - Auto (the default) picks Parquet for names ending in .parquet or
//     .parq and for files that start with the magic bytes "PAR1", JSONL for
//     names ending in .jsonl, .ndjson or .json (after removing .gz or .zst)
//     and Text otherwise; on standard input, JSONL when the first non-blank
//     byte is '{', else Text. A directory of mixed JSONL and Parquet shards
//     is read in Auto format, each file in its own.
//
// # Bad input
//
// A Parquet file that cannot be read (a corrupt or cut footer, a page that
// does not decode) fails Open's first Next on it with an *Error naming it
// and wrapping ErrBadParquet; one without the text column with an *Error
// wrapping ErrNoColumn that lists the columns it has. Neither is skipped by
// SkipBad: they are the whole file, not a line.
//
// Binary files (a NUL byte, or mostly invalid UTF-8, in the first 8 KiB after
// decompression) are never read as text: they are skipped and reported to
// Options.OnBad with an error wrapping ErrBinary. A symbolic link met while
// walking a directory whose target is gone fails Open with an *Error naming
// it (wrapping ErrBrokenLink); with Options.SkipBad it is passed to OnBad in
// its place in the walk instead. A malformed JSONL line, or a
// document larger than Options.MaxDocBytes, is returned from Next as an *Error
// naming file and line (wrapping ErrMalformed or ErrTooLarge) unless
// Options.SkipBad is set, in which case it is passed to OnBad and reading goes
// on. There is no fixed line-length limit below MaxDocBytes (1 GiB by
// default): a line longer than the 256 KiB read buffer is collected in chunks
// and copied once into a buffer of its exact size, so a 1 GB line peaks at
// about 2 GB while it is assembled and is then held once (Text aliases Raw
// when the JSON string has no escapes).
package corpus
