package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"unsafe"
)

// Reader yields the documents of a list of sources in order. It is not safe
// for concurrent use, except Size and Consumed, which a progress display may
// call from another goroutine.
type Reader struct {
	opt     Options
	files   []input
	size    int64
	read    atomic.Int64 // bytes read from the inputs as stored (compressed)
	src     *source
	pq      *parquetSource // the open source when it is Parquet (src is nil)
	wa      *warcSource    // the open source when it is WARC (src is nil)
	skipped int64          // WARC records of closed sources that are not pages
	scratch []byte         // assembles lines longer than the read buffer
	err     error          // sticky I/O error
}

// Open returns a Reader over paths (files, directories or "-" for
// Options.Stdin). It fails at once on options that are invalid, paths that
// do not exist or, without SkipBad, a broken symbolic link in a directory
// (ErrBrokenLink), before any document is read.
func Open(paths []string, opt Options) (*Reader, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	files, size, err := expand(paths, opt.SkipBad)
	if err != nil {
		return nil, err
	}
	for i := range files {
		if files[i].name == "-" {
			files[i].r = opt.Stdin
			if files[i].r == nil {
				files[i].r = os.Stdin
			}
		}
	}
	return &Reader{opt: opt, size: size, files: files}, nil
}

// OpenReader returns a Reader over the single input r, reported as name.
func OpenReader(r io.Reader, name string, opt Options) (*Reader, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if name == "" {
		name = "-"
	}
	return &Reader{opt: opt, files: []input{{name: name, r: r}}}, nil
}

// Size returns the total stored size of the input files, 0 when unknown
// (standard input).
func (r *Reader) Size() int64 { return r.size }

// Consumed returns how many stored (possibly compressed) bytes have been read
// so far, for progress against Size. It runs ahead of Next by a buffer.
func (r *Reader) Consumed() int64 { return r.read.Load() }

// SkippedRecords returns how many WARC records read so far were not pages
// (requests, metadata, images, redirects...): counted, not documents.
func (r *Reader) SkippedRecords() int64 {
	n := r.skipped
	if r.wa != nil {
		n += r.wa.skip
	}
	return n
}

// Close releases the open file, if any.
func (r *Reader) Close() error {
	r.files = nil
	if r.wa != nil {
		err := r.wa.close()
		r.skipped += r.wa.skip
		r.wa = nil
		return err
	}
	if r.pq != nil {
		err := r.pq.close()
		r.pq = nil
		return err
	}
	if r.src != nil {
		err := r.src.close()
		r.src = nil
		return err
	}
	return nil
}

// Next returns the next document, or io.EOF after the last one. Errors for one
// line or file (an *Error wrapping ErrMalformed or ErrTooLarge, without
// SkipBad) leave the Reader usable: the next call goes on after the bad line.
// Other errors are sticky.
func (r *Reader) Next() (Doc, error) {
	if r.err != nil {
		return Doc{}, r.err
	}
	for {
		if r.wa != nil {
			doc, err := r.wa.next()
			if err == io.EOF {
				err = r.wa.close()
				r.skipped += r.wa.skip
				name := r.wa.name
				r.wa = nil
				if err != nil {
					return Doc{}, r.fail(&Error{Source: name, Err: err})
				}
				continue
			}
			if err == nil {
				return doc, nil
			}
			if r.opt.SkipBad && errors.Is(err, ErrBadWARC) {
				r.bad(err)
				continue
			}
			return Doc{}, r.fail(err)
		}
		if r.pq != nil {
			doc, err := r.nextParquet(r.pq)
			if err == io.EOF {
				if err := r.pq.close(); err != nil {
					return Doc{}, r.fail(&Error{Source: r.pq.name, Err: err})
				}
				r.pq = nil
				continue
			}
			if err == nil {
				return doc, nil
			}
			if errors.Is(err, ErrMalformed) || errors.Is(err, ErrTooLarge) {
				if r.opt.SkipBad {
					r.bad(err)
					continue
				}
				return Doc{}, err
			}
			return Doc{}, r.fail(err)
		}
		if r.src == nil {
			if len(r.files) == 0 {
				return Doc{}, io.EOF
			}
			in := r.files[0]
			r.files = r.files[1:]
			if in.err != nil { // only with SkipBad: expand fails otherwise
				r.bad(in.err)
				continue
			}
			if isWARCInput(in, r.opt.Format) {
				wa, err := openWARC(in, &r.opt, &r.read)
				if err != nil {
					return Doc{}, r.fail(err)
				}
				r.wa = wa
				continue
			}
			if isParquet(in, r.opt.Format) {
				pq, err := openParquet(in, &r.opt, &r.read)
				if err != nil {
					return Doc{}, r.fail(err)
				}
				r.pq = pq
				continue
			}
			src, err := openSource(in, &r.opt, &r.read)
			if errors.Is(err, ErrBinary) {
				r.bad(err)
				continue
			}
			if err != nil {
				return Doc{}, r.fail(err)
			}
			if src.format == WARC { // found by its content on a stream
				r.wa = warcFromSource(src, &r.opt)
				continue
			}
			r.src = src
		}
		doc, err := r.next(r.src)
		if err == io.EOF {
			if err := r.src.close(); err != nil {
				return Doc{}, r.fail(&Error{Source: r.src.name, Err: err})
			}
			r.src = nil
			continue
		}
		if err == nil {
			return doc, nil
		}
		var e *Error
		if errors.As(err, &e) && (errors.Is(err, ErrMalformed) || errors.Is(err, ErrTooLarge)) {
			if r.opt.SkipBad {
				r.bad(err)
				continue
			}
			return Doc{}, err
		}
		return Doc{}, r.fail(err)
	}
}

