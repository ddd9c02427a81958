// Command neardup-load measures a running "neardup serve" on the loopback
// interface: it preloads -n documents of about 1 KB (windows of real English
// prose with random word edits) through /v1/documents:batch, then sends
// add_if_new and search requests from -c goroutines for -d each and prints
// requests/s with p50/p99 latency and the server's bytes per document.
//
//	neardup serve --addr 127.0.0.1:8080 --data /tmp/nd &
//	neardup-load -url http://127.0.0.1:8080 -n 100000 -d 10s ../shared/corpora/en_prose.jsonl.zst
//
// It refuses any address that is not loopback, and stops after -d per phase.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup/corpus"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "the service (loopback only)")
	n := flag.Int("n", 100000, "documents to preload (at most 10,000,000)")
	c := flag.Int("c", 16, "concurrent clients")
	d := flag.Duration("d", 10*time.Second, "duration of each measured phase (at most 5m)")
	batch := flag.Int("batch", 500, "documents per preload batch request")
	pool := flag.Int("texts", 20000, "distinct request texts made before the measured phases")
	flag.Parse()
	u, err := url.Parse(*base)
	if err != nil {
		log.Fatal(err)
	}
	if ip := net.ParseIP(u.Hostname()); (ip == nil || !ip.IsLoopback()) && u.Hostname() != "localhost" {
		log.Fatalf("%s is not a loopback address", u.Hostname())
	}
	*n = min(*n, 10_000_000)
	*d = min(*d, 5*time.Minute)
	if flag.NArg() != 1 {
		log.Fatal("usage: neardup-load [flags] en_prose.jsonl.zst")
	}
	words := readWords(flag.Arg(0))
	log.Printf("%d words of prose", len(words))
	tr := &http.Transport{MaxIdleConnsPerHost: *c * 2}
	client := &http.Client{Transport: tr, Timeout: time.Minute}

	// Preload with a fixed seed, so a rerun on the same data directory adds
	// nothing new.
	t0 := time.Now()
	r := rand.New(rand.NewPCG(1, 1))
	run := time.Now().UnixNano()
	for i := 0; i < *n; i += *batch {
		docs := make([]map[string]string, 0, *batch)
		for j := i; j < min(i+*batch, *n); j++ {
			docs = append(docs, map[string]string{"id": fmt.Sprint("pre-", j), "text": doc(r, words)})
		}
		post(client, *base+"/v1/documents:batch", map[string]any{"mode": "add_if_new", "documents": docs})
		if i%(*batch*200) == 0 {
			log.Printf("preloaded %d", i)
		}
	}
	log.Printf("preloaded %d documents in %v", *n, time.Since(t0).Round(time.Millisecond))

	// The measured phases send bodies made before the clock starts, over
	// one raw keep-alive connection per client (wrk's way): the client's own
	// CPU, which shares the machine's cores with the server, is then little
	// more than the system calls, and the figures are the server's.
	texts := make([][]byte, *pool)
	for i := range texts {
		texts[i], _ = json.Marshal(doc(r, words))
	}
	log.Printf("%d request texts ready", len(texts))
	phase(u.Host, *c, *d, "add_if_new", "/v1/documents", func(g, n int, b []byte) []byte {
		b = fmt.Appendf(b, `{"id":"load-%d-%d-%d","mode":"add_if_new","text":`, run, g, n)
		b = append(b, texts[(g*7919+n)%len(texts)]...)
		return append(b, '}')
	})
	phase(u.Host, *c, *d, "search", "/v1/search", func(g, n int, b []byte) []byte {
		b = append(b, `{"text":`...)
		b = append(b, texts[(g*104729+n*31)%len(texts)]...)
		return append(b, '}')
	})
	resp, err := client.Get(*base + "/v1/stats")
	if err != nil {
		log.Fatal(err)
	}
	stats, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("stats: %s", stats)
}

func readWords(path string) []string {
	r, err := corpus.Open([]string{path}, corpus.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var words []string
	for {
		d, err := r.Next()
		if err == io.EOF {
			return words
		}
		if err != nil {
			log.Fatal(err)
		}
		words = append(words, strings.Fields(d.Text)...)
	}
}

// doc returns about 1 KB: a window of the prose with a few words replaced.
func doc(r *rand.Rand, words []string) string {
	i := r.IntN(len(words) - 400)
	var b strings.Builder
	for j := i; b.Len() < 1024; j++ {
		w := words[j]
		if r.IntN(20) == 0 {
			w = words[r.IntN(len(words))]
		}
		b.WriteString(w)
		b.WriteByte(' ')
	}
	return b.String()
}

func post(c *http.Client, u string, v any) int {
	body, _ := json.Marshal(v)
	resp, err := c.Post(u, "application/json", bytes.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusConflict {
		log.Fatalf("%s: status %d", u, resp.StatusCode)
	}
	return resp.StatusCode
}

// phase runs conc clients for d, each on its own connection, posting the
// bodies body(client, n, buf) makes to path, and prints requests/s and
// latency percentiles.
func phase(host string, conc int, d time.Duration, name, path string, body func(g, n int, b []byte) []byte) {
	var mu sync.Mutex
	var lat []time.Duration
	codes := map[int]int{}
	var failed atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for g := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", host)
			if err != nil {
				log.Fatal(err)
			}
			defer conn.Close()
			br := bufio.NewReaderSize(conn, 16<<10)
			var my []time.Duration
			myCodes := map[int]int{}
			var req, b []byte
			for n := 0; time.Now().Before(deadline); n++ {
				b = body(g, n, b[:0])
				req = fmt.Appendf(req[:0], "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, host, len(b))
				req = append(req, b...)
				t0 := time.Now()
				if _, err := conn.Write(req); err != nil {
					log.Fatal(err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					log.Fatal(err)
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil {
					log.Fatal(err)
				}
				my = append(my, time.Since(t0))
				myCodes[resp.StatusCode]++
				if resp.StatusCode >= 300 {
					failed.Add(1)
				}
			}
			mu.Lock()
			lat = append(lat, my...)
			for k, v := range myCodes {
				codes[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	if len(lat) == 0 {
		fmt.Fprintf(os.Stderr, "%s: no requests\n", name)
		return
	}
	fmt.Printf("%-10s %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%d requests, %d clients, statuses %v)\n", name,
		float64(len(lat))/d.Seconds(), ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), len(lat), conc, codes)
	if f := failed.Load(); f > 0 {
		log.Fatalf("%s: %d requests failed", name, f)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
