package features

import (
	"hash/fnv"
	"strings"
	"testing"
)

// cpuThroughput runs f b.N times and reports, besides the wall-clock MB/s of
// b.SetBytes, "cpuMB/s": bytes per CPU-second of the whole process (garbage
// collection included). On a shared machine the wall-clock figure drops with
// the load; the CPU figure is the per-core throughput.
func cpuThroughput(b *testing.B, size int, f func()) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	start := processCPU()
	for b.Loop() {
		f()
	}
	if cpu := processCPU() - start; cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu.Seconds(), "cpuMB/s")
	}
}

// BenchmarkChinese measures the zh profiles on 200 documents of zh_laws
// (about 5 MB), with in-run baselines: gse's plain segmentation (Segmenter.Cut
// without HMM, the work zh-words cannot avoid) and the standard library's
// FNV-1a over strings.Fields words (a lower bound on reading the text).
// MB/s per core: run with -cpu 1.
//
//	go test -run '^$' -bench Chinese -cpu 1 ./features
func BenchmarkChinese(b *testing.B) {
	docs := zhSample(b, 200)
	size := 0
	for _, d := range docs {
		size += len(d.Text)
	}
	for _, name := range []string{"zh-words", "zh-ngrams"} {
		p, err := Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		p.Fingerprint(docs[0].Text) // load the dictionary outside the timing
		b.Run(name, func(b *testing.B) {
			cpuThroughput(b, size, func() {
				for _, d := range docs {
					p.Fingerprint(d.Text)
				}
			})
		})
	}
	b.Run("baseline=gse-cut", func(b *testing.B) {
		seg := chineseSegmenter()
		cpuThroughput(b, size, func() {
			for _, d := range docs {
				seg.Cut(d.Text)
			}
		})
	})
	b.Run("baseline=fnv-fields", func(b *testing.B) {
		var sink uint64
		cpuThroughput(b, size, func() {
			for _, d := range docs {
				for _, w := range strings.Fields(d.Text) {
					h := fnv.New64a()
					h.Write([]byte(w))
					sink += h.Sum64()
				}
			}
		})
		_ = sink
	})
}

// BenchmarkHanBigrams measures the Han bigram tokenizer alone.
func BenchmarkHanBigrams(b *testing.B) {
	docs := zhSample(b, 200)
	size := 0
	for _, d := range docs {
		size += len(d.Text)
	}
	var toks []Token
	cpuThroughput(b, size, func() {
		for _, d := range docs {
			toks = HanBigrams{}.Tokenize(toks[:0], d.Text)
		}
	})
}

// BenchmarkFoldTraditional measures Traditional-to-Simplified folding on
// Simplified text (the common case: nothing to change).
func BenchmarkFoldTraditional(b *testing.B) {
	docs := zhSample(b, 200)
	size := 0
	for _, d := range docs {
		size += len(d.Text)
	}
	var buf []byte
	cpuThroughput(b, size, func() {
		for _, d := range docs {
			buf = AppendFoldTraditional(buf[:0], d.Text)
		}
	})
}
