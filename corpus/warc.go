package corpus

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// WARC files (ISO 28500, WARC 1.0 and 1.1; https://iipc.github.io/warc-specifications/)
// are read here record by record: a version line, header fields up to an
// empty line, a block of Content-Length bytes and a closing CRLF CRLF. A
// .warc.gz holds one record per gzip member (WARC 1.1 annex D), and each
// member is decoded on its own (Multistream off) from a bufio.Reader, which
// gzip reads through io.ByteReader and never past the member's end: the
// stored offset of every member, and so of every record, is exact. That is
// what names a damaged record's offset, what copies a kept record's member
// byte for byte, and what lets a split read start at a member boundary.
// Neither library measured (BENCHMARKS.md, "WARC") gives exact offsets for
// every compression, and both cost more per record than this framing does;
// github.com/nlnwa/gowarc reads the archives written by dedup in the tests.
//
// Memory: the page's block is read whole (one record), into a buffer
// reused from page to page; other records are skipped without being held,
// unless Options.Rows keeps those that belong with a page.

// warcMagic starts every WARC record's version line.
const warcMagic = "WARC/1."

// maxWARCHeader bounds one record's header block (its lines and fields).
const maxWARCHeader = 1 << 20

// WARCField is one WARC header field as written.
type WARCField struct {
	Name, Value string
}

// WARCRecord is one record of a WARC file.
type WARCRecord struct {
	Offset int64  // in the file as stored: the record's gzip member's in a .warc.gz
	Type   string // WARC-Type, lower case
	Fields []WARCField
	// Bytes is the record uncompressed, from its version line to its closing
	// CRLF CRLF, exactly as in the file.
	Bytes []byte
	// Member is the gzip member that holds this record alone, exactly as
	// stored; nil when the record is not alone in a member (or the archive
	// is not gzip'd, or was read from a stream).
	Member []byte
	// Page is set on the record a document was read from; Linked on the
	// records that belong with it (WARC-Concurrent-To either way,
	// WARC-Refers-To, or the same WARC-Target-URI).
	Page, Linked bool
}

// Get returns the value of the first field called name (any case), "" when
// there is none.
func (r *WARCRecord) Get(name string) string {
	return warcGet(r.Fields, name)
}

func warcGet(fs []WARCField, name string) string {
	for _, f := range fs {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// warcURI returns a URI field's value without the angle brackets WARC 1.0
// writers such as wget put around it.
func warcURI(v string) string {
	if len(v) >= 2 && v[0] == '<' && v[len(v)-1] == '>' {
		return v[1 : len(v)-1]
	}
	return v
}

// isWARCName reports a name that says WARC or WET: .warc, .warc.wet or .wet,
// before .gz or .zst.
func isWARCName(name string) bool {
	base := strings.ToLower(filepath.Base(name))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".gz"), ".zst")
	return strings.HasSuffix(base, ".warc") || strings.HasSuffix(base, ".wet")
}

// IsWARC reports whether the named file is read as WARC in Auto format: by
// its name or by its first bytes, after decompression, being a WARC
// version line.
func IsWARC(name string) bool {
	if isWARCName(name) {
		return true
	}
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	return sniffWARC(bufio.NewReaderSize(f, 4096))
}

// sniffWARC reports whether br (stored bytes) starts, once decompressed,
// with a WARC version line. It reads from br.
func sniffWARC(br *bufio.Reader) bool {
	magic, _ := br.Peek(4)
	var r io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return false
		}
		zr.Multistream(false)
		r = zr
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			return false
		}
		defer zr.Close()
		r = zr
	}
	var head [len(warcMagic)]byte
	_, err := io.ReadFull(r, head[:])
	return err == nil && string(head[:]) == warcMagic
}

// compression of a WARC source.
const (
	warcPlain = iota
	warcGzip
	warcZstd
)

