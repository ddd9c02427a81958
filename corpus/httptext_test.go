package corpus

import (
	"bufio"
	"bytes"
	"compress/flate"
	"io"
	"mime"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// bufioHTTPPageText is httpPageText as it was written on a bufio.Reader,
// kept as the reference the in-place header reading must agree with.
func bufioHTTPPageText(block []byte) (string, bool) {
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

// httpCases are response blocks whose headers are read in subtle ways.
var httpCases = []string{
	"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>hi</p>",
	"HTTP/1.1 200 OK\r\nCONTENT-TYPE:text/html;charset=UTF-8\r\n\r\n<p>hi</p>",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=koi8-r\r\n\r\n<p>\xf0\xd2</p>",
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\ncaf\xe9",
	"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG",
	"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n<p>no</p>",
	"HTTP/1.1 204 No Content\r\nContent-Type: text/html\r\n\r\n",
	"HTTP/1.1 +200 OK\r\nContent-Type: text/html\r\n\r\nplus",
	"HTTP/1.1\u00a0200\u2003OK\r\nContent-Type: text/html\r\n\r\nunicode spaces",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n<p>hi\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: identity\r\n\r\nx",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: br\r\n\r\nx",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nno colon\r\n\r\nx",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n   ",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html",
	"HTTP/1.1 200 OK",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Long: " + strings.Repeat("x", 4090) + "\r\n\r\nlong",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Long: " + strings.Repeat("x", 4086) + "\n\r\nlong",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Long: " + strings.Repeat("x", 4087) + "\n\r\nlong",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + strings.Repeat("y", 5000),
	"HTTP/1.1 200 OK\r\nContent-Type: application/xhtml+xml\r\n\r\n<p>x</p>",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset\r\n\r\n<p>bad param</p>",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Type: text/plain\r\n\r\n<p>last</p>",
	"HTTP/1.1 200 OK\r\nContent-\u212aype: text/html\r\n\r\n<p>kelvin</p>",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n\xfe\xff\x00<\x00p\x00>\x00h\x00i",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n\xef\xbb\xbf<p>bom</p>",
	"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n\xff\xfe<\x00p\x00>\x00",
}

// TestHTTPPageTextMatchesBufio: the header read in place finds the pages,
// and their text, that it found when read through a bufio.Reader.
func TestHTTPPageTextMatchesBufio(t *testing.T) {
	for _, in := range httpCases {
		got, gotOK := httpPageText([]byte(in))
		want, wantOK := bufioHTTPPageText([]byte(in))
		if got != want || gotOK != wantOK {
			t.Errorf("httpPageText(%q) = %q, %v; read through bufio %q, %v", in, got, gotOK, want, wantOK)
		}
	}
}

// FuzzHTTPPageText: on any response block the two agree.
func FuzzHTTPPageText(f *testing.F) {
	for _, in := range httpCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, block []byte) {
		got, gotOK := httpPageText(bytes.Clone(block))
		want, wantOK := bufioHTTPPageText(bytes.Clone(block))
		if got != want || gotOK != wantOK {
			t.Fatalf("httpPageText(%q) = %q, %v; read through bufio %q, %v", block, got, gotOK, want, wantOK)
		}
	})
}
