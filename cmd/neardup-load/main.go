// Command neardup-load measures a running "neardup serve" on the loopback
// interface: it preloads -n documents of about 1 KB of English (-workload:
// new text from a word-pair model of real prose with one document in ten an
// edited copy of a recent one, or windows of the prose itself with random
// word edits) through /v1/documents:batch, then sends
// add_if_new and search requests from -c goroutines for -d each and prints
// requests/s with p50/p99 latency and the server's bytes per document.
//
//	neardup serve --addr 127.0.0.1:8080 --data /tmp/nd &
//	neardup-load -url http://127.0.0.1:8080 -n 100000 -d 10s testdata/corpora/en_prose.jsonl.zst
//
// With -mode fp it compares fingerprint search (POST /v1/search with a
// fingerprint and -k, unverified) against a peer that answers the same
// question, go-simstore's simd (GET /search?sig=HEX, k = 3, no text). The
// service cannot store a bare fingerprint, so both hold the fingerprints of
// the same preloaded documents: the first run preloads the service (or,
// when it holds pre-0 already, reads pre-0 .. pre-(n-1) back by id) and
// writes the fingerprints it holds to -fps in simd's input format ("ID HEX"
// per line, ID the number in the document id "pre-ID"); simd loads that file
// at start; the second run reads the file, checks both systems' answers to
// the first 200 queries against a scan, then measures the two in turn,
// -rounds times each, with the same clients, duration and pre-made queries
// (stored fingerprints with 0 to k random bits flipped), and prints each
// process's VmRSS and RssAnon per stored fingerprint when given its PID:
//
//	neardup-load -mode fp -url http://127.0.0.1:8080 -n 1000000 -fps /tmp/fps.txt testdata/corpora/en_prose.jsonl.zst
//	simd -p 8081 -f /tmp/fps.txt -size 3 -vptree=false &
//	neardup-load -mode fp -url http://127.0.0.1:8080 -peer http://127.0.0.1:8081 -fps /tmp/fps.txt \
//		-c 64 -d 8s -rounds 3 -pid-a NEARDUP_PID -pid-b SIMD_PID
//
// Without -peer, -mode fp measures the service alone (the same rounds and
// pre-made queries), from a -fps file made any way: for an index loaded
// with neardup import, "neardup fingerprint --profile en-words" of the
// corpus with its ids replaced by line numbers.
//
// The load tool shares the machine with the server it measures, so it keeps
// its own CPU per request low: one core by default (-procs), requests made
// before the clock starts, responses read without net/http's Response. A
// phase's "server CPU per request" line (-pid-a) is the server's share.
//
// With -workload docs the texts are the documents of the file itself, in
// order: for a service that holds the first N documents of a generated
// corpus (neardup import), the documents after them (cut with tail -n +N+1),
// -n 0 to skip the preload:
//
//	neardup-load -n 0 -workload docs -texts 40000 -phases add_if_new,search next.jsonl
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
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/textgen"
)

// config holds the flags.
type config struct {
	base   string
	host   string // of base
	n      int
	c      int
	d      time.Duration
	batch  int
	pool   int
	client *http.Client
	// workload makes the documents' texts (-workload).
	workload string
	// phases to measure, comma-separated (-phases).
	phases string
	// seed of the request texts (-seed; 0: continue the preload's draws).
	seed uint64

	// -mode fp
	fps            string
	peer, peerHost string
	k              int
	rounds         int
	pidA, pidB     int
}

