package webgen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/neardup/neardup/dedup"
)

// TestCheckGenerated: the check that makes the corpus again gives Check's
// report, field for field, examples included, on a dedup's own removals
// and on removals made wrong on purpose (unrelated documents removed for
// one another, controls removed for their originals, an index's removal),
// with one worker and several.
func TestCheckGenerated(t *testing.T) {
	for _, opt := range []Options{{Seed: 5}, {Seed: 5, Sites: 50, ShortShare: 0.5}} {
		t.Run(fmt.Sprintf("sites=%d", opt.Sites), func(t *testing.T) {
			const n = 6000
			g, err := New(testPool(t), opt)
			if err != nil {
				t.Fatal(err)
			}
			corpus := generate(t, opt, n, 0)
			dir := t.TempDir()
			in := filepath.Join(dir, "web.jsonl")
			if err := os.WriteFile(in, corpus, 0o644); err != nil {
				t.Fatal(err)
			}
			dupsFile := filepath.Join(dir, "dups.jsonl")
			if _, err := dedup.Run(context.Background(), []string{in}, dedup.Options{Duplicates: dupsFile}); err != nil {
				t.Fatal(err)
			}
			dups, err := os.ReadFile(dupsFile)
			if err != nil {
				t.Fatal(err)
			}
			// Wrong removals: every 97th document for the one after it, the
			// controls for their originals, one for an index.
			s := NewScratch()
			for i := int64(0); i+1 < n; i += 97 {
				dups = fmt.Appendf(dups, `{"dup_id":%q,"kept_id":%q,"jaccard":0.9}`+"\n", ID(i+1), ID(i))
			}
			for i := int64(0); i < n; i++ {
				if _, p := g.text(i, s); p.kind == control {
					dups = fmt.Appendf(dups, `{"dup_id":%q,"kept_id":%q}`+"\n", ID(i), ID(p.of))
				}
			}
			dups = fmt.Appendf(dups, `{"dup_id":%q,"kept_id":"stored","index":true}`+"\n", ID(n-1))
			for _, examples := range []int{0, 3} {
				copt := CheckOptions{Examples: examples}
				want, err := Check(context.Background(), bytes.NewReader(corpus), bytes.NewReader(dups), copt)
				if err != nil {
					t.Fatal(err)
				}
				if want.FalseRemovals == 0 || want.ControlsRemoved == 0 || want.Unverified != 1 || want.NearRemoved == 0 {
					t.Fatalf("the removals made wrong on purpose did not show: %+v", want)
				}
				for _, workers := range []int{1, 3} {
					got, err := CheckGenerated(context.Background(), g, n, bytes.NewReader(dups), copt, workers)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("examples %d, %d workers:\n got %+v\nwant %+v", examples, workers, got, want)
					}
				}
			}
		})
	}
	g, err := New(testPool(t), Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"dup_id":"x1","kept_id":"d0000000001"}`, `{"dup_id":"d0000009999","kept_id":"d0000000001"}`, `{`} {
		if _, err := CheckGenerated(context.Background(), g, 100, bytes.NewReader([]byte(bad)), CheckOptions{}, 1); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
