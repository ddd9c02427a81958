package corpus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// sniffLen is how much of a decompressed source is examined for binary
// content, as git and grep do with their first block.
const sniffLen = 8 << 10

// bufSize is the read buffer per source; lines longer than it are assembled
// in a separate buffer that grows as needed.
const bufSize = 256 << 10

// maxZstdWindow accepts streams written with zstd --long up to 2 GiB windows.
const maxZstdWindow = 1 << 31

// expand turns paths into the list of files to read: directories are walked
// in lexical order, skipping dot entries; "-" stays as is. A directory entry
// that cannot be followed (a symbolic link whose target is gone) fails the
// walk, or with skipBad becomes an input that Next reports to OnBad.
func expand(paths []string, skipBad bool) (files []input, size int64, err error) {
	for _, p := range paths {
		if p == "-" {
			files = append(files, input{name: p})
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, 0, err
		}
		if !fi.IsDir() {
			files = append(files, input{name: p})
			size += fi.Size()
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != p && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			fi, err := os.Stat(path) // follows symlinks to files
			if err != nil {
				err = entryError(path, d, err)
				if !skipBad {
					return err
				}
				files = append(files, input{name: path, err: err})
				return nil
			}
			if fi.Mode().IsRegular() {
				files = append(files, input{name: path})
				size += fi.Size()
			}
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	return files, size, nil
}

// entryError describes a directory entry that os.Stat could not follow.
func entryError(path string, d fs.DirEntry, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is named once, by Error.Source
	}
	if d.Type()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(path)
		return &Error{Source: path, Err: fmt.Errorf("%w to %q (%v)", ErrBrokenLink, target, err)}
	}
	return &Error{Source: path, Err: err}
}

// input is a file name to open, or a name and an already open reader, or a
// directory entry that could not be followed (err).
type input struct {
	name string
	r    io.Reader // nil: open name
	err  error     // reported to OnBad instead of reading
}

// countingReader counts bytes read from the underlying (compressed) input so
// that progress can be shown against file sizes.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// source is one open input.
type source struct {
	name   string
	format Format
	br     *bufio.Reader
	closer []func() error
	line   int  // lines read so far
	stdin  bool // standard input: empty, it holds no document (a named empty file is one)
}

func (s *source) close() error {
	var errs []error
	for _, c := range slices.Backward(s.closer) {
		errs = append(errs, c())
	}
	s.closer = nil
	return errors.Join(errs...)
}

// openSource opens name (or reads in for "-"), undoes compression and picks
// the format. It returns an error wrapping ErrBinary for binary content.
func openSource(in input, opt *Options, counter *atomic.Int64) (*source, error) {
	name := in.name
	s := &source{name: name}
	r := in.r
	if r == nil {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		s.closer = append(s.closer, f.Close)
		r = f
	}
	r = countingReader{r, counter}
	br := bufio.NewReaderSize(r, bufSize)
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		// klauspost's decoder, as the WARC reader's: it takes less CPU than
		// compress/gzip's, and a .jsonl.gz and a .warc.gz then compare
		// like for like (BENCHMARKS.md, "WARC").
		zr, err := gzip.NewReader(br)
		if err != nil {
			s.close()
			return nil, &Error{Source: name, Err: fmt.Errorf("gzip: %w", err)}
		}
		s.closer = append(s.closer, zr.Close)
		br = bufio.NewReaderSize(zr, bufSize)
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		// Two in-flight blocks: decoding runs ahead of line parsing in its own
		// goroutine instead of inside Read. On en_gitdocs_dev (long window) a
		// dedup run went from ~47 to ~50-54 MB/s with the same peak RSS; more
		// gains nothing on two cores, whose workers are busy fingerprinting.
		zr, err := zstd.NewReader(br, zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderConcurrency(2))
		if err != nil {
			s.close()
			return nil, &Error{Source: name, Err: fmt.Errorf("zstd: %w", err)}
		}
		s.closer = append(s.closer, func() error { zr.Close(); return nil })
		br = bufio.NewReaderSize(zr, bufSize)
	}
	// UTF-16 with a byte order mark (Windows' "Unicode" text) is decoded to
	// UTF-8, the mark dropped; without one it stays binary (NUL bytes).
	if bom, _ := br.Peek(2); bytes.Equal(bom, []byte{0xff, 0xfe}) || bytes.Equal(bom, []byte{0xfe, 0xff}) {
		order := unicode.LittleEndian
		if bom[0] == 0xfe {
			order = unicode.BigEndian
		}
		dec := unicode.UTF16(order, unicode.ExpectBOM).NewDecoder()
		br = bufio.NewReaderSize(transform.NewReader(br, dec), bufSize)
	}
	s.br = br
	s.stdin = name == "-"
	// Parquet keeps its footer at the end: a stream cannot be read as
	// Parquet (a named file or a sized io.ReaderAt is; see isParquet).
	if magic, _ := br.Peek(len(parquetMagic)); opt.Format == Parquet || opt.Format == Auto && string(magic) == parquetMagic {
		s.close()
		return nil, &Error{Source: name, Err: fmt.Errorf("%w: Parquet cannot be read from a stream (its footer is at the end): name the file",
			ErrBadParquet)}
	}
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		s.close()
		return nil, &Error{Source: name, Err: err}
	}
	if opt.Format == Auto && bytes.HasPrefix(head, []byte(warcMagic)) {
		s.format = WARC // Next reads it as WARC (on a stream, of any name)
		return s, nil
	}
	if why := binaryReason(head, len(head) < sniffLen); why != "" {
		s.close()
		return nil, &Error{Source: name, Err: fmt.Errorf("%w skipped (%s)", ErrBinary, why)}
	}
	s.format = opt.Format
	if s.format == Auto {
		s.format = autoFormat(name, head)
	}
	return s, nil
}