// warcSource is one open WARC file.
type warcSource struct {
	name   string
	opt    *Options
	idName string // the header holding the id
	file   *os.File
	closer []func() error
	in     *countingOffset
	raw    *bufio.Reader // the stored bytes
	kind   int
	gz     *gzip.Reader
	rd     *bufio.Reader // the uncompressed records: a member's, or the file's
	dpos   int64         // uncompressed bytes consumed from rd (of the member, for gzip)
	member int64         // stored offset of the current gzip member
	inMem  bool          // a gzip member is open
	nrec   int           // records read
	skip   int64         // records that are not pages
	done   bool

	pending *warcItem    // Rows: the next page, read while looking for the end of this one's records
	leading []WARCRecord // Rows: the records read since the last page

	// Reused from record to record (parseRecord).
	head     []byte      // Rows: the record's bytes up to its block
	hdr      []byte      // the fields' names and values
	spans    []fieldSpan // the fields in hdr
	fieldBuf []WARCField // a page's fields without Rows
	block    []byte      // the block of a page or a kept record
}

// warcItem is a page read from the file: its record and its document.
type warcItem struct {
	rec  WARCRecord
	doc  Doc
	link warcLinks
}

// warcLinks are what other records may name a page by.
type warcLinks struct {
	id, uri    string
	concurrent []string
}

// countingOffset counts the bytes read from the file, for the stored offset
// of what the bufio.Reader above it hands out, and for progress.
type countingOffset struct {
	r   io.Reader
	n   int64
	all *atomic.Int64
}

func (c *countingOffset) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.all.Add(int64(n))
	return n, err
}

// storedPos is the stored offset of the next byte raw hands out.
func (s *warcSource) storedPos() int64 {
	return s.opt.StartOffset + s.in.n - int64(s.raw.Buffered())
}

// openWARC opens in as a WARC file.
func openWARC(in input, opt *Options, counter *atomic.Int64) (*warcSource, error) {
	s := &warcSource{name: in.name, opt: opt, idName: opt.IDField}
	if s.idName == "id" {
		s.idName = "WARC-Target-URI"
	}
	r := in.r
	if r == nil {
		f, err := os.Open(in.name)
		if err != nil {
			return nil, err
		}
		s.file = f
		s.closer = append(s.closer, f.Close)
		r = f
	}
	s.in = &countingOffset{r: r, all: counter}
	s.raw = bufio.NewReaderSize(s.in, bufSize)
	magic, _ := s.raw.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		s.kind = warcGzip
		s.rd = bufio.NewReaderSize(nil, bufSize)
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}) || isSkippableFrame(magic):
		s.kind = warcZstd
		zr, err := openZstdWARC(s.raw)
		if err != nil {
			s.close()
			return nil, &Error{Source: s.name, Err: fmt.Errorf("%w: zstd: %w", ErrBadWARC, err)}
		}
		s.closer = append(s.closer, func() error { zr.Close(); return nil })
		s.rd = bufio.NewReaderSize(zr, bufSize)
	default:
		s.rd = s.raw
	}
	return s, nil
}

// isSkippableFrame reports a zstd skippable frame (0x184D2A50-5F, little
// endian): the dictionary frame that starts a .warc.zst.
func isSkippableFrame(magic []byte) bool {
	return len(magic) == 4 && magic[0]&0xf0 == 0x50 && magic[1] == 0x2a && magic[2] == 0x4d && magic[3] == 0x18
}

// openZstdWARC returns the decoder of a .warc.zst: the IIPC's zstd WARC
// format starts with a skippable frame holding the dictionary the records'
// frames were compressed with (itself zstd-compressed or not); a plain zstd
// stream is read as it is.
func openZstdWARC(br *bufio.Reader) (*zstd.Decoder, error) {
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow)}
	if magic, _ := br.Peek(4); isSkippableFrame(magic) {
		var hdr [8]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return nil, err
		}
		dict := make([]byte, binary.LittleEndian.Uint32(hdr[4:]))
		if _, err := io.ReadFull(br, dict); err != nil {
			return nil, fmt.Errorf("dictionary frame: %w", err)
		}
		if bytes.HasPrefix(dict, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
			if err != nil {
				return nil, err
			}
			dict, err = d.DecodeAll(dict, nil)
			d.Close()
			if err != nil {
				return nil, fmt.Errorf("dictionary frame: %w", err)
			}
		}
		opts = append(opts, zstd.WithDecoderDicts(dict))
	}
	return zstd.NewReader(br, opts...)
}

func (s *warcSource) close() error {
	var errs []error
	for i := len(s.closer) - 1; i >= 0; i-- {
		errs = append(errs, s.closer[i]())
	}
	s.closer = nil
	return errors.Join(errs...)
}

