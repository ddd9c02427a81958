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
	want := gen(t, "-n", "2000", "-seed", "3", "-hot", "0.2", "-workers", "1")
	if n := bytes.Count(want, []byte("\n")); n != 2000 {
		t.Fatalf("%d lines, want 2000", n)
	}
	if got := gen(t, "-n", "2000", "-seed", "3", "-hot", "0.2", "-workers", "2"); !bytes.Equal(got, want) {
		t.Errorf("-workers 2 wrote other bytes than -workers 1")
	}
	path := filepath.Join(t.TempDir(), "web.jsonl.zst")
	gen(t, "-n", "2000", "-seed", "3", "-hot", "0.2", "-out", path)
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

func TestGenRejects(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "-1"},
		{"-near", "0.95"},
		{"-mean", "100"},
		{"extra"},
	} {
		var out, errs bytes.Buffer
		if err := run(context.Background(), append([]string{corporaFlag(t)}, args...), &out, &errs); err == nil {
			t.Errorf("neardup-gen %s: no error", strings.Join(args, " "))
		}
	}
}