// isWARCInput reports whether in is read as WARC: with Format WARC, or
// Auto and a name that says WARC or, for a named file, content that starts
// with a WARC version line once decompressed. A stream of another name is
// found WARC by openSource, on its decompressed content.
func isWARCInput(in input, f Format) bool {
	switch {
	case f == WARC:
		return true
	case f != Auto:
		return false
	case in.r != nil:
		return isWARCName(in.name)
	}
	return IsWARC(in.name)
}

// autoFormat picks JSONL by extension (or, for stdin, by a leading '{').
func autoFormat(name string, head []byte) Format {
	if name == "-" {
		if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
			return JSONL
		}
		return Text
	}
	base := strings.ToLower(filepath.Base(name))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".gz"), ".zst")
	switch filepath.Ext(base) {
	case ".jsonl", ".ndjson", ".json":
		return JSONL
	}
	return Text
}

// binaryReason returns why head looks binary, or "" for text: a NUL byte, or
// more than a third of the bytes not part of valid UTF-8. A rune cut by the
// end of the sample is not held against it unless the sample is the whole
// input.
func binaryReason(head []byte, whole bool) string {
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return fmt.Sprintf("NUL byte at offset %d", i)
	}
	bad := 0
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n == 1 {
			if !whole && len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:]) {
				break
			}
			bad++
		}
		i += n
	}
	if len(head) > 0 && bad*3 > len(head) {
		return fmt.Sprintf("%d of the first %d bytes are not UTF-8", bad, len(head))
	}
	return ""
}

// readLine returns the next line without its terminator, or io.EOF. Lines
// longer than max are consumed but not kept: tooLarge is set and line is nil.
// The line is freshly allocated and owned by the caller.
func (s *source) readLine(max int64, scratch *[]byte) (line []byte, tooLarge bool, err error) {
	frag, err := s.br.ReadSlice('\n')
	if err == nil || err == io.EOF {
		// The common case: the whole line was in the buffer.
		if len(frag) == 0 {
			return nil, false, io.EOF
		}
		s.line++
		frag = trimEOL(frag)
		if int64(len(frag)) > max {
			return nil, true, nil
		}
		return bytes.Clone(frag), false, nil
	}
	if err != bufio.ErrBufferFull {
		return nil, false, err
	}
	s.line++
	a := assembler{max: max + 2, scratch: scratch} // +2: the terminator is not part of the document
	for {
		a.add(frag)
		if err == nil || err == io.EOF {
			break
		}
		if err != bufio.ErrBufferFull {
			return nil, false, err
		}
		frag, err = s.br.ReadSlice('\n')
	}
	line, tooLarge = a.bytes()
	line = trimEOL(line)
	if tooLarge || int64(len(line)) > max {
		return nil, true, nil
	}
	return line, false, nil
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// readAll reads the rest of the source as one document of at most max bytes.
func (s *source) readAll(max int64, scratch *[]byte) ([]byte, bool, error) {
	a := assembler{max: max, scratch: scratch}
	for {
		b, err := s.br.Peek(s.br.Buffered())
		if len(b) == 0 && err == nil {
			b, err = s.br.Peek(1) // fill the buffer
			if len(b) > 0 {
				b, err = s.br.Peek(s.br.Buffered())
			}
		}
		a.add(b)
		s.br.Discard(len(b))
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, err
		}
	}
	b, tooLarge := a.bytes()
	return b, tooLarge, nil
}

// assembler collects a document that does not fit in the read buffer. It
// keeps the pieces in chunks of growing size and copies them once into a
// buffer of the exact final size: a 1 GB line peaks at twice its size, where
// a doubling slice would leave up to twice that in garbage behind.
type assembler struct {
	max     int64
	scratch *[]byte // first chunk, reused from line to line
	chunks  [][]byte
	cur     []byte
	n       int64
	tooBig  bool
}

const (
	firstChunk = 1 << 20
	maxChunk   = 64 << 20
)

func (a *assembler) add(p []byte) {
	a.n += int64(len(p))
	if a.tooBig {
		return
	}
	if a.n > a.max {
		a.tooBig, a.chunks, a.cur = true, nil, nil
		return
	}
	if a.cur == nil {
		if cap(*a.scratch) < firstChunk {
			*a.scratch = make([]byte, 0, firstChunk)
		}
		a.cur = (*a.scratch)[:0]
	}
	for len(p) > 0 {
		if len(a.cur) == cap(a.cur) {
			a.chunks = append(a.chunks, a.cur)
			a.cur = make([]byte, 0, min(2*cap(a.cur), maxChunk))
		}
		k := copy(a.cur[len(a.cur):cap(a.cur)], p)
		a.cur, p = a.cur[:len(a.cur)+k], p[k:]
	}
}

// bytes returns the assembled document in a new exact-size buffer.
func (a *assembler) bytes() ([]byte, bool) {
	if a.tooBig {
		return nil, true
	}
	out := make([]byte, 0, a.n)
	for i, c := range a.chunks {
		out = append(out, c...)
		a.chunks[i] = nil // collectable as soon as copied
	}
	out = append(out, a.cur...)
	a.chunks, a.cur = nil, nil
	return out, false
}
