package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/rule"
)

// Scoring the dedup pipeline. A pair-level setting says which pairs look
// alike; what a user gets from 'neardup dedup' is a set of removed documents,
// each naming the kept document it duplicates. ScoreDedup measures that
// output against the ground truth at the threshold:
//
//   - Truth: the keep-first rule applied to the exact truth graph. Documents
//     are taken in input order; document j is a true duplicate when an earlier
//     document that the truth kept has identical text or ground-truth Jaccard
//     >= threshold with it; otherwise the truth keeps it. Doc scores compare
//     the removed documents with the true duplicates (precision: removed ones
//     that are true duplicates; recall: true duplicates that were removed).
//   - Coverage: the share of removed documents that have some kept document
//     (of the run's output) with identical text or truth Jaccard >= threshold:
//     their content is still there. 1 when nothing was removed.
//   - Residual: the share of kept documents that still have another kept
//     document with identical text or truth Jaccard >= threshold. 0 when
//     nothing was kept.
//
// The truth is complete at the threshold when its LSH misses pairs there
// with negligible probability (Truth.MissProbability; < 1e-3 at J >= 0.7 for
// the reference bands).

// DedupScores is how well a set of removals matches the ground truth.
type DedupScores struct {
	Doc      Scores  `json:"doc"`
	Removed  int     `json:"removed"`
	Kept     int     `json:"kept"`
	Coverage float64 `json:"coverage"`
	Residual float64 `json:"residual"`
	// Uncovered and Redundant count the documents behind Coverage and
	// Residual.
	Uncovered int `json:"uncovered"`
	Redundant int `json:"redundant"`
}

// ScoreDedup scores removed (by document position) against truth at
// threshold th.
func ScoreDedup(truth *Truth, removed []bool, th float64) DedupScores {
	n := truth.Docs
	adj := map[int][]int{} // canonical text -> near-duplicate canonical texts
	for _, p := range truth.Pairs {
		if p.Jaccard >= th {
			adj[p.A] = append(adj[p.A], p.B)
			adj[p.B] = append(adj[p.B], p.A)
		}
	}
	// near reports whether a kept document (count[c] > minus) has canon c or
	// a neighbour of it.
	near := func(count []int, c, minus int) bool {
		if count[c] > minus {
			return true
		}
		for _, o := range adj[c] {
			if count[o] > 0 {
				return true
			}
		}
		return false
	}
	// The truth's keep-first rule.
	truthKept := make([]int, n)
	trueDup := make([]bool, n)
	for j := range n {
		c := truth.Canon[j]
		if near(truthKept, c, 0) {
			trueDup[j] = true
			continue
		}
		truthKept[c]++
	}
	kept := make([]int, n)
	var s DedupScores
	for j := range n {
		if !removed[j] {
			kept[truth.Canon[j]]++
			s.Kept++
		}
	}
	tp, fp, fn := 0, 0, 0
	for j := range n {
		c := truth.Canon[j]
		switch {
		case removed[j] && trueDup[j]:
			tp++
		case removed[j]:
			fp++
		case trueDup[j]:
			fn++
		}
		if removed[j] {
			s.Removed++
			if !near(kept, c, 0) {
				s.Uncovered++
			}
		} else if near(kept, c, 1) {
			s.Redundant++
		}
	}
	s.Doc = scores(tp, fp, fn)
	s.Coverage, s.Residual = 1, 0
	if s.Removed > 0 {
		s.Coverage = 1 - float64(s.Uncovered)/float64(s.Removed)
	}
	if s.Kept > 0 {
		s.Residual = float64(s.Redundant) / float64(s.Kept)
	}
	return s
}

// DedupResult is the score of one run of the dedup pipeline.
type DedupResult struct {
	Name    string        `json:"name"`
	Summary dedup.Summary `json:"summary"`
	DedupScores
	Seconds float64 `json:"seconds"`
}

// DedupName names a dedup setting by the options that differ from the
// defaults, for example "dedup simhash greedy".
func DedupName(o dedup.Options) string {
	o.EnsureDefaults()
	name := fmt.Sprintf("dedup %s %s", o.Method, o.Cluster)
	if o.Method == rule.MethodSimHash && (o.K != rule.DefaultK || o.KShort != max(rule.DefaultKShort, o.K) || o.Profile != rule.DefaultProfile) {
		name += fmt.Sprintf(" %s k=%d/%d", o.Profile, o.K, o.KShort)
	}
	if o.Keep != dedup.KeepFirst {
		name += " keep " + o.Keep
	}
	return name
}

// EvaluateDedup runs 'neardup dedup' (dedup.Run, the command's own code path)
// with opt over the corpus file path, whose documents and truth docs and
// truth are, and scores its removals at threshold th. Output options in opt
// are replaced.
func EvaluateDedup(ctx context.Context, path string, docs []Doc, truth *Truth, opt dedup.Options, th float64) (DedupResult, error) {
	dir, err := os.MkdirTemp("", "neardup-eval-*")
	if err != nil {
		return DedupResult{}, err
	}
	defer os.RemoveAll(dir)
	dups := filepath.Join(dir, "duplicates.jsonl")
	opt.Output, opt.Clusters, opt.SummaryJSON, opt.Duplicates = "", "", "", dups
	start := time.Now()
	sum, err := dedup.Run(ctx, []string{path}, opt)
	if err != nil {
		return DedupResult{}, err
	}
	sec := time.Since(start).Seconds()
	pos := make(map[string]int, len(docs))
	for i, d := range docs {
		pos[d.ID] = i
	}
	if len(pos) != len(docs) {
		return DedupResult{}, fmt.Errorf("%w: document ids are not unique", ErrSetting)
	}
	if sum.Docs != len(docs) {
		return DedupResult{}, fmt.Errorf("%w: dedup read %d documents, the corpus has %d", ErrSetting, sum.Docs, len(docs))
	}
	removed := make([]bool, len(docs))
	f, err := os.Open(dups)
	if err != nil {
		return DedupResult{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var d dedup.Duplicate
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return DedupResult{}, fmt.Errorf("eval: reading dedup's duplicates: %w", err)
		}
		i, ok := pos[d.DupID]
		if !ok {
			return DedupResult{}, fmt.Errorf("eval: dedup removed %q, which the corpus does not hold", d.DupID)
		}
		removed[i] = true
	}
	if err := sc.Err(); err != nil {
		return DedupResult{}, err
	}
	return DedupResult{Name: DedupName(opt), Summary: sum, DedupScores: ScoreDedup(truth, removed, th), Seconds: sec}, nil
}
