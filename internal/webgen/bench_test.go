package webgen

import (
	"context"
	"fmt"
	"io"
	"testing"
)

// BenchmarkWrite measures generation throughput (bytes of JSON lines) with
// the default options and a hot paragraph, by worker count; each iteration
// writes the next 10,000 documents, so copies reach further back as b.N
// grows.
func BenchmarkWrite(b *testing.B) {
	g, err := New(testPool(b), Options{Seed: 1, Hot: 0.2})
	if err != nil {
		b.Fatal(err)
	}
	const n = 10000
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			// Bytes per iteration from a first pass over the same range.
			cw := &counter{}
			if err := g.Write(context.Background(), cw, 0, n, workers); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(cw.n)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := g.Write(context.Background(), io.Discard, int64(i)*n, n, workers); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
