package corpus_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/warctest"
)

// readAll reads every document of paths, failing t on an error.
func readAll(t *testing.T, paths []string, opt corpus.Options) ([]corpus.Doc, *corpus.Reader) {
	t.Helper()
	r, err := corpus.Open(paths, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var docs []corpus.Doc
	for {
		d, err := r.Next()
		if err == io.EOF {
			return docs, r
		}
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
}

// crawlPages are the pages of TestWARCFromWget: what a crawl meets.
var crawlPages = []warctest.Page{
	{Path: "/a.html", Body: []byte(`<!DOCTYPE html><html><head><title>Page A</title>
<style>p { color: red }</style><script>if (a < b) { document.write("no") }</script></head>
<body><h1>The river</h1><p>The quick brown fox jumps over the lazy dog near the river bank.</p>
<div>Second&nbsp;block &amp; more<br>after a break</div><noscript>enable scripts</noscript></body></html>`)},
	{Path: "/old", Status: 302, Location: "/a.html", Body: []byte("<p>moved</p>")},
	{Path: "/logo.png", ContentType: "image/png", Body: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")},
	// windows-1252 declared by the document only.
	{Path: "/latin.html", ContentType: "text/html", Body: []byte("<html><head><meta charset=\"windows-1252\"></head><body><p>caf\xe9 na\xefve \x93quoted\x94</p></body></html>")},
	// KOI8-R named by the HTTP header, which wins over the document's meta.
	{Path: "/ru.html", ContentType: "text/html; charset=koi8-r", Body: []byte("<meta charset=\"utf-8\"><p>\xf0\xd2\xc9\xd7\xc5\xd4, \xcd\xc9\xd2</p>")},
	{Path: "/notes.txt", ContentType: "text/plain; charset=utf-8", Body: []byte("plain text notes\nsecond line\n")},
	{Path: "/missing.html", Status: 404, Body: []byte("<p>not found</p>")},
}

// TestWARCFromWget reads an archive wget wrote: the 2xx HTML and text
// responses are the documents, by target URI, with their text (charset
// honoured, script, style and title dropped, blocks as lines); requests,
// the redirect, the image, the 404, warcinfo and wget's log records are
// counted, not read.
func TestWARCFromWget(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("plain=%v", plain), func(t *testing.T) {
			path, base := warctest.CrawlWith(t, crawlPages, warctest.Options{Plain: plain})
			docs, r := readAll(t, []string{path}, corpus.Options{})
			a := "The river\nThe quick brown fox jumps over the lazy dog near the river bank.\nSecond block & more\nafter a break"
			want := []struct{ id, text string }{
				{base + "/a.html", a},
				{base + "/a.html", a}, // wget follows /old's redirect to it

				{base + "/latin.html", "café naïve “quoted”"},
				{base + "/ru.html", "Привет, мир"},
				{base + "/notes.txt", "plain text notes\nsecond line\n"},
			}
			if len(docs) != len(want) {
				for _, d := range docs {
					t.Logf("read %s %q", d.ID, d.Text)
				}
				t.Fatalf("read %d documents, want %d", len(docs), len(want))
			}
			for i, w := range want {
				d := docs[i]
				if d.ID != w.id || d.Text != w.text || d.Format != corpus.WARC || d.Source != path {
					t.Errorf("document %d: got %s %q (format %v, source %s), want %s %q", i, d.ID, d.Text, d.Format, d.Source, w.id, w.text)
				}
			}
			// warcinfo, 8 requests (the redirect's target too), the
			// redirect, the image, the 404, and wget's metadata and
			// resource records (its log and manifest).
			if got, want := r.SkippedRecords(), int64(1+8+3+3); got != want {
				t.Errorf("SkippedRecords = %d, want %d", got, want)
			}
		})
	}
}

// TestWARCIDField: --id-field names another WARC header.
func TestWARCIDField(t *testing.T) {
	path := writeWET(t, "x.warc.wet.gz", wetDocs, gzipMembers)
	docs, _ := readAll(t, []string{path}, corpus.Options{IDField: "warc-record-id"})
	if len(docs) != 2 || docs[0].ID != "<urn:uuid:00000000-0000-0000-0000-000000000001>" {
		t.Fatalf("ids %v, want the WARC-Record-IDs", ids(docs))
	}
	docs, _ = readAll(t, []string{path}, corpus.Options{IDField: "X-Missing"})
	if want := path + "@"; len(docs) != 2 || !strings.HasPrefix(docs[0].ID, want) {
		t.Fatalf("ids %v, want %s<offset> for a missing header", ids(docs), want)
	}
}

func ids(docs []corpus.Doc) []string {
	var s []string
	for _, d := range docs {
		s = append(s, d.ID)
	}
	return s
}

// wetDocs are hand-checked WET conversion records, as Common Crawl writes
// them: a warcinfo record, then text/plain conversion records.
var wetDocs = []string{
	"WARC/1.0\r\nWARC-Type: warcinfo\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Filename: x.warc.wet.gz\r\n" +
		"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000000>\r\nContent-Type: application/warc-fields\r\nContent-Length: 26\r\n\r\n" +
		"Software-Info: hand-made\r\n\r\n\r\n",
	"WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: http://example.com/one\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n" +
		"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000001>\r\nWARC-Refers-To: <urn:uuid:00000000-0000-0000-0000-0000000000aa>\r\n" +
		"Content-Type: text/plain\r\nContent-Length: 24\r\n\r\nFirst page.\nÜber alles.\r\n\r\n",
	"WARC/1.1\r\nwarc-type: conversion\r\nWARC-Target-URI: http://example.com/two\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n" +
		"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000002>\r\n" +
		"Content-Type: text/plain\r\ncontent-length: 11\r\n\r\nSecond page\r\n\r\n",
}

// Storage of a hand-made archive.
const (
	gzipMembers = iota // a gzip member per record
	gzipWhole          // one gzip stream
	plainWARC
	zstdWARC
)

func writeWET(t testing.TB, name string, recs []string, how int) string {
	t.Helper()
	var b bytes.Buffer
	switch how {
	case gzipMembers:
		for _, r := range recs {
			zw := gzip.NewWriter(&b)
			zw.Write([]byte(r))
			zw.Close()
		}
	case gzipWhole:
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(strings.Join(recs, "")))
		zw.Close()
	case plainWARC:
		b.WriteString(strings.Join(recs, ""))
	case zstdWARC:
		zw, _ := zstd.NewWriter(&b)
		zw.Write([]byte(strings.Join(recs, "")))
		zw.Close()
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestWETRecords reads hand-checked WET records in every storage, named
// as WARC or found by content.
func TestWETRecords(t *testing.T) {
	for _, tt := range []struct {
		name string
		how  int
	}{
		{"a.warc.wet.gz", gzipMembers}, {"b.warc.gz", gzipWhole}, {"c.warc", plainWARC}, {"d.warc.zst", zstdWARC},
		{"e.bin", gzipMembers}, {"f.dat", plainWARC}, {"g.zst", zstdWARC},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeWET(t, tt.name, wetDocs, tt.how)
			docs, r := readAll(t, []string{path}, corpus.Options{})
			if len(docs) != 2 {
				t.Fatalf("%d documents, want 2", len(docs))
			}
			if d := docs[0]; d.ID != "http://example.com/one" || d.Text != "First page.\nÜber alles." || d.Line != 2 {
				t.Errorf("first: %s %q line %d, want http://example.com/one \"First page.\\nÜber alles.\" line 2", d.ID, d.Text, d.Line)
			}
			if d := docs[1]; d.ID != "http://example.com/two" || d.Text != "Second page" {
				t.Errorf("second: %s %q", d.ID, d.Text)
			}
			if tt.how == gzipMembers && (docs[0].Offset == 0 || docs[1].Offset <= docs[0].Offset) {
				t.Errorf("offsets %d, %d: want the gzip members'", docs[0].Offset, docs[1].Offset)
			}
			if n := r.SkippedRecords(); n != 1 {
				t.Errorf("SkippedRecords = %d, want 1 (warcinfo)", n)
			}
		})
	}
	// Standard input, found by content.
	path := writeWET(t, "x", wetDocs, gzipMembers)
	f, _ := os.Open(path)
	defer f.Close()
	docs, _ := readAll(t, []string{"-"}, corpus.Options{Stdin: io.MultiReader(f)})
	if len(docs) != 2 || docs[1].Text != "Second page" {
		t.Errorf("standard input: %d documents %v", len(docs), ids(docs))
	}
}