// bad returns the error for a damaged record at stored offset off.
func (s *warcSource) bad(off int64, format string, args ...any) error {
	where := "record at byte"
	switch s.kind {
	case warcGzip:
		where = "gzip member at byte"
	case warcZstd:
		where = "record at uncompressed byte"
	}
	return &Error{Source: s.name, Err: fmt.Errorf("%w: %s %d: %s", ErrBadWARC, where, off, fmt.Sprintf(format, args...))}
}

// next returns the next page, io.EOF after the last.
func (s *warcSource) next() (Doc, error) {
	if !s.opt.Rows {
		it, err := s.nextPage()
		if err != nil {
			return Doc{}, err
		}
		return it.doc, nil
	}
	// Rows: a page's records are those before it (since the last page)
	// and after it up to the next page; the ones that name the next page
	// go with that one.
	it := s.pending
	s.pending = nil
	if it == nil {
		var err error
		if it, err = s.nextPage(); err != nil {
			return Doc{}, err // records after the last page went with it
		}
	}
	recs := s.leading
	s.leading = nil
	for i := range recs {
		recs[i].Linked = it.link.names(&recs[i])
	}
	recs = append(recs, it.rec)
	// Look ahead to the next page, collecting the records between.
	next, err := s.nextPage()
	switch {
	case err == io.EOF:
		for i := range s.leading {
			s.leading[i].Linked = it.link.names(&s.leading[i])
		}
		recs = append(recs, s.leading...)
		s.leading = nil
	case err != nil:
		return Doc{}, err
	default:
		// The records between: those up to the first that names the
		// next page and not this one stay with this page, the rest go
		// with the next, so the order of the file is kept.
		cut := len(s.leading)
		for i := range s.leading {
			r := &s.leading[i]
			if next.link.names(r) && !it.link.names(r) {
				cut = i
				break
			}
		}
		for i := range s.leading[:cut] {
			s.leading[i].Linked = it.link.names(&s.leading[i])
		}
		recs = append(recs, s.leading[:cut]...)
		s.leading = append([]WARCRecord(nil), s.leading[cut:]...)
		s.pending = next
	}
	it.doc.Records = recs
	return it.doc, nil
}

// names reports whether record r belongs with the page l names.
func (l warcLinks) names(r *WARCRecord) bool {
	if r.Type == "warcinfo" {
		return false
	}
	for _, f := range r.Fields {
		switch {
		case strings.EqualFold(f.Name, "WARC-Concurrent-To"), strings.EqualFold(f.Name, "WARC-Refers-To"):
			if l.id != "" && f.Value == l.id {
				return true
			}
		case strings.EqualFold(f.Name, "WARC-Record-ID"):
			for _, c := range l.concurrent {
				if c == f.Value {
					return true
				}
			}
		case strings.EqualFold(f.Name, "WARC-Target-URI"):
			if l.uri != "" && warcURI(f.Value) == l.uri {
				return true
			}
		}
	}
	return false
}

// keepBetween reports the records kept (with Rows) between pages: those
// that may belong with a page, and warcinfo. Others (images, logs) are
// dropped as they are read.
func keepBetween(typ string) bool {
	switch typ {
	case "warcinfo", "request", "metadata":
		return true
	}
	return false
}

// nextPage reads records up to the next page.
func (s *warcSource) nextPage() (*warcItem, error) {
	for {
		rec, block, err := s.readRecord()
		if err != nil {
			return nil, err
		}
		it, ok, err := s.page(&rec, block)
		if err != nil {
			return nil, err
		}
		if ok {
			return it, nil
		}
		s.skip++
		if s.opt.Rows && keepBetween(rec.Type) {
			s.leading = append(s.leading, rec)
		}
	}
}

