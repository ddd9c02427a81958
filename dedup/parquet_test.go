package dedup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/testcorpora"
)

// pqMeta and pqRow are a dataset row with many columns beside the text:
// nested, nullable, repeated, binary, timestamped.
type pqMeta struct {
	Lang  string   `parquet:"lang"`
	Score *float64 `parquet:"score,optional"`
}

type pqRow struct {
	ID    string    `parquet:"id"`
	URL   *string   `parquet:"url,optional"`
	Text  string    `parquet:"text"`
	Blob  []byte    `parquet:"blob,optional"`
	Tags  []string  `parquet:"tags,list"`
	Meta  pqMeta    `parquet:"meta"`
	Count *int32    `parquet:"count,optional"`
	When  time.Time `parquet:"when,timestamp(millisecond)"`
}

func ptrTo[T any](v T) *T { return &v }

// plantedRows are plantedCorpus as rich rows.
func plantedRows() []pqRow {
	var rows []pqRow
	for i, d := range plantedCorpus() {
		r := pqRow{ID: d.ID, Text: d.Text, Blob: []byte{0, byte(i), 0xff}, Meta: pqMeta{Lang: "en"},
			When: time.Date(2024, 1, 1, 0, 0, i, 0, time.UTC)}
		if i%2 == 0 {
			r.URL = ptrTo(fmt.Sprintf("https://example.com/%d", i))
			r.Meta.Score = ptrTo(float64(i) / 7)
			r.Tags = []string{"x", fmt.Sprint(i)}
		}
		if i%3 == 0 {
			r.Blob = nil
			r.Count = ptrTo(int32(i))
		}
		rows = append(rows, r)
	}
	return rows
}

// writeParquet writes rows to path with codec, in row groups of perGroup.
func writeParquet[T any](tb testing.TB, path string, rows []T, codec parquet.WriterOption, perGroup int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewGenericWriter[T](f, codec, parquet.MaxRowsPerRowGroup(int64(perGroup)),
		parquet.KeyValueMetadata("origin", "neardup test"))
	if _, err := w.Write(rows); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// readRows returns the rows of a Parquet file, its schema and its footer.
func readRows(tb testing.TB, path string) ([]parquet.Row, *parquet.File) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	var rows []parquet.Row
	for _, rg := range pf.RowGroups() {
		rr := rg.Rows()
		buf := make([]parquet.Row, 16)
		for {
			n, err := rr.ReadRows(buf)
			for _, r := range buf[:n] {
				rows = append(rows, r.Clone())
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				tb.Fatal(err)
			}
		}
		rr.Close()
	}
	return rows, pf
}

// Parquet in, Parquet out: the kept rows are the input's rows, every value of
// every column, under the same schema, codec and metadata.
func TestParquetRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codec parquet.WriterOption
	}{{"zstd", parquet.Compression(&parquet.Zstd)}, {"snappy", parquet.Compression(&parquet.Snappy)}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "part-0.parquet")
			writeParquet(t, in, plantedRows(), tc.codec, 16)
			opt := Options{Output: filepath.Join(dir, "kept.parquet"), Duplicates: filepath.Join(dir, "dups.jsonl")}
			if _, err := Run(context.Background(), []string{in}, opt); err != nil {
				t.Fatal(err)
			}
			if got := dupIDs(readDuplicates(t, opt.Duplicates)); !slices.Equal(got, wantRemoved) {
				t.Errorf("removed %v, want %v", got, wantRemoved)
			}
			inRows, inFile := readRows(t, in)
			outRows, outFile := readRows(t, opt.Output)
			if got, want := outFile.Schema().String(), inFile.Schema().String(); got != want {
				t.Errorf("schema:\n%s\nwant\n%s", got, want)
			}
			gotCodec := outFile.Metadata().RowGroups[0].Columns[0].MetaData.Codec
			if wantCodec := inFile.Metadata().RowGroups[0].Columns[0].MetaData.Codec; gotCodec != wantCodec {
				t.Errorf("codec %v, want %v", gotCodec, wantCodec)
			}
			if v, ok := outFile.Lookup("origin"); !ok || v != "neardup test" {
				t.Errorf("key-value metadata origin = %q, %v; want it copied", v, ok)
			}
			for _, rg := range outFile.RowGroups() {
				if rg.NumRows() > 16 {
					t.Errorf("an output row group has %d rows, more than the input's 16", rg.NumRows())
				}
			}
			var want []parquet.Row
			for i, d := range plantedCorpus() {
				if !slices.Contains(wantRemoved, d.ID) {
					want = append(want, inRows[i])
				}
			}
			if len(outRows) != len(want) {
				t.Fatalf("%d rows kept, want %d", len(outRows), len(want))
			}
			for i := range want {
				if !outRows[i].Equal(want[i]) {
					t.Errorf("kept row %d:\n%v\nwant\n%v", i, outRows[i], want[i])
				}
			}
			// And read back as Go values, every field as written.
			var rows []pqRow
			for _, d := range plantedRows() {
				if !slices.Contains(wantRemoved, d.ID) {
					rows = append(rows, d)
				}
			}
			got, err := parquet.ReadFile[pqRow](opt.Output)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				g, w := fmt.Sprintf("%+v", deref(got[i])), fmt.Sprintf("%+v", deref(rows[i]))
				if g != w {
					t.Errorf("row %d:\n%s\nwant\n%s", i, g, w)
				}
			}
		})
	}
}

