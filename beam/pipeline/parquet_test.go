package pipeline_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/beam/pipeline"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
)

// TestParquetInput: a Parquet shard gives the batch's duplicates and
// clusters, read through package corpus as 'neardup dedup' reads it.
func TestParquetInput(t *testing.T) {
	type row struct {
		ID   string `parquet:"id"`
		URL  string `parquet:"url"`
		Text string `parquet:"text"`
	}
	var rows []row
	r, err := corpus.Open([]string{corpusPath(t, "en_spdx")}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row{ID: d.ID, URL: "https://spdx.org/licenses/" + d.ID, Text: strings.Clone(d.Text)})
	}
	r.Close()
	dir := t.TempDir()
	in := filepath.Join(dir, "part-0.parquet")
	if err := parquet.WriteFile(in, rows, parquet.Compression(&parquet.Zstd)); err != nil {
		t.Fatal(err)
	}
	out := func(who, name string) string { return filepath.Join(dir, who+"-"+name) }
	opt := pipeline.Options{Inputs: []string{in}}
	dopt := opt.DedupOptions()
	dopt.Corpus = corpus.Options{}
	dopt.Duplicates, dopt.Clusters = out("batch", "dups.jsonl"), out("batch", "clusters.jsonl")
	if _, err := dedup.Run(context.Background(), []string{in}, dopt); err != nil {
		t.Fatalf("dedup.Run: %v", err)
	}
	opt.Duplicates, opt.Clusters = out("beam", "dups.jsonl"), out("beam", "clusters.jsonl")
	// Kept rows would come out as lines: refused, before anything runs.
	withOutput := opt
	withOutput.Output = out("beam", "kept")
	if _, s := beam.NewPipelineWithRoot(); true {
		if _, err := pipeline.Dedup(s, withOutput); !errors.Is(err, pipeline.ErrOutput) || !strings.Contains(err.Error(), "Parquet") {
			t.Fatalf("--output with Parquet input: %v, want an error saying why", err)
		}
	}
	p, s := beam.NewPipelineWithRoot()
	if _, err := pipeline.Dedup(s, opt); err != nil {
		t.Fatalf("pipeline.Dedup: %v", err)
	}
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline run: %v", err)
	}
	for _, name := range []string{"dups.jsonl", "clusters.jsonl"} {
		b, g := readFile(t, out("batch", name)), readFile(t, out("beam", name))
		if b != g {
			t.Errorf("%s differs from the batch's", name)
		}
		if b == "" {
			t.Errorf("batch %s is empty: the comparison checks little", name)
		}
	}
}
