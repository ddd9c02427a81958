package dedup

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v3"

	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/internal/warctest"
)

// spdxCrawl serves the en_spdx corpus (728 licence texts, 217 pairs at
// Jaccard >= 0.8) as HTML pages, a paragraph per <p>, crawled by wget into
// a .warc.gz. It returns the archive and the same pages as JSONL, ids the
// pages' URLs and texts as in the corpus, and as a hand-made WET archive.
func spdxCrawl(t *testing.T) (warc, jsonl, wet string) {
	t.Helper()
	docs := testcorpora.Docs(t, "en_spdx")
	var pages []warctest.Page
	for i, d := range docs {
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><head><title>" + html.EscapeString(d.ID) + "</title>" +
			"<script>var n = 1 < 2;</script></head><body>\n")
		for _, p := range strings.Split(d.Text, "\n\n") {
			b.WriteString("<p>" + html.EscapeString(p) + "</p>\n")
		}
		b.WriteString("</body></html>")
		pages = append(pages, warctest.Page{Path: fmt.Sprintf("/l/%d", i), Body: []byte(b.String())})
	}
	warc, base := warctest.Crawl(t, pages)
	dir := t.TempDir()
	jsonl = filepath.Join(dir, "spdx.jsonl")
	wet = filepath.Join(dir, "spdx.warc.wet.gz")
	var jb, wb bytes.Buffer
	enc := json.NewEncoder(&jb)
	for i, d := range docs {
		url := fmt.Sprintf("%s/l/%d", base, i)
		enc.Encode(map[string]string{"id": url, "text": d.Text})
		zw := gzip.NewWriter(&wb)
		fmt.Fprintf(zw, "WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: %s\r\nWARC-Record-ID: <urn:uuid:%08d-0000-0000-0000-000000000000>\r\n"+
			"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", url, i, len(d.Text), d.Text)
		zw.Close()
	}
	os.WriteFile(jsonl, jb.Bytes(), 0o644)
	os.WriteFile(wet, wb.Bytes(), 0o644)
	return warc, jsonl, wet
}

// TestWARCVerdictsEqualJSONL: the pages of a WARC archive (wget's) and of a
// WET archive get the verdicts of the same pages as JSONL: the same
// removals, each naming the same kept page with the same Jaccard.
func TestWARCVerdictsEqualJSONL(t *testing.T) {
	warc, jsonl, wet := spdxCrawl(t)
	dir := t.TempDir()
	dups := func(in string) []byte {
		out := filepath.Join(dir, filepath.Base(in)+".dups")
		if _, err := Run(context.Background(), []string{in}, Options{Duplicates: out}); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		b, _ := os.ReadFile(out)
		return b
	}
	want := dups(jsonl)
	if n := bytes.Count(want, []byte("\n")); n < 100 {
		t.Fatalf("JSONL run removed %d pages: the comparison checks little", n)
	}
	for _, in := range []string{warc, wet} {
		if got := dups(in); !bytes.Equal(got, want) {
			t.Errorf("%s: the duplicates differ from the JSONL run's (%d lines, want %d)", filepath.Base(in),
				bytes.Count(got, []byte("\n")), bytes.Count(want, []byte("\n")))
		}
	}
}

