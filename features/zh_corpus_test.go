package features

import (
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/testcorpora"
)

type zhDoc = testcorpora.Doc

var zhLaws struct {
	once sync.Once
	docs []zhDoc
}

// zhLawsDocs returns the documents of zh_laws of at least 2,000 bytes, read
// once per test binary; the test fails when the corpus is absent.
func zhLawsDocs(tb testing.TB) []zhDoc {
	tb.Helper()
	testcorpora.Path(tb, "zh_laws") // fail every caller, not only the first
	zhLaws.once.Do(func() {
		for _, d := range testcorpora.Docs(tb, "zh_laws") {
			if len(d.Text) >= 2000 {
				zhLaws.docs = append(zhLaws.docs, d)
			}
		}
	})
	if len(zhLaws.docs) == 0 {
		tb.Fatal("zh_laws: no documents of 2,000 bytes or more (or reading it failed in an earlier test)")
	}
	return zhLaws.docs
}

// zhSample returns n documents spread evenly over the corpus.
func zhSample(tb testing.TB, n int) []zhDoc {
	docs := zhLawsDocs(tb)
	if n >= len(docs) {
		return docs
	}
	out := make([]zhDoc, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, docs[i*len(docs)/n])
	}
	return out
}
