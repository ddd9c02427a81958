package pipeline_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/neardup/neardup/beam/pipeline"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/rule"
)

// writeWET writes the documents of a corpus as a WET archive: a warcinfo
// record, then a conversion record per document, each its own gzip member
// (as Common Crawl's WET files are).
func writeWET(t *testing.T, in, out string) int {
	t.Helper()
	r, err := corpus.Open([]string{in}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b bytes.Buffer
	member := func(rec string) {
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(rec))
		zw.Close()
	}
	member("WARC/1.0\r\nWARC-Type: warcinfo\r\nContent-Type: application/warc-fields\r\nContent-Length: 11\r\n\r\nsoftware: x\r\n\r\n")
	n := 0
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		member(fmt.Sprintf("WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: http://example.com/%s\r\n"+
			"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", d.ID, len(d.Text), d.Text))
		n++
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWARCSplitEqualsBatch: a .warc.gz read in ranges cut at gzip member
// boundaries (a range of 32 KiB: a dozen ranges over the archive) gives
// the batch's removals and clusters byte for byte, and the kept pages'
// URIs.
func TestWARCSplitEqualsBatch(t *testing.T) {
	wet := filepath.Join(t.TempDir(), "spdx.warc.wet.gz")
	n := writeWET(t, corpusPath(t, "en_spdx"), wet)
	for _, method := range []string{rule.MethodMinHash, rule.MethodSimHash} {
		t.Run(method, func(t *testing.T) {
			b, g := runBoth(t, []string{wet}, pipeline.Options{Method: method, SplitBytes: 32 << 10})
			b[0] = "" // the batch's kept output is a WARC archive; the pipeline's, the kept URIs
			kept := g[0]
			g[0] = ""
			assertSame(t, b, g)
			removed := strings.Count(b[1], "\n")
			if removed < 100 {
				t.Fatalf("batch removed %d pages: the comparison checks little", removed)
			}
			if got := strings.Count(kept, "\n"); got != n-removed || !strings.HasPrefix(kept, "http://example.com/") {
				t.Errorf("pipeline kept %d URIs (%.40q...), want %d", got, kept, n-removed)
			}
		})
	}
}
