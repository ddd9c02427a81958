package dedup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/internal/textgen"
	"github.com/neardup/neardup/rule"
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
	for _, method := range []string{rule.MethodSimHash, rule.MethodMinHash} {
		t.Run(method, func(t *testing.T) {
			var outs [2][]byte
			var sums [2]Summary
			for i, budget := range []int64{0, 64 << 10} {
				name := func(what string) string { return filepath.Join(dir, fmt.Sprintf("%s-%d-%s.jsonl", method, i, what)) }
				opt := Options{
					Options:      rule.Options{Method: method},
					SketchBudget: budget,
					Duplicates:   name("dups"),
					Clusters:     name("clusters"),
					Output:       name("kept"),
					TempDir:      t.TempDir(),
				}
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
	rl, _ := RuleAndExtractor(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	feat := func(int) rule.Features { return rule.Features{} }
	if _, err := keepFirstBuckets(ctx, rl, 2, feat, nil, &buckets{}, []uint64{rule.PackPair(0, 1)}, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	keeper, err := keepFirstBuckets(context.Background(), rl, 2, feat, nil, &buckets{}, nil, nil, nil)
	if err != nil || len(keeper) != 2 {
		t.Fatalf("got %v, %v", keeper, err)
	}
}

// TestRereadExact: a run whose first pass drops its shingle sets past
// SketchDisk and reads its members' sets again from the input gives the
// files of a run that kept every set (duplicates with their Jaccard values,
// clusters, kept documents, annotations), under keep-first in input order
// and longest first, on a corpus of versions, one of licence texts with
// exact copies, and the Chinese fortunes.
func TestRereadExact(t *testing.T) {
	corpora := []string{"en_spdx", "zh_fortunes", "en_gitdocs_dev"}
	if testing.Short() {
		corpora = corpora[:2]
	}
	for _, name := range corpora {
		in := testcorpora.Path(t, name)
		for _, keep := range []string{KeepFirst, KeepLongest} {
			t.Run(name+"/"+keep, func(t *testing.T) {
				dir := t.TempDir()
				var outs [2][]byte
				var sums [2]Summary
				for i, reread := range []bool{false, true} {
					file := func(what string) string { return filepath.Join(dir, fmt.Sprintf("%d-%s.jsonl", i, what)) }
					opt := Options{Keep: keep, Duplicates: file("dups"), Clusters: file("clusters"), Output: file("kept"),
						TempDir: t.TempDir()}
					if reread {
						opt.SketchBudget, opt.SketchDisk = 64<<10, 1
					}
					sum, err := Run(context.Background(), []string{in}, opt)
					if err != nil {
						t.Fatal(err)
					}
					aopt := opt
					aopt.Duplicates, aopt.Clusters, aopt.Output, aopt.Annotate = "", "", file("annotated"), true
					if _, err := Run(context.Background(), []string{in}, aopt); err != nil {
						t.Fatal(err)
					}
					for _, what := range []string{"dups", "clusters", "kept", "annotated"} {
						b, err := os.ReadFile(file(what))
						if err != nil {
							t.Fatal(err)
						}
						outs[i] = append(append(outs[i], what...), b...)
					}
					sums[i] = sum
				}
				if sums[0].Reread != 0 || sums[1].Reread == 0 {
					t.Fatalf("re-read sets: %d and %d, want none, then some", sums[0].Reread, sums[1].Reread)
				}
				if sums[0].Removed == 0 || sums[0].Removed != sums[1].Removed || sums[0].Verified != sums[1].Verified ||
					sums[0].Candidates != sums[1].Candidates || sums[0].Prefiltered != sums[1].Prefiltered {
					t.Errorf("kept sets: %+v\nread again: %+v", sums[0], sums[1])
				}
				if !bytes.Equal(outs[0], outs[1]) {
					t.Errorf("the files differ when the sets are read again")
				}
				t.Logf("%d documents, %d removed, %d sets read again", sums[1].Docs, sums[1].Removed, sums[1].Reread)
			})
		}
	}
}

// TestRereadInputChanged: an input that changes between the first pass and
// the reading of the members' sets stops the run with ErrInputChanged,
// writing nothing.
func TestRereadInputChanged(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	docs := plantedCorpus()
	writeJSONL(t, in, docs)
	out := filepath.Join(dir, "kept.jsonl")
	opt := Options{Output: out, SketchBudget: 1 << 10, SketchDisk: 1, TempDir: t.TempDir()}
	opt.Progress = func(p Progress) {
		if p.Stage == "read" && p.Done {
			changed := slices.Clone(docs)
			for i := range changed {
				changed[i].Text += " and one more word"
			}
			writeJSONL(t, in, changed)
		}
	}
	sum, err := Run(context.Background(), []string{in}, opt)
	if !errors.Is(err, ErrInputChanged) {
		t.Fatalf("got %+v, %v; want ErrInputChanged", sum, err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output written by a failed run: %v", err)
	}
}
