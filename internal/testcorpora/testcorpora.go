// Package testcorpora finds the shared real-text corpora (../shared/corpora
// beside the repository, see its README.md) for tests and benchmarks.
//
//	path := testcorpora.Path(t, "en_spdx") // .../shared/corpora/en_spdx.jsonl.zst
//
// NEARDUP_CORPORA overrides the directory. When the corpora are missing a test
// is skipped, except under CI (CI set), where a silent skip would hide lost
// coverage, so it fails.
package testcorpora

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the corpora directory: NEARDUP_CORPORA, else shared/corpora
// beside the directory holding go.mod, found by walking up from the working
// directory (a package's directory under go test). It returns "" when neither
// is found.
func Dir() string {
	if d := os.Getenv("NEARDUP_CORPORA"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(d), "shared", "corpora")
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Path returns the file of the named corpus ("en_spdx" for
// en_spdx.jsonl.zst), skipping tb when it is missing, or failing under CI.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(Dir(), name+".jsonl.zst")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("corpus %s: %v (CI needs ../shared/corpora beside the clone, or NEARDUP_CORPORA)", name, err)
		}
		tb.Skipf("corpus %s not available: %v", name, err)
	}
	return p
}
