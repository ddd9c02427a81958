package command

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/simhash"
)

type fingerprintCmd struct {
	in           inputFlags
	prof         profileFlags
	json         bool
	workers      int
	listProfiles bool
}

func newFingerprintCommand() *cobra.Command {
	var f fingerprintCmd
	c := &cobra.Command{
		Use:   "fingerprint [flags] [FILE|DIR|-]...",
		Short: "Print the SimHash fingerprint of each document",
		Long: `Print the SimHash fingerprint of each document, one line per document in input order:

  id<TAB>fingerprint

The fingerprint is hexadecimal: 16 digits for 64 bits, 8 for 32, 32 for 128.
With --json each line is an object {"id", "fingerprint", "bits", "features"}
plus "empty": true for a document without features (fingerprint 0; a warning
goes to stderr as well). Ids containing a tab or newline are written quoted.

Inputs are files, directories (walked in sorted order, dot entries skipped) or
- for stdin (the default). JSONL (.jsonl, .ndjson, .json) gives one document
per line, other files are one document each (--format lines: one per line);
.gz and .zst are decompressed. Binary files are skipped with a warning; a
malformed JSONL line stops the run with its file:line unless --skip-bad.

Fingerprints are computed on all cores (--workers) with bounded memory; a
progress bar is shown when stderr is a terminal.

Profiles: ` + strings.Join(features.Names(), ", ") + ` (--list-profiles describes them).`,
		Example: `  neardup fingerprint README.md
  neardup fingerprint --json --text-field body crawl.jsonl.zst > fps.jsonl
  echo 'the cat sat on the mat' | neardup fingerprint --profile shingles
  neardup fingerprint --format lines --bits 32 titles.txt`,
		RunE: func(c *cobra.Command, args []string) error {
			if f.listProfiles {
				return listProfiles(c.OutOrStdout())
			}
			return f.run(c.Context(), args, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	f.in.register(fs)
	f.prof.register(fs)
	fs.BoolVar(&f.json, "json", false, "write one JSON object per document")
	fs.IntVarP(&f.workers, "workers", "j", 0, "fingerprinting goroutines (0: one per core)")
	fs.BoolVar(&f.listProfiles, "list-profiles", false, "describe the profiles and exit")
	return c
}

// fpJob is one document on its way through the pipeline. The reader sends it
// to the workers and, in the same order, to the writer, which waits on done:
// output order is input order whatever order the workers finish in.
type fpJob struct {
	doc  corpus.Doc
	res  features.Result
	done chan struct{}
}

// Memory bounds of the pipeline: at most maxInFlight documents, or
// maxInFlightBytes of text (but always at least one document), between the
// reader and the writer.
const (
	maxInFlightDocs  = 1024
	maxInFlightBytes = 64 << 20
)

func (f *fingerprintCmd) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := f.prof.load()
	if err != nil {
		return err
	}
	workers, err := workersFlag(f.workers)
	if err != nil {
		return err
	}
	stderr = &lockedWriter{w: stderr}
	var bar *progress
	warn := func() io.Writer { return bar.Log(stderr) }
	var st inputStats
	r, err := f.in.open(args, stdin, warn, &st)
	if err != nil {
		return err
	}
	abandoned := false // the reader goroutine may still be using r
	defer func() {
		if !abandoned {
			r.Close()
		}
	}()

	var docs countingDocs
	bar = startProgress(stderr, "fingerprint", r.Size(), func() (int64, int64) { return r.Consumed(), docs.n.Load() })
	defer bar.Stop()

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	budget := newByteBudget(maxInFlightBytes)
	work := make(chan *fpJob, 4*workers)
	order := make(chan *fpJob, maxInFlightDocs)
	var readErr error
	go func() { // reader
		defer close(work)
		defer close(order)
		for ctx.Err() == nil {
			doc, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				readErr = err
				return
			}
			j := &fpJob{doc: doc, done: make(chan struct{})}
			if !budget.acquire(ctx, len(doc.Text)) {
				return
			}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			select {
			case work <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				j.res = p.Fingerprint(j.doc.Text)
				close(j.done)
			}
		}()
	}

	w := &fpWriter{w: bufio.NewWriterSize(stdout, 64<<10), json: f.json}
	var werr error
	empty := 0
	for j := range order {
		select {
		case <-j.done:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		budget.release(len(j.doc.Text))
		docs.n.Add(1)
		if j.res.Empty {
			empty++
			fmt.Fprintf(warn(), "neardup: warning: %s: empty document (no features); fingerprint is 0\n", j.doc.ID)
		}
		if werr == nil {
			werr = w.write(j)
		}
		if werr != nil {
			cancel() // stdout is gone (a closed pipe): stop reading
		}
	}
	if ctx.Err() != nil {
		// Interrupted, or stdout is gone: return without waiting for the
		// reader, which may be blocked reading a terminal or a pipe.
		abandoned = true
		bar.Stop()
		w.w.Flush()
		if werr != nil {
			return fmt.Errorf("writing output: %w", werr)
		}
		return parent.Err()
	}
	wg.Wait()
	if err := w.w.Flush(); werr == nil {
		werr = err
	}
	bar.Stop()
	switch {
	case readErr != nil:
		return readErr
	case werr != nil:
		return fmt.Errorf("writing output: %w", werr)
	}
	if n := st.bad.Load(); n > 0 {
		fmt.Fprintf(stderr, "neardup: %d bad lines or documents skipped\n", n)
	}
	if empty > 0 {
		fmt.Fprintf(stderr, "neardup: %d empty documents (fingerprint 0)\n", empty)
	}
	return nil
}

// countingDocs counts written documents for the progress bar.
type countingDocs struct{ n atomic.Int64 }

// byteBudget bounds the text held between a reader and a writer: acquire
// blocks while the budget is spent, except that one document is always let
// through, however large, so that a 1 GB document still flows.
type byteBudget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	limit int
	used  int // guarded by mu
}

func newByteBudget(limit int) *byteBudget {
	b := &byteBudget{limit: limit}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire takes n bytes, waiting for releases; false when ctx ends first.
func (b *byteBudget) acquire(ctx context.Context, n int) bool {
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used > 0 && b.used+n > b.limit {
		if ctx.Err() != nil {
			return false
		}
		b.cond.Wait()
	}
	b.used += n
	return ctx.Err() == nil
}

func (b *byteBudget) release(n int) {
	b.mu.Lock()
	b.used -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}

// fpLine is the --json output record.
type fpLine struct {
	ID          string `json:"id"`
	Fingerprint string `json:"fingerprint"`
	Bits        int    `json:"bits"`
	Features    int    `json:"features"`
	Empty       bool   `json:"empty,omitempty"`
}

// fpWriter writes the output lines; a text line is formatted into line,
// reused, without allocating.
type fpWriter struct {
	w    *bufio.Writer
	json bool
	line []byte
}

func (w *fpWriter) write(j *fpJob) error {
	if w.json {
		b, err := json.Marshal(fpLine{ID: j.doc.ID, Fingerprint: formatFingerprint(j.res), Bits: j.res.Bits, Features: j.res.Features, Empty: j.res.Empty})
		if err != nil {
			return err
		}
		w.w.Write(b)
		return w.w.WriteByte('\n')
	}
	b := w.line[:0]
	if id := j.doc.ID; strings.ContainsAny(id, "\t\n\r") {
		b = strconv.AppendQuote(b, id)
	} else {
		b = append(b, id...)
	}
	b = append(b, '\t')
	b = appendFingerprint(b, j.res)
	b = append(b, '\n')
	w.line = b
	_, err := w.w.Write(b)
	return err
}

// appendFingerprint appends a result's fingerprint in hex at its width, as
// formatFingerprint writes it.
func appendFingerprint(b []byte, r features.Result) []byte {
	switch r.Bits {
	case 32:
		var t [16]byte
		h, _ := simhash.Fingerprint(uint32(r.Fingerprint)).AppendText(t[:0])
		return append(b, h[8:]...)
	case 128:
		b, _ = simhash.Fingerprint(r.Fingerprint128.Hi).AppendText(b)
		b, _ = simhash.Fingerprint(r.Fingerprint128.Lo).AppendText(b)
		return b
	}
	b, _ = r.Fingerprint.AppendText(b)
	return b
}

// formatFingerprint writes a result's fingerprint in hex at its width.
func formatFingerprint(r features.Result) string {
	switch r.Bits {
	case 32:
		return simhash.Fingerprint32(r.Fingerprint).String()
	case 128:
		return r.Fingerprint128.String()
	}
	return r.Fingerprint.String()
}