// TestWARCRows: with Rows a page carries its records, byte for byte, and
// the gzip member of each.
func TestWARCRows(t *testing.T) {
	path := writeWET(t, "x.warc.gz", wetDocs, gzipMembers)
	file, _ := os.ReadFile(path)
	docs, _ := readAll(t, []string{path}, corpus.Options{Rows: true})
	var all []corpus.WARCRecord
	for _, d := range docs {
		all = append(all, d.Records...)
	}
	if len(all) != 3 {
		t.Fatalf("%d records, want 3", len(all))
	}
	var members []byte
	for i, r := range all {
		if string(r.Bytes) != wetDocs[i] {
			t.Errorf("record %d: Bytes %q, want %q", i, r.Bytes, wetDocs[i])
		}
		if !bytes.Equal(r.Member, file[r.Offset:r.Offset+int64(len(r.Member))]) {
			t.Errorf("record %d: Member is not the file's bytes at %d", i, r.Offset)
		}
		members = append(members, r.Member...)
	}
	if !bytes.Equal(members, file) {
		t.Error("the members do not make up the file")
	}
	if !all[1].Page || all[0].Page || all[0].Type != "warcinfo" {
		t.Errorf("records %+v: want warcinfo, then the page", all[:2])
	}
}

// TestWARCDamaged: a damaged archive stops the read with one line naming
// the file and the byte offset, or, with SkipBad, is reported and skipped.
func TestWARCDamaged(t *testing.T) {
	good := writeWET(t, "g.warc.gz", wetDocs, gzipMembers)
	file, _ := os.ReadFile(good)
	docs, _ := readAll(t, []string{good}, corpus.Options{Rows: true})
	second := docs[1].Offset // the last record's member

	badLen := strings.Replace(wetDocs[1], "Content-Length: 24", "Content-Length: 21", 1)
	for _, tt := range []struct {
		name     string
		data     []byte
		wantErr  string
		wantDocs int // read before the error, or with SkipBad
	}{
		{"truncated member", file[:len(file)-7], fmt.Sprintf("gzip member at byte %d", second), 1},
		{"bad Content-Length", []byte(writeBytes(t, []string{wetDocs[0], badLen, wetDocs[2]})), "Content-Length is wrong", 1},
		{"short block", []byte(wetDocs[0] + wetDocs[1][:len(wetDocs[1])-10]), "record at byte", 0},
		{"no version line", []byte("HTTP/1.1 200 OK\r\n\r\n"), "record at byte 0: no WARC version line", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.warc.gz")
			os.WriteFile(path, tt.data, 0o644)
			r, _ := corpus.Open([]string{path}, corpus.Options{})
			defer r.Close()
			n := 0
			var err error
			for {
				if _, err = r.Next(); err != nil {
					break
				}
				n++
			}
			if err == io.EOF || !errors.Is(err, corpus.ErrBadWARC) {
				t.Fatalf("after %d documents: %v, want ErrBadWARC", n, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, tt.wantErr) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %s and %q", msg, path, tt.wantErr)
			}
			var bad []error
			docs, _ := readAll(t, []string{path}, corpus.Options{SkipBad: true, OnBad: func(err error) { bad = append(bad, err) }})
			if len(bad) != 1 || len(docs) < tt.wantDocs {
				t.Errorf("SkipBad: %d documents and %v reported", len(docs), bad)
			}
		})
	}
}

