package command

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// At k=1: a chain 0-1-2 (0 and 2 are two bits apart) plus 6, a copy of 0;
// 3 and 4 one bit apart; 5 alone.
const clustersInput = `0000000000000000
0000000000000001
0000000000000003
ffffffffffffffff
fffffffffffffffe
00000000000000ff
0000000000000000
`

func TestClusters(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"chain joins", clustersInput, []string{"clusters", "--k", "1"}, "0\t1\t2\t6\n3\t4\n"},
		{"k=0", clustersInput, []string{"clusters", "--k", "0"}, "0\t6\n"},
		{"assign", clustersInput, []string{"clusters", "--k", "1", "--assign"}, "0\t0\n1\t0\n2\t0\n3\t3\n4\t3\n5\t5\n6\t0\n"},
		{"ids", "a 0000000000000000\nb 0000000000000001\nc 00000000000000ff\n", []string{"clusters", "-k", "1"}, "a\tb\n"},
		{"none", "a 0000000000000000\nb ffffffffffffffff\n", []string{"clusters"}, ""},
		{"empty", "", []string{"clusters"}, ""},
	}
	for _, tt := range tests {
		code, out, errs := run(t, tt.stdin, tt.args...)
		if code != 0 || out != tt.want {
			t.Errorf("%s: code %d, got %q, want %q (stderr %s)", tt.name, code, out, tt.want, errs)
		}
	}
}

func TestClustersJSON(t *testing.T) {
	code, out, errs := run(t, "a 0000000000000000\nb 0000000000000001\nc 00000000000000ff\n", "clusters", "--k", "1", "--json")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	var c clusterJSON
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if got, want := fmt.Sprint(c), fmt.Sprint(clusterJSON{2, []int{0, 1}, []string{"a", "b"}}); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	code, out, _ = run(t, clustersInput, "clusters", "--k", "1", "--json", "--assign")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var a assignJSON
	if code != 0 || len(lines) != 7 || json.Unmarshal([]byte(lines[6]), &a) != nil || a != (assignJSON{Position: 6, Keep: 0}) {
		t.Errorf("--assign --json: code %d, lines %q", code, lines)
	}
}

func TestClustersBadInput(t *testing.T) {
	code, _, errs := run(t, "0\nxyz\n", "clusters")
	if code != 1 || !strings.Contains(errs, "-:2:") {
		t.Errorf("malformed: code %d, stderr %q; want 1 and the line", code, errs)
	}
	code, out, errs := run(t, "0\nxyz\n0\n", "clusters", "--skip-bad", "-v")
	if code != 0 || out != "0\t1\n" || !strings.Contains(errs, "1 clusters, 1 near-duplicates") {
		t.Errorf("--skip-bad: code %d, stdout %q, stderr %q", code, out, errs)
	}
}