// page turns a record into a document when it is a page: a conversion
// record (WET), or a response whose HTTP payload is HTML or plain text.
func (s *warcSource) page(rec *WARCRecord, block []byte) (*warcItem, bool, error) {
	var text string
	switch rec.Type {
	case "conversion":
		text = plainText(block, rec.Get("Content-Type"))
	case "response":
		if !strings.HasPrefix(strings.ToLower(rec.Get("Content-Type")), "application/http") {
			return nil, false, nil
		}
		t, ok := httpPageText(block)
		if !ok {
			return nil, false, nil
		}
		text = t
	default:
		return nil, false, nil
	}
	rec.Page = true
	id := rec.Get(s.idName)
	if strings.EqualFold(s.idName, "WARC-Target-URI") {
		id = warcURI(id)
	}
	if id == "" {
		id = s.name + "@" + strconv.FormatInt(rec.Offset, 10)
	}
	it := &warcItem{doc: Doc{ID: id, Text: text, Source: s.name, Line: s.nrec, Format: WARC, Offset: rec.Offset}}
	if !s.opt.Rows {
		return it, true, nil // its fields are reused for the next page
	}
	it.rec = *rec
	it.link = warcLinks{id: rec.Get("WARC-Record-ID"), uri: warcURI(rec.Get("WARC-Target-URI"))}
	for _, f := range rec.Fields {
		if strings.EqualFold(f.Name, "WARC-Concurrent-To") {
			it.link.concurrent = append(it.link.concurrent, f.Value)
		}
	}
	return it, true, nil
}

// readRecord reads the next record: its fields, and its block when it may
// be a page (else nil). With Rows, rec.Bytes (and Member) are filled for
// the records worth keeping.
func (s *warcSource) readRecord() (rec WARCRecord, block []byte, err error) {
	for {
		if s.done {
			return rec, nil, io.EOF
		}
		if s.kind == warcGzip && !s.inMem {
			if _, err := s.raw.Peek(1); err == io.EOF {
				s.done = true
				continue
			} else if err != nil {
				return rec, nil, &Error{Source: s.name, Err: err}
			}
			s.member = s.storedPos()
			if s.gz == nil {
				s.gz, err = gzip.NewReader(s.raw)
			} else {
				err = s.gz.Reset(s.raw)
			}
			if err != nil {
				s.done = true
				return rec, nil, s.bad(s.member, "not a gzip member (%v)", err)
			}
			s.gz.Multistream(false)
			s.rd.Reset(s.gz)
			s.inMem, s.dpos = true, 0
		}
		start := s.dpos
		rec, block, err = s.parseRecord()
		if err == io.EOF {
			if s.kind == warcGzip {
				s.inMem = false
				continue
			}
			s.done = true
			return rec, nil, io.EOF
		}
		if err != nil {
			off := s.opt.StartOffset + start
			s.done = true // a damaged archive: what follows cannot be trusted...
			if s.kind == warcGzip {
				off = s.member
				// ... unless the record's gzip member decodes to its end:
				// the next member starts a record of its own (SkipBad
				// goes on from there).
				if _, derr := io.Copy(io.Discard, s.rd); derr == nil {
					s.done, s.inMem = false, false
				}
			}
			return rec, nil, s.bad(off, "%v", err)
		}
		s.nrec++
		rec.Offset = s.opt.StartOffset + start
		if s.kind == warcGzip {
			rec.Offset = s.member
			alone := start == 0
			if _, perr := s.rd.Peek(1); perr == io.EOF {
				s.inMem = false
				if alone && rec.Bytes != nil && s.file != nil {
					end := s.storedPos()
					rec.Member = make([]byte, end-s.member)
					if _, err := s.file.ReadAt(rec.Member, s.member-s.opt.StartOffset); err != nil {
						return rec, nil, &Error{Source: s.name, Err: err}
					}
				}
			} else if perr != nil {
				s.done = true
				return rec, nil, s.bad(s.member, "%v", perr)
			}
		}
		return rec, block, nil
	}
}

