package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stored is one fingerprint the service holds, under the id "pre-<id>".
type stored struct {
	id int
	fp uint64
}

// runFP is -mode fp: preload and write cfg.fps when it is absent, then,
// given a peer, compare fingerprint search on the service and on the peer.
func runFP(cfg *config, prose string) {
	fps, err := readFingerprints(cfg.fps)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fps = preloadFingerprints(cfg, prose)
		if err := writeFingerprints(cfg.fps, fps); err != nil {
			log.Fatal(err)
		}
		log.Printf("wrote the %d stored fingerprints to %s", len(fps), cfg.fps)
	case err != nil:
		log.Fatal(err)
	default:
		log.Printf("read %d fingerprints from %s (no preload)", len(fps), cfg.fps)
	}
	if len(fps) == 0 {
		log.Fatal("no fingerprints")
	}
	qs := queries(fps, cfg.k, cfg.pool, rand.New(rand.NewPCG(2, 2)))
	if cfg.peer == "" {
		log.Printf("no -peer: measuring the service alone (to compare with go-simstore, start simd -f %s -size 3 -vptree=false and run again with -peer)", cfg.fps)
		measureAlone(cfg, len(fps), qs)
		return
	}
	agree(cfg, fps, qs[:min(len(qs), 200)])

	// Requests made before the clock starts, the same queries in the same
	// order for both; neardup's limit is its largest so that it, like simd,
	// returns every match.
	reqA := make([][]byte, len(qs))
	reqB := make([][]byte, len(qs))
	for i, q := range qs {
		reqA[i] = postRequest(nil, cfg.host, "/v1/search", fmt.Appendf(nil, `{"fingerprint":"%016x","k":%d,"limit":1000}`, q, cfg.k))
		reqB[i] = fmt.Appendf(nil, "GET /search?sig=%016x HTTP/1.1\r\nHost: %s\r\n\r\n", q, cfg.peerHost)
	}
	premade := func(reqs [][]byte) func(g int) func(n int) []byte {
		return func(g int) func(n int) []byte {
			return func(n int) []byte { return reqs[(g*7919+n)%len(reqs)] }
		}
	}
	// The servers' CPU time per request is the figure that holds on a
	// machine shared with other work (and with this client): req/s does not.
	measure := func(host, name string, pid int, reqs [][]byte) (result, float64) {
		t0 := cpuTime(pid)
		r := phase(host, cfg.c, cfg.d, name, premade(reqs))
		r.print()
		return r, printCPU(r, pid, t0)
	}
	var as, bs []result
	var ca, cb []float64
	for round := range cfg.rounds {
		a, ua := measure(cfg.host, fmt.Sprint("neardup/", round+1), cfg.pidA, reqA)
		b, ub := measure(cfg.peerHost, fmt.Sprint("simd/", round+1), cfg.pidB, reqB)
		fmt.Printf("round %d: simd/neardup %.2fx req/s, neardup/simd %.2fx CPU per request\n", round+1, b.rate()/a.rate(), ua/ub)
		as, bs = append(as, a), append(bs, b)
		ca, cb = append(ca, ua), append(cb, ub)
	}
	ra, rb := median(as, result.rate), median(bs, result.rate)
	pa, pb := median(as, p99), median(bs, p99)
	fmt.Printf("median of %d rounds, %d stored, k = %d, %d clients, %v each: neardup %.0f req/s p99 %.2f ms; simd %.0f req/s p99 %.2f ms; simd/neardup %.2fx\n",
		cfg.rounds, len(fps), cfg.k, cfg.c, cfg.d, ra, pa, rb, pb, rb/ra)
	if cfg.pidA != 0 && cfg.pidB != 0 {
		ident := func(x float64) float64 { return x }
		ma, mb := median(ca, ident), median(cb, ident)
		fmt.Printf("server CPU per request, median: neardup %.1f us, simd %.1f us; neardup/simd %.2fx\n", ma, mb, ma/mb)
	}
	for _, p := range []struct {
		name string
		pid  int
	}{{"neardup", cfg.pidA}, {"simd", cfg.pidB}} {
		if p.pid == 0 {
			continue
		}
		rss, anon, err := memory(p.pid)
		if err != nil {
			log.Print(err)
			continue
		}
		n := float64(len(fps))
		fmt.Printf("%s (pid %d) VmRSS %.1f MB, %.0f bytes per stored fingerprint; RssAnon %.1f MB, %.0f bytes per stored fingerprint\n",
			p.name, p.pid, float64(rss)/1e6, float64(rss)/n, float64(anon)/1e6, float64(anon)/n)
	}
	fmt.Printf("stats: %s", get(cfg.client, cfg.base+"/v1/stats"))
}

