package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/beam/pipeline"
	"github.com/neardup/neardup/rule"
)

// corpusPath returns the named corpus (testdata/corpora of the repository,
// or NEARDUP_CORPORA), failing tb when it is missing: the corpora are part
// of the clone. It is the root module's internal/testcorpora, which this
// module cannot import: the repository root is the directory holding
// beam/go.mod.
func corpusPath(tb testing.TB, name string) string {
	tb.Helper()
	dir := os.Getenv("NEARDUP_CORPORA")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			tb.Fatal(err)
		}
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "beam", "go.mod")); err == nil {
				dir = filepath.Join(d, "testdata", "corpora")
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	p := filepath.Join(dir, name+".jsonl.zst")
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("corpus %s: %v (the corpora are in testdata/corpora of the repository; NEARDUP_CORPORA overrides)", name, err)
	}
	return p
}

// TestCorporaEqualBatch runs the pipeline on prism over the shared corpora
// and checks that its kept documents, its removals (each naming the same
// kept document, with the same measures) and its clusters are dedup.Run's,
// byte for byte, with both candidate methods; en_spdx and zh_laws also with
// DirectComponent 2, so that their candidate components of more than two
// documents take the verified stars (the defaults decide every candidate
// component of these corpora whole). en_gitdocs_dev takes about
// 150 s for both methods on prism, batch runs included (2026-11-26, a
// shared two-core machine), so it runs only with NEARDUP_BIG=1, as eval's
// TestReferenceCounts does.
func TestCorporaEqualBatch(t *testing.T) {
	corpora := []string{"en_spdx", "zh_fortunes", "zh_laws"}
	if !testing.Short() {
		corpora = append(corpora, "en_prose")
	}
	if os.Getenv("NEARDUP_BIG") != "" {
		corpora = append(corpora, "en_gitdocs_dev")
	}
	for _, name := range corpora {
		opts := []pipeline.Options{{Method: rule.MethodSimHash}, {Method: rule.MethodMinHash}}
		if name == "en_spdx" || name == "zh_laws" {
			opts = append(opts, pipeline.Options{Method: rule.MethodMinHash, DirectComponent: 2})
		}
		for _, opt := range opts {
			method := opt.Method
			t.Run(fmt.Sprintf("%s/%s/direct=%d", name, method, opt.DirectComponent), func(t *testing.T) {
				in := corpusPath(t, name)
				b, g := runBoth(t, []string{in}, opt)
				assertSame(t, b, g)
				if name != "en_prose" && strings.Count(b[1], "\n") == 0 {
					t.Errorf("batch removed nothing from %s: the comparison checks little", name)
				}
				t.Logf("%s %s: %d kept, %d removed, %d clusters", name, method,
					strings.Count(b[0], "\n"), strings.Count(b[1], "\n"), strings.Count(b[2], "\n"))
			})
		}
	}
}
