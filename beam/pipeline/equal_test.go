package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/neardup/neardup/beam/pipeline"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/rule"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

// runBoth runs dedup.Run and the pipeline over inputs with the same rule and
// returns each one's output, duplicates and clusters files.
func runBoth(t testing.TB, inputs []string, opt pipeline.Options) (batch, beamOut [3]string) {
	t.Helper()
	batch, beamOut, _ = runBothMetrics(t, inputs, opt)
	return batch, beamOut
}

// runBothMetrics is runBoth, and returns the pipeline's counters too.
func runBothMetrics(t testing.TB, inputs []string, opt pipeline.Options) (batch, beamOut [3]string, counters map[string]int64) {
	t.Helper()
	dir := t.TempDir()
	names := [3]string{"kept.jsonl", "dups.jsonl", "clusters.jsonl"}
	path := func(who string, i int) string { return filepath.Join(dir, who+"-"+names[i]) }

	dopt := opt.DedupOptions()
	dopt.Corpus = corpus.Options{IDField: opt.IDField, TextField: opt.TextField, SkipBad: opt.SkipBad}
	dopt.Output, dopt.Duplicates, dopt.Clusters = path("batch", 0), path("batch", 1), path("batch", 2)
	if _, err := dedup.Run(context.Background(), inputs, dopt); err != nil {
		t.Fatalf("dedup.Run: %v", err)
	}

	opt.Inputs = inputs
	opt.Output, opt.Duplicates, opt.Clusters = path("beam", 0), path("beam", 1), path("beam", 2)
	p, s := beam.NewPipelineWithRoot()
	if _, err := pipeline.Dedup(s, opt); err != nil {
		t.Fatalf("pipeline.Dedup: %v", err)
	}
	res, err := ptest.RunWithMetrics(p)
	if err != nil {
		t.Fatalf("pipeline run: %v", err)
	}
	for i := range names {
		batch[i] = readFile(t, path("batch", i))
		beamOut[i] = readFile(t, path("beam", i))
	}
	counters = map[string]int64{}
	for _, c := range res.Metrics().AllMetrics().Counters() {
		counters[c.Key.Name] += c.Result()
	}
	return batch, beamOut, counters
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// assertSame fails unless the pipeline's three files equal the batch's byte
// for byte: the same kept lines in the same order, the same removals naming
// the same kept documents with the same measures, the same clusters.
func assertSame(t testing.TB, batch, got [3]string) {
	t.Helper()
	what := [3]string{"kept documents", "duplicates", "clusters"}
	for i := range what {
		if batch[i] == got[i] {
			continue
		}
		b, g := strings.Split(batch[i], "\n"), strings.Split(got[i], "\n")
		t.Errorf("%s differ: batch %d lines, pipeline %d lines", what[i], len(b)-1, len(g)-1)
		for j := 0; j < max(len(b), len(g)); j++ {
			var bl, gl string
			if j < len(b) {
				bl = b[j]
			}
			if j < len(g) {
				gl = g[j]
			}
			if bl != gl {
				t.Errorf("first difference at line %d:\n batch:    %.300s\n pipeline: %.300s", j+1, bl, gl)
				break
			}
		}
	}
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const smallCorpus = `{"id":"a","text":"the quick brown fox jumps over the lazy dog near the river bank today"}
{"id":"b","text":"The quick brown fox jumps over the lazy dog near the river bank today!"}
{"id":"c","text":"completely different words about databases and distributed systems here"}
{"id":"d","text":"the quick brown fox jumps over the lazy dog near the river bank today"}
{"id":"e","text":"completely different words about databases and distributed systems here too"}
{"id":"f","text":"..."}
{"id":"g","text":"..."}
{"id":"h","text":""}
{"id":"i","text":"the the the the the the"}
{"id":"j","text":"the the the the the the the"}
{"id":"k","text":"of the and"}
{"id":"l","text":"The the THE the the the"}
`

func TestSmallEqualsBatch(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "small.jsonl", smallCorpus)
	for _, opt := range []pipeline.Options{
		{Method: rule.MethodSimHash},
		{Method: rule.MethodMinHash},
		{Method: rule.MethodMinHash, DirectComponent: 1}, // every star verified
		{Method: rule.MethodMinHash, Waves: 3},           // decided in three waves
		{Method: rule.MethodMinHash, DirectComponent: 1, Waves: 3},
	} {
		t.Run(fmt.Sprintf("%s/direct=%d/waves=%d", opt.Method, opt.DirectComponent, opt.Waves), func(t *testing.T) {
			b, g := runBoth(t, []string{in}, opt)
			assertSame(t, b, g)
			if strings.Count(b[1], "\n") < 3 {
				t.Errorf("batch removed %d documents, want at least 3 (b, d, g): the test checks nothing", strings.Count(b[1], "\n"))
			}
		})
	}
}

// TestEmptyInput: the batch refuses an input that holds no document
// (dedup.ErrNoDocuments) rather than write empty outputs, and so does the
// pipeline: the run fails, saying so, and writes no output file.
func TestEmptyInput(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "empty.jsonl", "")
	if _, err := dedup.Run(context.Background(), []string{in}, dedup.Options{Output: filepath.Join(dir, "batch.jsonl")}); !errors.Is(err, dedup.ErrNoDocuments) {
		t.Errorf("dedup.Run: %v, want ErrNoDocuments", err)
	}
	opt := pipeline.Options{Inputs: []string{in}}
	opt.Output, opt.Duplicates, opt.Clusters = filepath.Join(dir, "kept.jsonl"), filepath.Join(dir, "dups.jsonl"), filepath.Join(dir, "clusters.jsonl")
	p, s := beam.NewPipelineWithRoot()
	if _, err := pipeline.Dedup(s, opt); err != nil {
		t.Fatalf("pipeline.Dedup: %v", err)
	}
	err := ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), "no documents in the inputs") {
		t.Errorf("pipeline run over an empty input: err %v, want one saying there are no documents", err)
	}
	for _, path := range []string{opt.Output, opt.Duplicates, opt.Clusters} {
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s exists after a run without documents", path)
		}
	}
}