// TestWARCOutput: the kept archive holds, byte for byte as gzip members,
// every kept page's response and request record and the warcinfo record,
// and nothing of the removed pages; github.com/nlnwa/gowarc, with strict
// validation (digests checked), reads it. Into a .warc the same records
// are written uncompressed, and --output-dir writes one archive per input.
func TestWARCOutput(t *testing.T) {
	warc, _, _ := spdxCrawl(t)
	dir := t.TempDir()
	kept := filepath.Join(dir, "kept.warc.gz")
	dupsPath := filepath.Join(dir, "dups.jsonl")
	sum, err := Run(context.Background(), []string{warc}, Options{Output: kept, Duplicates: dupsPath})
	if err != nil {
		t.Fatal(err)
	}
	removed := map[string]bool{}
	b, _ := os.ReadFile(dupsPath)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var d Duplicate
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(d.DupID, "http://") || !strings.HasPrefix(d.KeptID, "http://") || d.Jaccard == nil || *d.Jaccard < 0.8 {
			t.Fatalf("duplicate %s: want URIs and a Jaccard >= 0.8", l)
		}
		removed[d.DupID] = true
	}
	in := members(t, warc)
	out := members(t, kept)
	types := map[string]int{}
	for _, m := range out {
		types[m.typ]++
		im, ok := in[m.id]
		if !ok {
			t.Fatalf("kept record %s is not in the input", m.id)
		}
		if !bytes.Equal(m.member, im.member) {
			t.Errorf("kept %s record %s differs from the input's gzip member", m.typ, m.uri)
		}
		if removed[m.uri] {
			t.Errorf("a %s record of removed page %s is in the kept archive", m.typ, m.uri)
		}
	}
	keptPages := sum.Docs - len(removed)
	if types["response"] != keptPages || types["request"] != keptPages || types["warcinfo"] != 1 || len(types) != 3 {
		t.Errorf("kept archive holds %v, want %d responses and requests and the warcinfo record", types, keptPages)
	}
	// Uncompressed: the records are the members' contents.
	plain := filepath.Join(dir, "kept.warc")
	if _, err := Run(context.Background(), []string{warc}, Options{Output: plain}); err != nil {
		t.Fatal(err)
	}
	var whole bytes.Buffer
	for _, m := range orderedMembers(t, kept) {
		zr, _ := gzip.NewReader(bytes.NewReader(m))
		io.Copy(&whole, zr)
	}
	if pb, _ := os.ReadFile(plain); !bytes.Equal(pb, whole.Bytes()) {
		t.Error("kept.warc is not the uncompressed records of kept.warc.gz")
	}
	// One archive per input, under its name.
	outDir := filepath.Join(dir, "out")
	if _, err := Run(context.Background(), []string{warc}, Options{OutputDir: outDir}); err != nil {
		t.Fatal(err)
	}
	shard, _ := os.ReadFile(filepath.Join(outDir, filepath.Base(warc)))
	if kb, _ := os.ReadFile(kept); !bytes.Equal(shard, kb) {
		t.Error("--output-dir's archive differs from --output's")
	}
}

type member struct {
	typ, id, uri string
	member       []byte
}

// members reads a .warc.gz with github.com/nlnwa/gowarc (block and payload
// digests checked: a finding fails t; wget's WARC 1.0 <uri> brackets,
// which gowarc flags, are let through) and returns its records by
// WARC-Record-ID, each with its gzip member as stored.
func members(t *testing.T, path string) map[string]member {
	t.Helper()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gowarc.NewWarcFileReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ms := map[string]member{}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return ms
		}
		if err != nil {
			t.Fatalf("%s: gowarc: %v", path, err)
		}
		for _, v := range rec.Validation {
			if !strings.Contains(v.Error(), "WARC-Target-URI") {
				t.Errorf("%s: gowarc finds record at %d invalid: %v", path, rec.Offset, v)
			}
		}
		h := rec.WarcRecord.WarcHeader()
		m := member{typ: rec.WarcRecord.Type().String(), id: h.Get(gowarc.WarcRecordID),
			uri:    strings.Trim(h.Get(gowarc.WarcTargetURI), "<>"),
			member: file[rec.Offset : rec.Offset+rec.Size]}
		m.typ = strings.ToLower(m.typ)
		ms[m.id] = m
		rec.Close()
	}
}

// orderedMembers returns the gzip members of a file in order.
func orderedMembers(t *testing.T, path string) [][]byte {
	t.Helper()
	file, _ := os.ReadFile(path)
	r, err := gowarc.NewWarcFileReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ms [][]byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return ms
		}
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, file[rec.Offset:rec.Offset+rec.Size])
		rec.Close()
	}
}
