package eval

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/testcorpora"
)

// The Parquet and JSONL versions of a shared corpus read as the same
// documents, groups included.
func TestReadFileParquet(t *testing.T) {
	jsonl := testcorpora.Path(t, "en_spdx")
	pq := filepath.Join(t.TempDir(), "en_spdx.parquet")
	testcorpora.WriteParquet(t, "en_spdx", pq, 500)
	want, err := ReadFile(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(pq)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Parquet gives %d documents that differ from JSONL's %d", len(got), len(want))
	}

	// Without a group column every group is empty.
	type noGroup struct {
		ID   string `parquet:"id"`
		Text string `parquet:"text"`
	}
	p2 := filepath.Join(t.TempDir(), "nogroup.parquet")
	if err := parquet.WriteFile(p2, []noGroup{{"a", "x y z"}, {"b", "u v w"}}); err != nil {
		t.Fatal(err)
	}
	docs, err := ReadFile(p2)
	if err != nil || len(docs) != 2 || docs[1] != (Doc{ID: "b", Text: "u v w"}) {
		t.Errorf("got %+v, %v", docs, err)
	}
}
