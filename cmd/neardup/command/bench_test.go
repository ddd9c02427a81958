package command

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/simhash"
)

// Benchmarks of the user's path: a command run in process from its flags,
// reading its input file, writing its output. Sizes come from
// NEARDUP_BENCH_N (comma-separated, default 100000), as in package index;
// BENCHMARKS.md uses 10000000 and 100000000.
func benchSizes(b *testing.B) []int {
	s := os.Getenv("NEARDUP_BENCH_N")
	if s == "" {
		return []int{100_000}
	}
	var ns []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("NEARDUP_BENCH_N=%q: want sizes such as 10000000,100000000", s)
		}
		ns = append(ns, n)
	}
	return ns
}

// cpuTime is the user+system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countWriter counts what a command writes and throws it away.
type countWriter struct{ bytes, lines int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.bytes += int64(len(p))
	w.lines += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// writeBenchFingerprints writes n fingerprints, one per line in decimal (as
// seomoz/simhash-cpp writes them) or hex, to a file in dir: 90% uniformly
// random, 10% near-copies of earlier ones with 1 to 5 bits flipped, the data
// of index's join benchmarks.
func writeBenchFingerprints(b *testing.B, dir string, n int, hex bool) string {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("fps-%d-%v.txt", n, hex))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	fps := make([]uint64, n)
	var line []byte
	for i := range fps {
		if i > 0 && r.IntN(10) == 0 {
			v := fps[r.IntN(i)]
			for range 1 + r.IntN(5) {
				v ^= 1 << r.IntN(64)
			}
			fps[i] = v
		} else {
			fps[i] = r.Uint64()
		}
		if hex {
			line, _ = simhash.Fingerprint(fps[i]).AppendText(line[:0])
		} else {
			line = strconv.AppendUint(line[:0], fps[i], 10)
		}
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// runCommandBench runs the command b.N times with args and reports the input's
// MB/s, fingerprints per second, CPU seconds per run and output lines.
func runCommandBench(b *testing.B, input string, n int, args ...string) {
	st, err := os.Stat(input)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	var out countWriter
	var errs bytes.Buffer
	cpu := cpuTime()
	start := time.Now()
	for b.Loop() {
		out = countWriter{}
		if code := Main(append(args, input), strings.NewReader(""), &out, &errs); code != 0 {
			b.Fatalf("%v: exit %d: %s", args, code, errs.String())
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "fps/s")
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(out.lines), "lines")
}

// BenchmarkPairsCommand is 'neardup pairs --k 3 FILE' end to end: read and
// parse the file, join, write the pairs.
func BenchmarkPairsCommand(b *testing.B) {
	dir := b.TempDir()
	for _, n := range benchSizes(b) {
		for _, form := range []string{"decimal", "hex"} {
			path := writeBenchFingerprints(b, dir, n, form == "hex")
			b.Run(fmt.Sprintf("n=%d/%s", n, form), func(b *testing.B) {
				runCommandBench(b, path, n, "pairs", "--k", "3")
			})
			os.Remove(path)
		}
	}
}

// BenchmarkClustersCommand is 'neardup clusters --k 3 FILE' end to end.
func BenchmarkClustersCommand(b *testing.B) {
	dir := b.TempDir()
	for _, n := range benchSizes(b) {
		path := writeBenchFingerprints(b, dir, n, false)
		b.Run(fmt.Sprintf("n=%d/decimal", n), func(b *testing.B) {
			runCommandBench(b, path, n, "clusters", "--k", "3")
		})
		os.Remove(path)
	}
}

// BenchmarkIndexBuildCommand is 'neardup index build' from a decimal file,
// snapshot written to a temporary directory.
func BenchmarkIndexBuildCommand(b *testing.B) {
	dir := b.TempDir()
	for _, n := range benchSizes(b) {
		path := writeBenchFingerprints(b, dir, n, false)
		b.Run(fmt.Sprintf("n=%d/decimal", n), func(b *testing.B) {
			runCommandBench(b, path, n, "index", "build", "--out", filepath.Join(dir, "x.ndx"))
		})
		os.Remove(path)
	}
}

// proseJSONL writes en_prose, four copies concatenated (55 MB of JSONL), to
// dir, the input of the fingerprint benchmarks.
func proseJSONL(b *testing.B, dir string) string {
	b.Helper()
	f, err := os.Open(testcorpora.Path(b, "en_prose"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<27))
	if err != nil {
		b.Fatal(err)
	}
	defer zr.Close()
	raw, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "en_prose_x4.jsonl")
	if err := os.WriteFile(path, bytes.Repeat(raw, 4), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkFingerprintCommand is 'neardup fingerprint FILE' on en_prose x4
// (JSONL in, one line out per document) against a textbook baseline in the
// same run: encoding/json's Decoder, words by a regular expression, FNV-1 64
// of each word into 64 counters, fmt for the output. Run it with -cpu 1 for
// the per-core figure; "cpuMB/s" is input bytes per CPU-second of the
// process, which a shared machine distorts less than wall time.
func BenchmarkFingerprintCommand(b *testing.B) {
	path := proseJSONL(b, b.TempDir())
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	report := func(b *testing.B, cpu time.Duration) {
		b.ReportMetric(float64(st.Size())*float64(b.N)/1e6/(cpuTime()-cpu).Seconds(), "cpuMB/s")
	}
	for _, profile := range []string{"default", "en-words"} {
		b.Run("neardup/"+profile, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			var out countWriter
			var errs bytes.Buffer
			cpu := cpuTime()
			for b.Loop() {
				out = countWriter{}
				if code := Main([]string{"fingerprint", "--profile", profile, path}, strings.NewReader(""), &out, &errs); code != 0 {
					b.Fatalf("exit %d: %s", code, errs.String())
				}
			}
			report(b, cpu)
			b.ReportMetric(float64(out.lines), "lines")
		})
	}
	// The library alone on the same documents, decoded beforehand: what the
	// command would reach if reading and writing cost nothing.
	b.Run("library/default", func(b *testing.B) {
		r, err := corpus.Open([]string{path}, corpus.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var texts []string
		for {
			d, err := r.Next()
			if err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			texts = append(texts, d.Text)
		}
		r.Close()
		p, err := features.Lookup("default")
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(st.Size())
		b.ReportAllocs()
		cpu := cpuTime()
		for b.Loop() {
			for _, t := range texts {
				p.Fingerprint(t)
			}
		}
		report(b, cpu)
	})
	b.Run("baseline=textbook", func(b *testing.B) {
		b.SetBytes(st.Size())
		b.ReportAllocs()
		var out countWriter
		cpu := cpuTime()
		for b.Loop() {
			out = countWriter{}
			if err := textbookFingerprints(path, &out); err != nil {
				b.Fatal(err)
			}
		}
		report(b, cpu)
		b.ReportMetric(float64(out.lines), "lines")
	})
}

// textbookWords is how a textbook splits words.
var textbookWords = regexp.MustCompile(`[\p{L}\p{N}]+`)

// textbookFingerprints is the baseline: what a first SimHash program looks
// like, with the standard library only.
func textbookFingerprints(path string, out io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	w := bufio.NewWriter(out)
	for {
		var doc struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		var v [64]int
		for _, word := range textbookWords.FindAllString(strings.ToLower(doc.Text), -1) {
			h := fnv.New64()
			h.Write([]byte(word))
			x := h.Sum64()
			for i := range v {
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
		fmt.Fprintf(w, "%s\t%016x\n", doc.ID, fp)
	}
	return w.Flush()
}