// deref prints a row's pointers as the values they point to.
func deref(r pqRow) string {
	s := func(p any) string {
		switch p := p.(type) {
		case *string:
			if p != nil {
				return *p
			}
		case *float64:
			if p != nil {
				return fmt.Sprint(*p)
			}
		case *int32:
			if p != nil {
				return fmt.Sprint(*p)
			}
		}
		return "<nil>"
	}
	return fmt.Sprintf("%s %s %q %x %q %s %s %s %s", r.ID, s(r.URL), r.Text, r.Blob, r.Tags, r.Meta.Lang,
		s(r.Meta.Score), s(r.Count), r.When.UTC())
}

// The same verdicts from the Parquet and the JSONL version of each shared
// corpus.
func TestParquetSameVerdicts(t *testing.T) {
	for _, name := range []string{"en_spdx", "zh_fortunes", "en_gitdocs_dev", "en_prose", "zh_laws"} {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && (name == "en_gitdocs_dev" || name == "zh_laws") {
				t.Skip("-short")
			}
			jsonl := testcorpora.Path(t, name)
			dir := t.TempDir()
			pq := filepath.Join(dir, name+".parquet")
			testcorpora.WriteParquet(t, name, pq, 1000)
			var reports [2][]byte
			for i, in := range []string{jsonl, pq} {
				opt := Options{Duplicates: filepath.Join(dir, fmt.Sprint(i, ".dups")), Clusters: filepath.Join(dir, fmt.Sprint(i, ".clusters"))}
				if _, err := Run(context.Background(), []string{in}, opt); err != nil {
					t.Fatal(err)
				}
				for _, p := range []string{opt.Duplicates, opt.Clusters} {
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					reports[i] = append(reports[i], b...)
				}
			}
			if !bytes.Equal(reports[0], reports[1]) {
				t.Errorf("duplicates and clusters differ between JSONL (%d bytes) and Parquet (%d bytes)", len(reports[0]), len(reports[1]))
			}
		})
	}
}