// parseRecord reads one record from s.rd; io.EOF when there is none left
// (blank lines between records are passed over). The fields are gathered
// in s.hdr and become strings (one for the whole header) only for a record
// that may be a page or is kept: a request or a log record costs no
// allocation. The block is read into s.block, reused from record to
// record: a page's text and a kept record's Bytes are copies.
func (s *warcSource) parseRecord() (rec WARCRecord, block []byte, err error) {
	var line []byte
	for {
		line, err = s.line()
		if err == io.EOF && len(line) == 0 {
			return rec, nil, io.EOF
		}
		if err != nil {
			return rec, nil, unexpected(err)
		}
		if len(trimEOLs(line)) > 0 {
			break
		}
	}
	if !bytes.HasPrefix(line, []byte(warcMagic)) && !bytes.HasPrefix(line, []byte("WARC/")) {
		return rec, nil, fmt.Errorf("no WARC version line (found %q)", clip(line))
	}
	keep := s.opt.Rows
	s.head = s.head[:0]
	if keep {
		s.head = append(s.head, line...)
	}
	s.hdr, s.spans = s.hdr[:0], s.spans[:0]
	size := len(line)
	length := int64(-1)
	for {
		line, err = s.line()
		if err != nil {
			return rec, nil, unexpected(err)
		}
		size += len(line)
		if size > maxWARCHeader {
			return rec, nil, fmt.Errorf("header longer than %d bytes", maxWARCHeader)
		}
		if keep {
			s.head = append(s.head, line...)
		}
		l := trimEOLs(line)
		if len(l) == 0 {
			break
		}
		if (l[0] == ' ' || l[0] == '\t') && len(s.spans) > 0 { // a continuation line
			// The last value ends s.hdr: it goes on there.
			s.hdr = append(append(s.hdr, ' '), bytes.TrimSpace(l)...)
			s.spans[len(s.spans)-1].valueEnd = len(s.hdr)
			continue
		}
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			return rec, nil, fmt.Errorf("header line without a colon: %q", clip(l))
		}
		var f fieldSpan
		f.nameStart = len(s.hdr)
		s.hdr = append(s.hdr, bytes.TrimSpace(name)...)
		f.valueStart = len(s.hdr)
		s.hdr = append(s.hdr, bytes.TrimSpace(value)...)
		f.valueEnd = len(s.hdr)
		s.spans = append(s.spans, f)
		if bytes.EqualFold(s.hdr[f.nameStart:f.valueStart], []byte("Content-Length")) {
			v := s.hdr[f.valueStart:f.valueEnd]
			length, err = strconv.ParseInt(unsafe.String(unsafe.SliceData(v), len(v)), 10, 64)
			if err != nil || length < 0 {
				return rec, nil, fmt.Errorf("bad Content-Length %q", v)
			}
		}
	}
	if length < 0 {
		return rec, nil, fmt.Errorf("no Content-Length")
	}
	rec.Type = s.recordType()
	maybePage := rec.Type == "conversion" || rec.Type == "response"
	keep = keep && (maybePage || keepBetween(rec.Type))
	if maybePage || keep {
		rec.Fields = s.fields(keep)
	}
	if length > s.opt.MaxDocBytes {
		maybePage = false
		keep = false
	}
	if maybePage || keep {
		block = s.blockBuf(length)
		n, err := io.ReadFull(s.rd, block)
		s.dpos += int64(n)
		if err != nil {
			return rec, nil, fmt.Errorf("block cut after %d of its %d bytes (Content-Length): %v", n, length, unexpected(err))
		}
	} else {
		n, err := s.rd.Discard(int(min(length, int64(^uint(0)>>1))))
		s.dpos += int64(n)
		if err != nil {
			return rec, nil, fmt.Errorf("block cut after %d of its %d bytes (Content-Length): %v", n, length, unexpected(err))
		}
	}
	// The record ends with CRLF CRLF.
	tail, err := s.rd.Peek(4)
	if string(tail) != "\r\n\r\n" {
		if len(tail) < 4 && err != nil {
			return rec, nil, fmt.Errorf("no CRLF CRLF after the block of %d bytes (the record is cut): %v", length, unexpected(err))
		}
		return rec, nil, fmt.Errorf("%q after the block of %d bytes where CRLF CRLF ends the record: Content-Length is wrong", clip(tail), length)
	}
	tail = []byte("\r\n\r\n")
	s.rd.Discard(4)
	s.dpos += 4
	if keep {
		rec.Bytes = make([]byte, 0, len(s.head)+len(block)+len(tail))
		rec.Bytes = append(append(append(rec.Bytes, s.head...), block...), tail...)
	}
	if !maybePage {
		block = nil
	}
	return rec, block, nil
}

// fieldSpan is where one field's name and value are in warcSource.hdr:
// hdr[nameStart:valueStart] and hdr[valueStart:valueEnd].
type fieldSpan struct {
	nameStart, valueStart, valueEnd int
}