func main() {
	var cfg config
	mode := flag.String("mode", "text", "text: add_if_new and search by text; fp: fingerprint search against -peer")
	flag.StringVar(&cfg.base, "url", "http://127.0.0.1:8080", "the service (loopback only)")
	flag.IntVar(&cfg.n, "n", 100000, "documents to preload (at most 10,000,000)")
	flag.IntVar(&cfg.c, "c", 16, "concurrent clients")
	flag.DurationVar(&cfg.d, "d", 10*time.Second, "duration of each measured phase (at most 5m)")
	flag.IntVar(&cfg.batch, "batch", 500, "documents per preload batch request")
	flag.IntVar(&cfg.pool, "texts", 20000, "distinct request texts (or fingerprints with -mode fp) made before the measured phases; add_if_new sends each once, in turn, before repeating any")
	flag.StringVar(&cfg.workload, "workload", "markov", "markov: new text from a word-pair model of the prose, one document in ten an edited copy (1 word in 100 replaced) of a recent one; windows: windows of the prose itself with one word in 20 replaced (at 1M documents each word is in ~70 of them); docs: the documents of the file itself, in order (a corpus such as neardup-gen's: the documents after those the service holds)")
	flag.StringVar(&cfg.phases, "phases", "add_if_new,search", "-mode text: the measured phases, in this order")
	flag.Uint64Var(&cfg.seed, "seed", 0, "-mode text: draw the request texts from this seed (0: continue after the preload, as the first run on a data directory does); another seed sends new documents to a service that holds an earlier run's")
	flag.StringVar(&cfg.fps, "fps", "", "-mode fp: fingerprint file, written by the preload when absent, read otherwise")
	flag.StringVar(&cfg.peer, "peer", "", "-mode fp: go-simstore simd to compare with (loopback only); without it the service is measured alone")
	flag.IntVar(&cfg.k, "k", 3, "-mode fp: Hamming distance of the searches (simd answers k = 3 with -size 3)")
	flag.IntVar(&cfg.rounds, "rounds", 3, "-mode fp: measured phases per system, alternating")
	flag.IntVar(&cfg.pidA, "pid-a", 0, "PID of the service: its CPU time per request (and, with -mode fp, its VmRSS)")
	flag.IntVar(&cfg.pidB, "pid-b", 0, "-mode fp: PID of the peer, for its VmRSS")
	cpuprofile := flag.String("cpuprofile", "", "write the load tool's own CPU profile to this file")
	procs := flag.Int("procs", 1, "GOMAXPROCS of the load tool (0: Go's default, every core); one core leaves the others to the server it measures on the same machine, and each client goroutine waits for its reply most of the time")
	flag.Parse()
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	cfg.host = loopbackHost(cfg.base)
	cfg.n = min(cfg.n, 10_000_000)
	cfg.d = min(cfg.d, 5*time.Minute)
	cfg.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.c * 2}, Timeout: time.Minute}
	switch *mode {
	case "text":
		if flag.NArg() != 1 {
			log.Fatal("usage: neardup-load [flags] en_prose.jsonl.zst")
		}
		runText(&cfg, flag.Arg(0))
	case "fp":
		if cfg.fps == "" || flag.NArg() > 1 {
			log.Fatal("usage: neardup-load -mode fp -fps FILE [-peer URL] [flags] [en_prose.jsonl.zst]")
		}
		if cfg.peer != "" {
			cfg.peerHost = loopbackHost(cfg.peer)
		}
		runFP(&cfg, flag.Arg(0))
	default:
		log.Fatalf("-mode %q: want text or fp", *mode)
	}
}

// loopbackHost returns the host:port of rawURL, and stops the run when it
// is not a loopback address.
func loopbackHost(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		log.Fatal(err)
	}
	if ip := net.ParseIP(u.Hostname()); (ip == nil || !ip.IsLoopback()) && u.Hostname() != "localhost" {
		log.Fatalf("%s is not a loopback address", u.Hostname())
	}
	return u.Host
}

// preloadItem is the part of a batch reply's item the preload reads.
type preloadItem struct {
	Status      int    `json:"status"`
	Fingerprint string `json:"fingerprint"`
	Duplicates  []struct {
		ID string `json:"id"`
	} `json:"duplicates"`
}