// A dataset directory of mixed JSONL.zst and Parquet shards comes out as a
// directory of the same shards, each in its format, holding the kept
// documents.
func TestOutputDirMixed(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	docs := plantedCorpus()
	rows := plantedRows()
	if err := os.MkdirAll(filepath.Join(data, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Shards in walk order: a.jsonl.zst (docs 0-19), b.parquet (20-39),
	// sub/c.jsonl (40-).
	var b bytes.Buffer
	zw, _ := zstd.NewWriter(&b)
	for _, d := range docs[:20] {
		json.NewEncoder(zw).Encode(d)
	}
	zw.Close()
	os.WriteFile(filepath.Join(data, "a.jsonl.zst"), b.Bytes(), 0o644)
	writeParquet(t, filepath.Join(data, "b.parquet"), rows[20:40], parquet.Compression(&parquet.Snappy), 8)
	writeJSONL(t, filepath.Join(data, "sub", "c.jsonl"), docs[40:])

	out := filepath.Join(dir, "out")
	opt := Options{OutputDir: out, Duplicates: filepath.Join(dir, "dups.jsonl")}
	if _, err := Run(context.Background(), []string{data}, opt); err != nil {
		t.Fatal(err)
	}
	if got := dupIDs(readDuplicates(t, opt.Duplicates)); !slices.Equal(got, wantRemoved) {
		t.Errorf("removed %v, want %v", got, wantRemoved)
	}
	var names []string
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, p)
			names = append(names, rel)
		}
		return nil
	})
	if want := []string{"a.jsonl.zst", "b.parquet", "sub/c.jsonl"}; !slices.Equal(names, want) {
		t.Fatalf("output shards %v, want %v (no temporary directory left)", names, want)
	}
	head := func(p string) string {
		b, _ := os.ReadFile(filepath.Join(out, p))
		return string(b[:4])
	}
	if h := head("a.jsonl.zst"); h != "\x28\xb5\x2f\xfd" {
		t.Errorf("a.jsonl.zst starts with %q, want the zstd magic", h)
	}
	if h := head("b.parquet"); h != "PAR1" {
		t.Errorf("b.parquet starts with %q, want PAR1", h)
	}
	_, pf := readRows(t, filepath.Join(out, "b.parquet"))
	if c := pf.Metadata().RowGroups[0].Columns[0].MetaData.Codec; c.String() != "SNAPPY" {
		t.Errorf("b.parquet codec %v, want SNAPPY as its input", c)
	}
	r, err := corpus.Open([]string{out}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var kept []string
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, d.ID)
	}
	var want []string
	for _, d := range docs {
		if !slices.Contains(wantRemoved, d.ID) {
			want = append(want, d.ID)
		}
	}
	if !slices.Equal(kept, want) {
		t.Errorf("kept %v,\nwant %v", kept, want)
	}

	// Annotated, every document is in its shard, the JSONL ones with the
	// fields added and still zstd.
	out2 := filepath.Join(dir, "annotated")
	if _, err := Run(context.Background(), []string{data}, Options{OutputDir: out2, Annotate: true}); err != nil {
		t.Fatal(err)
	}
	r2, err := corpus.Open([]string{out2}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	n := 0
	for ; ; n++ {
		d, err := r2.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.Format == corpus.JSONL && !bytes.Contains(d.Raw, []byte(`"dup_of":`)) {
			t.Errorf("%s: %s not annotated", d.Source, d.Raw[:40])
		}
	}
	if n != len(docs) {
		t.Errorf("annotated shards hold %d documents, want all %d", n, len(docs))
	}
}

// A corrupt Parquet footer fails the run with an error naming the file, and
// nothing is written.
func TestParquetCorruptNoOutput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.parquet")
	writeParquet(t, in, plantedRows(), parquet.Compression(&parquet.Zstd), 16)
	data, _ := os.ReadFile(in)
	copy(data[len(data)-8:], "\xff\xff\xff\x7f") // footer length past the file
	os.WriteFile(in, data, 0o644)
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	for _, opt := range []Options{
		{Output: filepath.Join(out, "kept.parquet"), Duplicates: filepath.Join(out, "dups.jsonl")},
		{OutputDir: filepath.Join(out, "shards")},
	} {
		_, err := Run(context.Background(), []string{in}, opt)
		if !errors.Is(err, corpus.ErrBadParquet) || !strings.Contains(err.Error(), in) {
			t.Errorf("got %v, want corpus.ErrBadParquet naming %s", err, in)
		}
		var left []string
		filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				left = append(left, p)
			}
			return nil
		})
		if len(left) > 0 {
			t.Errorf("files left behind: %v", left)
		}
		if opt.OutputDir != "" {
			if _, err := os.Stat(opt.OutputDir); err == nil {
				t.Errorf("output directory %s created by a failed run", opt.OutputDir)
			}
		}
	}
}

func TestParquetNoTextColumnRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.parquet")
	writeParquet(t, in, plantedRows(), parquet.Compression(&parquet.Zstd), 16)
	_, err := Run(context.Background(), []string{in}, Options{Corpus: corpus.Options{TextField: "body"}})
	if !errors.Is(err, corpus.ErrNoColumn) || !strings.Contains(err.Error(), `"meta.lang"`) || !strings.Contains(err.Error(), in) {
		t.Errorf("got %v, want corpus.ErrNoColumn naming %s and its columns", err, in)
	}
}

