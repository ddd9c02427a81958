package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/features"
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
