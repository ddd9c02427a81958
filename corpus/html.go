package corpus

import (
	"bufio"
	"bytes"
	"compress/flate"
	"io"
	"mime"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
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

// httpPageText returns the text of an HTTP response block when it is a
// page, and false when it is not (another status or media type, or a
// payload that does not decode).
func httpPageText(block []byte) (string, bool) {
	br := bufio.NewReader(bytes.NewReader(block))
	status, err := br.ReadSlice('\n')
	if err != nil {
		return "", false
	}
	f := strings.Fields(string(status))
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		return "", false
	}
	code, err := strconv.Atoi(f[1])
	if err != nil || code < 200 || code > 299 || code == 204 {
		return "", false
	}
	var ctype, cenc, tenc string
	n := len(status)
	for {
		line, err := br.ReadSlice('\n')
		n += len(line)
		if err != nil || n > maxHTTPHeader {
			if len(bytes.TrimSpace(line)) == 0 && err == io.EOF {
				break // headers to the end: no payload
			}
			return "", false
		}
		l := bytes.TrimRight(line, "\r\n")
		if len(l) == 0 {
			break
		}
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			continue
		}
		v := string(bytes.TrimSpace(value))
		switch strings.ToLower(string(bytes.TrimSpace(name))) {
		case "content-type":
			ctype = v
		case "content-encoding":
			cenc = strings.ToLower(v)
		case "transfer-encoding":
			tenc = strings.ToLower(v)
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
	media, _, _ := mime.ParseMediaType(ctype)
	switch media {
	case "text/html", "application/xhtml+xml":
		return HTMLText(payload, ctype), true
	case "text/plain":
		return plainText(payload, ctype), true
	}
	return "", false
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

// blockElements end a line of text.
var blockElements = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true, atom.Body: true,
	atom.Br: true, atom.Caption: true, atom.Dd: true, atom.Details: true, atom.Dialog: true, atom.Div: true,
	atom.Dl: true, atom.Dt: true, atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true,
	atom.Footer: true, atom.Form: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Header: true, atom.Hr: true, atom.Li: true, atom.Main: true,
	atom.Nav: true, atom.Ol: true, atom.P: true, atom.Pre: true, atom.Section: true, atom.Summary: true,
	atom.Table: true, atom.Td: true, atom.Th: true, atom.Tr: true, atom.Ul: true, atom.Html: true,
}

// skipElements hold no readable text.
var skipElements = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Title: true,
	atom.Svg: true, atom.Math: true, atom.Iframe: true, atom.Object: true, atom.Textarea: true,
	atom.Select: true, atom.Head: false,
}

// HTMLText returns the readable text of an HTML document, decoded to UTF-8
// from the charset contentType names (an HTTP Content-Type; "" for none)
// or the document declares: see the package's notes on WARC.
func HTMLText(page []byte, contentType string) string {
	if e, name, _ := charset.DetermineEncoding(page, contentType); name != "utf-8" && e != encoding.Nop {
		page = decodeWith(e, page)
	} else if bytes.HasPrefix(page, []byte("\xef\xbb\xbf")) {
		page = page[3:]
	}
	var t textBuilder
	t.out = make([]byte, 0, len(page)/2)
	z := html.NewTokenizer(bytes.NewReader(page))
	var skip atom.Atom // the element being skipped, 0 when none
	for {
		switch z.Next() {
		case html.ErrorToken:
			return t.String()
		case html.TextToken:
			if skip == 0 {
				t.text(z.Text())
			}
		case html.StartTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skip == 0 && skipElements[a] {
				skip = a
			} else if skip == 0 && blockElements[a] {
				t.newline()
			}
		case html.SelfClosingTagToken:
			name, _ := z.TagName()
			if a := atom.Lookup(name); skip == 0 && blockElements[a] {
				t.newline()
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skip != 0 {
				if a == skip {
					skip = 0
				}
			} else if blockElements[a] {
				t.newline()
			}
		}
	}
}

// textBuilder collects text with white space collapsed: a run of spaces
// is one space, none at the start or end of a line, no empty lines.
type textBuilder struct {
	out   []byte
	space bool // a space is due before the next word
}

func (t *textBuilder) text(b []byte) {
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf && !isSpaceByte[c] {
			// A run of ASCII that is not white space, copied at once.
			i := 1
			for i < len(b) && b[i] < utf8.RuneSelf && !isSpaceByte[b[i]] {
				i++
			}
			t.word(b[:i])
			b = b[i:]
			continue
		}
		if c < utf8.RuneSelf {
			t.space = true
			b = b[1:]
			continue
		}
		r, n := utf8.DecodeRune(b)
		if r == '\u00a0' || unicode.IsSpace(r) {
			t.space = true
		} else {
			t.word(b[:n])
		}
		b = b[n:]
	}
}

// word appends a piece of a word, after a space when one is due.
func (t *textBuilder) word(w []byte) {
	if t.space && len(t.out) > 0 && t.out[len(t.out)-1] != '\n' {
		t.out = append(t.out, ' ')
	}
	t.space = false
	t.out = append(t.out, w...)
}

// isSpaceByte marks ASCII white space (and the other control characters).
var isSpaceByte = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c <= ' ' || c == 0x7f
	}
	return t
}()

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
