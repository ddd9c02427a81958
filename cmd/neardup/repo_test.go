package main

// The repository's own files checked against the code and against each
// other: what a newcomer runs from the README must work, leave nothing for
// git to list, and the documents must agree on the defaults.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neardup/neardup/store"
)

// repoRoot is the module root, two levels above this package.
const repoRoot = "../.."

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shellLines returns the lines of the README's ```sh blocks and indented
// command blocks, with their line numbers.
func shellLines(t *testing.T, doc string) (lines []string, nums []int) {
	t.Helper()
	in := false
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```"):
			in = strings.HasPrefix(l, "```sh") && !in
		case in, strings.HasPrefix(l, "    "):
			lines, nums = append(lines, strings.TrimSpace(l)), append(nums, n)
		}
	}
	return lines, nums
}

// TestREADMEServeWaitsForReady: a snippet that starts the server in the
// background must wait for /readyz before its curl lines (the server loads
// its store first, and go run compiles first), and a snippet whose server
// runs in the foreground must not follow it with curl lines that never run.
func TestREADMEServeWaitsForReady(t *testing.T) {
	lines, nums := shellLines(t, readRepoFile(t, "README.md"))
	serving, background := false, false
	checked := 0
	for i, l := range lines {
		cmd, _, _ := strings.Cut(l, "#")
		cmd = strings.TrimSpace(cmd)
		switch {
		case strings.Contains(cmd, "neardup serve"):
			serving, background = true, strings.HasSuffix(cmd, "&")
		case !serving || !strings.Contains(cmd, "curl "):
		case !background:
			t.Errorf("README.md:%d: %q follows a server running in the foreground: it never runs", nums[i], l)
			serving = false
		case strings.Contains(cmd, "/readyz"):
			serving = false
			checked++
		default:
			t.Errorf("README.md:%d: %q runs before the server is ready: wait for /readyz first", nums[i], l)
			serving = false
		}
	}
	if checked == 0 {
		t.Error("no README snippet starts the server and waits for /readyz")
	}
}

// TestGitignoreCoversREADMEOutputs: what the README's commands leave in the
// clone (outputs of the quick start, the service's data directory, the
// binaries of make build and of the Beam build) is ignored by git.
func TestGitignoreCoversREADMEOutputs(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git:", err)
	}
	if err := exec.Command(git, "-C", repoRoot, "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skip("not a git work tree:", err)
	}
	readme := readRepoFile(t, "README.md")
	for _, tt := range []struct{ path, from string }{
		{"kept.jsonl", "--output kept.jsonl"},
		{"dups.jsonl", "--duplicates dups.jsonl"},
		{"neardup-data/store", "--data ./neardup-data"},
		{"bin/neardup", "make build   # bin/neardup"},
		{"beam/neardup-beam", "go build -o neardup-beam"},
		{"beam/kept.jsonl", "./neardup-beam dedup --runner prism --output kept.jsonl"},
		{"beam/dups.jsonl", "--duplicates dups.jsonl crawl"},
	} {
		if !strings.Contains(readme, tt.from) {
			t.Errorf("the README no longer says %q: update this test's list", tt.from)
			continue
		}
		// --no-index: judge by the rules alone, whether or not the path exists.
		if err := exec.Command(git, "-C", repoRoot, "check-ignore", "-q", "--no-index", tt.path).Run(); err != nil {
			t.Errorf("git check-ignore %s: %v; the README's %q leaves it for git status to list", tt.path, err, tt.from)
		}
	}
}

// TestDocsNameTheDefaultEngine: the README names
// server.DefaultEngine as the embedded store's default, and no other engine.
func TestDocsNameTheDefaultEngine(t *testing.T) {
	engines := []string{store.EngineBolt, store.EnginePebble}
	other := regexp.MustCompile(`\b(` + strings.Join(engines, "|") + `)\b( store)?( \([^)]*\))? (stays|is) the default`)
	for _, name := range []string{"README.md"} {
		doc := strings.Join(strings.Fields(readRepoFile(t, name)), " ") // sentences across line breaks
		if !strings.Contains(doc, store.DefaultEngine+" (the default") {
			t.Errorf("%s does not say %q", name, store.DefaultEngine+" (the default")
		}
		for _, m := range other.FindAllStringSubmatch(doc, -1) {
			if m[1] != store.DefaultEngine {
				t.Errorf("%s says %q, but the default engine is %s (server.DefaultEngine)", name, m[0], store.DefaultEngine)
			}
		}
	}
}

// TestMakeTestNamesMissingTools runs the Makefile's check with no tool on
// PATH: it must name redis-server and chromium and how to install them, as
// the tests that need them skip quietly under go test.
func TestMakeTestNamesMissingTools(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make:", err)
	}
	cmd := exec.Command(mk, "-s", "-C", repoRoot, "test-tools")
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make test-tools: %v\n%s", err, out)
	}
	for _, want := range []string{"redis-server not found", "apt-get install redis-server", "chromium not found", "apt-get install chromium",
		"wget not found", "apt-get install wget"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make test-tools without them on PATH said %q, want %q", out, want)
		}
	}
	cmd = exec.Command(mk, "-s", "-C", repoRoot, "test-tools")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("make test-tools with this PATH: %v\n%s", err, out)
	}
}

// TestREADMECommandsReadFilesInTheClone: every corpus file the README's
// commands name (the main dedup command first) is in the repository, so a
// clone with nothing beside it runs them.
func TestREADMECommandsReadFilesInTheClone(t *testing.T) {
	lines, nums := shellLines(t, readRepoFile(t, "README.md"))
	named := 0
	for i, l := range lines {
		for _, f := range strings.Fields(l) {
			if !strings.HasPrefix(f, "testdata/") && !strings.Contains(f, "shared/corpora") {
				continue
			}
			named++
			if _, err := os.Stat(filepath.Join(repoRoot, f)); err != nil {
				t.Errorf("README.md:%d: %s: %v: a fresh clone has no such file", nums[i], f, err)
			}
		}
	}
	if named == 0 {
		t.Error("no README command reads a corpus in testdata/: the main command should run on one")
	}
}
