package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/outfile/outfiletest"
	"github.com/neardup/neardup/keptfiles"
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
	// The default method (minhash) reports no fingerprint distance.
	if len(got) != 2 || got[0].DupID != "b" || got[0].KeptID != "a" || got[0].Distance != nil || got[0].Jaccard == nil ||
		got[1].DupID != "d" || got[1].KeptID != "c" || !got[1].Exact {
		t.Errorf("duplicates %s", d)
	}
	if c, _ := os.ReadFile(clusters); strings.Count(string(c), "\n") != 2 {
		t.Errorf("clusters %s", c)
	}
	var s dedup.Summary
	if b, _ := os.ReadFile(sumFile); json.Unmarshal(b, &s) != nil || s.Docs != 5 || s.Kept != 3 || s.Settings.Method != "minhash" {
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

// TestDedupOutputsNotRegular sends every dedup output to a device node and to
// FIFOs: the nodes stay what they were and each FIFO's reader gets what a
// regular file gets.
func TestDedupOutputsNotRegular(t *testing.T) {
	dir, in, _ := dedupCorpus(t)
	flags := []string{"--output", "--duplicates", "--clusters", "--summary-json"}
	args := func(paths []string) []string {
		a := []string{"dedup", "-q"}
		for i, p := range paths {
			a = append(a, flags[i], p)
		}
		return append(a, in)
	}
	var files []string
	for _, name := range []string{"kept.jsonl", "dups.jsonl", "clusters.jsonl", "summary.json"} {
		files = append(files, filepath.Join(dir, name))
	}
	if code, _, stderr := run(t, "", args(files)...); code != 0 {
		t.Fatalf("regular files: exit %d: %s", code, stderr)
	}

	t.Run("device", func(t *testing.T) {
		null := outfiletest.CharDevice(t, "null")
		if code, _, stderr := run(t, "", args([]string{null, null, null, null})...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		outfiletest.CheckCharDevice(t, null)
	})
	t.Run("fifo", func(t *testing.T) {
		var fifos []string
		var got []<-chan string
		for range flags {
			p := outfiletest.FIFO(t, "fifo")
			fifos = append(fifos, p)
			got = append(got, outfiletest.ReadFIFO(t, p))
		}
		if code, _, stderr := run(t, "", args(fifos)...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for i, p := range fifos {
			outfiletest.CheckFIFO(t, p)
			data := <-got[i]
			want, _ := os.ReadFile(files[i])
			if flags[i] == "--summary-json" {
				// Timings differ between runs; the counts do not.
				var s, w dedup.Summary
				json.Unmarshal(want, &w)
				if err := json.Unmarshal([]byte(data), &s); err != nil || s.Docs != w.Docs || s.Kept != w.Kept || s.Clusters != w.Clusters {
					t.Errorf("%s: reader got %q (%v), want the summary %s", flags[i], data, err, want)
				}
				continue
			}
			if data != string(want) {
				t.Errorf("%s: reader got\n%s\nwant (as in a regular file)\n%s", flags[i], data, want)
			}
		}
	})
}

func TestDedupOutputStdout(t *testing.T) {
	dir, in, _ := dedupCorpus(t)
	kept := filepath.Join(dir, "kept.jsonl")
	if code, _, stderr := run(t, "", "dedup", "-q", "-o", kept, in); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, _ := os.ReadFile(kept)
	code, stdout, stderr := run(t, "", "dedup", "-q", "-o", "-", in)
	if code != 0 || stdout != string(want) {
		t.Errorf("-o -: exit %d, stdout\n%s\nwant\n%s\n(stderr %s)", code, stdout, want, stderr)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`-o - created a file named "-"`)
	}
	for _, args := range [][]string{
		{"dedup", "-o", "-", "--duplicates", "-", in},
		{"dedup", "--json", "--clusters", "-", in},
	} {
		if code, stdout, stderr := run(t, "", args...); code != 2 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q (stderr %s); want 2 and nothing on stdout", args, code, stdout, stderr)
		}
	}
}

// TestDedupUpdateIndexFIFO saves the updated snapshot into a FIFO (the kept
// set beside it is a directory of regular files: it is what the run loads):
// the FIFO's reader gets the bytes a regular file gets.
func TestDedupUpdateIndexFIFO(t *testing.T) {
	dir, in, _ := dedupCorpus(t)
	idx := filepath.Join(dir, "seen.idx")
	if code, _, stderr := run(t, "", "dedup", "-q", "--index", idx, "--update-index", in); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	keptBefore := t.TempDir()
	if err := os.CopyFS(keptBefore, os.DirFS(keptfiles.Dir(idx))); err != nil {
		t.Fatal(err)
	}
	again := writeFile(t, dir, "again.jsonl", `{"id":"z","text":"a brand new document that the index has not seen before"}`+"\n")
	if code, _, stderr := run(t, "", "dedup", "-q", "--index", idx, "--update-index", again); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	after, _ := os.ReadFile(idx)
	if string(after) == string(before) {
		t.Fatal("the second batch did not change the snapshot; the test proves nothing")
	}

	fifo := outfiletest.FIFO(t, "fifo")
	if err := os.CopyFS(keptfiles.Dir(fifo), os.DirFS(keptBefore)); err != nil {
		t.Fatal(err)
	}
	reader := outfiletest.ReadFIFO(t, fifo)
	if code, _, stderr := run(t, "", "dedup", "-q", "--index", fifo, "--update-index", again); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	outfiletest.CheckFIFO(t, fifo)
	if got := <-reader; got != string(after) {
		t.Errorf("the FIFO's reader got %d bytes, want the %d of the snapshot saved to a regular file", len(got), len(after))
	}
}

// TestDedupDanglingSymlink runs dedup over a directory holding a symbolic
// link whose target is gone: --skip-bad skips it with a warning and reads the
// rest; without it the run fails naming the link.
func TestDedupDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.Mkdir(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, docs, "a.txt", "the quick brown fox jumps over the lazy dog")
	writeFile(t, docs, "c.txt", "an entirely different document about something else")
	link := filepath.Join(docs, "b.txt")
	if err := os.Symlink("gone.txt", link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	out := filepath.Join(dir, "kept.txt")
	code, _, stderr := run(t, "", "dedup", "--skip-bad", "-o", out, docs)
	if code != 0 || !strings.Contains(stderr, link) || !strings.Contains(stderr, "2 docs read") || !strings.Contains(stderr, "1 bad inputs skipped") {
		t.Errorf("--skip-bad: exit %d, stderr %q; want 0, a warning naming %s and 2 docs read", code, stderr, link)
	}
	if kept, _ := os.ReadFile(out); strings.Count(string(kept), "\n") != 2 {
		t.Errorf("kept %q, want the two readable files", kept)
	}
	code, _, stderr = run(t, "", "dedup", "-o", out, docs)
	if code != 1 || !strings.Contains(stderr, link) || !strings.Contains(stderr, "broken symbolic link") {
		t.Errorf("without --skip-bad: exit %d, stderr %q; want 1 and an error naming the broken link %s", code, stderr, link)
	}
}

// TestDedupMixedFormats gives dedup a directory of JSONL and text files: the
// kept file would hold JSONL lines and file paths, so --output refuses the
// mix naming a file of each kind; without --output the run goes on.
func TestDedupMixedFormats(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.Mkdir(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	jsonl := writeFile(t, docs, "a.jsonl", `{"id":"x","text":"the quick brown fox jumps over the lazy dog"}`+"\n")
	txt := writeFile(t, docs, "b.txt", "an entirely different document about something else")
	out := filepath.Join(dir, "kept")
	code, _, stderr := run(t, "", "dedup", "-q", "-o", out, docs)
	if code != 1 || !strings.Contains(stderr, jsonl) || !strings.Contains(stderr, txt) || !strings.Contains(stderr, "--format") {
		t.Errorf("--output: exit %d, stderr %q; want 1 and an error naming %s and %s", code, stderr, jsonl, txt)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("--output written by the refused run")
	}
	if code, _, stderr := run(t, "", "dedup", "-q", "--duplicates", filepath.Join(dir, "dups"), docs); code != 0 {
		t.Errorf("without --output: exit %d, stderr %q; want 0", code, stderr)
	}
	// One format for all: every file is one document, and the kept file lists paths.
	if code, _, stderr := run(t, "", "dedup", "-q", "--format", "text", "-o", out, docs); code != 0 {
		t.Errorf("--format text: exit %d, stderr %q; want 0", code, stderr)
	}
	if kept, _ := os.ReadFile(out); string(kept) != jsonl+"\n"+txt+"\n" {
		t.Errorf("--format text: kept %q, want the two paths", kept)
	}
}

// TestDedupUTF16 dedups two text files, one of them UTF-16 with a byte order
// mark: it is read (decoded), found to duplicate the UTF-8 one, and the kept
// file names the UTF-8 file.
func TestDedupUTF16(t *testing.T) {
	dir := t.TempDir()
	text := "the quick brown fox jumps over the lazy dog while the cat watches from the fence, café"
	utf8 := writeFile(t, dir, "a.txt", text)
	le := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(text)) {
		le = append(le, byte(u), byte(u>>8))
	}
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), le, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "kept.txt")
	code, _, stderr := run(t, "", "dedup", "-o", out, utf8, filepath.Join(dir, "b.txt"))
	if code != 0 || !strings.Contains(stderr, "2 docs read") || !strings.Contains(stderr, "1 removed (1 exact") || strings.Contains(stderr, "binary") {
		t.Errorf("exit %d, stderr %q; want 2 docs read, b.txt removed as an exact duplicate", code, stderr)
	}
	if kept, _ := os.ReadFile(out); string(kept) != utf8+"\n" {
		t.Errorf("kept %q, want %q", kept, utf8+"\n")
	}
}

