package dedup_test

import (
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/rule"
)

// TestExactOnly: a text without features (punctuation only, or only
// stopwords for en-words) has fingerprint 0 like every other such text; it
// matches exact copies of itself only, in the rule, the batch run and the
// online set alike.
func TestExactOnly(t *testing.T) {
	docs := []eval.Doc{
		{ID: "stop1", Text: "the the the the the the"},
		{ID: "stop2", Text: "the the the the the the the"}, // same shingle set as stop1
		{ID: "stop3", Text: "of the and"},
		{ID: "stop4", Text: "and of the"},
		{ID: "stop1-copy", Text: "The the THE the the the"}, // the same token sequence
		{ID: "punct1", Text: "!!! ..."},
		{ID: "punct2", Text: "??? ,,,"},
		{ID: "punct1-copy", Text: "!!! ..."},
		{ID: "word", Text: "the cat sat on the mat"},
		{ID: "word-copy", Text: "the cat sat on the mat"},
	}
	want := map[string]string{"stop1-copy": "stop1", "punct1-copy": "punct1", "word-copy": "word"}
	// Under minhash "only stopwords" is read off the shingle set, which
	// --verify none does not keep: that setting is checked with simhash, whose
	// fingerprint 0 tells.
	for _, opt := range []dedup.Options{
		{Options: rule.Options{Verify: rule.VerifyJaccard}},
		{Options: rule.Options{Verify: rule.VerifyJaccard, Method: rule.MethodSimHash}},
		{Options: rule.Options{Verify: rule.VerifyNone, Method: rule.MethodSimHash}},
	} {
		t.Run(opt.Method+"-"+opt.Verify, func(t *testing.T) {
			rl, ex := dedup.RuleAndExtractor(t, opt)
			kept := onlineSet(t, rl, "exact only")
			onlineDups := map[string]string{}
			for _, d := range docs {
				f := ex.Extract(d.Text)
				if exactOnly := rl.ExactOnly(&f); exactOnly != (d.ID[:4] != "word") {
					t.Errorf("%s: ExactOnly = %v", d.ID, exactOnly)
				}
				m, dup, err := addIfNew(kept, d.ID, f)
				if err != nil {
					t.Fatal(err)
				}
				if dup {
					onlineDups[d.ID] = m.ID
				}
			}
			in := filepath.Join(t.TempDir(), "in.jsonl")
			writeDocs(t, in, docs)
			batch, _ := verdicts(t, []string{in}, opt)
			sets := map[string]map[string]string{"online": onlineDups, "batch": batch}
			for name, got := range sets {
				if len(got) != len(want) {
					t.Errorf("%s: removed %v, want %v", name, got, want)
					continue
				}
				for id, k := range want {
					if got[id] != k {
						t.Errorf("%s: %s removed for %q, want %q", name, id, got[id], k)
					}
				}
			}
		})
	}
}
