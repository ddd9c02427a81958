package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// words returns n words from a small vocabulary, deterministically.
func words(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('a'+r.IntN(26))) + string(rune('a'+r.IntN(26))) + string(rune('a'+r.IntN(26)))
	}
	return out
}

// synthetic is a small corpus with known pairs: 0 and 1 differ in one word of
// 300 (J ≈ 0.97), 0 and 2 in every tenth word (J well below 0.8), 3 is an exact
// copy of 0, 4 is unrelated, 5 has no tokens.
func synthetic() []Doc {
	base := words(1, 300)
	one := append([]string(nil), base...)
	one[150] = "changed"
	tenth := append([]string(nil), base...)
	for i := 0; i < len(tenth); i += 10 {
		tenth[i] = "edit"
	}
	join := func(w []string) string { return strings.Join(w, " ") }
	return []Doc{
		{ID: "base", Text: join(base)},
		{ID: "one-word", Text: join(one)},
		{ID: "every-tenth", Text: join(tenth)},
		{ID: "copy", Text: join(base)},
		{ID: "other", Text: join(words(2, 300))},
		{ID: "empty", Text: "!!! ???"},
	}
}

func TestSyntheticTruth(t *testing.T) {
	docs := synthetic()
	truth, err := ComputeTruth(context.Background(), docs, TruthOptions{MinJaccard: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if truth.ExactPairs != 1 || truth.Distinct != 5 {
		t.Errorf("exact pairs %d, distinct %d; want 1 and 5", truth.ExactPairs, truth.Distinct)
	}
	if got := truth.Count(0.8); got != 1 {
		t.Errorf("Count(0.8) = %d, want 1 (base, one-word); pairs %+v", got, truth.Pairs)
	}
	if j, ok := truth.Known(1, 0); !ok || j < 0.95 {
		t.Errorf("Known(1, 0) = %v, %v; want J >= 0.95", j, ok)
	}
	if got := truth.DocsIn(0.8); got != 2 {
		t.Errorf("DocsIn(0.8) = %d, want 2", got)
	}
	if got := truth.Jaccard(5, 5); got != 0 {
		t.Errorf("a text without tokens: Jaccard %v, want 0", got)
	}
	if p := truth.MissProbability(0.7); p > 2e-4 {
		t.Errorf("MissProbability(0.7) = %g, want < 2e-4", p)
	}
}

func TestEvaluateSynthetic(t *testing.T) {
	docs := synthetic()
	ctx := context.Background()
	truth, err := ComputeTruth(ctx, docs, TruthOptions{})
	if err != nil {
		t.Fatal(err)
	}
	settings := []Setting{
		{Method: MethodNaive},
		{Profile: "en-words", Verify: true},
		{Method: MethodMinHash, Profile: "shingles", Verify: true},
		{Profile: "en-words", Verify: true, VerifyProfile: "shingles"},
	}
	results, err := Evaluate(ctx, docs, truth, settings, Options{Ks: []int{0, 3, 12}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(results), 3+3+1+3; got != want {
		t.Fatalf("%d results, want %d", got, want)
	}
	for _, r := range results {
		if r.Pair.TP+r.Pair.FN != 1 || r.Doc.TP+r.Doc.FN != 2 {
			t.Errorf("%s k=%d: pair TP+FN %d, doc TP+FN %d; want 1 and 2", r.Name, r.K, r.Pair.TP+r.Pair.FN, r.Doc.TP+r.Doc.FN)
		}
		if r.Setting.Verify && r.Pair.FP != 0 {
			t.Errorf("%s k=%d: %d false positives after verification", r.Name, r.K, r.Pair.FP)
		}
	}
	// A one-word edit of 300 words is within 12 bits for every setting, and
	// verification keeps it.
	for _, r := range results {
		if (r.K == 12 || r.K < 0) && r.Pair.Recall != 1 {
			t.Errorf("%s k=%d: recall %v, want 1", r.Name, r.K, r.Pair.Recall)
		}
	}
	// The report round-trips through JSON and renders.
	rep := &Report{Corpus: "synthetic", Docs: truth.Docs, Distinct: truth.Distinct, Threshold: 0.8, Truth: truth.Summarize(0.8), Results: results}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	var back []*Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back) != 1 || len(back[0].Results) != len(results) {
		t.Fatalf("JSON round trip: %v, %d reports", err, len(back))
	}
	buf.Reset()
	if err := rep.WriteTable(&buf); err != nil || !strings.Contains(buf.String(), "naive") {
		t.Errorf("WriteTable: %v\n%s", err, buf.String())
	}
	for _, format := range PlotFormats {
		buf.Reset()
		if err := WritePlot(&buf, []*Report{rep}, format); err != nil || buf.Len() == 0 {
			t.Errorf("WritePlot(%s): %v, %d bytes", format, err, buf.Len())
		}
	}
	buf.Reset()
	if err := WriteHTML(&buf, []*Report{rep}); err != nil || !strings.Contains(buf.String(), "<svg") {
		t.Errorf("WriteHTML: %v", err)
	}
	if got, want := results[len(results)-1].Name, "simhash en-words/64 +verify(shingles)"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	if best := rep.Best(); len(best) != len(settings) {
		t.Errorf("Best: %d results, want %d", len(best), len(settings))
	}
}

func TestEvaluateErrors(t *testing.T) {
	ctx := context.Background()
	docs := synthetic()
	truth, err := ComputeTruth(ctx, docs, TruthOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		docs     []Doc
		settings []Setting
		opt      Options
		want     error
	}{
		{"no docs", nil, nil, Options{}, ErrNoDocs},
		{"other corpus", docs[:2], nil, Options{}, ErrSetting},
		{"bad threshold", docs, nil, Options{Threshold: 1.5}, ErrSetting},
		{"bad k", docs, nil, Options{Ks: []int{-2}}, ErrSetting},
		{"bad method", docs, []Setting{{Method: "lsh"}}, Options{}, ErrSetting},
		{"too many rows", docs, []Setting{{Method: MethodMinHash, Bands: 64, Rows: 4}}, Options{}, ErrSetting},
	}
	for _, tt := range tests {
		if _, err := Evaluate(ctx, tt.docs, truth, tt.settings, tt.opt); !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestScores(t *testing.T) {
	tests := []struct {
		tp, fp, fn int
		want       Scores
	}{
		{0, 0, 0, Scores{Precision: 1, Recall: 1, F1: 1}},
		{1, 1, 0, Scores{TP: 1, FP: 1, Precision: 0.5, Recall: 1, F1: 2.0 / 3}},
		{0, 0, 4, Scores{FN: 4, Precision: 1, Recall: 0, F1: 0}},
		{3, 1, 1, Scores{TP: 3, FP: 1, FN: 1, Precision: 0.75, Recall: 0.75, F1: 0.75}},
	}
	for _, tt := range tests {
		if got := scores(tt.tp, tt.fp, tt.fn); got != tt.want {
			t.Errorf("scores(%d, %d, %d) = %+v, want %+v", tt.tp, tt.fp, tt.fn, got, tt.want)
		}
	}
}

func TestReadJSONL(t *testing.T) {
	docs, err := ReadJSONL(strings.NewReader("{\"id\":\"a\",\"text\":\"x\",\"group\":\"g\"}\n\n{\"id\":7,\"text\":\"y\"}\n{\"text\":\"z\"}"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Doc{{"a", "x", "g"}, {"7", "y", ""}, {"4", "z", ""}}
	if len(docs) != len(want) {
		t.Fatalf("got %d docs, want %d", len(docs), len(want))
	}
	for i := range want {
		if docs[i] != want[i] {
			t.Errorf("doc %d = %+v, want %+v", i, docs[i], want[i])
		}
	}
	for _, bad := range []string{"{\"id\":1}", "not json", "[1,2]", "{\"text\": 5}"} {
		if _, err := ReadJSONL(strings.NewReader(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ReadJSONL(%q) = %v, want ErrMalformed", bad, err)
		}
	}
}
