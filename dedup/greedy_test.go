package dedup_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/keptfiles"
	"github.com/neardup/neardup/rule"
)

// chainCorpus is version histories: each of n lineages starts from random
// text and every version edits the previous one a little, so consecutive
// versions are near-duplicates and distant ones are not (the case where
// connected components lose content). Exact copies in other case, short
// texts and empty ones are mixed in.
func chainCorpus(seed uint64, n int) []eval.Doc {
	rng := rand.New(rand.NewPCG(seed, 7))
	word := func() string { return fmt.Sprintf("w%d", rng.IntN(5000)) }
	var docs []eval.Doc
	for l := range n {
		size := 30 + rng.IntN(400)
		if l%5 == 0 {
			size = 8 + rng.IntN(40) // short lineages
		}
		text := make([]string, size)
		for i := range text {
			text[i] = word()
		}
		for v := range 3 + rng.IntN(8) {
			docs = append(docs, eval.Doc{ID: fmt.Sprintf("l%d-v%d", l, v), Text: strings.Join(text, " ")})
			if rng.IntN(6) == 0 {
				docs = append(docs, eval.Doc{ID: fmt.Sprintf("l%d-v%d-copy", l, v), Text: strings.ToUpper(strings.Join(text, ", "))})
			}
			// Next version: replace, insert or delete a few words.
			for range 1 + rng.IntN(max(2, len(text)/25)) {
				i := rng.IntN(len(text))
				switch rng.IntN(3) {
				case 0:
					text[i] = word()
				case 1:
					text = slices.Insert(text, i, word())
				default:
					if len(text) > 5 {
						text = slices.Delete(text, i, i+1)
					}
				}
			}
		}
	}
	docs = append(docs, eval.Doc{ID: "empty1", Text: "!!!"}, eval.Doc{ID: "empty2", Text: "!!!"}, eval.Doc{ID: "empty3", Text: "?"})
	rng.Shuffle(len(docs), func(i, j int) {
		// Shuffle lineages' versions into each other, keeping some locality.
		if j > i-20 {
			docs[i], docs[j] = docs[j], docs[i]
		}
	})
	return docs
}

func writeDocs(tb testing.TB, path string, docs []eval.Doc) {
	tb.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, d := range docs {
		if err := enc.Encode(map[string]string{"id": d.ID, "text": d.Text}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// verdicts runs dedup and returns, for each removed document, the document
// it names.
func verdicts(tb testing.TB, inputs []string, opt dedup.Options) (map[string]string, []dedup.Duplicate) {
	tb.Helper()
	opt.Duplicates = filepath.Join(tb.TempDir(), "dups.jsonl")
	if _, err := dedup.Run(context.Background(), inputs, opt); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(opt.Duplicates)
	if err != nil {
		tb.Fatal(err)
	}
	got := map[string]string{}
	var dups []dedup.Duplicate
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var d dedup.Duplicate
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			tb.Fatal(err)
		}
		got[d.DupID] = d.KeptID
		dups = append(dups, d)
	}
	return got, dups
}

// reference is the keep-first rule by brute force, one document at a time
// against every document kept before it in priority order, through the
// exported Rule and Extractor: what the online service does.
func reference(tb testing.TB, docs []eval.Doc, opt dedup.Options) map[string]string {
	tb.Helper()
	rl, ex := dedup.RuleAndExtractor(tb, opt)
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	if opt.Keep == dedup.KeepLongest {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(docs[b].Text), len(docs[a].Text)) })
	}
	var kept []*rule.Features
	var keptID []string
	want := map[string]string{}
	for _, i := range order {
		f := ex.Extract(docs[i].Text)
		if m := rl.Match(&f, kept); m >= 0 {
			want[docs[i].ID] = keptID[m]
			continue
		}
		kept = append(kept, &f)
		keptID = append(keptID, docs[i].ID)
	}
	return want
}

func diffVerdicts(t *testing.T, label string, got, want map[string]string) {
	t.Helper()
	n := 0
	for id, k := range want {
		if got[id] != k {
			if n++; n <= 5 {
				t.Errorf("%s: %s removed in favour of %q, want %q", label, id, got[id], k)
			}
		}
	}
	for id, k := range got {
		if _, ok := want[id]; !ok {
			if n++; n <= 5 {
				t.Errorf("%s: %s removed in favour of %q, want kept", label, id, k)
			}
		}
	}
	if n > 0 {
		t.Errorf("%s: %d verdicts differ (%d removed, want %d)", label, n, len(got), len(want))
	}
}

