package dedup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/internal/textgen"
)

// bandCorpus is a corpus with one hot bucket: a base document and copies
// edited one word in 200 (which share most band keys with it and with each
// other), new Markov text with its own edited copies, and exact copies.
func bandCorpus(tb testing.TB, hot, other int) []testDoc {
	tb.Helper()
	words, err := textgen.ReadWords(testcorpora.Path(tb, "en_prose"))
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m := textgen.NewMarkov(words)
	edit := func(text string, every int) string {
		ws := strings.Fields(text)
		for i := range ws {
			if rng.IntN(every) == 0 {
				ws[i] = words[rng.IntN(len(words))]
			}
		}
		return strings.Join(ws, " ")
	}
	base := m.Doc(rng) + " " + m.Doc(rng)
	var docs []testDoc
	for i := range hot + other {
		var text string
		switch {
		case i == 0:
			text = base
		case i < hot && i%50 == 0:
			text = base // exact copies of the hot document
		case i < hot:
			text = edit(base, 200)
		default:
			text = m.Doc(rng)
		}
		docs = append(docs, testDoc{ID: fmt.Sprintf("d%05d", i), Text: text})
	}
	rng.Shuffle(len(docs)-1, func(i, j int) { docs[i+1], docs[j+1] = docs[j+1], docs[i+1] })
	return docs
}

// The band buckets give the verdicts of the online kept set (one document at
// a time, AddIfNew) whether the band keys stay in memory or go through the
// spill files, and a bucket of near-copies of one document costs about one
// comparison per copy, not one per pair.
func TestBandBucketsMatchKept(t *testing.T) {
	const hot, other = 1500, 1500
	docs := bandCorpus(t, hot, other)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, in, docs)

	opt := Options{Method: MethodMinHash}
	rule, ex := RuleAndExtractor(t, opt)
	k, err := NewKept(rule, len(docs))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // removed -> kept
	for _, d := range docs {
		m, dup, err := k.AddIfNew(d.ID, ex.Extract(d.Text))
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
			o := opt
			o.Duplicates, o.TempDir, o.bandSpill = dups, t.TempDir(), spill
			sum, err := Run(context.Background(), []string{in}, o)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, d := range readDuplicates(t, dups) {
				got[d.DupID] = d.KeptID
			}
			if len(got) != len(want) {
				t.Errorf("Run removed %d documents, the kept set %d", len(got), len(want))
			}
			for id, kept := range got {
				if _, ok := want[id]; !ok && testing.Verbose() {
					t.Logf("only Run removes %s (kept %s)", id, kept)
				}
			}
			for id, kept := range want {
				if got[id] != kept {
					t.Errorf("%s: Run says %q, the kept set %q", id, got[id], kept)
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

// A budget far below the corpus's sets changes nothing: the sets past it go
// to the temporary file and verification reads them back exactly, so the
// duplicates and their Jaccard values are those of a run that held every set
// in memory (before, the sets were sampled and the verdicts moved).
func TestRunSketchBudgetExact(t *testing.T) {
	in := testcorpora.Path(t, "en_spdx")
	dir := t.TempDir()
	for _, method := range []string{MethodSimHash, MethodMinHash} {
		t.Run(method, func(t *testing.T) {
			var outs [2][]byte
			var sums [2]Summary
			for i, budget := range []int64{0, 64 << 10} {
				dups := filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", method, i))
				sum, err := Run(context.Background(), []string{in}, Options{Method: method, SketchBudget: budget, Duplicates: dups, TempDir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(dups)
				if err != nil {
					t.Fatal(err)
				}
				outs[i], sums[i] = b, sum
			}
			if sums[1].SketchDiskBytes == 0 || sums[0].SketchDiskBytes != 0 {
				t.Errorf("sets on disk: %d bytes with the default budget, %d with 64 KiB; want 0 and more", sums[0].SketchDiskBytes, sums[1].SketchDiskBytes)
			}
			if sums[0].Removed == 0 || sums[0].Removed != sums[1].Removed || sums[0].Verified != sums[1].Verified {
				t.Errorf("removed %d/%d, verified %d/%d with the default budget and 64 KiB", sums[0].Removed, sums[1].Removed, sums[0].Verified, sums[1].Verified)
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Errorf("the duplicates differ between the default budget and 64 KiB")
			}
		})
	}
}

// TestKeepFirstBucketsCancel: the keep-first pass over buckets stops when
// its context is done (a large corpus spends minutes there).
func TestKeepFirstBucketsCancel(t *testing.T) {
	rule, _ := RuleAndExtractor(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	feat := func(int) Features { return Features{} }
	if _, err := rule.keepFirstBuckets(ctx, 2, feat, &buckets{}, []uint64{PackPair(0, 1)}, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	keeper, err := rule.keepFirstBuckets(context.Background(), 2, feat, &buckets{}, nil, nil, nil)
	if err != nil || len(keeper) != 2 {
		t.Fatalf("got %v, %v", keeper, err)
	}
}
