package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
)

// dedupCorpus writes a small JSONL corpus: b is a near-duplicate of a, d has
// the same words as c, e is unrelated.
func dedupCorpus(t *testing.T) (dir, in string, lines []string) {
	t.Helper()
	dir = t.TempDir()
	story := strings.Repeat("the quick brown fox jumps over the lazy dog while the cat watches from the fence ", 5)
	lines = []string{
		`{"id":"a","text":"` + story + `","n":1}`,
		`{"id":"b","text":"` + story + `and then it rains","n":5}`,
		`{"id":"c","text":"An entirely different document about something else."}`,
		`{"id":"d","text":"AN ENTIRELY DIFFERENT DOCUMENT, ABOUT SOMETHING ELSE!"}`,
		`{"id":"e","text":"A third text with nothing in common."}`,
	}
	in = filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, in, lines
}

func TestDedupOutputs(t *testing.T) {
	dir, in, lines := dedupCorpus(t)
	out := filepath.Join(dir, "kept.jsonl")
	dups := filepath.Join(dir, "dups.jsonl")
	clusters := filepath.Join(dir, "clusters.jsonl")
	sumFile := filepath.Join(dir, "summary.json")
	code, stdout, stderr := run(t, "", "dedup", "-q", "--output", out, "--duplicates", dups, "--clusters", clusters, "--summary-json", sumFile, in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	if !strings.Contains(stderr, "5 docs read") || !strings.Contains(stderr, "3 kept") || !strings.Contains(stderr, "MB/s") {
		t.Errorf("summary on stderr: %q", stderr)
	}
	kept, _ := os.ReadFile(out)
	if want := lines[0] + "\n" + lines[2] + "\n" + lines[4] + "\n"; string(kept) != want {
		t.Errorf("kept\n%s\nwant\n%s", kept, want)
	}
	d, _ := os.ReadFile(dups)
	var got []dedup.Duplicate
	for _, l := range strings.Split(strings.TrimSpace(string(d)), "\n") {
		var x dedup.Duplicate
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatal(err)
		}
		got = append(got, x)
	}
	if len(got) != 2 || got[0].DupID != "b" || got[0].KeptID != "a" || got[0].Distance == nil || got[0].Jaccard == nil ||
		got[1].DupID != "d" || got[1].KeptID != "c" || !got[1].Exact {
		t.Errorf("duplicates %s", d)
	}
	if c, _ := os.ReadFile(clusters); strings.Count(string(c), "\n") != 2 {
		t.Errorf("clusters %s", c)
	}
	var s dedup.Summary
	if b, _ := os.ReadFile(sumFile); json.Unmarshal(b, &s) != nil || s.Docs != 5 || s.Kept != 3 || s.Settings.Method != "simhash" {
		t.Errorf("summary json %+v", s)
	}
}

func TestDedupStdinJSON(t *testing.T) {
	_, in, lines := dedupCorpus(t)
	data, _ := os.ReadFile(in)
	code, stdout, stderr := run(t, string(data), "dedup", "--json", "--keep-field", "n", "--method", "minhash")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s dedup.Summary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || s.Kept != 3 || s.Settings.KeepField != "n" || s.Settings.Bands == 0 {
		t.Errorf("summary %q: %+v %v", stdout, s, err)
	}
	_ = lines
}

func TestDedupKeepLongestOutputStdin(t *testing.T) {
	dir, in, lines := dedupCorpus(t)
	data, _ := os.ReadFile(in)
	out := filepath.Join(dir, "kept.jsonl")
	code, _, stderr := run(t, string(data), "dedup", "-q", "--keep", "longest", "-o", out, "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	kept, _ := os.ReadFile(out)
	if want := lines[1] + "\n" + lines[3] + "\n" + lines[4] + "\n"; string(kept) != want { // d is longer than c
		t.Errorf("kept\n%s\nwant\n%s", kept, want)
	}
}

func TestDedupUsageErrors(t *testing.T) {
	_, in, _ := dedupCorpus(t)
	for _, args := range [][]string{
		{"dedup", "--no-such-flag", in},
		{"dedup", "--keep", "sideways", in},
		{"dedup", "--method", "bloom", in},
		{"dedup", "--threshold", "2", in},
		{"dedup", "--keep-order", "min", in},
		{"dedup", "--update-index", in},
		{"dedup", "--format", "xml", in},
	} {
		if code, _, stderr := run(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, stderr)
		}
	}
}

func TestDedupBadInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(in, []byte("{\"id\":\"a\",\"text\":\"x\"}\nnot json\n{\"id\":\"a\",\"text\":\"y\"}\n"), 0o644)
	out := filepath.Join(dir, "kept.jsonl")
	code, _, stderr := run(t, "", "dedup", "-o", out, in)
	if code != 1 || !strings.Contains(stderr, "bad.jsonl:2") {
		t.Errorf("malformed line: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output written by a failed run")
	}
	code, _, stderr = run(t, "", "dedup", "--skip-bad", "-o", out, in)
	if code != 1 || !strings.Contains(stderr, "duplicate document id") {
		t.Errorf("duplicate id: exit %d, %q", code, stderr)
	}
	code, _, stderr = run(t, "", "dedup", "--skip-bad", "--allow-duplicate-ids", "-o", out, in)
	if code != 0 || !strings.Contains(stderr, "1 bad inputs skipped") {
		t.Errorf("--skip-bad --allow-duplicate-ids: exit %d, %q", code, stderr)
	}
}

func TestDedupIncremental(t *testing.T) {
	dir, in, _ := dedupCorpus(t)
	idx := filepath.Join(dir, "seen.idx")
	if code, _, stderr := run(t, "", "dedup", "-q", "--index", idx, "--update-index", in); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	again := filepath.Join(dir, "again.jsonl")
	os.WriteFile(again, []byte(`{"id":"z","text":"An entirely different document about something else."}`+"\n"), 0o644)
	code, stdout, stderr := run(t, "", "dedup", "--json", "--index", idx, again)
	var s dedup.Summary
	if code != 0 || json.Unmarshal([]byte(stdout), &s) != nil || s.IndexDuplicates != 1 || s.Kept != 0 {
		t.Errorf("exit %d, %s %s", code, stdout, stderr)
	}
}
