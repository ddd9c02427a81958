package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/neardup/neardup/internal/testcorpora"
)

// corporaFlag returns -corpora for the repository's corpora, failing tb as
// testcorpora does when they are missing.
func corporaFlag(tb testing.TB) string {
	tb.Helper()
	return "-corpora=" + filepath.Dir(testcorpora.Path(tb, "en_prose"))
}

func gen(t *testing.T, args ...string) []byte {
	t.Helper()
	var out, errs bytes.Buffer
	if err := run(context.Background(), append([]string{corporaFlag(t)}, args...), &out, &errs); err != nil {
		t.Fatalf("neardup-gen %s: %v\n%s", strings.Join(args, " "), err, errs.String())
	}
	return out.Bytes()
}

func TestGenSameBytesForAnyWorkersAndZstd(t *testing.T) {
	for _, opts := range [][]string{
		{"-seed", "3", "-hot", "0.2"},
		{"-seed", "3", "-hot", "0.2", "-profile", "crawl"},
	} {
		t.Run(strings.Join(opts, " "), func(t *testing.T) { testSameBytes(t, opts...) })
	}
}

func testSameBytes(t *testing.T, opts ...string) {
	args := func(more ...string) []string { return append(append([]string{"-n", "2000"}, opts...), more...) }
	want := gen(t, args("-workers", "1")...)
	if n := bytes.Count(want, []byte("\n")); n != 2000 {
		t.Fatalf("%d lines, want 2000", n)
	}
	if got := gen(t, args("-workers", "2")...); !bytes.Equal(got, want) {
		t.Errorf("-workers 2 wrote other bytes than -workers 1")
	}
	path := filepath.Join(t.TempDir(), "web.jsonl.zst")
	gen(t, args("-out", path)...)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var got bytes.Buffer
	if _, err := got.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("-out %s decompresses to other bytes than standard output", filepath.Base(path))
	}
	if !bytes.Contains(want, []byte(`"planted":{"of":"d`)) {
		t.Errorf("no planted copy in 2000 documents")
	}
}

// TestGenProfile checks that a profile is its flags, and that flags given
// beside it win.
func TestGenProfile(t *testing.T) {
	same := func(a, b []string) {
		t.Helper()
		if !bytes.Equal(gen(t, append([]string{"-n", "300"}, a...)...), gen(t, append([]string{"-n", "300"}, b...)...)) {
			t.Errorf("neardup-gen %s differs from %s", strings.Join(a, " "), strings.Join(b, " "))
		}
	}
	same([]string{"-profile", "default"}, nil)
	same([]string{"-short", "0.5", "-profile", "crawl", "-sites", "10", "-seed", "2"}, []string{"-seed", "2", "-sites", "10", "-short", "0.5"})
	crawl := gen(t, "-n", "300", "-profile", "crawl")
	if !bytes.Equal(crawl, gen(t, "-n", "300", "-sites", "2000", "-site-share", "0.8")) {
		t.Errorf("-profile crawl differs from -sites 2000 -site-share 0.8")
	}
	if !bytes.Equal(gen(t, "-n", "300", "-profile", "crawl-short"), gen(t, "-n", "300", "-sites", "2000", "-site-share", "0.8", "-short", "0.3")) {
		t.Errorf("-profile crawl-short differs from -sites 2000 -site-share 0.8 -short 0.3")
	}
	if !bytes.Contains(crawl, []byte(` views\nCopyright `)) {
		t.Errorf("-profile crawl: no page with a footer in 300 documents")
	}
}

func TestGenRejects(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "-1"},
		{"-near", "0.95"},
		{"-mean", "100"},
		{"-profile", "web"},
		{"-site-share", "0.5"}, // without -sites
		{"-sites", "-1"},
		{"-short", "2"},
		{"extra"},
	} {
		var out, errs bytes.Buffer
		if err := run(context.Background(), append([]string{corporaFlag(t)}, args...), &out, &errs); err == nil {
			t.Errorf("neardup-gen %s: no error", strings.Join(args, " "))
		}
	}
}
