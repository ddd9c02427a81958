package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// TestDedupChecksOutputs gives Dedup outputs that the write at the end of
// the pipeline would fail on (or clobber): Dedup must refuse them while it
// builds the pipeline, before anything runs, naming the path.
func TestDedupChecksOutputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":"a","text":"hello world"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, "kept.jsonl")
	tests := []struct {
		name string
		opt  Options
		want string // in the error; "" means accepted
	}{
		{"directory", Options{Output: dir}, "is a directory"},
		{"parent is a file", Options{Output: filepath.Join(in, "kept.jsonl")}, "not a directory"},
		{"grandparent is a file", Options{Duplicates: filepath.Join(in, "sub", "dups.jsonl")}, "not a directory"},
		{"same file twice", Options{Output: kept, Clusters: kept}, "also the"},
		{"new file", Options{Output: kept}, ""},
		{"new directories", Options{Output: filepath.Join(dir, "a", "b", "kept.jsonl")}, ""},
		{"remote", Options{Output: "gs://bucket/kept.jsonl"}, ""},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		tests = append(tests, struct {
			name string
			opt  Options
			want string
		}{"read-only directory", Options{Output: filepath.Join(ro, "kept.jsonl")}, "permission denied"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opt.Inputs = []string{in}
			_, s := beam.NewPipelineWithRoot()
			_, err := Dedup(s, tt.opt)
			if tt.want == "" {
				if err != nil {
					t.Errorf("Dedup: %v, want the output accepted", err)
				}
				return
			}
			if !errors.Is(err, ErrOutput) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Dedup: %v, want an ErrOutput containing %q", err, tt.want)
			}
		})
	}
	// The check leaves nothing behind: no probe file, no directory made.
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, ","); got != "in.jsonl,ro" {
		t.Errorf("the checks left %s in the directory, want only in.jsonl,ro", got)
	}
}

// TestPartBase: parts go beside a regular or new output, and to the
// temporary directory for a device, which is written in place.
func TestPartBase(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		path   string
		beside bool
	}{
		{filepath.Join(dir, "new.jsonl"), true},
		{"gs://bucket/kept.jsonl", true},
		{os.DevNull, false},
	} {
		got := partBase(tt.path)
		if (got == tt.path) != tt.beside || (!tt.beside && !strings.HasPrefix(got, os.TempDir())) {
			t.Errorf("partBase(%q) = %q, want beside it: %v", tt.path, got, tt.beside)
		}
	}
}