// TestSplitEqualsBatch reads JSONL files in byte ranges of a few lines (some
// ranges start inside a line, some hold no line start, one line is longer
// than a range), without ids (so ids are file:line, numbered across
// ranges) and with a bad line skipped: the verdicts, ids and kept lines
// must be the batch's.
func TestSplitEqualsBatch(t *testing.T) {
	dir := t.TempDir()
	var noIDs strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(smallCorpus), "\n") {
		var m map[string]string
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]string{"text": m["text"]})
		noIDs.Write(append(b, '\n'))
	}
	long, _ := json.Marshal(map[string]string{"text": strings.Repeat("a long line of words ", 40)})
	inputs := []string{
		writeFile(t, dir, "ids.jsonl", smallCorpus+"{bad\n"+strings.ReplaceAll(smallCorpus, `"id":"`, `"id":"x`)),
		writeFile(t, dir, "noids.jsonl", noIDs.String()+string(long)+"\n"+string(long)+"\n"+noIDs.String()),
	}
	for _, split := range []int64{13, 100, 1 << 20} {
		for _, direct := range []int{0, 1} { // the default, and every star verified
			waves := 0
			if split == 100 {
				waves = 2 // components of several ranges decided in waves
			}
			t.Run(fmt.Sprintf("split=%d/direct=%d/waves=%d", split, direct, waves), func(t *testing.T) {
				b, g := runBoth(t, inputs, pipeline.Options{SplitBytes: split, SkipBad: true, DirectComponent: direct, Waves: waves})
				assertSame(t, b, g)
				if strings.Count(b[1], "\n") < 10 || !strings.Contains(b[1], "noids.jsonl:") {
					t.Errorf("batch removed %d documents: the test checks little", strings.Count(b[1], "\n"))
				}
			})
		}
	}
}

