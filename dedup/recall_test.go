package dedup_test

import (
	"fmt"
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
)

// TestDefaultKRecall checks the reasoning behind the default candidate
// distances: with the default profile, K (KShort when a document is short)
// puts at least 99% of the documents that have a ground-truth partner (exact
// Jaccard of 5-shingles >= 0.8, package eval) within reach of one, on every
// corpus. Verification can only remove candidates, so this bounds the recall of
// the whole pipeline. With -v it also logs the pair and document recall of
// several profiles at other k, the study the defaults were chosen from.
func TestDefaultKRecall(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the run without it asserts the recall")
	}
	for _, name := range []string{"en_gitdocs_dev", "en_spdx", "zh_laws", "zh_fortunes"} {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && (name == "en_gitdocs_dev" || name == "zh_laws") {
				t.Skip("-short: the large corpora")
			}
			docs, tr := truthOf(t, testcorpora.Path(t, name)) // shared with the accuracy test
			var pairs []eval.Pair
			truthDocs := map[int]bool{}
			for _, p := range tr.Pairs {
				if p.Jaccard >= 0.8 {
					pairs = append(pairs, p)
					truthDocs[p.A], truthDocs[p.B] = true, true
				}
			}

			// The token counts of the verification tokenizer.
			ex, err := rule.NewRuleExtractor(rule.Options{Verify: rule.VerifyNone})
			if err != nil {
				t.Fatal(err)
			}
			short := make([]bool, len(docs))
			for i, d := range docs {
				short[i] = ex.Extract(d.Text).Tokens < rule.DefaultShortTokens
			}
			profiles := []string{rule.DefaultProfile}
			if testing.Verbose() {
				profiles = append(profiles, "default", "shingles", "ngrams", "zh-ngrams")
			}
			for _, prof := range profiles {
				p, err := features.Lookup(prof)
				if err != nil {
					t.Fatal(err)
				}
				fps := make([]simhash.Fingerprint, len(docs))
				for i, d := range docs {
					fps[i] = p.Fingerprint(d.Text).Fingerprint
				}
				// recall returns the pair and document recall when a pair is a
				// candidate at distance k (kShort when either document is short).
				recall := func(k, kShort int) (float64, float64) {
					found, reached := 0, map[int]bool{}
					for _, pr := range pairs {
						lim := k
						if short[pr.A] || short[pr.B] {
							lim = kShort
						}
						if fps[pr.A].Distance(fps[pr.B]) <= lim {
							found++
							reached[pr.A], reached[pr.B] = true, true
						}
					}
					return float64(found) / float64(len(pairs)), float64(len(reached)) / float64(len(truthDocs))
				}
				line := ""
				for _, k := range []int{3, 6, 8, 10, 12, 14} {
					pr, dr := recall(k, k)
					line += fmt.Sprintf(" k%d %.3f/%.3f", k, pr, dr)
				}
				t.Logf("%s %-9s pair/doc recall:%s", name, prof, line)
				if prof == rule.DefaultProfile {
					_, dr := recall(rule.DefaultK, rule.DefaultKShort)
					if dr < 0.99 {
						t.Errorf("%s: document recall %.4f at k=%d (short: %d), want >= 0.99", prof, dr, rule.DefaultK, rule.DefaultKShort)
					}
				}
			}
		})
	}
}
