package corpus

import (
	"io"
	"os"
	"testing"
)

// BenchmarkRead reads the shared corpora (zstd-compressed JSONL); the bytes
// per second are of decompressed JSONL.
func BenchmarkRead(b *testing.B) {
	for _, name := range []string{"en_gitdocs_dev", "zh_laws"} {
		p := "../../shared/corpora/" + name + ".jsonl.zst"
		if _, err := os.Stat(p); err != nil {
			b.Logf("skip %s: %v", name, err)
			continue
		}
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
	}
}
