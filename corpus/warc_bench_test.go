package corpus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/internal/warctest"
	"github.com/neardup/neardup/internal/webgen"
)

// benchPages is how many pages BenchmarkReadPages reads: the first of
// neardup-gen -seed 3's documents, the pages of BENCHMARKS.md's "WARC"
// section (which has 20,000).
const benchPages = 2000

// pageHTML is a document as the WARC benchmark's server sends it: a title,
// a style, a script and a paragraph per blank-line-separated part.
func pageHTML(id, text string) []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + id +
		"</title>\n<style>p{margin:1em}</style>\n<script>var x = 1 < 2;</script></head>\n<body>\n")
	for p := range strings.SplitSeq(text, "\n\n") {
		b.WriteString("<p>" + html.EscapeString(p) + "</p>\n")
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// writeBenchPages writes the same pages as JSONL (plain and gzip'd), as a
// WET file (a conversion record per page, plain and a gzip member each, as
// Common Crawl writes them) and, crawled by wget, as WARC (plain and
// gzip'd). It returns the files by kind and the pages' text bytes.
func writeBenchPages(b *testing.B) (files map[string]string, textBytes int64) {
	var paths []string
	for _, name := range []string{"en_prose", "en_gitdocs_dev", "en_spdx"} { // neardup-gen's pool
		paths = append(paths, testcorpora.Path(b, name))
	}
	pool, err := webgen.LoadPool(paths...)
	if err != nil {
		b.Fatal(err)
	}
	g, err := webgen.New(pool, webgen.Options{Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	var jsonl bytes.Buffer
	if err := g.Write(context.Background(), &jsonl, 0, benchPages, 0); err != nil {
		b.Fatal(err)
	}
	var (
		pages []warctest.Page
		wet   bytes.Buffer
		wetgz bytes.Buffer
	)
	record := func(fields string, body []byte) {
		rec := fmt.Appendf(nil, "WARC/1.0\r\n%sContent-Length: %d\r\n\r\n%s\r\n\r\n", fields, len(body), body)
		wet.Write(rec)
		zw := gzip.NewWriter(&wetgz)
		zw.Write(rec)
		zw.Close()
	}
	record("WARC-Type: warcinfo\r\nContent-Type: application/warc-fields\r\n", []byte("Software-Info: corpus benchmark\r\n"))
	for i, line := range bytes.Split(bytes.TrimSuffix(jsonl.Bytes(), []byte("\n")), []byte("\n")) {
		var d struct{ ID, Text string }
		if err := json.Unmarshal(line, &d); err != nil {
			b.Fatal(err)
		}
		textBytes += int64(len(d.Text))
		pages = append(pages, warctest.Page{Path: "/p/" + strconv.Itoa(i), Body: pageHTML(d.ID, d.Text)})
		record(fmt.Sprintf("WARC-Type: conversion\r\nWARC-Target-URI: http://127.0.0.1/p/%d\r\n"+
			"WARC-Record-ID: <urn:uuid:%08x-0000-0000-0000-000000000000>\r\nContent-Type: text/plain\r\n", i, i), []byte(d.Text))
	}
	tmp := b.TempDir()
	var jsonlgz bytes.Buffer
	zw := gzip.NewWriter(&jsonlgz)
	zw.Write(jsonl.Bytes())
	zw.Close()
	files = map[string]string{}
	for name, data := range map[string][]byte{
		"jsonl": jsonl.Bytes(), "jsonl.gz": jsonlgz.Bytes(), "wet": wet.Bytes(), "wet.gz": wetgz.Bytes(),
	} {
		p := filepath.Join(tmp, "pages."+strings.Replace(name, "wet", "warc.wet", 1))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		files[name] = p
	}
	files["warc.gz"], _ = warctest.Crawl(b, pages)
	files["warc"], _ = warctest.CrawlWith(b, pages, warctest.Options{Plain: true})
	return files, textBytes
}

// BenchmarkReadPages reads the same pages as JSONL, WET and WARC, plain and
// gzip'd; the bytes per second are of the pages' text, so the formats
// compare as they do in BENCHMARKS.md's "WARC" section.
func BenchmarkReadPages(b *testing.B) {
	files, textBytes := writeBenchPages(b)
	for _, kind := range []string{"jsonl", "jsonl.gz", "wet", "wet.gz", "warc", "warc.gz"} {
		b.Run(kind, func(b *testing.B) {
			b.SetBytes(textBytes)
			b.ReportAllocs()
			for b.Loop() {
				r, err := corpus.Open([]string{files[kind]}, corpus.Options{})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				r.Close()
				if n != benchPages {
					b.Fatalf("%d documents, want %d", n, benchPages)
				}
			}
		})
	}
}
