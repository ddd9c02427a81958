// Package corpus reads documents from files, directories and standard input,
// in JSON Lines or plain text, compressed with gzip or zstd or not, one
// document at a time so that memory is bounded by the largest document rather
// than by the corpus.
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
//   - Auto (the default) picks JSONL for names ending in .jsonl, .ndjson or
//     .json (after removing .gz or .zst) and Text otherwise; on standard input,
//     JSONL when the first non-blank byte is '{', else Text.
//
// # Bad input
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