// TestHugeDocument: one document of about 8 MB and a near copy of it
// among small ones; the huge pair is found and verified as by the batch.
func TestHugeDocument(t *testing.T) {
	var sb strings.Builder
	for i := range 1_000_000 {
		fmt.Fprintf(&sb, "w%d ", i%50000+i/7)
	}
	huge := sb.String()
	edited := strings.Replace(huge, "w10 ", "changed ", 1)
	var in strings.Builder
	for i, text := range []string{"a small text about nothing much at all really", huge, "another small text", edited} {
		line, _ := json.Marshal(map[string]string{"id": fmt.Sprint("d", i), "text": text})
		in.Write(append(line, '\n'))
	}
	p := writeFile(t, t.TempDir(), "huge.jsonl", in.String())
	b, g := runBoth(t, []string{p}, pipeline.Options{})
	assertSame(t, b, g)
	if !strings.Contains(b[1], `"dup_id":"d3"`) {
		t.Errorf("batch did not remove the huge near copy: %s", b[1])
	}
}

// TestBadLine: a malformed line fails the run with its file and line, or
// with --skip-bad is skipped, counted, and the rest decided as by the batch.
func TestBadLine(t *testing.T) {
	in := writeFile(t, t.TempDir(), "bad.jsonl", `{"id":"z","text":"first"}`+"\n{not json\n"+smallCorpus)

	p, s := beam.NewPipelineWithRoot()
	if _, err := pipeline.Dedup(s, pipeline.Options{Inputs: []string{in}, Output: in + ".out"}); err != nil {
		t.Fatal(err)
	}
	err := ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl:2") {
		t.Errorf("malformed line 2: err %v, want one naming bad.jsonl:2", err)
	}
	// Read in byte ranges, the line starts in the third range, whose keys
	// read has no line counts: the error's line is counted from the
	// file's start.
	p, s = beam.NewPipelineWithRoot()
	if _, err := pipeline.Dedup(s, pipeline.Options{Inputs: []string{in}, Output: in + ".out", SplitBytes: 13}); err != nil {
		t.Fatal(err)
	}
	err = ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl:2") {
		t.Errorf("malformed line 2 in the third of 13-byte ranges: err %v, want one naming bad.jsonl:2", err)
	}

	b, g := runBoth(t, []string{in}, pipeline.Options{SkipBad: true})
	assertSame(t, b, g)

	p, s = beam.NewPipelineWithRoot()
	if _, err := pipeline.Dedup(s, pipeline.Options{Inputs: []string{in}, SkipBad: true}); err != nil {
		t.Fatal(err)
	}
	res, err := ptest.RunWithMetrics(p)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, c := range res.Metrics().AllMetrics().Counters() {
		counts[c.Key.Name] += c.Result()
	}
	docs := int64(1 + strings.Count(strings.TrimSpace(smallCorpus), "\n") + 1) // "first" and the small corpus
	if counts["bad_inputs"] != 1 || counts["documents"] != docs {
		t.Errorf("metrics %v, want bad_inputs 1 and documents %d", counts, docs)
	}
	// Every removed document and its keeper are in one small candidate
	// component, decided directly.
	if counts["removed"] < 3 || counts["direct_documents"] <= counts["removed"] || counts["star_documents"] != 0 {
		t.Errorf("metrics %v: want removed >= 3, direct_documents > removed, star_documents 0", counts)
	}
}

// TestDeviceOutput: an output that is a device is written in place, its
// parts kept elsewhere and removed, as dedup.Run writes to /dev/null.
func TestDeviceOutput(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "small.jsonl", smallCorpus)
	b, _ := runBoth(t, []string{in}, pipeline.Options{})
	opt := pipeline.Options{Inputs: []string{in}, Output: os.DevNull, Duplicates: filepath.Join(dir, "dups.jsonl")}
	p, s := beam.NewPipelineWithRoot()
	if _, err := pipeline.Dedup(s, opt); err != nil {
		t.Fatal(err)
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, opt.Duplicates); got != b[1] {
		t.Errorf("duplicates with the output on %s:\n%s\nwant\n%s", os.DevNull, got, b[1])
	}
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("neardup-beam-%d-*", os.Getpid())))
	if len(left) > 0 {
		t.Errorf("parts left behind: %v", left)
	}
}