// preloadFingerprints returns the fingerprints of the documents pre-0 ..
// pre-(n-1) the service holds. When it holds pre-0 already (an earlier
// preload), it reads them back by id, which is much faster than deciding on
// every document again; otherwise it preloads as -mode text does and keeps
// the fingerprints of the documents stored, not of those declined as
// near-duplicates.
func preloadFingerprints(cfg *config, prose string) []stored {
	if get(cfg.client, cfg.base+"/v1/documents/pre-0") != nil {
		return readBack(cfg)
	}
	if prose == "" {
		log.Fatalf("%s is absent and the service does not hold pre-0: give the prose file to preload it", cfg.fps)
	}
	src := textSource(cfg, prose)()
	var fps []stored
	var declined int
	preload(cfg, rand.New(rand.NewPCG(1, 1)), src, func(j int, it preloadItem) {
		switch {
		case it.Status == 201:
		case it.Status == 200 && len(it.Duplicates) > 0 && it.Duplicates[0].ID == fmt.Sprint("pre-", j):
			// Held before this run: its own near-duplicate.
		case it.Status == 200:
			declined++
			return
		default:
			log.Fatalf("pre-%d: status %d", j, it.Status)
		}
		fp, err := strconv.ParseUint(it.Fingerprint, 16, 64)
		if err != nil {
			log.Fatalf("pre-%d: fingerprint %q: %v", j, it.Fingerprint, err)
		}
		fps = append(fps, stored{j, fp})
	})
	log.Printf("%d documents held, %d declined as near-duplicates", len(fps), declined)
	return fps
}

// readBack reads the fingerprints of pre-0 .. pre-(n-1) with GET
// /v1/documents/{id} from 8 clients; an id the service does not hold is
// skipped.
func readBack(cfg *config) []stored {
	t0 := time.Now()
	const workers = 8
	held := make([]uint64, cfg.n)
	ok := make([]bool, cfg.n)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := w; j < cfg.n; j += workers {
				b := get(cfg.client, fmt.Sprintf("%s/v1/documents/pre-%d", cfg.base, j))
				if b == nil {
					continue
				}
				var doc struct{ Fingerprint string }
				if err := json.Unmarshal(b, &doc); err != nil {
					log.Fatalf("pre-%d: %v", j, err)
				}
				fp, err := strconv.ParseUint(doc.Fingerprint, 16, 64)
				if err != nil {
					log.Fatalf("pre-%d: fingerprint %q: %v", j, doc.Fingerprint, err)
				}
				held[j], ok[j] = fp, true
			}
		}()
	}
	wg.Wait()
	var fps []stored
	for j := range held {
		if ok[j] {
			fps = append(fps, stored{j, held[j]})
		}
	}
	log.Printf("the service already holds pre-0: read back %d of pre-0 .. pre-%d in %v (no preload)",
		len(fps), cfg.n-1, time.Since(t0).Round(time.Millisecond))
	return fps
}

// writeFingerprints writes fps in simd's input format, "ID HEX" per line,
// through a temporary file renamed into place.
func writeFingerprints(path string, fps []stored) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, s := range fps {
		fmt.Fprintf(w, "%d %016x\n", s.id, s.fp)
	}
	err = errors.Join(w.Flush(), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// readFingerprints reads what writeFingerprints wrote.
func readFingerprints(path string) ([]stored, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseFingerprints(f, path)
}

func parseFingerprints(r io.Reader, name string) ([]stored, error) {
	var fps []stored
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want ID HEX", name, line)
		}
		id, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		fp, err := strconv.ParseUint(f[1], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		fps = append(fps, stored{id, fp})
	}
	return fps, sc.Err()
}

// queries returns n fingerprints, each a stored one with 0 to k distinct
// random bits flipped, so that every query has at least one match.
func queries(fps []stored, k, n int, r *rand.Rand) []uint64 {
	qs := make([]uint64, n)
	for i := range qs {
		q := fps[r.IntN(len(fps))].fp
		for _, b := range r.Perm(64)[:r.IntN(k+1)] {
			q ^= 1 << b
		}
		qs[i] = q
	}
	return qs
}