// TestDedupEmptyStdin: an empty standard input is an empty batch, read as
// no document (it was one empty document), and not an error.
func TestDedupEmptyStdin(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "kept.jsonl")
	code, _, stderr := run(t, "", "dedup", "-o", out)
	if code != 0 || !strings.Contains(stderr, "0 docs read") {
		t.Errorf("exit %d, stderr %q; want 0 and 0 docs read", code, stderr)
	}
	if kept, err := os.ReadFile(out); err != nil || len(kept) != 0 {
		t.Errorf("kept %q (%v), want an empty file", kept, err)
	}
}

// TestDedupNothingRead gives dedup inputs of which no document is read: the
// run fails and says why, rather than writing empty outputs and exiting 0.
func TestDedupNothingRead(t *testing.T) {
	dir := t.TempDir()
	binary := writeFile(t, dir, "x.bin", "\x00\x01\x02\x03 not text")
	// A file that says Parquet and is not: an error naming it, not a skip
	// (it is a dataset shard, and dropping it would drop its documents).
	parquet := writeFile(t, dir, "x.parquet", "PAR1\x15\x04\x15\x00\x15\x00\x4c\x15\x02\x00\x00\x00PAR1")
	bad := writeFile(t, dir, "bad.jsonl", "not json\n")
	empty := writeFile(t, dir, "empty.jsonl", "")
	emptyDir := filepath.Join(dir, "nothing")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "kept.jsonl")
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{binary}, []string{"no documents read", "1 file skipped as binary", binary}},
		{[]string{"--skip-bad", bad, binary}, []string{"no documents read", "1 file skipped as binary", binary, "1 bad line skipped", bad + ":1"}},
		{[]string{"--skip-bad", parquet}, []string{"bad Parquet file", parquet}},
		{[]string{empty, emptyDir}, []string{"no documents read", empty, emptyDir}},
	} {
		args := append([]string{"dedup", "-o", out}, tt.args...)
		code, _, stderr := run(t, "", args...)
		if code != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 1", tt.args, code, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q does not say %q", tt.args, stderr, w)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: output written by the failed run", tt.args)
		}
	}
}
