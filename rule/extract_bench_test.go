package rule

import (
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/testcorpora"
)

// BenchmarkExtract measures the features of one document (fingerprint, exact
// hash, shingle sketch) on real English prose, what every request to the
// service pays before it matches anything (New: Extract, new slices each time;
// Into: ExtractInto, reusing one Features, as a search does):
//
//	go test ./dedup -run '^$' -bench Extract -cpu 1
func BenchmarkExtract(b *testing.B) {
	rd, err := corpus.Open([]string{testcorpora.Path(b, "en_prose")}, corpus.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	bytes := 0
	for len(texts) < 2000 {
		d, err := rd.Next()
		if err != nil {
			break
		}
		if len(d.Text) >= 800 && len(d.Text) <= 1400 {
			texts = append(texts, d.Text)
			bytes += len(d.Text)
		}
	}
	rd.Close()
	if len(texts) == 0 {
		b.Fatal("no texts")
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
