package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/simhash"
)

// writeTemp writes files (name -> content) into a new temporary directory.
func writeTemp(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func wantFP(t testing.TB, profile, text string) string {
	t.Helper()
	p, err := features.Lookup(profile)
	if err != nil {
		t.Fatal(err)
	}
	return formatFingerprint(p.Fingerprint(text))
}

func TestFingerprintStdin(t *testing.T) {
	text := "The quick brown fox jumps over the lazy dog"
	code, out, errs := run(t, text, "fingerprint")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if want := "-\t" + wantFP(t, "default", text) + "\n"; out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
	if !regexp.MustCompile(`^-\t[0-9a-f]{16}\n$`).MatchString(out) {
		t.Fatalf("output %q is not id<TAB>16 hex digits", out)
	}
}

func TestFingerprintJSONL(t *testing.T) {
	dir := writeTemp(t, map[string]string{
		"docs.jsonl": `{"doc": "a", "body": "first document about cats", "x": 1}
{"doc": 7, "body": "second document about dogs"}
{"body": ""}
{"doc": "ws", "body": "   \n\t "}
`,
	})
	p := filepath.Join(dir, "docs.jsonl")
	code, out, errs := run(t, "", "fingerprint", "--json", "--id-field", "doc", "--text-field", "body", p)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines: %q", len(lines), out)
	}
	var got []fpLine
	for _, l := range lines {
		var r fpLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, r)
	}
	if got[0].ID != "a" || got[1].ID != "7" || got[2].ID != p+":3" || got[3].ID != "ws" {
		t.Errorf("ids %v", got)
	}
	if got[0].Fingerprint != wantFP(t, "default", "first document about cats") || got[0].Bits != 64 || got[0].Features == 0 || got[0].Empty {
		t.Errorf("first record %+v", got[0])
	}
	for _, i := range []int{2, 3} {
		if !got[i].Empty || got[i].Fingerprint != "0000000000000000" {
			t.Errorf("record %d: %+v, want empty with fingerprint 0", i, got[i])
		}
		if !strings.Contains(errs, got[i].ID+": empty document") {
			t.Errorf("stderr %q should warn about %s", errs, got[i].ID)
		}
	}
	if !strings.Contains(lines[2], `"empty":true`) || strings.Contains(lines[0], `"empty"`) {
		t.Errorf("empty flag: %q / %q", lines[2], lines[0])
	}
}

// TestFingerprintOrder checks that the parallel pipeline keeps input order.
func TestFingerprintOrder(t *testing.T) {
	var in strings.Builder
	var want strings.Builder
	p, _ := features.Lookup("en-words")
	for i := range 3000 {
		// Uneven sizes so that workers finish out of order.
		text := strings.Repeat(fmt.Sprintf("word%d other%d ", i, i%7), 1+(i*7919)%200)
		fmt.Fprintf(&in, "{\"id\":\"d%d\",\"text\":%q}\n", i, text)
		fmt.Fprintf(&want, "d%d\t%s\n", i, formatFingerprint(p.Fingerprint(text)))
	}
	code, out, errs := run(t, in.String(), "fingerprint", "--workers", "4", "-p", "en-words", "-")
	if code != 0 || out != want.String() {
		t.Fatalf("exit %d, stderr %q; output differs from the sequential one (%d vs %d bytes)", code, errs, len(out), want.Len())
	}
}

func TestFingerprintBits(t *testing.T) {
	for _, tt := range []struct {
		bits   string
		digits int
	}{{"32", 8}, {"64", 16}, {"128", 32}} {
		code, out, errs := run(t, "some text to fingerprint here", "fingerprint", "--bits", tt.bits)
		m := regexp.MustCompile(`^-\t([0-9a-f]+)\n$`).FindStringSubmatch(out)
		if code != 0 || m == nil || len(m[1]) != tt.digits {
			t.Errorf("--bits %s: exit %d, out %q, stderr %q; want %d hex digits", tt.bits, code, out, errs, tt.digits)
		}
	}
}

func TestFingerprintUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"fingerprint", "--profile", "nope"}, "en-words"}, // lists the valid profiles
		{[]string{"fingerprint", "--no-such-flag"}, "no-such-flag"},
		{[]string{"fingerprint", "--bits", "48"}, "--bits 48"},
		{[]string{"fingerprint", "--format", "xml"}, "xml"},
		{[]string{"fingerprint", "--workers", "-1"}, "--workers"},
		{[]string{"fingerprint", "-", "-"}, "standard input"},
		{[]string{"compare", "--profile", "nope", "--text", "a", "b"}, "shingles"},
		{[]string{"idf", "build", "--profile", "nope"}, "zh-words"},
	}
	for _, tt := range tests {
		code, _, errs := run(t, "x", tt.args...)
		if code != 2 || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message with %q", tt.args, code, errs, tt.want)
		}
	}
}

func TestFingerprintMalformed(t *testing.T) {
	dir := writeTemp(t, map[string]string{
		"bad.jsonl": "{\"id\":\"a\",\"text\":\"good one\"}\n{\"id\":\"b\",\"text\":\"broken\"\n{\"id\":\"c\",\"text\":\"good two\"}\n{\"id\":\"d\"}\n",
	})
	p := filepath.Join(dir, "bad.jsonl")
	code, out, errs := run(t, "", "fingerprint", p)
	if code != 1 || !strings.Contains(errs, p+":2:") {
		t.Fatalf("exit %d, stderr %q; want 1 and %s:2", code, errs, p)
	}
	if !strings.HasPrefix(out, "a\t") || strings.Contains(out, "c\t") {
		t.Errorf("output %q: want the documents before the bad line only", out)
	}

	code, out, errs = run(t, "", "fingerprint", "--skip-bad", p)
	if code != 0 {
		t.Fatalf("--skip-bad: exit %d, stderr %q", code, errs)
	}
	if !strings.Contains(out, "a\t") || !strings.Contains(out, "c\t") || strings.Count(out, "\n") != 2 {
		t.Errorf("--skip-bad output %q: want a and c", out)
	}
	if !strings.Contains(errs, p+":2:") || !strings.Contains(errs, p+":4:") || !strings.Contains(errs, `no text field "text"`) {
		t.Errorf("--skip-bad stderr %q: want warnings for lines 2 and 4", errs)
	}
}

func TestFingerprintFilesAndDirs(t *testing.T) {
	var zs bytes.Buffer
	enc, _ := zstd.NewWriter(&zs, zstd.WithWindowSize(1<<27))
	enc.Write([]byte("{\"id\":\"z1\",\"text\":\"compressed one\"}\n{\"id\":\"z2\",\"text\":\"compressed two\"}\n"))
	enc.Close()
	dir := writeTemp(t, map[string]string{
		"b.txt":       "second file",
		"a.txt":       "first file",
		"bin/x.dat":   "\x00\x01\x02binary",
		"latin1.txt":  "caf\xe9 cr\xe8me br\xfbl\xe9e and more words",
		"c.jsonl.zst": zs.String(),
	})
	code, out, errs := run(t, "", "fingerprint", dir)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		ids = append(ids, strings.TrimPrefix(strings.Split(l, "\t")[0], dir+"/"))
	}
	if got := strings.Join(ids, " "); got != "a.txt b.txt z1 z2 latin1.txt" {
		t.Errorf("ids %q", got)
	}
	if !strings.Contains(errs, "x.dat") || !strings.Contains(errs, "binary") {
		t.Errorf("stderr %q should report the binary file", errs)
	}
	if !strings.Contains(out, wantFP(t, "default", "caf\xe9 cr\xe8me br\xfbl\xe9e and more words")) {
		t.Errorf("invalid UTF-8 file not fingerprinted as its text")
	}
	if code, _, errs := run(t, "", "fingerprint", filepath.Join(dir, "missing.txt")); code != 1 || !strings.Contains(errs, "missing.txt") {
		t.Errorf("missing file: exit %d, stderr %q", code, errs)
	}
}

