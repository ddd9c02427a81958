package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/testcorpora"
)

// richMeta and richRow make a file with nested, nullable, repeated and
// binary columns, as datasets have beside their text.
type richMeta struct {
	Lang  string   `parquet:"lang"`
	Score *float64 `parquet:"score,optional"`
	Body  *string  `parquet:"body,optional"`
}

type richRow struct {
	ID   int64    `parquet:"id"`
	Text *string  `parquet:"text,optional"`
	URL  *string  `parquet:"url,optional"`
	Blob []byte   `parquet:"blob,optional"`
	Tags []string `parquet:"tags,list"`
	Meta richMeta `parquet:"meta"`
}

func ptr[T any](v T) *T { return &v }

// writeRich writes n rich rows to path in row groups of perGroup rows.
func writeRich(t testing.TB, path string, n, perGroup int) []richRow {
	t.Helper()
	var rows []richRow
	for i := range n {
		r := richRow{
			ID:   int64(i + 1),
			Text: ptr(fmt.Sprintf("document %d says %s", i+1, strings.Repeat("words ", i%7))),
			Blob: []byte{0, byte(i), 0xff, 0xfe},
			Meta: richMeta{Lang: "en", Body: ptr(fmt.Sprintf("nested body %d", i+1))},
		}
		if i%3 == 0 {
			r.URL = ptr(fmt.Sprintf("https://example.com/%d", i))
			r.Meta.Score = ptr(float64(i) / 10)
			r.Tags = []string{"a", "b"}
		}
		if i%5 == 4 {
			r.Blob = nil
		}
		rows = append(rows, r)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewGenericWriter[richRow](f, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(int64(perGroup)))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestParquet(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "part-0.parquet")
	rows := writeRich(t, p, 50, 16)
	for _, tc := range []struct {
		name string
		opt  Options
		text func(richRow) string
	}{
		{"auto", Options{}, func(r richRow) string { return *r.Text }},
		{"format", Options{Format: Parquet}, func(r richRow) string { return *r.Text }},
		{"rows", Options{Rows: true}, func(r richRow) string { return *r.Text }},
		{"nested", Options{TextField: "meta.body"}, func(r richRow) string { return *r.Meta.Body }},
		{"nested rows", Options{TextField: "meta.body", Rows: true}, func(r richRow) string { return *r.Meta.Body }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, bad, err := readAll(t, []string{p}, tc.opt)
			if err != nil || len(bad) > 0 {
				t.Fatalf("err %v, bad %v", err, bad)
			}
			if len(docs) != len(rows) {
				t.Fatalf("got %d docs, want %d", len(docs), len(rows))
			}
			for i, d := range docs {
				if want := fmt.Sprint(rows[i].ID); d.ID != want {
					t.Errorf("doc %d: id %q, want %q", i, d.ID, want)
				}
				if want := tc.text(rows[i]); d.Text != want {
					t.Errorf("doc %d: text %q, want %q", i, d.Text, want)
				}
				if d.Source != p || d.Line != i+1 {
					t.Errorf("doc %d: at %s:%d, want %s:%d", i, d.Source, d.Line, p, i+1)
				}
				if (d.Row != nil) != tc.opt.Rows {
					t.Errorf("doc %d: row %v with Rows %v", i, d.Row, tc.opt.Rows)
				}
			}
		})
	}
}

func TestParquetMissingID(t *testing.T) {
	type row struct {
		Body string `parquet:"body"`
	}
	p := filepath.Join(t.TempDir(), "x.parquet")
	if err := parquet.WriteFile(p, []row{{"one"}, {"two"}}); err != nil {
		t.Fatal(err)
	}
	docs, _, err := readAll(t, []string{p}, Options{TextField: "body"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(docs), p+":1,"+p+":2"; got != want {
		t.Errorf("ids %q, want %q", got, want)
	}
}

func TestParquetNullText(t *testing.T) {
	p := filepath.Join(t.TempDir(), "n.parquet")
	if err := parquet.WriteFile(p, []richRow{{ID: 1, Text: ptr("a")}, {ID: 2}, {ID: 3, Text: ptr("c")}}); err != nil {
		t.Fatal(err)
	}
	_, _, err := readAll(t, []string{p}, Options{})
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), p+":2") {
		t.Errorf("null text: got %v, want ErrMalformed at %s:2", err, p)
	}
	docs, bad, err := readAll(t, []string{p}, Options{SkipBad: true})
	if err != nil || len(bad) != 1 || ids(docs) != "1,3" {
		t.Errorf("SkipBad: docs %q, bad %v, err %v; want 1,3 and one bad", ids(docs), bad, err)
	}
}

