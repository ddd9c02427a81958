package corpus

import (
	"bufio"
	"bytes"
	"compress/flate"
	"io"
	"mime"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
)

// The text of a crawled page: a WARC response record's block is an HTTP
// response (RFC 9112: status line, header fields, empty line, payload).
// Pages are the 2xx responses whose payload is HTML (text/html,
// application/xhtml+xml) or plain text. The payload is de-chunked and
// decompressed (gzip, deflate) when the crawler recorded it so; its
// character encoding comes from the HTTP Content-Type, else from the
// document itself (a byte order mark, <meta charset> or http-equiv in the
// first 1024 bytes: the HTML standard's prescan), else UTF-8 when the
// start is valid UTF-8 and windows-1252 otherwise (golang.org/x/net/html/charset).
// HTML becomes its readable text: script, style and other non-text elements
// dropped, the title too (it is not the page's text), runs of white space
// made one space, block elements (p, div, li, h1...) and br made line
// breaks.

// maxHTTPHeader bounds the HTTP header block of a response.
const maxHTTPHeader = 1 << 20

// maxHTTPLine bounds one line of the HTTP header block, its LF included:
// the size of the bufio.Reader the header was first read with, kept so
// that the same responses are pages.
const maxHTTPLine = 4096

// httpLine returns the line of b that starts at off, with its LF, as
// bufio.Reader.ReadSlice('\n') on a reader of maxHTTPLine bytes would:
// bufio.ErrBufferFull for a longer line, io.EOF (and the rest) when no LF
// ends it.
func httpLine(b []byte, off int) ([]byte, error) {
	rest := b[min(off, len(b)):]
	if i := bytes.IndexByte(rest[:min(len(rest), maxHTTPLine)], '\n'); i >= 0 {
		return rest[:i+1], nil
	}
	if len(rest) >= maxHTTPLine {
		return rest[:maxHTTPLine], bufio.ErrBufferFull
	}
	return rest, io.EOF
}

// httpPageText returns the text of an HTTP response block when it is a
// page, and false when it is not (another status or media type, or a
// payload that does not decode). The header is read in place: only the
// values of Content-Type and the codings become strings.
func httpPageText(block []byte) (string, bool) {
	status, err := httpLine(block, 0)
	if err != nil {
		return "", false
	}
	proto, code, ok := statusFields(status)
	if !ok || !bytes.HasPrefix(proto, []byte("HTTP/")) {
		return "", false
	}
	if code < 200 || code > 299 || code == 204 {
		return "", false
	}
	var ctype, cenc, tenc string
	n := len(status)
	for {
		line, err := httpLine(block, n)
		n += len(line)
		if err != nil || n > maxHTTPHeader {
			if len(bytes.TrimSpace(line)) == 0 && err == io.EOF {
				break // headers to the end: no payload
			}
			return "", false
		}
		l := trimEOLs(line)
		if len(l) == 0 {
			break
		}
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			continue
		}
		// The names have no letter that lower-cases to ASCII from outside
		// it (K, the Kelvin sign's): an ASCII comparison is ToLower's.
		switch name = bytes.TrimSpace(name); {
		case equalFoldASCII(name, "content-type"):
			ctype = string(bytes.TrimSpace(value))
		case equalFoldASCII(name, "content-encoding"):
			cenc = strings.ToLower(string(bytes.TrimSpace(value)))
		case equalFoldASCII(name, "transfer-encoding"):
			tenc = strings.ToLower(string(bytes.TrimSpace(value)))
		}
	}
	payload := block[min(n, len(block)):]
	if strings.Contains(tenc, "chunked") {
		if p, ok := dechunk(payload); ok {
			payload = p
		}
	}
	switch cenc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(payload))
		if err != nil {
			return "", false
		}
		if payload, err = io.ReadAll(zr); err != nil {
			return "", false
		}
	case "deflate":
		if p, err := io.ReadAll(flate.NewReader(bytes.NewReader(payload))); err == nil {
			payload = p
		} else {
			return "", false
		}
	default:
		return "", false // br, zstd...: not decoded here
	}
	switch mediaType(ctype) {
	case "text/html", "application/xhtml+xml":
		return HTMLText(payload, ctype), true
	case "text/plain":
		return plainText(payload, ctype), true
	}
	return "", false
}

// trimEOLs returns line without the CR and LF bytes that end it.
func trimEOLs(line []byte) []byte {
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	return line
}

