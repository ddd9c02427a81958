package eval

import (
	"context"
	"os"
	"testing"
)

// BenchmarkComputeTruth measures the ground truth (tokens, shingles, MinHash,
// LSH, exact Jaccard of the candidates) on real corpora; en_gitdocs_dev only
// with NEARDUP_BIG=1.
func BenchmarkComputeTruth(b *testing.B) {
	for _, name := range []string{"en_spdx", "zh_fortunes", "en_gitdocs_dev"} {
		b.Run(name, func(b *testing.B) {
			if name == "en_gitdocs_dev" && os.Getenv("NEARDUP_BIG") == "" {
				b.Skip("set NEARDUP_BIG=1")
			}
			docs := readCorpus(b, name)
			var size int64
			for _, d := range docs {
				size += int64(len(d.Text))
			}
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ComputeTruth(context.Background(), docs, TruthOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTokens is the ground-truth tokenizer alone.
func BenchmarkTokens(b *testing.B) {
	docs := readCorpus(b, "en_spdx")
	var size int64
	for _, d := range docs {
		size += int64(len(d.Text))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var toks []string
	for b.Loop() {
		for _, d := range docs {
			toks = Tokens(toks[:0], d.Text)
		}
	}
}