func (r *Reader) bad(err error) {
	if r.opt.OnBad != nil {
		r.opt.OnBad(err)
	}
}

func (r *Reader) fail(err error) error {
	r.err = err
	if r.wa != nil {
		r.wa.close()
		r.wa = nil
	}
	if r.pq != nil {
		r.pq.close()
		r.pq = nil
	}
	if r.src != nil {
		r.src.close()
		r.src = nil
	}
	return err
}

// next reads one document from s, io.EOF at its end.
func (r *Reader) next(s *source) (Doc, error) {
	if s.format == Text {
		if s.line < 0 {
			return Doc{}, io.EOF
		}
		s.line = -1 // one document per source
		b, tooLarge, err := s.readAll(r.opt.MaxDocBytes, &r.scratch)
		if err != nil {
			return Doc{}, &Error{Source: s.name, Err: err}
		}
		if tooLarge {
			return Doc{}, &Error{Source: s.name, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, r.opt.MaxDocBytes)}
		}
		if len(b) == 0 && s.stdin {
			return Doc{}, io.EOF
		}
		return Doc{ID: s.name, Text: unsafe.String(unsafe.SliceData(b), len(b)), Source: s.name, Format: Text}, nil
	}
	for {
		line, tooLarge, err := s.readLine(r.opt.MaxDocBytes, &r.scratch)
		if err == io.EOF {
			return Doc{}, io.EOF
		}
		if err != nil {
			return Doc{}, &Error{Source: s.name, Line: s.line, Err: err}
		}
		if tooLarge {
			return Doc{}, &Error{Source: s.name, Line: s.line, Err: fmt.Errorf("%w: line longer than %d bytes", ErrTooLarge, r.opt.MaxDocBytes)}
		}
		if s.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\ufeff")) // a UTF-8 byte order mark
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if s.format == Lines {
			return Doc{
				ID:     s.name + ":" + strconv.Itoa(s.line),
				Text:   unsafe.String(unsafe.SliceData(line), len(line)),
				Source: s.name,
				Line:   s.line,
				Format: Lines,
			}, nil
		}
		return r.decode(s, line)
	}
}

// decode turns one JSONL line into a Doc.
func (r *Reader) decode(s *source, line []byte) (Doc, error) {
	bad := func(err error) (Doc, error) {
		return Doc{}, &Error{Source: s.name, Line: s.line, Err: err}
	}
	id, text, err := decodeLineText(line, r.opt.IDField, r.opt.TextField, r.opt.NoRaw)
	if err != nil {
		return bad(err)
	}
	switch {
	case !text.found || text.isNull:
		return bad(fmt.Errorf("%w: no text field %q", ErrMalformed, r.opt.TextField))
	case text.kind != '"':
		return bad(fmt.Errorf("%w: text field %q is not a string", ErrMalformed, r.opt.TextField))
	}
	d := Doc{Text: text.str, Raw: line, Source: s.name, Line: s.line, Format: JSONL}
	if r.opt.NoRaw {
		d.Raw = nil // its text was decoded over it
	}
	switch {
	case !id.found || id.isNull:
		d.ID = s.name + ":" + strconv.Itoa(s.line)
	case id.kind == '"' || id.isNum:
		d.ID = id.str
	default:
		return bad(fmt.Errorf("%w: id field %q is neither a string nor a number", ErrMalformed, r.opt.IDField))
	}
	return d, nil
}
