package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/internal/outfile/outfiletest"
)

func TestIDFBuild(t *testing.T) {
	dir := writeTemp(t, map[string]string{
		"c.jsonl": "{\"text\":\"apple banana\"}\n{\"text\":\"apple cherry\"}\nnot json\n{\"text\":\"apple durian\"}\n",
	})
	in := filepath.Join(dir, "c.jsonl")
	out := filepath.Join(dir, "c.idf")

	code, _, errs := run(t, "", "idf", "build", "-p", "en-words", "--out", out, in)
	if code != 1 || !strings.Contains(errs, in+":3:") {
		t.Fatalf("malformed: exit %d, stderr %q; want 1 naming line 3", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a failed run left %s behind (%v)", out, err)
	}

	code, _, errs = run(t, "", "idf", "build", "-p", "en-words", "--skip-bad", "--workers", "3", "--out", out, in)
	if code != 0 || !strings.Contains(errs, "3 documents") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := features.ReadIDF(f)
	if err != nil {
		t.Fatal(err)
	}
	// idf = ln((1+N)/(1+df)) + 1 with N = 3: apple (df 3) weighs 1, the others more.
	if a, b := tab.Weight("apple"), tab.Weight("banana"); a != 1 || b <= a || tab.Docs() != 3 {
		t.Errorf("apple %v banana %v docs %d", a, b, tab.Docs())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}

	code, stdout, _ := run(t, "one two\n", "idf", "build")
	if code != 0 || !strings.HasPrefix(stdout, "neardup-idf 1") {
		t.Errorf("stdout: exit %d, %q", code, stdout)
	}
}

func TestIDFHelp(t *testing.T) {
	code, out, _ := run(t, "", "idf")
	if code != 0 || !strings.Contains(out, "build") {
		t.Errorf("idf: exit %d, %q", code, out)
	}
	if code, _, _ := run(t, "", "idf", "nope"); code == 0 {
		t.Errorf("idf nope: exit 0")
	}
	if code, _, errs := run(t, "", "idf", "build", "/no/such/dir"); code != 1 || !strings.Contains(errs, "/no/such/dir") {
		t.Errorf("missing input: exit %d, %q", code, errs)
	}
}

// TestIDFBuildNotRegular writes the table to a device node, a FIFO and
// standard output ("-"): the nodes stay what they were and the FIFO's reader
// and stdout get what a regular file gets.
func TestIDFBuildNotRegular(t *testing.T) {
	dir := writeTemp(t, map[string]string{"c.jsonl": "{\"text\":\"apple banana\"}\n{\"text\":\"apple cherry\"}\n"})
	in, out := filepath.Join(dir, "c.jsonl"), filepath.Join(dir, "c.idf")
	if code, _, errs := run(t, "", "idf", "build", "-p", "en-words", "--out", out, in); code != 0 {
		t.Fatalf("regular file: exit %d, %s", code, errs)
	}
	want, _ := os.ReadFile(out)

	t.Run("device", func(t *testing.T) {
		null := outfiletest.CharDevice(t, "c.idf")
		if code, _, errs := run(t, "", "idf", "build", "-p", "en-words", "--out", null, in); code != 0 {
			t.Fatalf("exit %d, %s", code, errs)
		}
		outfiletest.CheckCharDevice(t, null)
	})
	t.Run("fifo", func(t *testing.T) {
		fifo := outfiletest.FIFO(t, "c.idf")
		got := outfiletest.ReadFIFO(t, fifo)
		if code, _, errs := run(t, "", "idf", "build", "-p", "en-words", "--out", fifo, in); code != 0 {
			t.Fatalf("exit %d, %s", code, errs)
		}
		outfiletest.CheckFIFO(t, fifo)
		if g := <-got; g != string(want) {
			t.Errorf("the FIFO's reader got\n%s\nwant\n%s", g, want)
		}
	})
	t.Run("stdout", func(t *testing.T) {
		t.Chdir(t.TempDir())
		code, stdout, errs := run(t, "", "idf", "build", "-p", "en-words", "--out", "-", in)
		if code != 0 || stdout != string(want) {
			t.Errorf("--out -: exit %d, stdout\n%s\nwant\n%s\n(stderr %s)", code, stdout, want, errs)
		}
		if _, err := os.Stat("-"); err == nil {
			t.Error(`--out - created a file named "-"`)
		}
	})
}
