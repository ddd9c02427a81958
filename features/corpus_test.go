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

type corpusDoc struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Group string `json:"group"`
}

var corpusCache sync.Map // name -> []corpusDoc

// readCorpus returns the documents of corpora/<name>.jsonl.zst, skipping the
// test when the corpora are not there.
func readCorpus(tb testing.TB, name string) []corpusDoc {
	tb.Helper()
	if v, ok := corpusCache.Load(name); ok {
		return v.([]corpusDoc)
	}
	f, err := os.Open(testcorpora.Path(tb, name))
	if err != nil {
		tb.Skipf("corpus %s not available: %v", name, err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<27))
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	var docs []corpusDoc
	for sc.Scan() {
		var d corpusDoc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	corpusCache.Store(name, docs)
	return docs
}
