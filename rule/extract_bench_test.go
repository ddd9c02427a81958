package rule

import (
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/testcorpora"
)

// BenchmarkExtract measures the features of one document (fingerprint, exact
// hash, shingle sketch) on real English prose, what every request to the
// service pays before it matches anything (New: Extract, new slices each time;
// Into: ExtractInto, reusing one Features, as a search does):
//
//	go test ./rule -run '^$' -bench Extract -cpu 1
//
// The texts are 2,000 distinct pieces of about 1.2 KB cut from the corpus's
// books at spaces, as many as a busy service sees in a second: a benchmark
// that cycles a handful of texts keeps their terms in the cache and measures
// half the cost.
func BenchmarkExtract(b *testing.B) {
	texts := proseChunks(b, 2000, 1200)
	bytes := 0
	for _, t := range texts {
		bytes += len(t)
	}
	ex, err := NewExtractor(Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("New", func(b *testing.B) {
		b.SetBytes(int64(bytes / len(texts)))
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ex.Extract(texts[i%len(texts)])
		}
	})
	b.Run("Into", func(b *testing.B) {
		b.SetBytes(int64(bytes / len(texts)))
		b.ReportAllocs()
		var f Features
		for i := 0; b.Loop(); i++ {
			ex.ExtractInto(&f, texts[i%len(texts)])
		}
	})
}

// proseChunks returns n consecutive pieces of en_prose's texts, each the
// words that follow the last piece up to size bytes (cut at a space).
func proseChunks(tb testing.TB, n, size int) []string {
	var out []string
	for _, d := range testcorpora.Docs(tb, "en_prose") {
		t := d.Text
		for len(t) >= size && len(out) < n {
			cut := strings.LastIndexByte(t[:size], ' ')
			if cut <= 0 {
				cut = size
			}
			out = append(out, t[:cut])
			t = t[cut+1:]
		}
		if len(out) == n {
			return out
		}
	}
	tb.Fatalf("en_prose gives %d pieces of %d bytes, want %d", len(out), size, n)
	return nil
}