// preload adds cfg.n documents "pre-0", "pre-1", ... in batches with
// add_if_new, texts drawn from r, and passes each reply item to each (nil:
// none). The seed is fixed, so a rerun on the same data directory adds
// nothing new: a document held already is its own near-duplicate (200).
func preload(cfg *config, r *rand.Rand, src func(*rand.Rand) string, each func(j int, it preloadItem)) {
	t0 := time.Now()
	if each == nil && holdsPreload(cfg) {
		// An earlier run preloaded this data directory: draw the same texts
		// (so the measured phases send the same new ones) without sending
		// them, unless -seed draws the request texts from elsewhere (at 5M
		// the draws alone took a minute before every phase).
		if cfg.seed == 0 {
			for range cfg.n {
				src(r)
			}
		}
		log.Printf("the service holds the end of the preload already: skipped it (%v)", time.Since(t0).Round(time.Millisecond))
		return
	}
	for i := 0; i < cfg.n; i += cfg.batch {
		docs := make([]map[string]string, 0, cfg.batch)
		for j := i; j < min(i+cfg.batch, cfg.n); j++ {
			docs = append(docs, map[string]string{"id": fmt.Sprint("pre-", j), "text": src(r)})
		}
		var reply struct{ Results []preloadItem }
		post(cfg.client, cfg.base+"/v1/documents:batch", map[string]any{"mode": "add_if_new", "documents": docs}, &reply)
		if each != nil {
			if len(reply.Results) != len(docs) {
				log.Fatalf("batch at %d: %d replies for %d documents", i, len(reply.Results), len(docs))
			}
			for k, it := range reply.Results {
				each(i+k, it)
			}
		}
		if i%(cfg.batch*200) == 0 {
			log.Printf("preloaded %d", i)
		}
	}
	log.Printf("preloaded %d documents in %v", cfg.n, time.Since(t0).Round(time.Millisecond))
}

// holdsPreload reports whether the service holds one of the last ten
// documents of the preload (one in ten is declined as a near-duplicate).
func holdsPreload(cfg *config) bool {
	for j := max(cfg.n-10, 0); j < cfg.n; j++ {
		if get(cfg.client, fmt.Sprintf("%s/v1/documents/pre-%d", cfg.base, j)) != nil {
			return true
		}
	}
	return false
}

// runText preloads the service and measures add_if_new and search by text.
func runText(cfg *config, prose string) {
	newSrc := textSource(cfg, prose)
	src := newSrc()
	r := rand.New(rand.NewPCG(1, 1))
	run := time.Now().UnixNano()
	preload(cfg, r, src, nil)

	// The measured phases send bodies made before the clock starts, over
	// one raw keep-alive connection per client (wrk's way): the client's own
	// CPU, which shares the machine's cores with the server, is then little
	// more than the system calls, and the figures are the server's.
	if cfg.seed != 0 {
		// Other request texts than an earlier run's (whose add_if_new
		// documents the service now holds), the same whether this run sent
		// the preload or skipped it: a new source, as the word-pair model
		// keeps the texts it made for its edited copies.
		r = rand.New(rand.NewPCG(cfg.seed, 2))
		src = newSrc()
	}
	texts := make([][]byte, cfg.pool)
	for i := range texts {
		texts[i], _ = json.Marshal(src(r))
	}
	log.Printf("%d request texts ready", len(texts))
	var searches [][]byte
	for _, name := range strings.Split(cfg.phases, ",") {
		switch name {
		case "add_if_new":
			// Each text once, in turn over all clients: texts that came
			// round again would be declined as copies of themselves, and
			// how many did depended on the number of requests.
			var sent atomic.Int64
			var wrapped sync.Once
			t0 := cpuTime(cfg.pidA)
			res := phase(cfg.host, cfg.c, cfg.d, name, func(g int) func(n int) []byte {
				var body, req []byte
				return func(n int) []byte {
					i := int(sent.Add(1) - 1)
					if i == len(texts) {
						wrapped.Do(func() {
							log.Printf("add_if_new: all %d request texts sent, the next ones repeat them (raise -texts)", len(texts))
						})
					}
					body = fmt.Appendf(body[:0], `{"id":"load-%d-%d-%d","mode":"add_if_new","text":`, run, g, n)
					body = append(body, texts[i%len(texts)]...)
					req = postRequest(req[:0], cfg.host, "/v1/documents", append(body, '}'))
					return req
				}
			})
			res.print()
			printCPU(res, cfg.pidA, t0)
		case "search":
			// The whole requests, made once: the same bytes each time a
			// text comes round.
			if searches == nil {
				searches = make([][]byte, len(texts))
				var body []byte
				for i, t := range texts {
					body = append(append(append(body[:0], `{"text":`...), t...), '}')
					searches[i] = postRequest(nil, cfg.host, "/v1/search", body)
				}
			}
			t0 := cpuTime(cfg.pidA)
			res := phase(cfg.host, cfg.c, cfg.d, name, func(g int) func(n int) []byte {
				return func(n int) []byte { return searches[(g*104729+n*31)%len(searches)] }
			})
			res.print()
			printCPU(res, cfg.pidA, t0)
		default:
			log.Fatalf("-phases: unknown phase %q (want add_if_new, search)", name)
		}
	}
	fmt.Printf("stats: %s", get(cfg.client, cfg.base+"/v1/stats"))
}

