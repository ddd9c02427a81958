package dedup_test

import (
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/keptmem"
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
		{Verify: dedup.VerifyJaccard},
		{Verify: dedup.VerifyJaccard, Method: dedup.MethodSimHash},
		{Verify: dedup.VerifyNone, Method: dedup.MethodSimHash},
	} {
		t.Run(opt.Method+"-"+opt.Verify, func(t *testing.T) {
			rule, ex := dedup.RuleAndExtractor(t, opt)
			kept, err := keptmem.New(rule, 0)
			if err != nil {
				t.Fatal(err)
			}
			online := map[string]string{}
			for _, d := range docs {
				f := ex.Extract(d.Text)
				if exactOnly := rule.ExactOnly(&f); exactOnly != (d.ID[:4] != "word") {
					t.Errorf("%s: ExactOnly = %v", d.ID, exactOnly)
				}
				m, dup, err := kept.AddIfNew(d.ID, f)
				if err != nil {
					t.Fatal(err)
				}
				if dup {
					online[d.ID] = m.ID
				}
			}
			in := filepath.Join(t.TempDir(), "in.jsonl")
			writeDocs(t, in, docs)
			batch, _ := verdicts(t, []string{in}, opt)
			for name, got := range map[string]map[string]string{"online": online, "batch": batch} {
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

// TestMinHashNearNeedsBand: under MethodMinHash two documents are
// candidates when they share an LSH band (or are exact copies), as the batch
// LSH and the online band tables find them; the rule alone (compare, say)
// says the same.
func TestMinHashNearNeedsBand(t *testing.T) {
	rule, err := dedup.NewRule(dedup.Options{Method: dedup.MethodMinHash, Verify: dedup.VerifyNone, Bands: 2, Rows: 2})
	if err != nil {
		t.Fatal(err)
	}
	a := dedup.Features{Exact: 1, Tokens: 10, Bands: []uint64{1, 2}}
	for _, tc := range []struct {
		name string
		b    dedup.Features
		want bool
	}{
		{"no shared band", dedup.Features{Exact: 2, Tokens: 10, Bands: []uint64{3, 4}}, false},
		{"second band shared", dedup.Features{Exact: 2, Tokens: 10, Bands: []uint64{3, 2}}, true},
		{"exact copy", dedup.Features{Exact: 1, Tokens: 10, Bands: []uint64{3, 4}}, true},
		{"no tokens", dedup.Features{Exact: 2, Bands: []uint64{1, 2}}, false},
	} {
		if got := rule.Duplicates(&a, &tc.b); got != tc.want {
			t.Errorf("%s: Duplicates = %v, want %v", tc.name, got, tc.want)
		}
	}
}
