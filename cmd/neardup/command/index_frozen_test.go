package command

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexBuildFrozen builds frozen snapshots from a fingerprint file with
// integer ids, one with text ids (positions) and a raw file, and queries
// them as index query queries an Index snapshot.
func TestIndexBuildFrozen(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "fps.txt", "7\tf0f0f0f0f0f0f0f0\n9\tf0f0f0f0f0f0f0f1\n3\t0f0f0f0f0f0f0f0f\n")
	out := filepath.Join(dir, "x.ndf")
	code, stdout, stderr := run(t, "", "index", "build", "--frozen", "--out", out, in)
	if code != 0 || !strings.Contains(stdout, "froze 3 fingerprints") || !strings.Contains(stdout, "the input's ids") {
		t.Fatalf("build: code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"near 7", []string{"f0f0f0f0f0f0f0f0"}, "f0f0f0f0f0f0f0f0\t7\tf0f0f0f0f0f0f0f0\t0\nf0f0f0f0f0f0f0f0\t9\tf0f0f0f0f0f0f0f1\t1\n"},
		{"limit", []string{"--limit", "1", "f0f0f0f0f0f0f0f0"}, "f0f0f0f0f0f0f0f0\t7\tf0f0f0f0f0f0f0f0\t0\n"},
		{"k=0", []string{"--k", "0", "f0f0f0f0f0f0f0f1"}, "f0f0f0f0f0f0f0f1\t9\tf0f0f0f0f0f0f0f1\t0\n"},
		{"no match", []string{"--fp-format", "hex", "5555555555555555"}, ""},
		{"no checksums", []string{"--no-verify", "f0f0f0f0f0f0f0f1"}, "f0f0f0f0f0f0f0f1\t9\tf0f0f0f0f0f0f0f1\t0\nf0f0f0f0f0f0f0f1\t7\tf0f0f0f0f0f0f0f0\t1\n"},
	}
	for _, tt := range tests {
		args := append([]string{"index", "query", "--index", out}, tt.args...)
		code, got, stderr := run(t, "", args...)
		if code != 0 || got != tt.want {
			t.Errorf("%s: code %d, got %q, want %q (stderr %s)", tt.name, code, got, tt.want, stderr)
		}
	}
	if code, _, stderr := run(t, "", "index", "query", "--index", out, "--k", "4", "f0f0f0f0f0f0f0f0"); code == 0 {
		t.Errorf("--k 4 on a k=3 frozen index: code 0 (stderr %s)", stderr)
	}

	if code, got, _ := run(t, "", "index", "stats", "--index", out); code != 0 || !strings.Contains(got, "fingerprints: 3") || !strings.Contains(got, "(frozen)") {
		t.Errorf("stats: code %d, got %q", code, got)
	}

	// Text ids: positions, named by the ids. A raw file: positions.
	in2 := writeFile(t, dir, "fps2.txt", "a\tf0f0f0f0f0f0f0f0\nb\tf0f0f0f0f0f0f0f1\n")
	if code, stdout, stderr := run(t, "", "index", "build", "--frozen", "--out", out, in2); code != 0 || !strings.Contains(stdout, "named by the input's ids") {
		t.Fatalf("build with text ids: code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if code, got, _ := run(t, "", "index", "query", "--index", out, "f0f0f0f0f0f0f0f1"); code != 0 || got != "f0f0f0f0f0f0f0f1\tb\tf0f0f0f0f0f0f0f1\t0\nf0f0f0f0f0f0f0f1\ta\tf0f0f0f0f0f0f0f0\t1\n" {
		t.Errorf("query positions: code %d, got %q", code, got)
	}
	var raw []byte
	for _, v := range []uint64{0xf0f0f0f0f0f0f0f0, 0x1234, 0xf0f0f0f0f0f0f0f3} {
		raw = binary.LittleEndian.AppendUint64(raw, v)
	}
	rawPath := filepath.Join(dir, "fps.u64")
	if err := os.WriteFile(rawPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, "", "index", "build", "--frozen", "--raw", "--out", out, rawPath); code != 0 || !strings.Contains(stdout, "froze 3") {
		t.Fatalf("build --raw: code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if code, got, _ := run(t, "", "index", "query", "--index", out, "f0f0f0f0f0f0f0f0"); code != 0 || got != "f0f0f0f0f0f0f0f0\t0\tf0f0f0f0f0f0f0f0\t0\nf0f0f0f0f0f0f0f0\t2\tf0f0f0f0f0f0f0f3\t2\n" {
		t.Errorf("query raw: code %d, got %q", code, got)
	}
	if code, _, _ := run(t, "", "index", "build", "--raw", "--out", out, rawPath); code == 0 {
		t.Error("--raw without --frozen: code 0")
	}
}

// TestIndexGenBuildBench: index gen writes 8-byte fingerprints, index build
// --frozen --raw reads them from stdin and from the file (the default
// flip-2x32 and seeds-4x16 give the same answers), and index bench checks
// its queries against a scan.
func TestIndexGenBuildBench(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "fps.u64")
	if code, _, stderr := run(t, "", "index", "gen", "--n", "20000", "--out", raw); code != 0 {
		t.Fatalf("gen: code %d, stderr %s", code, stderr)
	}
	if fi, err := os.Stat(raw); err != nil || fi.Size() != 8*20000 {
		t.Fatalf("gen wrote %v, %v; want 160000 bytes", fi, err)
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	flip := filepath.Join(dir, "flip.ndf")
	if code, stdout, stderr := run(t, string(data), "index", "build", "--frozen", "--raw", "--out", flip, "--temp-dir", dir, "-"); code != 0 || !strings.Contains(stdout, "probed within 1 bit") {
		t.Fatalf("build from stdin: code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	seeds := filepath.Join(dir, "seeds.ndf")
	if code, stdout, stderr := run(t, "", "index", "build", "--frozen", "--raw", "--plan", "seeds-4x16", "--out", seeds, raw); code != 0 {
		t.Fatalf("build seeds-4x16: code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, q := range []string{"0123456789abcdef", fmt.Sprintf("%016x", binary.LittleEndian.Uint64(data[8*777:])^0x8001)} {
		_, a, _ := run(t, "", "index", "query", "--index", flip, q)
		_, b, _ := run(t, "", "index", "query", "--index", seeds, q)
		if a != b {
			t.Errorf("query %s: flip-2x32 %q, seeds-4x16 %q", q, a, b)
		}
	}
	code, stdout, stderr := run(t, "", "index", "bench", "--index", flip, "--raw", raw, "--queries", "500", "--check", "50")
	if code != 0 || !strings.Contains(stdout, "50 queries equal to a scan") {
		t.Fatalf("bench: code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "", "index", "bench", "--index", flip, "--gen", "20000", "--queries", "300", "--check", "30"); code != 0 || !strings.Contains(stdout, "30 queries equal to a scan of index gen --n 20000") {
		t.Fatalf("bench --gen: code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	// A snapshot of other fingerprints: bench finds the difference.
	other := filepath.Join(dir, "other.u64")
	if code, _, _ := run(t, "", "index", "gen", "--n", "20001", "--out", other); code != 0 {
		t.Fatal("gen 20001")
	}
	if code, _, _ := run(t, "", "index", "bench", "--index", flip, "--raw", other, "--queries", "200", "--check", "200"); code == 0 {
		t.Error("bench against other fingerprints: code 0")
	}
}
