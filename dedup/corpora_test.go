package dedup

import (
	"testing"

	"github.com/neardup/neardup/internal/testcorpora"
)

// corpusPath returns the shared corpus file of that name (testcorpora.Path).
func corpusPath(tb testing.TB, name string) string {
	tb.Helper()
	return testcorpora.Path(tb, name)
}