// Annotate keeps every document and says what would have been removed, in
// JSONL fields and Parquet columns alike.
func TestAnnotate(t *testing.T) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, jsonl, plantedCorpus())
	pq := filepath.Join(dir, "in.parquet")
	writeParquet(t, pq, plantedRows(), parquet.Compression(&parquet.Zstd), 16)

	type ann struct {
		ID      string   `json:"id" parquet:"id"`
		DupOf   *string  `json:"dup_of" parquet:"dup_of,optional"`
		Jaccard *float64 `json:"jaccard" parquet:"jaccard,optional"`
		Cluster *string  `json:"cluster" parquet:"cluster,optional"`
	}
	show := func(as []ann) string {
		var b strings.Builder
		for _, a := range as {
			s := func(p *string) string {
				if p == nil {
					return "-"
				}
				return *p
			}
			j := "-"
			if a.Jaccard != nil {
				j = fmt.Sprintf("%.4f", *a.Jaccard)
			}
			fmt.Fprintf(&b, "%s %s %s %s\n", a.ID, s(a.DupOf), j, s(a.Cluster))
		}
		return b.String()
	}
	var results []string
	for _, in := range []string{jsonl, pq} {
		out := filepath.Join(dir, "annotated"+filepath.Ext(in))
		dups := filepath.Join(dir, "dups"+filepath.Ext(in))
		opt := Options{Output: out, Annotate: true, Duplicates: dups, ReportFormat: ReportParquet}
		if _, err := Run(context.Background(), []string{in}, opt); err != nil {
			t.Fatal(err)
		}
		var as []ann
		if in == pq {
			var err error
			if as, err = parquet.ReadFile[ann](out); err != nil {
				t.Fatal(err)
			}
			rows, pf := readRows(t, out)
			in, inFile := readRows(t, pq)
			if n, m := len(pf.Schema().Columns()), len(inFile.Schema().Columns()); n != m+3 {
				t.Errorf("%d columns, want the input's %d and 3 more", n, m)
			}
			for i := range in {
				if !slices.EqualFunc(rows[i][:len(in[i])], in[i], parquet.Equal) {
					t.Errorf("annotated row %d: input columns changed", i)
				}
			}
		} else {
			for _, line := range readLines(t, out) {
				var a ann
				if err := json.Unmarshal([]byte(line), &a); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				as = append(as, a)
			}
		}
		if len(as) != len(plantedCorpus()) {
			t.Fatalf("%s: %d documents, want all %d", out, len(as), len(plantedCorpus()))
		}
		// The annotations agree with the duplicates report (here Parquet).
		ds, err := parquet.ReadFile[Duplicate](dups)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]Duplicate{}
		for _, d := range ds {
			byID[d.DupID] = d
		}
		for _, a := range as {
			d, removed := byID[a.ID]
			switch {
			case removed && (a.DupOf == nil || *a.DupOf != d.KeptID || a.Jaccard == nil || *a.Jaccard != *d.Jaccard ||
				a.Cluster == nil || *a.Cluster != d.KeptID):
				t.Errorf("%s: annotated %s, want dup_of and cluster %s, jaccard %v", a.ID, show([]ann{a}), d.KeptID, *d.Jaccard)
			case !removed && a.DupOf != nil:
				t.Errorf("%s: kept but annotated dup_of %s", a.ID, *a.DupOf)
			}
		}
		if a := as[0]; a.Cluster == nil || *a.Cluster != "u00" { // u00 leads n00's cluster
			t.Errorf("u00's cluster %s, want itself", show([]ann{a}))
		}
		results = append(results, show(as))
	}
	if results[0] != results[1] {
		t.Errorf("JSONL and Parquet annotations differ:\n%s\n%s", results[0], results[1])
	}
}

func TestParquetMixedRefused(t *testing.T) {
	dir := t.TempDir()
	writeJSONL(t, filepath.Join(dir, "a.jsonl"), plantedCorpus()[:10])
	writeParquet(t, filepath.Join(dir, "b.parquet"), plantedRows()[10:], parquet.Compression(&parquet.Zstd), 16)
	_, err := Run(context.Background(), []string{dir}, Options{Output: filepath.Join(t.TempDir(), "kept")})
	if !errors.Is(err, ErrMixedFormats) || !strings.Contains(err.Error(), "--output-dir") {
		t.Errorf("got %v, want ErrMixedFormats suggesting --output-dir", err)
	}
}

