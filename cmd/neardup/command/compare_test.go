package command

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompareText(t *testing.T) {
	code, out, errs := run(t, "", "compare", "--text", "the cat sat on the mat", "the cat sat on the mat")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{"levenshtein 1.0000", "distance    0 of 64 bits", "similarity  100.00%", "verdict     near-duplicate", "cosine      1.0000", "jaccard     1.0000", "minhash     1.0000"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func compareJSON(t *testing.T, stdin string, args ...string) (compareResult, map[string]any) {
	t.Helper()
	code, out, errs := run(t, stdin, append([]string{"compare", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var r compareResult
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(out), &m)
	return r, m
}

func TestCompareJSON(t *testing.T) {
	a := "Near-duplicate detection finds documents that are almost the same. SimHash maps each document to a short fingerprint so that similar documents get similar fingerprints, and the Hamming distance between fingerprints estimates how different they are."
	b := strings.Replace(a, "almost", "nearly", 1)
	r, m := compareJSON(t, "", "--text", "--explain", "--top", "3", "-p", "en-words", a, b)
	for _, k := range []string{"distance", "similarity", "near", "k", "cosine", "jaccard", "minhash", "bits"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks key %q: %v", k, m)
		}
	}
	// The dedup rule's defaults: k 12, Jaccard of word 5-shingles >= 0.8.
	if r.Bits != 64 || r.K != 12 || r.Shingle != 5 || r.Threshold != 0.8 || r.Candidate != (r.Distance <= 12) ||
		r.Near != (r.Candidate && r.Jaccard >= 0.8) || r.Reason == "" {
		t.Errorf("result %+v", r)
	}
	if r.Cosine <= 0.8 || r.Cosine >= 1 || r.Jaccard <= 0.5 || r.Jaccard >= 1 || r.MinHash <= 0.3 || r.MinHash > 1 {
		t.Errorf("measures cos %v jac %v mh %v: want high but below 1 for a one-word edit", r.Cosine, r.Jaccard, r.MinHash)
	}
	if r.Levenshtein == nil || *r.Levenshtein < 0.9 || *r.Levenshtein >= 1 {
		t.Errorf("levenshtein %v, want high but below 1", r.Levenshtein)
	}
	if r.Explain == nil || len(r.Explain.A) != 3 || len(r.Explain.B) != 3 || r.Explain.A[0].Weight < r.Explain.A[2].Weight {
		t.Errorf("explain %+v", r.Explain)
	}
	far, _ := compareJSON(t, "", "--text", "-p", "en-words", a, "Completely unrelated words about cooking pasta with tomatoes, garlic and basil for dinner tonight.")
	if far.Near || far.Distance <= 3 || far.Jaccard != 0 || far.Cosine > 0.2 {
		t.Errorf("unrelated texts: %+v", far)
	}
}

func TestCompareFiles(t *testing.T) {
	dir := writeTemp(t, map[string]string{
		"a.txt":    "北京天安门广场是世界上最大的城市广场之一",
		"b.txt":    "北京天安门广场是世界上最大的城市广场之一",
		"bin.dat":  "\x00\x01binary",
		"empty.md": "",
		"sub/x":    "y",
	})
	j := func(n string) string { return filepath.Join(dir, n) }
	r, _ := compareJSON(t, "", j("a.txt"), j("b.txt"))
	if r.Distance != 0 || !r.Near || r.Cosine < 0.9999 || r.A.Name != j("a.txt") {
		t.Errorf("identical files: %+v", r)
	}
	// stdin as one side.
	r, _ = compareJSON(t, "北京天安门广场是世界上最大的城市广场之一", j("a.txt"), "-")
	if r.Distance != 0 {
		t.Errorf("stdin side: distance %d", r.Distance)
	}
	code, _, errs := run(t, "", "compare", j("a.txt"), j("bin.dat"))
	if code != 1 || !strings.Contains(errs, "binary") {
		t.Errorf("binary: exit %d, stderr %q", code, errs)
	}
	code, out, errs := run(t, "", "compare", j("a.txt"), j("empty.md"))
	if code != 0 || !strings.Contains(errs, "no features: matches exact copies only") || !strings.Contains(out, "not near-duplicate") {
		t.Errorf("empty: exit %d, out %q, stderr %q", code, out, errs)
	}
	code, _, errs = run(t, "", "compare", j("a.txt"), j("missing.txt"))
	if code != 1 || !strings.Contains(errs, "missing.txt") {
		t.Errorf("missing: exit %d, stderr %q", code, errs)
	}
	code, _, _ = run(t, "", "compare", j("a.txt"), j("sub"))
	if code != 2 {
		t.Errorf("directory: exit %d, want 2", code)
	}
}

func TestCompareUsage(t *testing.T) {
	for _, args := range [][]string{
		{"compare", "only-one"},
		{"compare", "--text", "a", "b", "c"},
		{"compare", "--text", "--k", "65", "a", "b"},
		{"compare", "--text", "--threshold", "2", "a", "b"},
		{"compare", "--text", "--verify", "cosine", "a", "b"},
		{"compare", "--text", "--method", "lsh", "a", "b"},
		{"compare", "-", "-"},
		{"compare", "--bogus", "a", "b"},
	} {
		if code, _, errs := run(t, "", args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2", args, code, errs)
		}
	}
}

func TestCompareInvalidUTF8(t *testing.T) {
	code, out, errs := run(t, "", "compare", "--text", "caf\xe9 \xff\xfe au lait", "caf\xe9 au lait")
	if code != 0 || !strings.Contains(out, "distance") {
		t.Fatalf("exit %d, out %q, stderr %q", code, out, errs)
	}
}
