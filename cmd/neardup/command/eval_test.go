package command

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/outfile/outfiletest"
)

// evalCorpus writes a small JSONL corpus with one near-duplicate pair and an
// exact duplicate, and returns its path.
func evalCorpus(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "word%d ", i)
	}
	long := b.String()
	docs := []struct{ ID, Text string }{
		{"a", long + "alpha"}, {"b", long + "beta"}, {"c", long + "alpha"},
		{"d", "an unrelated document about something else, long enough to shingle"},
	}
	var lines []string
	for _, d := range docs {
		j, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		lines = append(lines, string(j))
	}
	path := filepath.Join(t.TempDir(), "small.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEvalTable(t *testing.T) {
	path := evalCorpus(t)
	code, out, errs := run(t, "", "eval", "--profiles", "en-words", "--k", "0-3", path)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{"small: 4 docs, 3 distinct texts, 1 exact-duplicate pairs", "J>=0.8 1", "naive", "simhash en-words/64 +verify", "minhash en-words"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestEvalJSONPlotHTML(t *testing.T) {
	path := evalCorpus(t)
	dir := t.TempDir()
	png, svg, html := filepath.Join(dir, "pr.png"), filepath.Join(dir, "pr.svg"), filepath.Join(dir, "pr.html")
	code, out, errs := run(t, "", "eval", "--json", "--methods", "naive,simhash", "--profiles", "en-words", "--verify", "on",
		"--k", "0,3,6", "--plot", png, "--html", html, path)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var reports []struct {
		Corpus  string
		Truth   struct{ J80 int }
		Results []struct {
			Name string
			K    int
			Pair struct{ Precision, Recall float64 }
		}
	}
	if err := json.Unmarshal([]byte(out), &reports); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if len(reports) != 1 || reports[0].Truth.J80 != 1 || len(reports[0].Results) != 6 {
		t.Errorf("got %+v, want one report with one J>=0.8 pair and 2 settings × 3 k", reports)
	}
	for _, f := range []string{png, html} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if code, _, errs := run(t, "", "eval", "--methods", "naive", "--verify", "off", "--plot", svg, path); code != 0 {
		t.Errorf("svg plot: exit %d, %s", code, errs)
	} else if b, _ := os.ReadFile(svg); !strings.Contains(string(b), "<svg") {
		t.Error("svg plot is not SVG")
	}
}

func TestEvalBadInput(t *testing.T) {
	path := evalCorpus(t)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{\"id\":\"x\",\"text\":\"ok\"}\nnot json\n"), 0o644)
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	tests := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"eval"}, 2, "at least one CORPUS"},
		{[]string{"eval", "--k", "5-1", path}, 2, "--k"},
		{[]string{"eval", "--k", "x", path}, 2, "--k"},
		{[]string{"eval", "--bits", "48", path}, 2, "--bits"},
		{[]string{"eval", "--verify", "maybe", path}, 2, "--verify"},
		{[]string{"eval", "--methods", "lsh", path}, 2, "--methods"},
		{[]string{"eval", "--profiles", "nope", path}, 2, "unknown profile"},
		{[]string{"eval", "--threshold", "2", path}, 2, "--threshold"},
		{[]string{"eval", "--bands-rows", "64x4", path}, 2, "--bands-rows"},
		{[]string{"eval", "--plot", "x.gif", path}, 2, "--plot"},
		{[]string{"eval", "no-such-file.jsonl"}, 1, "no-such-file"},
		{[]string{"eval", bad}, 1, "line 2"},
		{[]string{"eval", empty}, 1, "no documents"},
	}
	for _, tt := range tests {
		code, _, errs := run(t, "", tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.contains) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, errs, tt.code, tt.contains)
		}
	}
}

func TestEvalHelp(t *testing.T) {
	code, out, _ := run(t, "", "eval", "--help")
	if code != 0 || !strings.Contains(out, "--threshold") || !strings.Contains(out, "naive") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

// TestEvalPlotHTMLNotRegular writes the plot and the page to device nodes and
// FIFOs: the nodes stay what they were and each FIFO's reader gets what a
// regular file gets (the page's timings aside).
func TestEvalPlotHTMLNotRegular(t *testing.T) {
	path := evalCorpus(t)
	dir := t.TempDir()
	args := func(plot, html string) []string {
		return []string{"eval", "--methods", "naive,simhash", "--profiles", "en-words", "--verify", "on", "--k", "0,3",
			"--plot", plot, "--html", html, path}
	}
	svg, html := filepath.Join(dir, "pr.svg"), filepath.Join(dir, "pr.html")
	if code, _, errs := run(t, "", args(svg, html)...); code != 0 {
		t.Fatalf("regular files: exit %d, %s", code, errs)
	}
	// Seconds are the only two-decimal numbers on the page.
	seconds := regexp.MustCompile(`\b[0-9]+\.[0-9]{2}\b`)
	want := map[string]string{}
	for name, p := range map[string]string{"svg": svg, "html": html} {
		b, _ := os.ReadFile(p)
		want[name] = seconds.ReplaceAllString(string(b), "S")
	}

	t.Run("device", func(t *testing.T) {
		nsvg, nhtml := outfiletest.CharDevice(t, "pr.svg"), outfiletest.CharDevice(t, "pr.html")
		if code, _, errs := run(t, "", args(nsvg, nhtml)...); code != 0 {
			t.Fatalf("exit %d, %s", code, errs)
		}
		outfiletest.CheckCharDevice(t, nsvg)
		outfiletest.CheckCharDevice(t, nhtml)
	})
	t.Run("fifo", func(t *testing.T) {
		fsvg, fhtml := outfiletest.FIFO(t, "pr.svg"), outfiletest.FIFO(t, "pr.html")
		gotSVG, gotHTML := outfiletest.ReadFIFO(t, fsvg), outfiletest.ReadFIFO(t, fhtml)
		if code, _, errs := run(t, "", args(fsvg, fhtml)...); code != 0 {
			t.Fatalf("exit %d, %s", code, errs)
		}
		outfiletest.CheckFIFO(t, fsvg)
		outfiletest.CheckFIFO(t, fhtml)
		for name, got := range map[string]<-chan string{"svg": gotSVG, "html": gotHTML} {
			if g := seconds.ReplaceAllString(<-got, "S"); g != want[name] {
				t.Errorf("%s: the FIFO's reader got %d bytes, want the %d of a regular file", name, len(g), len(want[name]))
			}
		}
	})
	for _, a := range [][]string{args("-", html), args(svg, "-")} {
		if code, stdout, errs := run(t, "", a...); code != 2 || !strings.Contains(errs, "need a file name") {
			t.Errorf("%q: exit %d, stderr %q (stdout %d bytes); want 2 and a usage error", a, code, errs, len(stdout))
		}
	}
}
