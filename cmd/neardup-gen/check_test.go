package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/webgen"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "web.jsonl")
	if err := os.WriteFile(corpus, gen(t, "-n", "3000", "-seed", "4"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A dedup that removed every planted near-copy and exact copy in favour
	// of its original, and one document that is no copy.
	data, _ := os.ReadFile(corpus)
	var dups strings.Builder
	var near, exact int
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var d webgen.Doc
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		if p := d.Planted; p != nil && p.Jaccard >= 0.8 {
			if p.Kind == webgen.KindExact {
				exact++
			} else {
				near++
			}
			json.NewEncoder(&dups).Encode(map[string]any{"dup_id": d.ID, "kept_id": p.Of, "jaccard": p.Jaccard})
		}
	}
	dups.WriteString(`{"dup_id":"d0000000002","kept_id":"d0000000001","jaccard":0.9}` + "\n")
	dupsPath := filepath.Join(dir, "dups.jsonl")
	if err := os.WriteFile(dupsPath, []byte(dups.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"check", "-corpus", corpus, "-duplicates", dupsPath, "-json"}, &out, &errs); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	var rep webgen.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := webgen.Report{Threshold: 0.8, Docs: 3000, Removed: near + exact + 1,
		Near: near, NearRemoved: near, Recall: 1, Exact: exact, ExactRemoved: exact,
		Controls: rep.Controls, Unplanted: 1, FalseRemovals: 1}
	rep.Examples = nil
	if !reflect.DeepEqual(rep, want) {
		t.Errorf("report\n got %+v\nwant %+v", rep, want)
	}
	if rep.Controls == 0 {
		t.Errorf("no control among 3000 documents")
	}
	out.Reset()
	if err := run(context.Background(), []string{"check", "-corpus", corpus, "-duplicates", dupsPath}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"recall 1.0000", "false removals     1", "d0000000002 removed for d0000000001: reported J 0.9000"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, out.String())
		}
	}
	if err := run(context.Background(), []string{"check", "-corpus", corpus}, &out, &errs); err == nil {
		t.Errorf("check without -duplicates: no error")
	}
	// The corpus made again from its flags gives the same report.
	json1 := func(args ...string) string {
		t.Helper()
		out.Reset()
		if err := run(context.Background(), append([]string{"check", "-duplicates", dupsPath, "-json"}, args...), &out, &errs); err != nil {
			t.Fatalf("%v\n%s", err, errs.String())
		}
		return out.String()
	}
	if got, want := json1("-n", "3000", "-seed", "4"), json1("-corpus", corpus); got != want {
		t.Errorf("check -n 3000 -seed 4:\n%s\ncheck -corpus:\n%s", got, want)
	}
	for _, args := range [][]string{{"-n", "3000", "-corpus", corpus}, {"-seed", "4"}} {
		if err := run(context.Background(), append([]string{"check", "-duplicates", dupsPath}, args...), &out, &errs); err == nil {
			t.Errorf("check %v: no error", args)
		}
	}
}