// statusFields returns the first two fields of an HTTP status line (runs
// of bytes between Unicode white space, as strings.Fields splits it), the
// second as strconv.Atoi reads it; false when there are not two or the
// second is not a number.
func statusFields(line []byte) (proto []byte, code int, ok bool) {
	var f [2][]byte
	k := 0
	for i := 0; i < len(line) && k < 2; {
		r, size := utf8.DecodeRune(line[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		start := i
		for i < len(line) {
			r, size := utf8.DecodeRune(line[i:])
			if unicode.IsSpace(r) {
				break
			}
			i += size
		}
		f[k] = line[start:i]
		k++
	}
	if k < 2 {
		return nil, 0, false
	}
	code, err := strconv.Atoi(unsafe.String(unsafe.SliceData(f[1]), len(f[1])))
	return f[0], code, err == nil
}

// mediaType returns the media type of a Content-Type, lower case, as
// mime.ParseMediaType does ("" when it does not parse); the value servers
// send most is known without parsing.
func mediaType(ctype string) string {
	if isUTF8HTML(ctype) {
		return "text/html"
	}
	media, _, _ := mime.ParseMediaType(ctype)
	return media
}

// isUTF8HTML reports a Content-Type that is text/html in UTF-8 as servers
// write it most (Go's net/http, nginx...), in any case: what
// mime.ParseMediaType and charset.Lookup would find, known without a map
// or a lookup.
func isUTF8HTML(ctype string) bool {
	return equalFoldASCII(ctype, "text/html; charset=utf-8") || equalFoldASCII(ctype, "text/html;charset=utf-8")
}

// dechunk undoes the chunked transfer coding (RFC 9112 section 7.1).
func dechunk(b []byte) ([]byte, bool) {
	var out []byte
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil, false
		}
		sz := bytes.TrimSpace(b[:i])
		if j := bytes.IndexByte(sz, ';'); j >= 0 {
			sz = sz[:j]
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(sz)), 16, 64)
		if err != nil || n < 0 || n > int64(len(b)-i-1) {
			return nil, false
		}
		b = b[i+1:]
		if n == 0 {
			return out, true
		}
		out = append(out, b[:n]...)
		b = bytes.TrimPrefix(bytes.TrimPrefix(b[n:], []byte("\r")), []byte("\n"))
	}
}

// plainText returns a text/plain payload as UTF-8, decoded from the charset
// its Content-Type names (UTF-8 when it names none).
func plainText(b []byte, contentType string) string {
	// Without a ';' there are no parameters to parse (a WET record's
	// "text/plain").
	if !strings.Contains(contentType, ";") {
		return string(b)
	}
	if _, params, err := mime.ParseMediaType(contentType); err == nil && params["charset"] != "" {
		if e, name := charset.Lookup(params["charset"]); e != nil && name != "utf-8" {
			b = decodeWith(e, b)
		}
	}
	return string(b)
}

func decodeWith(e encoding.Encoding, b []byte) []byte {
	if out, err := e.NewDecoder().Bytes(b); err == nil {
		return out
	}
	return b
}

// HTMLText returns the readable text of an HTML document, decoded to UTF-8
// from the charset contentType names (an HTTP Content-Type; "" for none)
// or the document declares: see the package's notes on WARC. The text is
// what golang.org/x/net/html's tokenizer finds (htmlscan.go).
func HTMLText(page []byte, contentType string) string {
	// A UTF-16 byte order mark wins over the Content-Type; without one a
	// UTF-8 Content-Type leaves the page as it is.
	decoded := false
	utf16 := bytes.HasPrefix(page, []byte("\xfe\xff")) || bytes.HasPrefix(page, []byte("\xff\xfe"))
	if utf16 || !isUTF8HTML(contentType) {
		if e, name, _ := charset.DetermineEncoding(page, contentType); name != "utf-8" && e != encoding.Nop {
			page, decoded = decodeWith(e, page), true
		}
	}
	if !decoded && bytes.HasPrefix(page, []byte("\xef\xbb\xbf")) {
		page = page[3:]
	}
	z := htmlScanner{p: page}
	z.t.out = make([]byte, 0, len(page))
	z.extract()
	return z.t.String()
}

// textBuilder collects text with white space collapsed: a run of spaces
// is one space, none at the start or end of a line, no empty lines.
type textBuilder struct {
	out   []byte
	space bool // a space is due before the next word
}

// text appends b. It writes into out's spare capacity, grown once for the
// whole of b (a run of white space becomes at most one byte, so out grows
// by at most len(b) and a space due from before). Prose is mostly
// printable ASCII with single spaces between words, which comes out as it
// went in: such a run is found first and copied whole.
func (t *textBuilder) text(b []byte) {
	out := slices.Grow(t.out, len(b)+1)
	n := len(out)
	out = out[:cap(out)]
	space := t.space
	for i := 0; i < len(b); {
		// A run of printable ASCII, single spaces between.
		start := i
		for i < len(b) {
			if c := b[i]; c-'!' < '~'-'!'+1 || c == ' ' && i > start && i+1 < len(b) && b[i+1]-'!' < '~'-'!'+1 {
				i++
				continue
			}
			break
		}
		if i > start {
			if space && n > 0 && out[n-1] != '\n' {
				out[n] = ' '
				n++
			}
			space = false
			n += copy(out[n:], b[start:i])
			continue
		}
		// White space, or a rune outside ASCII.
		c := b[i]
		if c < utf8.RuneSelf {
			space = true // white space or a control character: the run took the printable ones
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == '\u00a0' || unicode.IsSpace(r) {
			space = true
			i += size
			continue
		}
		if space {
			if n > 0 && out[n-1] != '\n' {
				out[n] = ' '
				n++
			}
			space = false
		}
		n += copy(out[n:], b[i:i+size])
		i += size
	}
	t.out, t.space = out[:n], space
}

func (t *textBuilder) newline() {
	t.space = false
	if len(t.out) > 0 && t.out[len(t.out)-1] != '\n' {
		t.out = append(t.out, '\n')
	}
}

func (t *textBuilder) String() string {
	b := bytes.TrimRight(t.out, "\n")
	return unsafe.String(unsafe.SliceData(b), len(b))
}
