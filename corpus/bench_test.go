package corpus

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/internal/testcorpora"
)

// BenchmarkRead reads the shared corpora (zstd-compressed JSONL); the bytes
// per second are of decompressed JSONL.
func BenchmarkRead(b *testing.B) {
	for _, name := range []string{"en_gitdocs_dev", "zh_laws"} {
		p := testcorpora.Path(b, name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := Open([]string{p}, Options{})
				if err != nil {
					b.Fatal(err)
				}
				var n int64
				for {
					d, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n += int64(len(d.Raw)) + 1
				}
				r.Close()
				b.SetBytes(n)
			}
		})
		// Baseline: zstd decoding and line splitting alone, no JSON.
		b.Run(name+"/zstd-lines", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderConcurrency(1))
				if err != nil {
					b.Fatal(err)
				}
				br := bufio.NewReaderSize(zr, bufSize)
				var n int64
				for {
					line, err := br.ReadSlice('\n')
					n += int64(len(line))
					if err == io.EOF {
						break
					}
					if err != nil && err != bufio.ErrBufferFull {
						b.Fatal(err)
					}
				}
				zr.Close()
				f.Close()
				b.SetBytes(n)
			}
		})
	}
}

// BenchmarkReadParquet reads the shared corpora converted to Parquet (zstd,
// 1,000 rows per row group), text and id columns only and, for "rows",
// whole rows as the output pass does; the bytes per second are of text.
func BenchmarkReadParquet(b *testing.B) {
	for _, name := range []string{"en_gitdocs_dev", "zh_laws"} {
		p := filepath.Join(b.TempDir(), name+".parquet")
		testcorpora.WriteParquet(b, name, p, 1000)
		for _, rows := range []bool{false, true} {
			label := name
			if rows {
				label += "/rows"
			}
			b.Run(label, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					r, err := Open([]string{p}, Options{Rows: rows})
					if err != nil {
						b.Fatal(err)
					}
					var n int64
					for {
						d, err := r.Next()
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						n += int64(len(d.Text))
					}
					r.Close()
					b.SetBytes(n)
				}
			})
		}
	}
}
