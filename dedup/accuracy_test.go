package dedup

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestAccuracyCorpora runs the defaults on each shared corpus and compares the
// documents found to be near-duplicates with an independent ground truth
// (computeTruth: MinHash-LSH candidates, exact Jaccard of 5-shingles >= 0.8).
// A document is a predicted positive when its cluster holds a document with a
// different text; a true positive when it is in a ground-truth pair. Run with
// NEARDUP_ACCURACY=1 (it takes minutes); NEARDUP_METHOD=minhash checks the
// MinHash method instead.
func TestAccuracyCorpora(t *testing.T) {
	if os.Getenv("NEARDUP_ACCURACY") == "" {
		t.Skip("set NEARDUP_ACCURACY=1")
	}
	for _, name := range []string{"en_gitdocs_dev", "en_spdx", "en_prose", "zh_laws", "zh_fortunes"} {
		t.Run(name, func(t *testing.T) {
			path := corpusPath(t, name)
			tr := computeTruth(t, path, 0.8)
			ones := 0
			for _, j := range tr.jac {
				if j == 1 {
					ones++
				}
			}
			clusters := filepath.Join(t.TempDir(), "clusters.jsonl")
			opt := Options{Clusters: clusters, Method: os.Getenv("NEARDUP_METHOD")}
			sum, err := Run(context.Background(), []string{path}, opt)
			if err != nil {
				t.Fatal(err)
			}
			m := accuracyOf(t, tr, clusters)
			t.Logf("%s: truth %d pairs (%d at J=1) %d docs | predicted %d docs | P %.4f R %.4f F1 %.4f | %d candidates, %d verified, %d rejected, %d skipped | read %.2fs cand %.2fs total %.2fs %.1f MB/s",
				name, len(tr.pairs), ones, len(tr.docs), m.pred, m.p, m.r, m.f1,
				sum.Candidates, sum.Verified, sum.Rejected, sum.Skipped, sum.ReadSeconds, sum.CandidateSeconds, sum.Seconds, sum.MBPerSecond)
		})
	}
}

type docMetrics struct {
	pred     int
	p, r, f1 float64
}

func accuracyOf(t testing.TB, tr *truthSet, clustersPath string) docMetrics {
	byID := make(map[string]int32, len(tr.ids))
	for i, id := range tr.ids {
		byID[id] = int32(i)
	}
	f, err := os.Open(clustersPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pred := map[int32]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<28)
	for sc.Scan() {
		var c Cluster
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		texts := map[uint64]int{}
		for _, id := range c.IDs {
			texts[tr.text[byID[id]]]++
		}
		if len(texts) < 2 {
			continue // only identical texts: exact duplicates
		}
		for _, id := range c.IDs {
			pred[byID[id]] = true
		}
	}
	tp := 0
	for d := range pred {
		if tr.docs[d] {
			tp++
		}
	}
	m := docMetrics{pred: len(pred), p: 1, r: 1}
	if len(pred) > 0 {
		m.p = float64(tp) / float64(len(pred))
	}
	if len(tr.docs) > 0 {
		m.r = float64(tp) / float64(len(tr.docs))
	}
	if m.p+m.r > 0 {
		m.f1 = 2 * m.p * m.r / (m.p + m.r)
	}
	return m
}
