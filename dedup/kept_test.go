package dedup_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/keptfiles"
	"github.com/neardup/neardup/rule"
)

// The tests of incremental mode and of the batch against the online kept
// set, which need a concrete kept set: package keptfiles's.

// keptfiles's set and files are the ones 'neardup dedup --index' passes in.
var (
	_ rule.KeptSet    = (*keptfiles.Set)(nil)
	_ dedup.KeptFiles = keptfiles.Files{}
)

// onlineSet returns an empty kept set of incremental runs, which a test
// fills one document at a time (addIfNew), as the online service does.
func onlineSet(tb testing.TB, rl *rule.Rule, settings string) rule.KeptSet {
	tb.Helper()
	k, err := keptfiles.Files{}.New(filepath.Join(tb.TempDir(), "online.idx"), rl, settings)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { keptfiles.Files{}.Close(k) })
	return k
}

// addIfNew matches f against k and adds it when it duplicates nothing.
func addIfNew(k rule.KeptSet, id string, f rule.Features) (rule.KeptMatch, bool, error) {
	m, dup, err := k.Match(&f)
	if err != nil || dup {
		return m, dup, err
	}
	return rule.KeptMatch{}, false, k.Add(id, f)
}

func TestIncremental(t *testing.T) {
	dir := t.TempDir()
	docs := dedup.PlantedCorpus()
	idx := filepath.Join(dir, "seen.idx")
	day1 := filepath.Join(dir, "day1.jsonl")
	dedup.WriteJSONL(t, day1, docs[:20])
	sum, err := dedup.Run(context.Background(), []string{day1}, dedup.Options{KeptFiles: keptfiles.Files{}, Index: idx, UpdateIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Kept != 20 || sum.IndexSize != 20 {
		t.Fatalf("day 1: %+v, want 20 kept, index of 20", sum)
	}
	// Day 2: exact copies of u00, u01 under new ids, a near-copy of u02 with one
	// word changed (within IndexK), and new documents.
	rng := rand.New(rand.NewPCG(9, 9))
	near := strings.Fields(docs[2].Text)
	near[100] = "changed"
	day2docs := []dedup.TestDoc{
		{ID: "copy0", Text: docs[0].Text},
		{ID: "copy1", Text: docs[1].Text},
		{ID: "near2", Text: strings.Join(near, " ")},
		{ID: "new0", Text: strings.Join(dedup.RandomText(rng, 300), " ")},
		{ID: "new1", Text: strings.Join(dedup.RandomText(rng, 300), " ")},
	}
	day2 := filepath.Join(dir, "day2.jsonl")
	dedup.WriteJSONL(t, day2, day2docs)
	dups := filepath.Join(dir, "dups.jsonl")
	sum, err = dedup.Run(context.Background(), []string{day2}, dedup.Options{KeptFiles: keptfiles.Files{}, Index: idx, UpdateIndex: true, Duplicates: dups})
	if err != nil {
		t.Fatal(err)
	}
	got := dedup.ReadDuplicates(t, dups)
	want := map[string]string{"copy0": "u00", "copy1": "u01", "near2": "u02"}
	if len(got) != 3 || sum.IndexDuplicates != 3 || sum.Kept != 2 || sum.IndexSize != 22 {
		t.Fatalf("day 2: %+v, duplicates %+v", sum, got)
	}
	for _, d := range got {
		if !d.Index || want[d.DupID] != d.KeptID {
			t.Errorf("%+v: want a match of %s in the index", d, want[d.DupID])
		}
	}
	// Without UpdateIndex the snapshot is read only.
	before, _ := os.ReadFile(idx)
	if _, err := dedup.Run(context.Background(), []string{day1}, dedup.Options{KeptFiles: keptfiles.Files{}, Index: idx}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(idx); !bytes.Equal(before, after) {
		t.Error("index changed without UpdateIndex")
	}
	// A missing index without UpdateIndex is an error.
	if _, err := dedup.Run(context.Background(), []string{day1}, dedup.Options{KeptFiles: keptfiles.Files{}, Index: filepath.Join(dir, "none.idx")}); err == nil {
		t.Error("missing index without UpdateIndex: no error")
	}
}

// The band buckets give the verdicts of the online kept set (one document at
// a time, AddIfNew) whether the band keys stay in memory or go through the
// spill files, and a bucket of near-copies of one document costs about one
// comparison per copy, not one per pair.
func TestBandBucketsMatchKept(t *testing.T) {
	const hot, other = 1500, 1500
	docs := dedup.BandCorpus(t, hot, other)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	dedup.WriteJSONL(t, in, docs)

	opt := dedup.Options{Options: rule.Options{Method: rule.MethodMinHash}}
	rl, ex := dedup.RuleAndExtractor(t, opt)
	k := onlineSet(t, rl, "band buckets")
	want := map[string]string{} // removed -> kept
	for _, d := range docs {
		m, dup, err := addIfNew(k, d.ID, ex.Extract(d.Text))
		if err != nil {
			t.Fatal(err)
		}
		if dup {
			want[d.ID] = m.ID
		}
	}
	if len(want) < hot*9/10 {
		t.Fatalf("the kept set removed %d documents, want at least %d: the corpus does not test a hot bucket", len(want), hot*9/10)
	}

	for _, spill := range []int64{0, 1, 4096} {
		t.Run(fmt.Sprintf("spill=%d", spill), func(t *testing.T) {
			dups := filepath.Join(dir, fmt.Sprintf("dups%d.jsonl", spill))
			o := dedup.WithBandSpill(opt, spill)
			o.Duplicates, o.TempDir = dups, t.TempDir()
			sum, err := dedup.Run(context.Background(), []string{in}, o)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, d := range dedup.ReadDuplicates(t, dups) {
				got[d.DupID] = d.KeptID
			}
			if len(got) != len(want) {
				t.Errorf("dedup.Run removed %d documents, the kept set %d", len(got), len(want))
			}
			for id, kept := range got {
				if _, ok := want[id]; !ok && testing.Verbose() {
					t.Logf("only dedup.Run removes %s (kept %s)", id, kept)
				}
			}
			for id, kept := range want {
				if got[id] != kept {
					t.Errorf("%s: dedup.Run says %q, the kept set %q", id, got[id], kept)
				}
			}
			// Every hot copy is compared with the few kept documents of its
			// buckets; all pairs of the hot bucket would be over a million.
			if max := int64(4 * len(docs)); sum.Candidates > max {
				t.Errorf("%d candidates for %d documents, want at most %d (linear in the bucket)", sum.Candidates, len(docs), max)
			}
		})
	}
}
