package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/rule"
)

// BenchmarkHandler measures one request through the whole handler in
// process (routing, JSON, features, the decision, the reply, metrics and the
// request log to a discarding logger), without the network, over 50,000
// stored documents of ~1 KB with Zipf-distributed words, on a MemStore (no
// fsync: the store's commit is BENCHMARKS.md's business). It is the library
// figure beside the load generator's; cpu-us/op is the figure to compare on
// a shared machine.
func BenchmarkHandler(b *testing.B) {
	for _, method := range []string{rule.MethodSimHash, rule.MethodMinHash} {
		b.Run(method, func(b *testing.B) { benchmarkHandler(b, method) })
	}
}

func benchmarkHandler(b *testing.B, method string) {
	{
		s := newTestServer(b, nil, Options{Dedup: rule.Options{Method: method}})
		h := s.Handler()
		rng := rand.New(rand.NewPCG(1, 1))
		zipf := rand.NewZipf(rng, 1.1, 1, 50000)
		text := func() string {
			var sb strings.Builder
			for sb.Len() < 1024 {
				fmt.Fprintf(&sb, "w%d ", zipf.Uint64())
			}
			return sb.String()
		}
		const stored = 50000
		for i := 0; i < stored; i += 1000 {
			docs := make([]map[string]string, 0, 1000)
			for j := i; j < i+1000; j++ {
				docs = append(docs, map[string]string{"id": fmt.Sprint("s", j), "text": text()})
			}
			body, _ := json.Marshal(map[string]any{"mode": "add", "documents": docs})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/documents:batch", bytes.NewReader(body)))
			if w.Code != http.StatusOK {
				b.Fatalf("preload: %d %s", w.Code, w.Body)
			}
		}
		bodies := make([][]byte, 4096)
		for i := range bodies {
			bodies[i], _ = json.Marshal(text())
		}
		run := func(name, path string, body func(i int) []byte) {
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cpuTime()
				for i := 0; b.Loop(); i++ {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, httptest.NewRequest("POST", path, bytes.NewReader(body(i))))
					if w.Code >= 300 {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
				}
				// CPU time of the process per request, the garbage
				// collector's included: on a shared machine it moves less
				// than wall time does.
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
			})
		}
		run("search", "/v1/search", func(i int) []byte {
			return append(append([]byte(`{"text":`), bodies[i%len(bodies)]...), '}')
		})
		run("add_if_new", "/v1/documents", func(i int) []byte {
			b := fmt.Appendf(nil, `{"id":"b%d-%d","mode":"add_if_new","text":`, rng.Uint64(), i)
			return append(append(b, bodies[i%len(bodies)]...), '}')
		})
	}
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
