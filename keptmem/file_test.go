package keptmem_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/keptmem"
	"github.com/neardup/neardup/rule"
)

var update = flag.Bool("update", false, "rewrite the golden kept-set files in testdata")

// TestKeptFileGolden pins the kept-set file (FORMAT.md) byte for byte: two
// incremental runs under each method write the files in testdata, and the
// second run loads the first's. A change of the format, of the features or of
// the verdicts shows up here; -update rewrites them (only with a new format
// version or sketch version).
func TestKeptFileGolden(t *testing.T) {
	docs := goldenDocs()
	for _, method := range []string{rule.MethodSimHash, rule.MethodMinHash} {
		t.Run(method, func(t *testing.T) {
			dir := t.TempDir()
			idx := filepath.Join(dir, "seen.idx")
			for day, batch := range [][]goldenDoc{docs[:24], docs[16:]} {
				in := filepath.Join(dir, fmt.Sprint("day", day+1, ".jsonl"))
				writeGoldenJSONL(t, in, batch)
				opt := dedup.Options{Options: rule.Options{Method: method}, KeptFiles: keptmem.Files{}, Index: idx, UpdateIndex: true}
				if _, err := dedup.Run(t.Context(), []string{in}, opt); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(keptmem.Path(idx))
				if err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", fmt.Sprintf("%s-day%d.kept", method, day+1))
				if *update {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("day %d: the kept-set file (%d bytes) differs from %s (%d bytes)", day+1, len(got), golden, len(want))
				}
			}
		})
	}
}

type goldenDoc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// goldenDocs returns version histories (each version a small edit of the one
// before) with exact copies: every verdict a batch can give.
func goldenDocs() []goldenDoc {
	rng := rand.New(rand.NewPCG(20, 26))
	var docs []goldenDoc
	for h := range 8 {
		words := make([]string, 40+rng.IntN(80))
		for i := range words {
			words[i] = fmt.Sprintf("w%d", rng.IntN(2000))
		}
		for v := range 4 {
			if v > 0 {
				words[rng.IntN(len(words))] = fmt.Sprintf("w%d", rng.IntN(2000))
			}
			docs = append(docs, goldenDoc{fmt.Sprintf("h%dv%d", h, v), strings.Join(words, " ")})
		}
		if h%3 == 0 {
			docs = append(docs, goldenDoc{fmt.Sprintf("h%dcopy", h), docs[len(docs)-1].Text})
		}
	}
	return docs
}

func writeGoldenJSONL(tb testing.TB, path string, docs []goldenDoc) {
	tb.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
}
