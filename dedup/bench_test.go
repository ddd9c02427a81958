package dedup

import (
	"context"
	"io"
	"runtime"
	"sync"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/rule"
)

// Throughput on real English text: the whole pipeline against two baselines
// measured in the same run, so that the ratios hold on a busy or different
// machine: reading alone (zstd, JSON decoding) and reading plus en-words
// fingerprints on all cores (what any SimHash dedup must do). Run with
//
//	go test ./dedup -run '^$' -bench Throughput -benchtime 1x
func BenchmarkThroughput(b *testing.B) {
	for _, name := range []string{"en_gitdocs_dev", "zh_laws"} {
		path := testcorpora.Path(b, name)
		b.Run(name+"/read", func(b *testing.B) {
			for range b.N {
				b.SetBytes(readOnly(b, path, nil))
			}
		})
		b.Run(name+"/fingerprint", func(b *testing.B) {
			p, err := features.Lookup(rule.DefaultProfile)
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				b.SetBytes(readOnly(b, path, p))
			}
		})
		for _, method := range []string{rule.MethodSimHash, rule.MethodMinHash} {
			b.Run(name+"/dedup-"+method, func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					sum, err := Run(context.Background(), []string{path}, Options{Options: rule.Options{Method: method}})
					if err != nil {
						b.Fatal(err)
					}
					b.SetBytes(sum.Bytes)
					b.ReportMetric(sum.ReadSeconds, "read-s")
					b.ReportMetric(sum.CandidateSeconds, "candidates-s")
				}
			})
		}
	}
}

// readOnly reads every document of path, fingerprinting each with p on all
// cores when p is not nil, and returns the text bytes read.
func readOnly(tb testing.TB, path string, p *features.Profile) int64 {
	rd, err := corpus.Open([]string{path}, corpus.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	texts := make(chan []string, 4)
	var wg sync.WaitGroup
	if p != nil {
		for range runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for batch := range texts {
					for _, t := range batch {
						p.Fingerprint(t)
					}
				}
			}()
		}
	}
	var n int64
	var batch []string
	for {
		d, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		n += int64(len(d.Text))
		if p != nil {
			if batch = append(batch, d.Text); len(batch) == 64 {
				texts <- batch
				batch = nil
			}
		}
	}
	if len(batch) > 0 {
		texts <- batch
	}
	close(texts)
	wg.Wait()
	return n
}