func TestFingerprintLines(t *testing.T) {
	code, out, _ := run(t, "first line\n\nsecond line\n", "fingerprint", "--format", "lines")
	want := "-:1\t" + wantFP(t, "default", "first line") + "\n-:3\t" + wantFP(t, "default", "second line") + "\n"
	if code != 0 || out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

func TestFingerprintIDWithTab(t *testing.T) {
	code, out, _ := run(t, "{\"id\":\"a\\tb\",\"text\":\"x y z\"}\n", "fingerprint")
	if code != 0 || !strings.HasPrefix(out, `"a\tb"`+"\t") {
		t.Fatalf("got %q", out)
	}
}

func TestFingerprintIDF(t *testing.T) {
	dir := writeTemp(t, map[string]string{
		"c.jsonl": "{\"text\":\"apple banana\"}\n{\"text\":\"apple cherry\"}\n{\"text\":\"apple durian\"}\n",
	})
	idf := filepath.Join(dir, "c.idf")
	if code, _, errs := run(t, "", "idf", "build", "--out", idf, filepath.Join(dir, "c.jsonl")); code != 0 {
		t.Fatalf("idf build: exit %d, %s", code, errs)
	}
	code, out, errs := run(t, "apple banana cherry", "fingerprint", "--idf", idf, "--json")
	if code != 0 || !strings.Contains(out, `"fingerprint"`) {
		t.Fatalf("exit %d, out %q, stderr %q", code, out, errs)
	}
	if code, _, errs := run(t, "x", "fingerprint", "--idf", filepath.Join(dir, "nope.idf")); code != 1 || !strings.Contains(errs, "nope.idf") {
		t.Errorf("missing idf: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run(t, "x", "fingerprint", "--idf", filepath.Join(dir, "c.jsonl")); code != 1 || !strings.Contains(errs, "c.jsonl") {
		t.Errorf("not an idf: exit %d, stderr %q", code, errs)
	}
}

func TestFingerprintHelp(t *testing.T) {
	code, out, _ := run(t, "", "fingerprint", "--help")
	if code != 0 || !strings.Contains(out, "--skip-bad") || !strings.Contains(out, "zh-words") {
		t.Fatalf("help: exit %d, %q", code, out)
	}
}

func TestFingerprintListProfiles(t *testing.T) {
	code, out, _ := run(t, "", "fingerprint", "--list-profiles")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, name := range features.Names() {
		if !strings.Contains(out, name+" ") {
			t.Errorf("--list-profiles lacks %s:\n%s", name, out)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestFingerprintOutputFails(t *testing.T) {
	var in strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&in, "line %d of many\n", i)
	}
	var errb bytes.Buffer
	code := Main([]string{"fingerprint", "--format", "lines"}, strings.NewReader(in.String()), failWriter{}, &errb)
	if code != 1 || !strings.Contains(errb.String(), "writing output") {
		t.Fatalf("exit %d, stderr %q; want 1 and a write error", code, errb.String())
	}
}

func TestFingerprintDashInName(t *testing.T) {
	dir := writeTemp(t, map[string]string{"a-": "one", "b-": "two"})
	code, out, errs := run(t, "", "fingerprint", filepath.Join(dir, "a-"), filepath.Join(dir, "b-"))
	if code != 0 || strings.Count(out, "\n") != 2 {
		t.Fatalf("exit %d, out %q, stderr %q", code, out, errs)
	}
}

// TestAppendFingerprint: the allocation-free text output writes what
// formatFingerprint (and --json) writes, at every width.
func TestAppendFingerprint(t *testing.T) {
	for _, r := range []features.Result{
		{Bits: 64, Fingerprint: 0x00c8f1a3e7b2d9c4},
		{Bits: 64},
		{Bits: 32, Fingerprint: 0xdeadbeef},
		{Bits: 32, Fingerprint: 0x0000beef},
		{Bits: 128, Fingerprint128: simhash.Fingerprint128{Hi: 0x0123456789abcdef, Lo: 0x0000000000000001}},
	} {
		if got, want := string(appendFingerprint([]byte("x"), r)), "x"+formatFingerprint(r); got != want {
			t.Errorf("appendFingerprint(%+v) = %q, want %q", r, got, want)
		}
	}
}