func writeBytes(t *testing.T, recs []string) string {
	var b bytes.Buffer
	for _, r := range recs {
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(r))
		zw.Close()
	}
	return b.String()
}

// TestNextWARCMember finds the member boundaries a split read starts at.
func TestNextWARCMember(t *testing.T) {
	path := writeWET(t, "x.warc.gz", wetDocs, gzipMembers)
	file, _ := os.ReadFile(path)
	docs, _ := readAll(t, []string{path}, corpus.Options{})
	for from := int64(0); from < int64(len(file)); from++ {
		n, err := corpus.NextWARCMember(bytes.NewReader(file[from:]))
		var want int64 = -1
		for _, m := range []int64{0, docs[0].Offset, docs[1].Offset} {
			if m >= from {
				want = m
				break
			}
		}
		if want < 0 {
			if err != io.EOF {
				t.Fatalf("from %d: %d, %v; want io.EOF", from, n, err)
			}
			continue
		}
		if err != nil || from+n != want {
			t.Fatalf("from %d: member at %d (%v), want %d", from, from+n, err, want)
		}
	}
}

func TestHTMLText(t *testing.T) {
	for _, tt := range []struct{ in, ctype, want string }{
		{"<p>a  b</p><p>c</p>", "", "a b\nc"},
		{"<ul><li>one<li>two</ul>", "", "one\ntwo"},
		{"x<script>var s = '<p>no</p>'</script>y", "", "xy"},
		{"<span>in</span><span>line</span> <b>bold</b>", "", "inline bold"},
		{"<title>T</title><body>body</body>", "", "body"},
		{"caf\xe9", "text/html; charset=iso-8859-1", "café"},
		{"\xef\xbb\xbfbom", "", "bom"},
		{"a&lt;b &#x263a;", "", "a<b ☺"},
	} {
		if got := corpus.HTMLText([]byte(tt.in), tt.ctype); got != tt.want {
			t.Errorf("HTMLText(%q, %q) = %q, want %q", tt.in, tt.ctype, got, tt.want)
		}
	}
}

// FuzzWARC: no input makes the reader panic, with or without Rows.
func FuzzWARC(f *testing.F) {
	f.Add([]byte(strings.Join(wetDocs, "")))
	f.Add([]byte(writeBytesF(wetDocs)))
	f.Add([]byte("WARC/1.0\r\nWARC-Type: response\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: 60\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n<p>hi\r\n0\r\n\r\n\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, rows := range []bool{false, true} {
			r, err := corpus.OpenReader(bytes.NewReader(data), "f.warc", corpus.Options{Rows: rows, SkipBad: true})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 1000; i++ {
				if _, err := r.Next(); err != nil {
					break
				}
			}
			r.Close()
		}
	})
}

func writeBytesF(recs []string) string {
	var b bytes.Buffer
	for _, r := range recs {
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(r))
		zw.Close()
	}
	return b.String()
}
