package command

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/outfile/outfiletest"
)

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIndexBuildQueryStats(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "fps.txt", `# a comment
a	f0f0f0f0f0f0f0f0
b	f0f0f0f0f0f0f0f1
"c d"	0x0f0f0f0f0f0f0f0f

0123456789abcdef
`)
	out := filepath.Join(dir, "x.ndx")
	code, stdout, stderr := run(t, "", "index", "build", "--out", out, in)
	if code != 0 || !strings.Contains(stdout, "indexed 4 fingerprints") || !strings.Contains(stdout, "plan: k=3") {
		t.Fatalf("build: code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"near a", []string{"f0f0f0f0f0f0f0f0"}, "f0f0f0f0f0f0f0f0\ta\tf0f0f0f0f0f0f0f0\t0\nf0f0f0f0f0f0f0f0\tb\tf0f0f0f0f0f0f0f1\t1\n"},
		{"limit", []string{"--limit", "1", "f0f0f0f0f0f0f0f0"}, "f0f0f0f0f0f0f0f0\ta\tf0f0f0f0f0f0f0f0\t0\n"},
		{"k=0", []string{"--k", "0", "f0f0f0f0f0f0f0f1"}, "f0f0f0f0f0f0f0f1\tb\tf0f0f0f0f0f0f0f1\t0\n"},
		{"quoted id, 0x query", []string{"0x0f0f0f0f0f0f0f0e"}, "0x0f0f0f0f0f0f0f0e\tc d\t0f0f0f0f0f0f0f0f\t1\n"},
		{"id from file:line", []string{"0123456789abcdef"}, "0123456789abcdef\t" + in + ":6\t0123456789abcdef\t0\n"},
		{"no match", []string{"--fp-format", "hex", "5555555555555555"}, ""},
		{"decimal query", []string{"17361641481138401520"}, "17361641481138401520\ta\tf0f0f0f0f0f0f0f0\t0\n17361641481138401520\tb\tf0f0f0f0f0f0f0f1\t1\n"},
		{"16 decimal digits, told decimal", []string{"--fp-format", "decimal", "--k", "0", "1085102592571150095"[1:]}, ""},
	}
	for _, tt := range tests {
		args := append([]string{"index", "query", "--index", out}, tt.args...)
		code, got, stderr := run(t, "", args...)
		if code != 0 || got != tt.want {
			t.Errorf("%s: code %d, got %q, want %q (stderr %s)", tt.name, code, got, tt.want, stderr)
		}
	}
	// Queries from stdin, JSON out.
	code, got, stderr := run(t, "q1\tf0f0f0f0f0f0f0f0\n{\"id\":\"q2\",\"fingerprint\":\"5555555555555555\"}\n", "index", "query", "--index", out, "--json", "-")
	if code != 0 {
		t.Fatalf("json query: %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 2 {
		t.Fatalf("json query: %q", got)
	}
	var r queryResult
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil || r.Query != "q1" || len(r.Matches) != 2 || r.Matches[1].ID != "b" {
		t.Fatalf("json query line 1 %q: %v", lines[0], err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &r); err != nil || r.Query != "q2" || len(r.Matches) != 0 {
		t.Fatalf("json query line 2 %q: %v", lines[1], err)
	}

	code, got, _ = run(t, "", "index", "stats", "--index", out)
	if code != 0 || !strings.Contains(got, "fingerprints: 4") || !strings.Contains(got, "expected candidates") {
		t.Fatalf("stats: %d %s", code, got)
	}
	code, got, _ = run(t, "", "index", "stats", "--index", out, "--json")
	var st statsOutput
	if err := json.Unmarshal([]byte(got), &st); code != 0 || err != nil || st.Fingerprints != 4 || st.Tables != 4 || st.FileBytes == 0 {
		t.Fatalf("stats --json: %d %s %v", code, got, err)
	}
}

func TestIndexBuildJSONLStdinAndPlan(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.ndx")
	in := `{"id":"a","fingerprint":"00000000000000ff"}
{"id":7,"fingerprint":255}
{"id":"c","fingerprint":"0x00000000000000fe","text":"ignored"}
`
	code, got, stderr := run(t, in, "index", "build", "--out", out, "--plan", "blocks:6:7", "--json")
	if code != 0 {
		t.Fatalf("build: %d %s", code, stderr)
	}
	var s buildSummary
	if err := json.Unmarshal([]byte(got), &s); err != nil || s.Fingerprints != 3 || s.Tables != 7 || !strings.HasPrefix(s.Plan, "k=6") {
		t.Fatalf("summary %q: %v", got, err)
	}
	// 0 is 8 bits from a and 7, 7 from c.
	code, got, _ = run(t, "", "index", "query", "--index", out, "--k", "6", "0")
	if code != 0 || got != "" {
		t.Fatalf("k=6 from 0: got %q (code %d), want nothing", got, code)
	}
	code, got, _ = run(t, "", "index", "query", "--index", out, "--k", "6", "3")
	if want := "3\t7\t00000000000000ff\t6\n3\ta\t00000000000000ff\t6\n"; code != 0 || got != want {
		t.Fatalf("k=6 from 3: got %q, want %q", got, want)
	}
	code, got, _ = run(t, "", "index", "query", "--index", out, "0x3f")
	want := "0x3f\t7\t00000000000000ff\t2\n0x3f\ta\t00000000000000ff\t2\n0x3f\tc\t00000000000000fe\t3\n"
	if code != 0 || got != want {
		t.Fatalf("default k: got %q, want %q", got, want)
	}
}

func TestIndexFromText(t *testing.T) {
	dir := t.TempDir()
	docs := writeFile(t, dir, "docs.jsonl", `{"id":"d1","text":"the quick brown fox jumps over the lazy dog"}
{"id":"d2","text":"the quick brown fox jumps over the lazy dog!"}
{"id":"d3","text":"completely different words about databases and indexes"}
`)
	out := filepath.Join(dir, "t.ndx")
	code, _, stderr := run(t, "", "index", "build", "--out", out, "--from-text", "--profile", "en-words", docs)
	if code != 0 {
		t.Fatalf("build --from-text: %d %s", code, stderr)
	}
	code, fpOut, stderr := run(t, "", "fingerprint", "--profile", "en-words", docs)
	if code != 0 {
		t.Fatalf("fingerprint: %s", stderr)
	}
	first := strings.Fields(strings.Split(fpOut, "\n")[0])[1]
	code, got, _ := run(t, "", "index", "query", "--index", out, "--k", "0", first)
	if code != 0 || !strings.Contains(got, "\td1\t") {
		t.Fatalf("query d1's fingerprint: %d %q", code, got)
	}
}

func TestIndexErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.txt", "a 1\nb 2\n")
	out := filepath.Join(dir, "x.ndx")
	if code, _, stderr := run(t, "", "index", "build", "--out", out, good); code != 0 {
		t.Fatal(stderr)
	}
	corrupt := writeFile(t, dir, "corrupt.ndx", "NDUPIDX\n\x01\x00\x00\x00garbage")
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		msg   string
	}{
		{"no out", "", []string{"index", "build", good}, 2, "--out"},
		{"bad plan", "", []string{"index", "build", "--out", out, "--plan", "nope", good}, 2, "unknown layout"},
		{"bad budget", "", []string{"index", "build", "--out", out, "--budget", "lots", good}, 2, "bad size"},
		{"k above plan", "", []string{"index", "build", "--out", out, "--plan", "seeds-4x16", "--k", "5", good}, 2, "exceeds"},
		{"malformed line", "x y zz\n", []string{"index", "build", "--out", out, "-"}, 1, "-:1"},
		{"malformed json", "{\"id\":\n", []string{"index", "build", "--out", out}, 1, "malformed JSON"},
		{"duplicate id", "a 1\na 2\n", []string{"index", "build", "--out", out}, 1, "duplicate id"},
		{"binary", "\x00\x01\x02\xff\n", []string{"index", "build", "--out", out}, 1, "-:1"},
		{"missing file", "", []string{"index", "build", "--out", out, filepath.Join(dir, "nope")}, 1, "nope"},
		{"query no index", "", []string{"index", "query", "1"}, 2, "--index"},
		{"query no fps", "", []string{"index", "query", "--index", out}, 2, "no query"},
		{"query bad fp", "", []string{"index", "query", "--index", out, "xyz"}, 2, "xyz"},
		{"query k too big", "", []string{"index", "query", "--index", out, "--k", "9", "1"}, 2, "up to 3"},
		{"query corrupt", "", []string{"index", "query", "--index", corrupt, "1"}, 1, "malformed snapshot"},
		{"stats corrupt", "", []string{"index", "stats", "--index", corrupt}, 1, "malformed snapshot"},
		{"stats not a snapshot", "", []string{"index", "stats", "--index", good}, 1, "bad magic"},
		{"stats missing", "", []string{"index", "stats"}, 2, "--index"},
	}
	for _, tt := range tests {
		code, _, stderr := run(t, tt.stdin, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.msg) {
			t.Errorf("%s: code %d stderr %q; want %d and %q", tt.name, code, stderr, tt.code, tt.msg)
		}
	}
}

