package features

import (
	"bufio"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/internal/testcorpora"
)

type zhDoc struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Group string `json:"group"`
}

var zhLaws struct {
	once sync.Once
	docs []zhDoc
	err  error
}

// zhLawsDocs returns the documents of zh_laws of at least 2,000 bytes, read
// once per test binary; the test is skipped when the corpus is absent.
func zhLawsDocs(tb testing.TB) []zhDoc {
	tb.Helper()
	path := testcorpora.Path(tb, "zh_laws")
	zhLaws.once.Do(func() {
		f, err := os.Open(path)
		if err != nil {
			zhLaws.err = err
			return
		}
		defer f.Close()
		d, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<27))
		if err != nil {
			zhLaws.err = err
			return
		}
		defer d.Close()
		sc := bufio.NewScanner(d)
		sc.Buffer(nil, 1<<27)
		for sc.Scan() {
			var doc zhDoc
			if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
				zhLaws.err = err
				return
			}
			if len(doc.Text) >= 2000 {
				zhLaws.docs = append(zhLaws.docs, doc)
			}
		}
		zhLaws.err = sc.Err()
	})
	if zhLaws.err != nil {
		if os.IsNotExist(zhLaws.err) {
			tb.Skipf("corpus not available: %v", zhLaws.err)
		}
		tb.Fatal(zhLaws.err)
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
