package dedup_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/dedup"
)

func Example() {
	dir, _ := os.MkdirTemp("", "dedup-example")
	defer os.RemoveAll(dir)
	story := strings.Repeat("the quick brown fox jumps over the lazy dog while the cat watches from the fence ", 5)
	in := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(in, []byte(
		`{"id":"a","text":"`+story+`"}`+"\n"+
			`{"id":"b","text":"`+story+`and then it rains"}`+"\n"+ // near-duplicate of a
			`{"id":"c","text":"An entirely different document about something else."}`+"\n"+
			`{"id":"d","text":"AN ENTIRELY DIFFERENT DOCUMENT, ABOUT SOMETHING ELSE!"}`+"\n"), // same words as c
		0o644)
	out := filepath.Join(dir, "kept.jsonl")
	dups := filepath.Join(dir, "dups.jsonl")
	sum, err := dedup.Run(context.Background(), []string{in}, dedup.Options{Output: out, Duplicates: dups})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("read %d, kept %d, removed %d (%d exact, %d near)\n", sum.Docs, sum.Kept, sum.Removed, sum.ExactDuplicates, sum.NearDuplicates)
	kept, _ := os.ReadFile(out)
	for _, line := range strings.Split(strings.TrimSpace(string(kept)), "\n") {
		fmt.Println(line[:12])
	}
	// Output:
	// read 4, kept 2, removed 2 (1 exact, 1 near)
	// {"id":"a","t
	// {"id":"c","t
}

// A dataset directory of Parquet shards in, the same shards out, each row
// annotated instead of removed.
func Example_parquet() {
	dir, _ := os.MkdirTemp("", "dedup-example")
	defer os.RemoveAll(dir)
	type row struct {
		ID   string `parquet:"id"`
		URL  string `parquet:"url"`
		Text string `parquet:"text"`
	}
	story := strings.Repeat("the quick brown fox jumps over the lazy dog while the cat watches from the fence ", 5)
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	parquet.WriteFile(filepath.Join(dir, "data", "part-0.parquet"), []row{
		{"a", "https://a.example", story},
		{"b", "https://b.example", story + "and then it rains"}, // near-duplicate of a
		{"c", "https://c.example", "An entirely different document about something else."},
	}, parquet.Compression(&parquet.Zstd))

	_, err := dedup.Run(context.Background(), []string{filepath.Join(dir, "data")}, dedup.Options{
		OutputDir: filepath.Join(dir, "out"),
		Annotate:  true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	type annotated struct {
		ID      string   `parquet:"id"`
		URL     string   `parquet:"url"`
		DupOf   *string  `parquet:"dup_of,optional"`
		Jaccard *float64 `parquet:"jaccard,optional"`
		Cluster *string  `parquet:"cluster,optional"`
	}
	rows, _ := parquet.ReadFile[annotated](filepath.Join(dir, "out", "part-0.parquet"))
	for _, r := range rows {
		show := func(s *string) string {
			if s == nil {
				return "null"
			}
			return *s
		}
		j := "null"
		if r.Jaccard != nil {
			j = fmt.Sprintf("%.2f", *r.Jaccard)
		}
		fmt.Println(r.ID, r.URL, show(r.DupOf), j, show(r.Cluster))
	}
	// Output:
	// a https://a.example null null a
	// b https://b.example a 0.80 a
	// c https://c.example null null null
}