func TestIndexHelp(t *testing.T) {
	for _, args := range [][]string{{"index"}, {"index", "--help"}, {"index", "build", "--help"}, {"index", "query", "--help"}, {"index", "stats", "--help"}} {
		code, out, _ := run(t, "", args...)
		if code != 0 || !strings.Contains(out, "Usage") {
			t.Errorf("%v: code %d, out %q", args, code, out)
		}
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1048576", 1 << 20, true}, {"4GiB", 4 << 30, true}, {"500MB", 500e6, true}, {"1.5g", 3 << 29, true},
		{"", 0, false}, {"-1", 0, false}, {"lots", 0, false},
	}
	for _, tt := range tests {
		got, err := parseBytes(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestIndexBuildNotRegular writes the snapshot to a device node, a FIFO and
// standard output ("-"): the nodes stay what they were, the FIFO's reader and
// stdout get the bytes a regular file gets, and the report counts them.
func TestIndexBuildNotRegular(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "fps.txt", "a\tf0f0f0f0f0f0f0f0\nb\tf0f0f0f0f0f0f0f1\nc\t0123456789abcdef\n")
	out := filepath.Join(dir, "x.ndx")
	if code, _, stderr := run(t, "", "index", "build", "--out", out, in); code != 0 {
		t.Fatalf("regular file: exit %d, %s", code, stderr)
	}
	want, _ := os.ReadFile(out)
	report := fmt.Sprintf("(%d bytes,", len(want))

	t.Run("device", func(t *testing.T) {
		null := outfiletest.CharDevice(t, "x.ndx")
		code, stdout, stderr := run(t, "", "index", "build", "--out", null, in)
		if code != 0 || !strings.Contains(stdout, report) {
			t.Fatalf("exit %d, stdout %q, want it to report %q (stderr %s)", code, stdout, report, stderr)
		}
		outfiletest.CheckCharDevice(t, null)
	})
	t.Run("fifo", func(t *testing.T) {
		fifo := outfiletest.FIFO(t, "x.ndx")
		got := outfiletest.ReadFIFO(t, fifo)
		code, stdout, stderr := run(t, "", "index", "build", "--out", fifo, in)
		if code != 0 || !strings.Contains(stdout, report) {
			t.Fatalf("exit %d, stdout %q, want it to report %q (stderr %s)", code, stdout, report, stderr)
		}
		outfiletest.CheckFIFO(t, fifo)
		if g := <-got; g != string(want) {
			t.Errorf("the FIFO's reader got %d bytes, want the %d of a regular file", len(g), len(want))
		}
	})
	t.Run("stdout", func(t *testing.T) {
		t.Chdir(t.TempDir())
		code, stdout, stderr := run(t, "", "index", "build", "--out", "-", in)
		if code != 0 || stdout != string(want) {
			t.Errorf("--out -: exit %d, %d bytes on stdout, want the %d of a regular file (stderr %s)", code, len(stdout), len(want), stderr)
		}
		if !strings.Contains(stderr, "indexed 3 fingerprints") {
			t.Errorf("--out -: the report should go to stderr, got %q", stderr)
		}
		if _, err := os.Stat("-"); err == nil {
			t.Error(`--out - created a file named "-"`)
		}
	})
}
