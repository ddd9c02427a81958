// Package testcorpora finds the real-text corpora that travel with the
// repository (testdata/corpora at its root, see the README.md there) for
// tests and benchmarks.
//
//	path := testcorpora.Path(t, "en_spdx") // .../testdata/corpora/en_spdx.jsonl.zst
//	texts := testcorpora.Texts(t, "en_spdx", 40, 150) // the first 40 of 150 words or more
//
// NEARDUP_CORPORA overrides the directory. A missing corpus fails the test,
// never skips it: the corpora are part of the clone, so one that is missing
// is lost coverage, not an optional extra.
package testcorpora

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
)

// Dir returns the corpora directory: NEARDUP_CORPORA, else testdata/corpora
// in the directory holding go.mod, found by walking up from the working
// directory (a package's directory under go test). It returns "" when neither
// is found.
func Dir() string {
	if d := os.Getenv("NEARDUP_CORPORA"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "testdata", "corpora")
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Path returns the file of the named corpus ("en_spdx" for
// en_spdx.jsonl.zst), failing tb when it is missing.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(Dir(), name+".jsonl.zst")
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("corpus %s: %v (the corpora are in testdata/corpora of the repository; NEARDUP_CORPORA overrides)", name, err)
	}
	return p
}

// Doc is one document of a corpus: one JSON line (see the corpora's README).
type Doc struct {
	ID    string `json:"id" parquet:"id"`
	Text  string `json:"text" parquet:"text"`
	Group string `json:"group" parquet:"group"` // "" where there is no lineage
}

// Docs returns the documents of the named corpus in file order, failing tb
// as Path does when the corpus is missing. It decodes the lines itself with
// encoding/json rather than through package corpus, whose own tests use this
// package: invalid UTF-8 would become U+FFFD here where corpus keeps it, but
// the corpora are valid UTF-8.
func Docs(tb testing.TB, name string) []Doc {
	tb.Helper()
	f, err := os.Open(Path(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	// The corpora use zstd --long=27: a 128 MiB window.
	zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<27), zstd.WithDecoderConcurrency(1))
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	dec := json.NewDecoder(zr)
	var docs []Doc
	for {
		var d Doc
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			return docs
		} else if err != nil {
			tb.Fatalf("corpus %s, document %d: %v", name, len(docs)+1, err)
		}
		docs = append(docs, d)
	}
}

// Texts returns the texts of the first n documents of the named corpus that
// have at least minWords words (strings.Fields), or of all of them when n is
// negative. It fails tb when there are fewer than n, or as Path does when the
// corpus is missing.
func Texts(tb testing.TB, name string, n, minWords int) []string {
	tb.Helper()
	var texts []string
	for _, d := range Docs(tb, name) {
		if len(texts) == n {
			break
		}
		if len(strings.Fields(d.Text)) >= minWords {
			texts = append(texts, d.Text)
		}
	}
	if len(texts) < n {
		tb.Fatalf("corpus %s has %d texts of %d words or more, want %d", name, len(texts), minWords, n)
	}
	return texts
}

// WriteParquet writes the named corpus to path as Parquet, with the columns
// id, text and group, zstd-compressed, in row groups of perGroup rows:
// the same documents in the other format, for tests that compare the two.
func WriteParquet(tb testing.TB, name, path string, perGroup int) {
	tb.Helper()
	docs := Docs(tb, name)
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewGenericWriter[Doc](f, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(int64(perGroup)))
	if _, err := w.Write(docs); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}