// cpuPerRequest is the CPU time in microseconds process pid (the server)
// spent per request of phase r, which began at its CPU time t0; NaN for
// pid 0.
func cpuPerRequest(r result, pid int, t0 time.Duration) float64 {
	if pid == 0 || len(r.lat) == 0 {
		return math.NaN()
	}
	return float64(cpuTime(pid)-t0) / float64(time.Microsecond) / float64(len(r.lat))
}

// printCPU prints cpuPerRequest, when there is a pid.
func printCPU(r result, pid int, t0 time.Duration) float64 {
	us := cpuPerRequest(r, pid, t0)
	if !math.IsNaN(us) {
		fmt.Printf("%-10s %8.1f us of server CPU per request\n", r.name, us)
	}
	return us
}

// textSource reads the words of the prose file and returns what makes a
// new source of documents' texts of the kind -workload names (a source has
// state: the word-pair model keeps the texts it made for its edited copies).
func textSource(cfg *config, prose string) func() func(*rand.Rand) string {
	if cfg.workload == "docs" {
		texts := readTexts(prose, cfg.n+cfg.pool)
		log.Printf("%d documents of %s", len(texts), prose)
		return func() func(*rand.Rand) string {
			i := 0
			return func(*rand.Rand) string {
				t := texts[i%len(texts)]
				i++
				return t
			}
		}
	}
	words, err := textgen.ReadWords(prose)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%d words of prose", len(words))
	switch cfg.workload {
	case "windows":
		return func() func(*rand.Rand) string { return textgen.Windows(words) }
	case "markov":
		return func() func(*rand.Rand) string { return textgen.NewMarkov(words).Doc }
	}
	log.Fatalf("-workload %q: want markov, windows or docs", cfg.workload)
	return nil
}

// readTexts returns the texts of the first n documents of a corpus file
// (any format package corpus reads).
func readTexts(path string, n int) []string {
	rd, err := corpus.Open([]string{path}, corpus.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer rd.Close()
	var texts []string
	for len(texts) < n {
		d, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		texts = append(texts, strings.Clone(d.Text))
	}
	if len(texts) == 0 {
		log.Fatalf("%s: no document", path)
	}
	return texts
}

// post sends v as JSON to u and decodes the reply into out (nil: dropped).
func post(c *http.Client, u string, v, out any) int {
	body, _ := json.Marshal(v)
	resp, err := c.Post(u, "application/json", bytes.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusConflict {
		log.Fatalf("%s: status %d", u, resp.StatusCode)
	}
	if out == nil {
		io.Copy(io.Discard, resp.Body)
	} else if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		log.Fatalf("%s: %v", u, err)
	}
	return resp.StatusCode
}

// get returns the body of u, or nil when it answers 404.
func get(c *http.Client, u string) []byte {
	resp, err := c.Get(u)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		log.Fatalf("%s: status %d: %s", u, resp.StatusCode, b)
	}
	return b
}

