package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/store"
)

// parquetDoc is a dataset row with the text in a nested column.
type parquetDoc struct {
	ID  string `parquet:"id"`
	URL string `parquet:"url"`
	Doc struct {
		Body string `parquet:"body"`
	} `parquet:"doc"`
}

// parquetCorpus writes dedupCorpus's documents as Parquet, the text in the
// nested column doc.body.
func parquetCorpus(t *testing.T) (dir, in string) {
	t.Helper()
	dir, jsonl, _ := dedupCorpus(t)
	b, _ := os.ReadFile(jsonl)
	var rows []parquetDoc
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var d struct{ ID, Text string }
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		r := parquetDoc{ID: d.ID, URL: "https://example.com/" + d.ID}
		r.Doc.Body = d.Text
		rows = append(rows, r)
	}
	in = filepath.Join(dir, "data", "part-0.parquet")
	os.MkdirAll(filepath.Dir(in), 0o755)
	if err := parquet.WriteFile(in, rows, parquet.Compression(&parquet.Zstd)); err != nil {
		t.Fatal(err)
	}
	return dir, in
}

func TestDedupParquet(t *testing.T) {
	dir, in := parquetCorpus(t)
	out := filepath.Join(dir, "out")
	dups := filepath.Join(dir, "dups.parquet")
	code, _, stderr := run(t, "", "dedup", "-q", "--text-field", "doc.body", "--output-dir", out,
		"--duplicates", dups, "--report-format", "parquet", filepath.Dir(in))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	kept, err := parquet.ReadFile[parquetDoc](filepath.Join(out, "part-0.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range kept {
		ids = append(ids, r.ID)
		if r.URL != "https://example.com/"+r.ID || r.Doc.Body == "" {
			t.Errorf("kept row %+v lost a column", r)
		}
	}
	if got := strings.Join(ids, ","); got != "a,c,e" {
		t.Errorf("kept %s, want a,c,e", got)
	}
	type dup struct {
		DupID  string `parquet:"dup_id"`
		KeptID string `parquet:"kept_id"`
	}
	ds, err := parquet.ReadFile[dup](dups)
	if err != nil || len(ds) != 2 || ds[0] != (dup{"b", "a"}) || ds[1] != (dup{"d", "c"}) {
		t.Errorf("duplicates %+v, %v; want b of a and d of c", ds, err)
	}

	// --annotate keeps all five rows.
	ann := filepath.Join(dir, "annotated.parquet")
	if code, _, stderr := run(t, "", "dedup", "-q", "--text-field", "doc.body", "--annotate", "-o", ann, in); code != 0 {
		t.Fatalf("--annotate: exit %d: %s", code, stderr)
	}
	type annotated struct {
		ID    string  `parquet:"id"`
		DupOf *string `parquet:"dup_of,optional"`
	}
	as, err := parquet.ReadFile[annotated](ann)
	if err != nil || len(as) != 5 || as[1].DupOf == nil || *as[1].DupOf != "a" || as[0].DupOf != nil {
		t.Errorf("annotated %+v, %v; want 5 rows, b dup_of a", as, err)
	}
}

func TestDedupParquetErrors(t *testing.T) {
	dir, in := parquetCorpus(t)
	out := filepath.Join(dir, "kept.parquet")
	code, _, stderr := run(t, "", "dedup", "-o", out, in) // text is in doc.body
	if code != 1 || !strings.Contains(stderr, in) || !strings.Contains(stderr, `"doc.body"`) || !strings.Contains(stderr, `"url"`) {
		t.Errorf("no text column: exit %d, %q; want the file and its columns named", code, stderr)
	}
	b, _ := os.ReadFile(in)
	os.WriteFile(in, b[:len(b)-6], 0o644) // the footer's length and magic cut
	code, _, stderr = run(t, "", "dedup", "--text-field", "doc.body", "-o", out, in)
	if code != 1 || !strings.Contains(stderr, in) || !strings.Contains(stderr, "Parquet") {
		t.Errorf("corrupt footer: exit %d, %q; want the file named", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output written by a failed run")
	}
	if code, _, stderr := run(t, "", "dedup", "--format", "orc", in); code != 2 || !strings.Contains(stderr, "parquet") {
		t.Errorf("unknown format: exit %d, %q; want a usage error listing the formats", code, stderr)
	}
}

func TestFingerprintParquet(t *testing.T) {
	_, in := parquetCorpus(t)
	code, stdout, stderr := run(t, "", "fingerprint", "--text-field", "doc.body", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "a\t") || !strings.HasPrefix(lines[4], "e\t") {
		t.Errorf("fingerprints:\n%s\nwant one line per row, a to e", stdout)
	}
}

// TestImportParquet: the service's bulk import reads Parquet as dedup does.
func TestImportParquet(t *testing.T) {
	dir, in := parquetCorpus(t)
	data := filepath.Join(dir, "service")
	if code, _, stderr := run(t, "", "import", "-q", "--data", data, "--text-field", "doc.body", in); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	st, err := store.OpenPebble(data, store.PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	st.Load(t.Context(), func(r store.Record) error {
		ids = append(ids, r.ID)
		return nil
	})
	if got := strings.Join(ids, ","); got != "a,c,e" {
		t.Errorf("imported %s, want a,c,e (dedup's kept rows)", got)
	}
}