// fields returns the record's fields, in one string. A kept record (Rows)
// gets a slice of its own; a page read without Rows one reused for the next
// page, as nothing holds a page's fields past its document (whose id is a
// piece of the string, as a JSONL id is a piece of its line).
func (s *warcSource) fields(keep bool) []WARCField {
	all := string(s.hdr)
	var fs []WARCField
	if keep {
		fs = make([]WARCField, len(s.spans))
	} else {
		if cap(s.fieldBuf) < len(s.spans) {
			s.fieldBuf = make([]WARCField, len(s.spans))
		}
		fs = s.fieldBuf[:len(s.spans)]
	}
	for i, f := range s.spans {
		fs[i] = WARCField{Name: all[f.nameStart:f.valueStart], Value: all[f.valueStart:f.valueEnd]}
	}
	return fs
}

// recordType returns the record's WARC-Type (the first field of that name,
// any case) in lower case: the types of WARC 1.1 as constants.
func (s *warcSource) recordType() string {
	for _, f := range s.spans {
		if !bytes.EqualFold(s.hdr[f.nameStart:f.valueStart], []byte("WARC-Type")) {
			continue
		}
		v := s.hdr[f.valueStart:f.valueEnd]
		for _, t := range warcTypes {
			if equalFoldASCII(v, t) {
				return t
			}
		}
		return strings.ToLower(string(v))
	}
	return ""
}

var warcTypes = []string{"response", "request", "conversion", "metadata", "warcinfo", "resource", "revisit", "continuation"}

// maxReusedBlock bounds the block buffer a source keeps between records;
// a larger record's block is allocated for it alone.
const maxReusedBlock = 4 << 20

// blockBuf returns a buffer of n bytes for a record's block.
func (s *warcSource) blockBuf(n int64) []byte {
	if n > maxReusedBlock {
		return make([]byte, n)
	}
	if int64(cap(s.block)) < n {
		s.block = make([]byte, n, max(n, 64<<10))
	}
	return s.block[:n]
}

// line reads one line with its terminator from s.rd.
func (s *warcSource) line() ([]byte, error) {
	l, err := s.rd.ReadSlice('\n')
	s.dpos += int64(len(l))
	if err == bufio.ErrBufferFull {
		return nil, fmt.Errorf("a header line longer than %d bytes", bufSize)
	}
	return l, err
}

// unexpected turns an io.EOF inside a record into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// clip shortens b for an error message.
func clip(b []byte) string {
	b = bytes.TrimRight(b, "\r\n")
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

// NextWARCMember returns how many bytes of r come before the first gzip
// member that starts a WARC record (a gzip header whose data begins with a
// WARC version line), or io.EOF when none does: where a split read of a
// .warc.gz that starts inside the file begins, and where the read before
// it ends. Two reads that look from the same offset find the same member.
func NextWARCMember(r io.Reader) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var off int64
	for {
		b, err := br.Peek(3)
		if len(b) < 3 {
			if err == nil || err == bufio.ErrBufferFull {
				err = io.EOF
			}
			return 0, err
		}
		if b[0] == 0x1f && b[1] == 0x8b && b[2] == 8 {
			// Decode a little of the candidate from a copy of what follows.
			ahead, _ := br.Peek(br.Buffered())
			if len(ahead) < 4096 {
				ahead, _ = br.Peek(min(1<<16, br.Size()))
			}
			if sniffWARC(bufio.NewReader(bytes.NewReader(ahead))) {
				return off, nil
			}
		}
		i := bytes.IndexByte(b[1:], 0x1f)
		step := 1
		if i >= 0 {
			step = i + 1
		} else if buf, _ := br.Peek(br.Buffered()); len(buf) > 1 {
			if j := bytes.IndexByte(buf[1:], 0x1f); j >= 0 {
				step = j + 1
			} else {
				step = len(buf)
			}
		}
		n, _ := br.Discard(step)
		off += int64(n)
	}
}

// warcFromSource reads an open stream, already decompressed, as WARC: its
// offsets are of the uncompressed bytes.
func warcFromSource(src *source, opt *Options) *warcSource {
	s := &warcSource{name: src.name, opt: opt, idName: opt.IDField, closer: src.closer}
	if s.idName == "id" {
		s.idName = "WARC-Target-URI"
	}
	s.rd = src.br
	s.raw = src.br
	s.in = &countingOffset{r: eofReader{}, all: new(atomic.Int64)}
	return s
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
