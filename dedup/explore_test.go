package dedup

import (
	"fmt"
	"io"
	"os"
	"sort"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/simhash"
)

// TestExploreK prints, for each corpus and profile, the Hamming distance of
// the ground-truth pairs' fingerprints: the pair recall a SimHash candidate
// stage reaches at each k. Run with NEARDUP_EXPLORE=1.
func TestExploreK(t *testing.T) {
	if os.Getenv("NEARDUP_EXPLORE") == "" {
		t.Skip("set NEARDUP_EXPLORE=1")
	}
	for _, name := range []string{"en_gitdocs_dev", "en_spdx", "zh_laws", "zh_fortunes"} {
		path := corpusPath(t, name)
		tr := computeTruth(t, path, 0.8)
		t.Logf("%s: %d truth pairs, %d docs", name, len(tr.pairs), len(tr.docs))
		for _, prof := range []string{"default", "en-words", "shingles", "ngrams", "zh-ngrams"} {
			p, err := features.Lookup(prof)
			if err != nil {
				t.Log(err)
				continue
			}
			rd, _ := corpus.Open([]string{path}, corpus.Options{})
			var fps []uint64
			sh := shingler{w: 5}
			var toks []int
			for {
				doc, err := rd.Next()
				if err == io.EOF {
					break
				}
				fps = append(fps, uint64(p.Fingerprint(doc.Text).Fingerprint))
				sh.tokens(doc.Text)
				toks = append(toks, len(sh.toks))
			}
			rd.Close()
			var hist [65]int
			var histShort [65]int
			for _, pr := range tr.pairs {
				d := simhash.Distance(fps[pr[0]], fps[pr[1]])
				if toks[pr[0]] < 64 || toks[pr[1]] < 64 {
					histShort[d]++
				} else {
					hist[d]++
				}
			}
			// doc recall at k: a truth doc with some truth partner within k
			line := ""
			for _, k := range []int{3, 6, 8, 10, 12, 14, 16} {
				docs := map[int32]bool{}
				pairs := 0
				for _, pr := range tr.pairs {
					if simhash.Distance(fps[pr[0]], fps[pr[1]]) <= k {
						docs[pr[0]], docs[pr[1]] = true, true
						pairs++
					}
				}
				line += fmt.Sprintf(" k%d:%.3f/%.3f", k, float64(pairs)/float64(len(tr.pairs)), float64(len(docs))/float64(len(tr.docs)))
			}
			// false candidates at k among all docs: a sample of random pairs
			var ds []int
			for i := 0; i+1 < len(fps) && i < 4000; i += 2 {
				ds = append(ds, simhash.Distance(fps[i], fps[len(fps)-1-i]))
			}
			sort.Ints(ds)
			t.Logf("  %-10s pair/doc recall:%s  random-pair d p1=%d p5=%d", prof, line, ds[len(ds)/100], ds[len(ds)/20])
			t.Logf("    long hist %v", hist[:20])
			t.Logf("    short hist %v", histShort[:20])
		}
	}
}