// TestKeepFirstMatchesReference: the batch run (self-join, twins, lazy
// verification in priority order) gives the verdicts of the document-at-a-
// time reference, on version histories and on real corpora, for keep first
// and keep longest; and every removal names a document it was verified
// against, at or above the threshold.
func TestKeepFirstMatchesReference(t *testing.T) {
	type corpus struct {
		name string
		docs []eval.Doc
	}
	corpora := []corpus{{"chains", chainCorpus(1, 120)}, {"chains2", chainCorpus(2, 60)}}
	for _, name := range []string{"en_spdx", "zh_fortunes"} {
		if raceEnabled {
			break // the real corpora only without the race detector
		}
		docs, err := eval.ReadFile(testcorpora.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		corpora = append(corpora, corpus{name, docs})
	}
	for _, c := range corpora {
		path := filepath.Join(t.TempDir(), c.name+".jsonl")
		writeDocs(t, path, c.docs)
		for _, opt := range []dedup.Options{{}, {Keep: dedup.KeepLongest}, {Options: rule.Options{K: 6, KShort: 9}}} {
			label := fmt.Sprintf("%s keep=%s k=%d/%d", c.name, cmp.Or(opt.Keep, "first"), opt.K, opt.KShort)
			got, dups := verdicts(t, []string{path}, opt)
			want := reference(t, c.docs, opt)
			if len(want) == 0 {
				t.Fatalf("%s: the reference removes nothing; the test proves nothing", label)
			}
			diffVerdicts(t, label, got, want)
			for _, d := range dups {
				if _, removed := got[d.KeptID]; removed || d.Jaccard == nil || *d.Jaccard < rule.DefaultThreshold {
					t.Errorf("%s: %+v names a removed document or one below the threshold", label, d)
				}
			}
		}
	}
}

// TestComponentsRemovesChains: on version histories, --cluster components
// removes documents with no kept near-duplicate, which keep-first never does
// (the README's example).
func TestComponentsRemovesChains(t *testing.T) {
	docs := chainCorpus(3, 80)
	path := filepath.Join(t.TempDir(), "chains.jsonl")
	writeDocs(t, path, docs)
	greedy, gd := verdicts(t, []string{path}, dedup.Options{})
	comp, cd := verdicts(t, []string{path}, dedup.Options{Cluster: dedup.ClusterComponents})
	if len(comp) <= len(greedy) {
		t.Errorf("components removed %d, keep-first %d: want more", len(comp), len(greedy))
	}
	below := func(ds []dedup.Duplicate) int {
		n := 0
		for _, d := range ds {
			if *d.Jaccard < rule.DefaultThreshold {
				n++
			}
		}
		return n
	}
	if below(gd) != 0 || below(cd) == 0 {
		t.Errorf("removals below the threshold: keep-first %d (want 0), components %d (want some)", below(gd), below(cd))
	}
}

// TestIncrementalEqualsOneRun: a corpus split in two runs, the second
// against the index the first saved, gets the verdicts of one run over the
// concatenation (both halves as inputs, in order).
func TestIncrementalEqualsOneRun(t *testing.T) {
	type corpus struct {
		name string
		docs []eval.Doc
	}
	// Versions of a lineage on both sides of the cut.
	chains := chainCorpus(4, 100)
	rand.New(rand.NewPCG(4, 4)).Shuffle(len(chains), func(i, j int) { chains[i], chains[j] = chains[j], chains[i] })
	corpora := []corpus{{"chains", chains}}
	for _, name := range []string{"en_spdx", "zh_fortunes"} {
		if raceEnabled && name == "zh_fortunes" {
			break // the race pass needs one real corpus for the concurrent paths
		}
		docs, err := eval.ReadFile(testcorpora.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		corpora = append(corpora, corpus{name, docs})
	}
	for _, c := range corpora {
		for _, method := range []string{rule.MethodSimHash, rule.MethodMinHash} {
			dir := t.TempDir()
			for _, cut := range []int{len(c.docs) / 3, len(c.docs) / 2} {
				a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
				writeDocs(t, a, c.docs[:cut])
				writeDocs(t, b, c.docs[cut:])
				one, _ := verdicts(t, []string{a, b}, dedup.Options{Options: rule.Options{Method: method}})
				idx := filepath.Join(dir, fmt.Sprintf("seen-%d.ndx", cut))
				first, _ := verdicts(t, []string{a}, dedup.Options{Options: rule.Options{Method: method}, KeptFiles: keptfiles.Files{}, Index: idx, UpdateIndex: true})
				second, sd := verdicts(t, []string{b}, dedup.Options{Options: rule.Options{Method: method}, KeptFiles: keptfiles.Files{}, Index: idx, UpdateIndex: true})
				fromIndex := 0
				for _, d := range sd {
					if d.Index {
						fromIndex++
					}
				}
				if fromIndex == 0 && c.name != "zh_fortunes" {
					t.Errorf("%s %s cut %d: no removal against the index; the test proves little", method, c.name, cut)
				}
				split := map[string]string{}
				for k, v := range first {
					split[k] = v
				}
				for k, v := range second {
					split[k] = v
				}
				diffVerdicts(t, fmt.Sprintf("%s %s cut at %d (%d from the index)", method, c.name, cut, fromIndex), split, one)
			}
		}
	}
}
