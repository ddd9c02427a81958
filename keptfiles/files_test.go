package keptfiles

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

type goldenDoc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// goldenDocs returns the documents the golden files in testdata were made
// from (the old keptmem package's TestKeptFileGolden: two incremental runs, over docs[:24]
// and docs[16:]): version histories with exact copies.
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

func writeJSONL(tb testing.TB, path string, docs []goldenDoc) {
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

// runDay runs dedup over docs against the kept set beside idx, adding to
// it, and returns the verdicts (removed id -> kept id).
func runDay(tb testing.TB, idx, method string, docs []goldenDoc) map[string]string {
	tb.Helper()
	dir := tb.TempDir()
	in, dups := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "dups.jsonl")
	writeJSONL(tb, in, docs)
	opt := dedup.Options{Options: rule.Options{Method: method}, KeptFiles: Files{}, Index: idx, UpdateIndex: true, Duplicates: dups}
	if _, err := dedup.Run(context.Background(), []string{in}, opt); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(dups)
	if err != nil {
		tb.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Fields(string(b)) {
		var d dedup.Duplicate
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			tb.Fatal(err)
		}
		got[d.DupID] = d.KeptID
	}
	return got
}

// legacySettings returns the settings a kept-set file of the old format
// was made with.
func legacySettings(tb testing.TB, b []byte) string {
	tb.Helper()
	r := b[len(legacyMagic)+1:] // version 1 is one byte
	n, w := binary.Uvarint(r)
	if w <= 0 || n > uint64(len(r)-w) {
		tb.Fatal("no settings in the golden file")
	}
	return string(r[w : w+int(n)])
}

type legacyDoc struct {
	id string
	f  rule.Features
}

func readLegacyDocs(tb testing.TB, path string) ([]legacyDoc, string) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	settings := legacySettings(tb, b)
	var docs []legacyDoc
	if err := readLegacy(b, settings, func(id string, f rule.Features) error {
		docs = append(docs, legacyDoc{id, f})
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return docs, settings
}

// storedDocs returns the documents of the set saved beside idx, in
// priority order, as its store holds them.
func storedDocs(tb testing.TB, idx string) []legacyDoc {
	tb.Helper()
	cur, err := readCurrent(Dir(idx))
	if err != nil {
		tb.Fatal(err)
	}
	st, err := store.OpenPebble(filepath.Join(genDir(Dir(idx), cur.gen), storeName), store.PebbleOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	var docs []legacyDoc
	if err := st.Load(context.Background(), func(r store.Record) error {
		docs = append(docs, legacyDoc{r.ID, r.Features})
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return docs
}

func sameDocs(tb testing.TB, what string, got, want []legacyDoc) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("%s: %d documents, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.id != w.id || !reflect.DeepEqual(g.f.Sketch.Hashes(), w.f.Sketch.Hashes()) || g.f.FP != w.f.FP ||
			g.f.Exact != w.f.Exact || !reflect.DeepEqual(g.f.Bands, w.f.Bands) {
			tb.Errorf("%s: document %d is %s, want %s with the same features", what, i, g.id, w.id)
		}
	}
}

// TestLegacyGolden converts the golden kept-set files of the old code
// (testdata): the file of day 1 converted and the run of day 2 over
// it give the documents of day 2's golden file, in its order and with its
// features, and the verdicts of two runs that never saw the old format.
func TestLegacyGolden(t *testing.T) {
	docs := goldenDocs()
	day1, day2 := docs[:24], docs[16:]
	for _, method := range []string{rule.MethodSimHash, rule.MethodMinHash} {
		t.Run(method, func(t *testing.T) {
			golden1 := filepath.Join("testdata", method+"-day1.kept")
			golden2 := filepath.Join("testdata", method+"-day2.kept")
			dir := t.TempDir()
			idx := filepath.Join(dir, "seen.idx")
			old, err := os.ReadFile(golden1)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(LegacyPath(idx), old, 0o644); err != nil {
				t.Fatal(err)
			}
			want1, _ := readLegacyDocs(t, golden1)
			converted := runDay(t, idx, method, day2)
			if _, err := os.Stat(LegacyPath(idx)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the converted file is still there (%v)", err)
			}
			want2, _ := readLegacyDocs(t, golden2)
			sameDocs(t, "day 2 after the conversion", storedDocs(t, idx), want2)

			fresh := filepath.Join(dir, "fresh.idx")
			runDay(t, fresh, method, day1)
			sameDocs(t, "day 1", storedDocs(t, fresh), want1)
			if again := runDay(t, fresh, method, day2); !reflect.DeepEqual(again, converted) {
				t.Errorf("day 2 after the conversion removed %v, after a day 1 of this build %v", converted, again)
			}
			if len(converted) == 0 {
				t.Error("day 2 removed nothing: the test proves little")
			}
		})
	}
}

// TestLegacyDamaged: a damaged or foreign kept-set file is refused, with
// ErrFormat, and so is one made with other settings.
func TestLegacyDamaged(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "minhash-day1.kept"))
	if err != nil {
		t.Fatal(err)
	}
	settings := legacySettings(t, b)
	nop := func(string, rule.Features) error { return nil }
	if err := readLegacy(b, settings, nop); err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(b)
	flipped[len(flipped)/2] ^= 1
	for name, in := range map[string][]byte{"flipped": flipped, "cut": b[:len(b)-9], "empty": nil, "other": []byte("NDKEPX\r\n....")} {
		if err := readLegacy(in, settings, nop); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
	if err := readLegacy(b, settings+" other", nop); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "made with") {
		t.Errorf("other settings: %v", err)
	}
}

// TestGoldenEncoding pins the records' encoding (rule.Features.AppendBinary),
// which the stores keep, byte for byte: every record of the golden files,
// written by the old code, is what this build extracts and encodes from the
// same text.
func TestGoldenEncoding(t *testing.T) {
	texts := map[string]string{}
	for _, d := range goldenDocs() {
		texts[d.ID] = d.Text
	}
	for _, method := range []string{rule.MethodMinHash, rule.MethodSimHash} {
		ex, err := rule.NewExtractor(rule.Options{Method: method})
		if err != nil {
			t.Fatal(err)
		}
		for _, day := range []string{"day1", "day2"} {
			docs, _ := readLegacyDocs(t, filepath.Join("testdata", method+"-"+day+".kept"))
			if len(docs) == 0 {
				t.Fatalf("%s %s: no documents", method, day)
			}
			for _, d := range docs {
				text, ok := texts[d.id]
				if !ok {
					t.Fatalf("%s %s: %q is not a golden document", method, day, d.id)
				}
				f := ex.Extract(text)
				got, err := f.AppendBinary(nil)
				if err != nil {
					t.Fatal(err)
				}
				want, err := d.f.AppendBinary(nil)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s %s %s: the record encodes as %x, the golden file holds %x", method, day, d.id, got, want)
				}
			}
		}
	}
}