// postRequest appends to b an HTTP/1.1 POST of body to path.
func postRequest(b []byte, host, path string, body []byte) []byte {
	b = fmt.Appendf(b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, host, len(body))
	return append(b, body...)
}

// result is one measured phase.
type result struct {
	name   string
	conc   int
	d      time.Duration
	lat    []time.Duration // sorted
	codes  map[int]int
	failed int64
}

func (r result) rate() float64 { return float64(len(r.lat)) / r.d.Seconds() }

func (r result) quantile(q float64) time.Duration {
	return r.lat[min(len(r.lat)-1, int(float64(len(r.lat))*q))]
}

// print writes the phase's line, and stops the run if any request failed.
func (r result) print() {
	if len(r.lat) == 0 {
		log.Fatalf("%s: no requests", r.name)
	}
	fmt.Printf("%-10s %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%d requests, %d clients, statuses %v)\n", r.name,
		r.rate(), ms(r.quantile(0.5)), ms(r.quantile(0.99)), len(r.lat), r.conc, r.codes)
	if r.failed > 0 {
		log.Fatalf("%s: %d requests failed", r.name, r.failed)
	}
}

// phase runs conc clients for d, each on its own keep-alive connection to
// host, sending the raw HTTP/1.1 requests that newClient(client)(n) returns
// one after the other, and collects the latencies and statuses.
func phase(host string, conc int, d time.Duration, name string, newClient func(g int) func(n int) []byte) result {
	var mu sync.Mutex
	res := result{name: name, conc: conc, d: d, codes: map[int]int{}}
	var failed atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for g := range conc {
		next := newClient(g)
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
			for n := 0; time.Now().Before(deadline); n++ {
				req := next(n)
				t0 := time.Now()
				if _, err := conn.Write(req); err != nil {
					log.Fatal(err)
				}
				code, err := readResponse(br)
				if err != nil {
					log.Fatal(err)
				}
				my = append(my, time.Since(t0))
				myCodes[code]++
				if code >= 300 {
					failed.Add(1)
				}
			}
			mu.Lock()
			res.lat = append(res.lat, my...)
			for k, v := range myCodes {
				res.codes[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(res.lat)
	res.failed = failed.Load()
	return res
}

// readResponse reads one HTTP/1.1 response from br, discards its body and
// returns its status code. It is http.ReadResponse without the Response:
// the status line, the headers scanned for Content-Length and
// Transfer-Encoding only, the body skipped by its length or its chunks. The
// load tool shares the server's cores, so its own CPU per request counts
// (http.ReadResponse's header map was a tenth of it).
func readResponse(br *bufio.Reader) (int, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, fmt.Errorf("malformed status line %q", line)
	}
	code, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("malformed status line %q", line)
	}
	length, chunked := -1, false
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, fmt.Errorf("malformed header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, fmt.Errorf("malformed Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		}
	}
	switch {
	case chunked:
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return 0, err
			}
			size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
			n, err := strconv.ParseUint(string(size), 16, 31)
			if err != nil {
				return 0, fmt.Errorf("malformed chunk size %q", line)
			}
			if n == 0 { // trailers, then the empty line
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						return 0, err
					}
					if len(bytes.TrimRight(line, "\r\n")) == 0 {
						return code, nil
					}
				}
			}
			if _, err := br.Discard(int(n) + 2); err != nil {
				return 0, err
			}
		}
	case length >= 0:
		_, err := br.Discard(length)
		return code, err
	case code == http.StatusNoContent || code == http.StatusNotModified:
		return code, nil
	}
	return 0, fmt.Errorf("status %d: a response without a length on a kept-alive connection", code)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