// agree asks both systems the queries qs and checks their answers against a
// scan of fps: a comparison of speeds means little if the answers differ.
func agree(cfg *config, fps []stored, qs []uint64) {
	var okA, okB, hits, shown int
	for _, q := range qs {
		var want []int
		for _, s := range fps {
			if bits.OnesCount64(s.fp^q) <= cfg.k {
				want = append(want, s.id)
			}
		}
		slices.Sort(want)
		hits += len(want)

		var a struct{ Results []struct{ ID string } }
		post(cfg.client, cfg.base+"/v1/search", map[string]any{"fingerprint": fmt.Sprintf("%016x", q), "k": cfg.k, "limit": 1000}, &a)
		var gotA []int
		for _, h := range a.Results {
			id, err := strconv.Atoi(strings.TrimPrefix(h.ID, "pre-"))
			if err != nil {
				log.Fatalf("neardup answered id %q", h.ID)
			}
			gotA = append(gotA, id)
		}
		slices.Sort(gotA)

		var gotB []int
		if err := json.Unmarshal(get(cfg.client, fmt.Sprintf("%s/search?sig=%016x", cfg.peer, q)), &gotB); err != nil {
			log.Fatalf("simd: %v", err)
		}
		slices.Sort(gotB)

		if slices.Equal(gotA, want) {
			okA++
		} else if shown < 5 {
			shown++
			log.Printf("neardup, %016x: got %v, want %v", q, gotA, want)
		}
		if slices.Equal(gotB, want) {
			okB++
		} else if shown < 5 {
			shown++
			log.Printf("simd, %016x: got %v, want %v", q, gotB, want)
		}
	}
	log.Printf("answers equal to a scan of the %d fingerprints on %d queries (%d matches): neardup %d, simd %d",
		len(fps), len(qs), hits, okA, okB)
}

func p99(r result) float64 { return ms(r.quantile(0.99)) }

// median returns the median of f over rs.
func median[T any](rs []T, f func(T) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// cpuTime returns the user and system CPU time process pid has used (0 for
// pid 0), from /proc/PID/stat in clock ticks of 1/100 s (USER_HZ on Linux).
func cpuTime(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		log.Fatal(err)
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14 and stime 15.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		log.Fatalf("pid %d: short /proc stat line", pid)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			log.Fatalf("pid %d: /proc stat: %v", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// memory returns the resident set size of process pid and its anonymous
// part (heap and stacks, without mapped files such as bbolt's), in bytes.
func memory(pid int) (rss, anon int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, f := range []struct {
		key string
		v   *int64
	}{{"VmRSS:", &rss}, {"RssAnon:", &anon}} {
		i := strings.Index(string(b), "\n"+f.key)
		if i < 0 {
			return 0, 0, fmt.Errorf("pid %d: no %s", pid, f.key)
		}
		line, _, _ := strings.Cut(string(b[i+1+len(f.key):]), "\n")
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(line), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("pid %d: %s %w", pid, f.key, err)
		}
		*f.v = kb << 10
	}
	return rss, anon, nil
}

// measureAlone measures the service's fingerprint search alone, cfg.rounds
// phases of the queries qs (a Redis index, say, which no peer holds), and
// prints the median rate and p99.
func measureAlone(cfg *config, stored int, qs []uint64) {
	reqs := make([][]byte, len(qs))
	for i, q := range qs {
		reqs[i] = postRequest(nil, cfg.host, "/v1/search", fmt.Appendf(nil, `{"fingerprint":"%016x","k":%d,"limit":1000}`, q, cfg.k))
	}
	var rs []result
	for round := range cfg.rounds {
		t0 := cpuTime(cfg.pidA)
		r := phase(cfg.host, cfg.c, cfg.d, fmt.Sprint("neardup/", round+1), func(g int) func(n int) []byte {
			return func(n int) []byte { return reqs[(g*7919+n)%len(reqs)] }
		})
		r.print()
		printCPU(r, cfg.pidA, t0)
		rs = append(rs, r)
	}
	fmt.Printf("median of %d rounds, %d fingerprints, k = %d, %d clients, %v each: %.0f req/s p99 %.2f ms\n",
		cfg.rounds, stored, cfg.k, cfg.c, cfg.d, median(rs, result.rate), median(rs, p99))
}
