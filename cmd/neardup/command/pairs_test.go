package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
)

// sortedLines returns s's lines sorted, for output in no particular order.
func sortedLines(s string) []string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) == 1 && ls[0] == "" {
		return nil
	}
	sort.Strings(ls)
	return ls
}

const pairsInput = `# fingerprints, simhash-cpp style
f0f0f0f0f0f0f0f0
f0f0f0f0f0f0f0f1

0x0f0f0f0f0f0f0f0f
0XF0F0F0F0F0F0F0F0
f0f0f0f0f0f0f0f7
`

func TestPairs(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  []string
	}{
		{"positions", pairsInput, []string{"pairs", "--k", "3"}, []string{"0\t1\t1", "0\t3\t0", "0\t4\t3", "1\t3\t1", "1\t4\t2", "3\t4\t3"}},
		{"k=0", pairsInput, []string{"pairs", "--k", "0", "-"}, []string{"0\t3\t0"}},
		{"ids", "a\tf0f0f0f0f0f0f0f0\nb f0f0f0f0f0f0f0f1\n\"c\\td\"\t0f0f0f0f0f0f0f0f\n", []string{"pairs", "-k", "1"}, []string{"a\tb\t1"}},
		{"jsonl input", `{"id":"x","fingerprint":"f0f0f0f0f0f0f0f0"}` + "\n" + `{"id":"y","fingerprint":17361641481138401520}` + "\n", []string{"pairs"}, []string{"x\ty\t0"}},
		{"sorted", pairsInput, []string{"pairs", "--sort", "--blocks", "5", "--workers", "1"}, []string{"0\t1\t1", "0\t3\t0", "0\t4\t3", "1\t3\t1", "1\t4\t2", "3\t4\t3"}},
		{"empty", "", []string{"pairs"}, nil},
		{"hex that starts like 0b", "0b27b4c9109ada70\n0b27b4c9109ada71\n", []string{"pairs", "-k", "1"}, []string{"0\t1\t1"}},
	}
	for _, tt := range tests {
		code, out, errs := run(t, tt.stdin, tt.args...)
		if code != 0 {
			t.Errorf("%s: code %d, stderr %s", tt.name, code, errs)
			continue
		}
		if got := sortedLines(out); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPairsSortedOrder(t *testing.T) {
	_, out, _ := run(t, pairsInput, "pairs", "--sort")
	want := "0\t1\t1\n0\t3\t0\n0\t4\t3\n1\t3\t1\n1\t4\t2\n3\t4\t3\n"
	if out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestPairsJSON(t *testing.T) {
	code, out, errs := run(t, "a\tf0f0f0f0f0f0f0f0\n0\t0xf0f0f0f0f0f0f0f1\n", "pairs", "--json")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	var p pairJSON
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if want := (pairJSON{0, 1, 1, "a", "0"}); p != want {
		t.Errorf("got %+v, want %+v", p, want)
	}
}

func TestPairsVerbose(t *testing.T) {
	code, _, errs := run(t, pairsInput, "pairs", "-v")
	if code != 0 || !strings.Contains(errs, "plan: k=3 blocks=") || !strings.Contains(errs, "6 pairs within 3 bits") {
		t.Errorf("code %d, stderr %q; want the plan and the pair count", code, errs)
	}
}

func TestPairsBadInput(t *testing.T) {
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr string
		stdout []string
	}{
		{"malformed line", "f0f0f0f0f0f0f0f0\nnot a fingerprint\n", []string{"pairs"}, 1, "-:2:", nil},
		{"skip bad", "f0f0f0f0f0f0f0f0\nzz\nf0f0f0f0f0f0f0f0\n", []string{"pairs", "--skip-bad"}, 0, "skipped -:2:", []string{"0\t1\t0"}},
		{"bad json", "{\"id\": 1,\n", []string{"pairs"}, 1, "malformed JSON", nil},
		{"binary", "\x00\x01\x02\xff\xfe\n", []string{"pairs"}, 1, "-:1:", nil},
		{"huge line", strings.Repeat("1", 2<<20) + "\n1\n1\n", []string{"pairs", "--skip-bad"}, 0, "longer than", []string{"0\t1\t0"}},
		{"bad k", "", []string{"pairs", "--k", "65"}, 2, "--k 65", nil},
		{"bad blocks", "", []string{"pairs", "--k", "3", "--blocks", "3"}, 2, "--blocks 3", nil},
		{"bad workers", "", []string{"pairs", "--workers", "-1"}, 2, "--workers", nil},
		{"missing file", "", []string{"pairs", "/no/such/file"}, 1, "no such file", nil},
	}
	for _, tt := range tests {
		code, out, errs := run(t, tt.stdin, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.stderr) || fmt.Sprint(sortedLines(out)) != fmt.Sprint(tt.stdout) {
			t.Errorf("%s: got code %d, stdout %q, stderr %q; want code %d, stdout %q, stderr containing %q", tt.name, code, out, errs, tt.code, tt.stdout, tt.stderr)
		}
	}
}

func TestPairsHelp(t *testing.T) {
	for _, cmd := range []string{"pairs", "clusters"} {
		code, out, _ := run(t, "", cmd, "--help")
		if code != 0 || !strings.Contains(out, "--k") || !strings.Contains(out, "--skip-bad") || !strings.Contains(out, "0-based position") {
			t.Errorf("%s --help: code %d, output %q", cmd, code, out)
		}
	}
}

// FuzzJoinInput feeds arbitrary bytes to the fingerprint-file reader: it must
// not panic, and every fingerprint it accepts must be printed back.
func FuzzJoinInput(f *testing.F) {
	f.Add([]byte(pairsInput))
	f.Add([]byte("a\tf0f0f0f0f0f0f0f0\n\"q\\\"\" 12\n{\"id\":3,\"fingerprint\":\"0x1\"}\n"))
	f.Add([]byte("{\"fingerprint\":null}\n\xff\x00\r\n0b101\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []bool{false, true} {
			in := &joinInput{}
			err := in.read(context.Background(), strings.NewReader(string(data)), "fuzz", fpReadOptions{skipBad: skip, warn: io.Discard})
			var u usageError
			if skip && errors.As(err, &u) {
				continue // only 16-digit decimal fingerprints: ambiguous whatever --skip-bad says
			}
			if skip && err != nil {
				t.Fatalf("--skip-bad read failed: %v", err)
			}
			if in.ids != nil && len(in.ids) != len(in.fps) {
				t.Fatalf("%d ids for %d fingerprints", len(in.ids), len(in.fps))
			}
			for i := range in.fps {
				if in.label(i) == "" {
					t.Fatalf("empty label for fingerprint %d", i)
				}
			}
		}
	})
}

// TestPairsJSONPositions: without ids, --json lines are formatted by hand;
// they must be exactly what encoding/json writes for the same pair.
func TestPairsJSONPositions(t *testing.T) {
	code, out, errs := run(t, pairsInput, "pairs", "--json", "--sort")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	lines := strings.SplitAfter(out, "\n")
	lines = lines[:len(lines)-1]
	if len(lines) != 6 {
		t.Fatalf("got %d lines %q, want 6", len(lines), out)
	}
	for _, l := range lines {
		var p pairJSON
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		want, _ := json.Marshal(p)
		if l != string(want)+"\n" {
			t.Errorf("line %q, encoding/json writes %q", l, want)
		}
	}
}
