package features

import (
	"hash/fnv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/simhash"
)

// cpuTime returns the CPU time (user+system) the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchDocs runs fp over docs b.N times and reports, besides the wall-clock
// MB/s of b.SetBytes, "cpuMB/s": bytes per second of CPU time the process
// used, the per-core throughput even when other processes share the CPU.
func benchDocs(b *testing.B, docs []corpusDoc, fp func(string) uint64) {
	total := 0
	for _, d := range docs {
		total += len(d.Text)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	start := cpuTime()
	n := 0
	for b.Loop() {
		for _, d := range docs {
			sink += fp(d.Text)
		}
		n++
	}
	if cpu := cpuTime() - start; cpu > 0 {
		b.ReportMetric(float64(total)*float64(n)/cpu.Seconds()/1e6, "cpuMB/s")
	}
}

// naiveSimhash is the benchmark baseline: the standard library's FNV-1a over
// strings.Fields words into a 64-counter SimHash, with no cleanup at all.
func naiveSimhash(text string) uint64 {
	var v [64]int
	h := fnv.New64a()
	for _, w := range strings.Fields(text) {
		h.Reset()
		h.Write([]byte(w))
		x := h.Sum64()
		for i := 0; i < 64; i++ {
			if x>>i&1 == 1 {
				v[i]++
			} else {
				v[i]--
			}
		}
	}
	var fp uint64
	for i, c := range v {
		if c > 0 {
			fp |= 1 << i
		}
	}
	return fp
}

var sink uint64

// benchBytes bounds the text each benchmark iteration fingerprints, so that
// the slow dictionary profile takes seconds, not minutes, per iteration.
const benchBytes = 8 << 20

// prefix returns the leading documents of docs holding about max bytes.
func prefix(docs []corpusDoc, max int) []corpusDoc {
	n := 0
	for i, d := range docs {
		if n += len(d.Text); n >= max {
			return docs[:i+1]
		}
	}
	return docs
}

// BenchmarkFingerprint runs every profile on two real corpora, with the naive
// baseline first. Compare MB/s to the baseline's: other processes share the
// CPU, the ratio is the robust figure.
//
//	go test -run '^$' -bench . -cpu 1 ./features
func BenchmarkFingerprint(b *testing.B) {
	for _, corpus := range []string{"en_prose", "zh_laws"} {
		docs := prefix(readCorpus(b, corpus), benchBytes)
		b.Run(corpus+"/baseline-fnv-fields", func(b *testing.B) {
			benchDocs(b, docs, naiveSimhash)
		})
		for _, name := range Names() {
			p, err := Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(corpus+"/"+name, func(b *testing.B) {
				p.Fingerprint(docs[0].Text) // load lazily built dictionaries first
				benchDocs(b, docs, func(s string) uint64 { return uint64(p.Fingerprint(s).Fingerprint) })
			})
		}
	}
}

// BenchmarkStages measures the stages of the en-words pipeline alone on
// en_prose.
func BenchmarkStages(b *testing.B) {
	docs := readCorpus(b, "en_prose")
	var c cleaner
	var buf []byte
	b.Run("clean", func(b *testing.B) {
		benchDocs(b, docs, func(s string) uint64 {
			buf = c.clean(buf[:0], s, CleanOptions{})
			return uint64(len(buf))
		})
	})
	cleaned := make([]corpusDoc, len(docs))
	for i, d := range docs {
		cleaned[i].Text = Clean(d.Text, CleanOptions{})
	}
	var toks []Token
	b.Run("words", func(b *testing.B) {
		benchDocs(b, cleaned, func(s string) uint64 {
			toks = Words{}.Tokenize(toks[:0], s)
			return uint64(len(toks))
		})
	})
	b.Run("hash", func(b *testing.B) {
		benchDocs(b, cleaned, func(s string) uint64 {
			toks = Words{}.Tokenize(toks[:0], s)
			var x uint64
			for _, t := range toks {
				x += simhash.HashString64(t.Text)
			}
			return x
		})
	})
}
