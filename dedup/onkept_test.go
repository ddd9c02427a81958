package dedup_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/rule"
)

// TestOnKept: the hook sees exactly the kept documents of --output, in
// order, with the features the service would compute for them.
func TestOnKept(t *testing.T) {
	for _, keep := range []string{dedup.KeepFirst, dedup.KeepLongest} {
		t.Run(keep, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "kept.jsonl")
			var ids []string
			var fs []rule.Features
			opt := dedup.Options{Output: out, Keep: keep, OnKept: func(id string, _ int, f rule.Features) error {
				ids = append(ids, id)
				fs = append(fs, f)
				return nil
			}}
			sum, err := dedup.Run(context.Background(), []string{testcorpora.Path(t, "en_spdx")}, opt)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Removed == 0 || len(ids) != sum.Kept {
				t.Fatalf("hook saw %d documents; summary: %d kept, %d removed", len(ids), sum.Kept, sum.Removed)
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var want []string
			texts := map[string]string{}
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<26)
			for sc.Scan() {
				var d struct{ ID, Text string }
				if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
					t.Fatal(err)
				}
				want = append(want, d.ID)
				texts[d.ID] = d.Text
			}
			if keep == dedup.KeepFirst && !slices.Equal(ids, want) {
				t.Fatalf("hook's ids differ from the output's")
			}
			slices.Sort(want)
			got := slices.Sorted(slices.Values(ids))
			if !slices.Equal(got, want) {
				t.Fatalf("hook's ids are not the kept ones")
			}
			_, ex := dedup.RuleAndExtractor(t, dedup.Options{})
			for i, id := range ids[:50] {
				g := ex.Extract(texts[id])
				if g.FP != fs[i].FP || g.Exact != fs[i].Exact || !slices.Equal(g.Bands, fs[i].Bands) || !sameSketch(g.Sketch, fs[i].Sketch) {
					t.Fatalf("%s: the hook's features differ from the service extractor's", id)
				}
			}
		})
	}
}

func sameSketch(a, b rule.Sketch) bool {
	x, _ := a.MarshalBinary()
	y, _ := b.MarshalBinary()
	return slices.Equal(x, y)
}
