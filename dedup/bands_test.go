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

// A budget far below the corpus's sets changes nothing: the sets past it go
// to the temporary file and verification reads them back exactly, so the
// duplicates and their Jaccard values are those of a run that held every set
// in memory (before, the sets were sampled and the verdicts moved). The same
// holds for the ids (a 1 KiB budget: the reports and the output pass read
// them back from their file).
func TestRunSketchBudgetExact(t *testing.T) {
	in := testcorpora.Path(t, "en_spdx")
	dir := t.TempDir()
	for _, method := range []string{MethodSimHash, MethodMinHash} {
		t.Run(method, func(t *testing.T) {
			var outs [2][]byte
			var sums [2]Summary
			for i, budget := range []int64{0, 64 << 10} {
				name := func(what string) string { return filepath.Join(dir, fmt.Sprintf("%s-%d-%s.jsonl", method, i, what)) }
				opt := Options{Method: method, SketchBudget: budget, Duplicates: name("dups"), Clusters: name("clusters"),
					Output: name("kept"), TempDir: t.TempDir()}
				if budget > 0 {
					opt.idSpill = 1 << 10
				}
				sum, err := Run(context.Background(), []string{in}, opt)
				if err != nil {
					t.Fatal(err)
				}
				for _, what := range []string{"dups", "clusters", "kept"} {
					b, err := os.ReadFile(name(what))
					if err != nil {
						t.Fatal(err)
					}
					outs[i] = append(append(outs[i], what...), b...)
				}
				sums[i] = sum
			}
			if sums[1].SketchDiskBytes == 0 || sums[0].SketchDiskBytes != 0 {
				t.Errorf("sets on disk: %d bytes with the default budget, %d with 64 KiB; want 0 and more", sums[0].SketchDiskBytes, sums[1].SketchDiskBytes)
			}
			if sums[0].Removed == 0 || sums[0].Removed != sums[1].Removed || sums[0].Verified != sums[1].Verified {
				t.Errorf("removed %d/%d, verified %d/%d with the default budget and 64 KiB", sums[0].Removed, sums[1].Removed, sums[0].Verified, sums[1].Verified)
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Errorf("the duplicates, clusters or kept documents differ between the default budgets and small ones")
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
	if _, err := rule.keepFirstBuckets(ctx, 2, feat, nil, &buckets{}, []uint64{PackPair(0, 1)}, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	keeper, err := rule.keepFirstBuckets(context.Background(), 2, feat, nil, &buckets{}, nil, nil, nil)
	if err != nil || len(keeper) != 2 {
		t.Fatalf("got %v, %v", keeper, err)
	}
}