// KeepField reads a Parquet column as it reads a JSON field: the same
// verdicts from both.
func TestParquetKeepField(t *testing.T) {
	type prioRow struct {
		ID   string `parquet:"id" json:"id"`
		Text string `parquet:"text" json:"text"`
		Meta struct {
			Prio *int64 `parquet:"prio,optional" json:"prio"`
		} `parquet:"meta" json:"meta"`
	}
	var rows []prioRow
	for i, d := range plantedCorpus() {
		r := prioRow{ID: d.ID, Text: d.Text}
		if i%4 != 3 { // some missing
			r.Meta.Prio = ptrTo(int64(i % 7))
		}
		rows = append(rows, r)
	}
	dir := t.TempDir()
	pq := filepath.Join(dir, "in.parquet")
	writeParquet(t, pq, rows, parquet.Compression(&parquet.Zstd), 16)
	jsonl := filepath.Join(dir, "in.jsonl")
	var b bytes.Buffer
	var dups [2][]byte
	// JSONL KeepField names a top-level field: flatten prio for it.
	b.Reset()
	for _, r := range rows {
		line, _ := json.Marshal(map[string]any{"id": r.ID, "text": r.Text, "prio": r.Meta.Prio})
		b.Write(append(line, '\n'))
	}
	os.WriteFile(jsonl, b.Bytes(), 0o644)
	for i, tc := range []struct{ in, field string }{{jsonl, "prio"}, {pq, "meta.prio"}} {
		opt := Options{KeepField: tc.field, Duplicates: filepath.Join(dir, fmt.Sprint(i, ".dups"))}
		if _, err := Run(context.Background(), []string{tc.in}, opt); err != nil {
			t.Fatal(err)
		}
		dups[i], _ = os.ReadFile(opt.Duplicates)
	}
	if !bytes.Equal(dups[0], dups[1]) {
		t.Errorf("keep field: JSONL and Parquet verdicts differ:\n%s\n%s", dups[0], dups[1])
	}
	if bytes.Equal(dups[1], func() []byte {
		opt := Options{Duplicates: filepath.Join(dir, "first.dups")}
		Run(context.Background(), []string{pq}, opt)
		b, _ := os.ReadFile(opt.Duplicates)
		return b
	}()) {
		t.Error("keep field gives the keep-first verdicts: the column was not read")
	}
}

func TestAnnotateJSON(t *testing.T) {
	for _, tc := range []struct {
		line string
		a    annotation
		want string
	}{
		{`{"id":"a","text":"x"}`, annotation{}, `{"id":"a","text":"x","dup_of":null,"jaccard":null,"cluster":null}`},
		{`{}`, annotation{dupOf: "k\"1", jaccard: 0.85, hasJacc: true, cluster: "k\"1", inCluster: true},
			`{"dup_of":"k\"1","jaccard":0.85,"cluster":"k\"1"}`},
		{` { "id" : 1 }  `, annotation{cluster: "1", inCluster: true}, ` { "id" : 1 ,"dup_of":null,"jaccard":null,"cluster":"1"}  `},
	} {
		got := string(annotateJSON(nil, []byte(tc.line), &tc.a))
		if got != tc.want {
			t.Errorf("annotateJSON(%s) = %s, want %s", tc.line, got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("annotateJSON(%s) = %s: not valid JSON", tc.line, got)
		}
	}
}

// Parquet files of two schemas cannot share one kept file: refused before
// the work, naming both; --output-dir takes them.
func TestParquetSchemasRefused(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	writeParquet(t, a, plantedRows()[:20], parquet.Compression(&parquet.Zstd), 16)
	type other struct {
		ID   string `parquet:"id"`
		Text string `parquet:"text"`
	}
	var rows []other
	for _, d := range plantedCorpus()[20:] {
		rows = append(rows, other{d.ID, d.Text})
	}
	writeParquet(t, b, rows, parquet.Compression(&parquet.Zstd), 16)
	out := filepath.Join(dir, "kept.parquet")
	_, err := Run(context.Background(), []string{dir}, Options{Output: out})
	if !errors.Is(err, ErrMixedFormats) || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) {
		t.Errorf("got %v, want ErrMixedFormats naming %s and %s", err, a, b)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output written by a failed run")
	}
	if _, err := Run(context.Background(), []string{dir}, Options{OutputDir: filepath.Join(dir, "out")}); err != nil {
		t.Errorf("--output-dir: %v", err)
	}
}
