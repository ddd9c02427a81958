package features

import (
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/testcorpora"
)

type corpusDoc = testcorpora.Doc

var corpusCache sync.Map // name -> []corpusDoc

// readCorpus returns the documents of corpora/<name>.jsonl.zst, read once
// per test binary, failing the test when the corpora are not there.
func readCorpus(tb testing.TB, name string) []corpusDoc {
	tb.Helper()
	if v, ok := corpusCache.Load(name); ok {
		return v.([]corpusDoc)
	}
	docs := testcorpora.Docs(tb, name)
	corpusCache.Store(name, docs)
	return docs
}