func TestParquetNoTextColumn(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cols.parquet")
	writeRich(t, p, 3, 10)
	_, _, err := readAll(t, []string{p}, Options{TextField: "content"})
	if !errors.Is(err, ErrNoColumn) {
		t.Fatalf("got %v, want ErrNoColumn", err)
	}
	for _, want := range []string{p, `"content"`, `"id"`, `"text"`, `"meta.lang"`, `"tags.list.element"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	for _, field := range []string{"tags.list.element", "meta.score"} { // a list; not strings
		if _, _, err := readAll(t, []string{p}, Options{TextField: field}); !errors.Is(err, ErrNoColumn) {
			t.Errorf("text field %s: got %v, want ErrNoColumn", field, err)
		}
	}
}

func TestParquetCorrupt(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeRich(t, good, 20, 10)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	footer := bytes.Clone(data)
	copy(footer[len(footer)-12:], "\xff\xff\xff\x7f")                                   // footer length past the file
	noMagic := append(bytes.Clone(data[:len(data)-4]), "XXXX"...)                       // no end magic
	truncated := data[:len(data)/2]                                                     // cut in half
	garbled := append(append(bytes.Clone(data[:4]), make([]byte, 64)...), data[68:]...) // pages zeroed
	for name, b := range map[string][]byte{"footer": footer, "magic": noMagic, "truncated": truncated, "pages": garbled} {
		t.Run(name, func(t *testing.T) {
			p := writeFile(t, dir, name+".parquet", b)
			_, _, err := readAll(t, []string{p}, Options{})
			if !errors.Is(err, ErrBadParquet) || !strings.Contains(err.Error(), p) {
				t.Errorf("got %v, want ErrBadParquet naming %s", err, p)
			}
		})
	}
}

func TestParquetStream(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.parquet")
	writeRich(t, p, 3, 10)
	data, _ := os.ReadFile(p)
	// A stream cannot be Parquet; a sized io.ReaderAt can.
	_, _, err := readAll(t, []string{"-"}, Options{Stdin: bytes.NewBufferString(string(data))})
	if !errors.Is(err, ErrBadParquet) {
		t.Errorf("stdin: got %v, want ErrBadParquet", err)
	}
	r, err := OpenReader(bytes.NewReader(data), "s.parquet", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for ; ; n++ {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	if n != 3 {
		t.Errorf("OpenReader(bytes.Reader): %d docs, want 3", n)
	}
}

// Parquet and JSONL versions of a shared corpus yield the same documents.
func TestParquetSharedCorpus(t *testing.T) {
	jsonl := testcorpora.Path(t, "en_spdx")
	p := filepath.Join(t.TempDir(), "en_spdx.parquet")
	testcorpora.WriteParquet(t, "en_spdx", p, 100)
	want, _, err := readAll(t, []string{jsonl}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := readAll(t, []string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d docs from Parquet, %d from JSONL", len(got), len(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].Text != want[i].Text {
			t.Fatalf("doc %d: Parquet %q differs from JSONL %q", i, got[i].ID, want[i].ID)
		}
	}
}

// FuzzParquet feeds damaged Parquet files to the reader: every one either
// reads or fails with ErrBadParquet, ErrNoColumn or ErrMalformed, never a
// panic.
func FuzzParquet(f *testing.F) {
	p := filepath.Join(f.TempDir(), "seed.parquet")
	writeRich(f, p, 12, 5)
	seed, err := os.ReadFile(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, uint32(0), byte(0))
	f.Add(seed, uint32(len(seed)-9), byte(0xff))
	f.Add(seed, uint32(100), byte(0x55))
	f.Fuzz(func(t *testing.T, data []byte, at uint32, b byte) {
		data = bytes.Clone(data)
		if len(data) > 0 {
			data[int(at)%len(data)] ^= b
		}
		r, err := OpenReader(bytes.NewReader(data), "f.parquet", Options{Rows: at%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for range 1000 {
			_, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrBadParquet) && !errors.Is(err, ErrNoColumn) && !errors.Is(err, ErrMalformed) {
					t.Fatalf("error %v wraps none of ErrBadParquet, ErrNoColumn, ErrMalformed", err)
				}
				return
			}
		}
	})
}

func TestParquetColumns(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.parquet")
	rows := writeRich(t, p, 7, 3)
	for _, withRows := range []bool{false, true} {
		docs, _, err := readAll(t, []string{p}, Options{Columns: []string{"meta.score", "url", "id", "absent"}, Rows: withRows})
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range docs {
			score, url := "null", "null"
			if r := rows[i]; r.URL != nil {
				score, url = fmt.Sprint(*r.Meta.Score), fmt.Sprintf("%q", *r.URL)
			}
			want := []string{score, url, fmt.Sprint(rows[i].ID), "null"}
			if strings.Join(d.Columns, " ") != strings.Join(want, " ") {
				t.Errorf("rows %v, doc %d: columns %q, want %q", withRows, i, d.Columns, want)
			}
		}
	}
}

// OpenReader reads Parquet from an *os.File (as a Beam pipeline's local
// file system opens it), found by its magic bytes whatever its name.
func TestParquetOpenReaderFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "shard-00000")
	writeRich(t, p, 9, 4)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := OpenReader(f, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for ; ; n++ {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.Format != Parquet {
			t.Fatalf("doc %d read as %v", n, d.Format)
		}
	}
	if n != 9 {
		t.Errorf("%d docs, want 9", n)
	}
}

func TestParquetIDKinds(t *testing.T) {
	type row struct {
		F    float64 `parquet:"f"`
		U    [4]byte `parquet:"u"`
		I    int32   `parquet:"i"`
		B    bool    `parquet:"b"`
		Text string  `parquet:"text"`
	}
	p := filepath.Join(t.TempDir(), "ids.parquet")
	if err := parquet.WriteFile(p, []row{{F: 1.5, U: [4]byte{0xde, 0xad, 0xbe, 0xef}, I: -3, Text: "x"}}); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{"f": "1.5", "u": "deadbeef", "i": "-3"} {
		docs, _, err := readAll(t, []string{p}, Options{IDField: field})
		if err != nil || len(docs) != 1 || docs[0].ID != want {
			t.Errorf("id column %s: %v, %v; want id %s", field, docs, err, want)
		}
	}
	if _, _, err := readAll(t, []string{p}, Options{IDField: "b"}); !errors.Is(err, ErrNoColumn) {
		t.Errorf("boolean id column: got %v, want ErrNoColumn", err)
	}
}
