package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/keptfiles"
	"github.com/neardup/neardup/rule"
)

type dedupCmd struct {
	in          inputFlags
	opt         dedup.Options
	decision    decisionFlags
	noVerify    bool
	jsonSummary bool
	quiet       bool
	memLimit    int64
}

func newDedupCommand() *cobra.Command {
	var f dedupCmd
	c := &cobra.Command{
		Use:   "dedup [flags] [FILE|DIR|-]...",
		Short: "Remove near-duplicate documents from a corpus",
		Long: `Remove near-duplicate documents from a corpus: read every document, find
candidate pairs with SimHash (a self-join of fingerprints within k bits) or
MinHash-LSH, confirm each candidate with the exact Jaccard similarity of word
5-shingles, and keep first: documents are taken in input order (or --keep
order) and one is removed only when it is a confirmed near-duplicate of a
document already kept, which --duplicates names with its similarity. Every
removed document therefore has a kept near-duplicate at or above the threshold.
Documents with the same word sequence (exact duplicates) are always removed.
A text without features (punctuation only, or only stopwords: fingerprint 0,
like every such text) matches exact copies only.
--cluster components instead removes all but one document of every connected
component of confirmed pairs: a chain of versions A~B~C~D then loses B, C and
D even where D shares little with A.

Outputs, each optional:
  --output FILE      the kept documents in the input's format: JSONL lines
                     exactly as read; Parquet rows under the input's schema
                     (every column, its types and nulls kept), codec and
                     metadata; for text input the file paths (--format
                     lines: the lines). Inputs that mix formats, or Parquet
                     files with different schemas, are refused: the kept file
                     would mix them (give --format, use --output-dir, or run
                     them separately)
  --output-dir DIR   the kept documents as one shard per input file, with its
                     name (relative to the directory given) and format:
                     a dataset directory in, a dataset directory out;
                     .jsonl.zst and .jsonl.gz shards are compressed so
  --annotate         with --output or --output-dir: keep every document and
                     add dup_of (the id of the document kept in its place),
                     jaccard (their similarity) and cluster (the id of the
                     kept document of its cluster): JSON fields, or nullable
                     Parquet columns after the input's
  --duplicates FILE  one record per removed document: dup_id, kept_id,
                     distance and similarity (SimHash), jaccard (or cosine),
                     exact, index
  --clusters FILE    one record per cluster: kept_id, size, ids (a kept
                     document and the documents removed in its favour)
  --report-format F  jsonl (default) or parquet, for --duplicates and
                     --clusters (for DuckDB, Spark or pandas)
  --summary-json FILE the summary as JSON
A summary goes to stderr (--json: as JSON on stdout). Files are written to a
temporary name and renamed when the run succeeds: an interrupted run leaves
no half-written output. A target that is not a regular file (/dev/null, a
FIFO, /dev/stdout) is written in place, never replaced. FILE "-" is standard
output, for at most one of the four and not with --json.

Inputs are files, directories (walked in lexical order) and - for standard
input (JSONL, text or lines; Parquet is read from files: row group by row group,
only the --text-field and --id-field columns), which is also what no argument reads (from a terminal, dedup asks for
an input instead of waiting: name - to type documents there). Binary files
are skipped with a warning (with --skip-bad, so are bad lines and broken
symbolic links); UTF-16 text with a byte order mark is decoded (its kept
JSONL lines are written as UTF-8). A run that reads no document from the
inputs it was given fails and says why (an empty standard input is an empty
batch: 0 docs read).

The defaults need no tuning: profile en-words (words; Han characters one token
each), k 12, Jaccard >= 0.8 verification, keep first.
On the shared corpora they give document-level precision 1.0 and recall >= 0.99
against "Jaccard of 5-shingles >= 0.8" (BENCHMARKS.md, Dedup).

Memory grows with the number of documents by about 30 bytes each (ids go to
--tmp-dir past 64 MiB); the shingle sets kept for verification are held up to
--sketch-budget and past it written to a temporary file in --tmp-dir (default
$TMPDIR), read back for verification: Jaccard is exact at every size. Past
--sketch-disk of sets on disk (16 GiB), the first pass drops them and the sets
of the documents that have candidates (about a quarter) are read again from
the input once they are known. Text is never held beyond the document being
processed.

Incremental mode: --index FILE dedups the input against the documents kept by
earlier runs, under the same rule: the snapshot FILE holds their fingerprints
and the directory FILE.kept.d their shingle sets (in an embedded store) and
candidate keys, so every match is verified, and a corpus split into two runs
gets the verdicts of one run over both. --update-index adds the kept
documents and saves both in place, atomically (a missing FILE starts empty).
A FILE.kept file of an older neardup is converted on first use. A snapshot
from 'neardup index build' has no shingle sets and is refused.`,
		Example: `  neardup dedup --output kept.jsonl --duplicates dups.jsonl crawl.jsonl.zst
  neardup dedup --keep longest --clusters clusters.jsonl docs/
  neardup dedup --text-field content --output-dir deduped/ dataset/      # Parquet shards in, Parquet shards out
  neardup dedup --annotate --output audit.parquet --duplicates dups.parquet --report-format parquet part-0.parquet
  neardup dedup --keep-field timestamp --keep-order max --output kept.jsonl news.jsonl.gz
  neardup dedup --method minhash --threshold 0.7 --output kept.jsonl corpus.jsonl
  cat batch.jsonl | neardup dedup --index seen.idx --update-index --output new.jsonl -`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c, args)
		},
	}
	f.registerFlags(c.Flags())
	return c
}

// registerFlags registers dedup's flags (import's too) on fs.
func (f *dedupCmd) registerFlags(fs *pflag.FlagSet) {
	f.in.register(fs)
	o := &f.opt
	f.decision.register(fs, &o.Options)
	fs.StringVar(&o.Verify, "verify", rule.DefaultVerify, "verification: jaccard (word shingles), cosine (TF-IDF) or none")
	fs.BoolVar(&f.noVerify, "no-verify", false, "same as --verify none")
	fs.Int64Var(&o.SketchBudget, "sketch-budget", dedup.DefaultSketchBudget, "bytes of shingle sets held in memory for verification; the rest go to a temporary file in --tmp-dir")
	fs.Int64Var(&o.SketchDisk, "sketch-disk", dedup.DefaultSketchDisk, "bytes of shingle sets written to --tmp-dir by the first pass; past it the sets of the documents with candidates are read again from the input (-1: no bound)")
	fs.StringVar(&o.TempDir, "tmp-dir", "", "directory for temporary files: shingle sets and band keys past their budgets, spooled stdin (default $TMPDIR, else /tmp)")
	fs.IntVar(&o.Perms, "perms", rule.DefaultPerms, "MinHash positions (one permutation hashing: bins)")
	fs.IntVar(&o.Bands, "bands", 0, "MinHash LSH bands (0: from --threshold)")
	fs.IntVar(&o.Rows, "rows", 0, "MinHash LSH rows per band (0: from --threshold)")
	fs.StringVar(&o.Cluster, "cluster", dedup.ClusterGreedy, "greedy (keep first: every removed document has a kept near-duplicate) or components (one document per connected component)")
	fs.StringVar(&o.Keep, "keep", "", "priority of the keep-first rule: first (input order, default) or longest")
	fs.StringVar(&o.KeepField, "keep-field", "", "keep the document with the largest (--keep-order) value of this JSON field or Parquet column (a.b for a nested one)")
	fs.StringVar(&o.KeepOrder, "keep-order", "max", "with --keep-field: max or min")
	fs.BoolVar(&o.AllowDuplicateIDs, "allow-duplicate-ids", false, "accept documents that share an id")
	fs.StringVarP(&o.Output, "output", "o", "", "write the kept documents to FILE (- for stdout)")
	fs.StringVar(&o.OutputDir, "output-dir", "", "write the kept documents to DIR, one shard per input file with its name and format")
	fs.BoolVar(&o.Annotate, "annotate", false, "keep every document in --output/--output-dir and add dup_of, jaccard and cluster")
	fs.StringVar(&o.Duplicates, "duplicates", "", "write one record per removed document to FILE (- for stdout)")
	fs.StringVar(&o.Clusters, "clusters", "", "write one record per cluster to FILE (- for stdout)")
	fs.StringVar(&o.ReportFormat, "report-format", dedup.ReportJSONL, "format of --duplicates and --clusters: jsonl or parquet")
	fs.StringVar(&o.SummaryJSON, "summary-json", "", "write the summary as JSON to FILE (- for stdout)")
	fs.StringVar(&o.Index, "index", "", "index snapshot to dedup against (incremental mode)")
	fs.BoolVar(&o.UpdateIndex, "update-index", false, "add the kept documents to --index and save it")
	fs.IntVarP(&o.Workers, "workers", "j", 0, "goroutines (0: one per core)")
	fs.Int64Var(&f.memLimit, "memory-limit", 0, "soft heap limit in bytes for the Go garbage collector (0: --sketch-budget + 512 MiB + a quarter of the input files' size, at most a third of the machine's memory, unless GOMEMLIMIT is set; -1: none)")
	fs.BoolVar(&f.jsonSummary, "json", false, "print the summary as JSON on stdout")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress or log lines, only errors and the summary")
}

func (f *dedupCmd) run(c *cobra.Command, args []string) error {
	ctx := c.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	// Log lines, warnings and the progress bar come from several goroutines.
	stderr := io.Writer(&lockedWriter{w: c.ErrOrStderr()})
	o := f.opt
	format, err := corpus.ParseFormat(f.in.format)
	if err != nil {
		return usagef("--format: %v", err)
	}
	o.Corpus = corpus.Options{Format: format, IDField: f.in.idField, TextField: f.in.textField, SkipBad: f.in.skipBad}
	o.Stdin = c.InOrStdin()
	o.Stdout = c.OutOrStdout()
	o.KeptFiles = keptfiles.Files{} // --index: the snapshot and its kept set beside it
	if f.jsonSummary && slices.Contains([]string{o.Output, o.Duplicates, o.Clusters, o.SummaryJSON}, "-") {
		return usagef("--json prints the summary on stdout: no output may be \"-\" (use --summary-json -)")
	}
	if len(args) == 0 {
		// Nobody types a corpus: with no input named and a terminal on
		// stdin, say what dedup wants instead of waiting there silently.
		if readsTerminal(c.InOrStdin()) {
			return usagef("no input: name files or directories, or pipe documents in " +
				"(cat docs.jsonl | neardup dedup; - reads the terminal); see 'neardup dedup --help'")
		}
		args = []string{"-"}
	}
	f.decision.apply(&o.Options)
	if f.noVerify {
		o.Verify = rule.VerifyNone
	}
	if o.Keep == "" && o.KeepField != "" {
		o.Keep = dedup.KeepField
	}
	if c.Flags().Changed("keep-order") && o.KeepField == "" {
		return usagef("--keep-order needs --keep-field")
	}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return usagef("%v", err)
	}

	// Progress: a bar on a terminal, else a log line every 10 seconds.
	var mu sync.Mutex // guards bar, stage
	var bar *progress
	var stage string
	var stored, docs atomic.Int64
	logw := func() io.Writer {
		mu.Lock()
		defer mu.Unlock()
		return bar.Log(stderr)
	}
	if !f.quiet {
		o.Logger = slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			return logw().Write(p)
		}), &slog.HandlerOptions{Level: slog.LevelWarn}))
		if isTerminal(stderr) {
			o.ProgressInterval = 100 * time.Millisecond
			o.Progress = func(p dedup.Progress) {
				mu.Lock()
				defer mu.Unlock()
				if p.Stage != stage {
					bar.Stop()
					bar = nil
					stage = p.Stage
					if p.Stage != "candidates" {
						label := map[string]string{"read": "reading", "reread": "re-reading", "output": "writing"}[p.Stage]
						bar = startProgress(stderr, label, p.TotalStored, func() (int64, int64) { return stored.Load(), docs.Load() })
					}
				}
				stored.Store(p.Stored)
				docs.Store(p.Docs)
				if p.Done {
					bar.Stop()
					bar = nil
				}
			}
		} else {
			o.ProgressInterval = 10 * time.Second
			o.Progress = func(p dedup.Progress) {
				if p.Done && p.Stage != "read" {
					return
				}
				fmt.Fprintf(stderr, "neardup: dedup %s: %d %s, %.1f MB in %.1fs%s\n", p.Stage, p.Docs,
					map[bool]string{true: "candidate pairs", false: "docs"}[p.Stage == "candidates"],
					float64(p.Bytes)/1e6, p.Elapsed.Seconds(), eta(p))
			}
		}
	}
	// The garbage collector lets the heap grow to twice the live data; with a
	// few hundred MB of shingle sets and huge documents' scratch buffers that
	// doubles the resident size for nothing. A soft limit keeps it near the
	// live size (it is restored after the run: tests run commands in process).
	// The per-document columns (about 100 bytes and the id) are live too: the
	// limit leaves them a quarter of the input's size, more than they take
	// for documents of 400 bytes or more, so that a large corpus does not
	// hold the heap at the limit and the collector running without end.
	// At 10^8 documents the columns alone are gigabytes and a heap let grow
	// to twice them would not fit beside the page cache the run reads its
	// spilled data through: the default is at most a third of the memory.
	if limit := f.memLimit; limit >= 0 && (limit > 0 || os.Getenv("GOMEMLIMIT") == "") {
		if limit == 0 {
			limit = o.SketchBudget + 512<<20 + inputBytes(args)/4
			if ram := totalMemory(); ram > 0 {
				limit = min(limit, ram/3)
			}
		}
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	}
	sum, err := dedup.Run(ctx, args, o)
	mu.Lock()
	bar.Stop()
	mu.Unlock()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("dedup: interrupted; no output written")
		}
		if errors.Is(err, dedup.ErrOptions) || errors.Is(err, corpus.ErrOptions) {
			return usagef("%v", err)
		}
		return err
	}
	if f.jsonSummary {
		enc := json.NewEncoder(c.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	writeDedupSummary(stderr, sum)
	return nil
}

// eta formats the estimated time left of a stage whose size is known.
func eta(p dedup.Progress) string {
	if p.TotalStored <= 0 || p.Stored <= 0 || p.Stored >= p.TotalStored {
		return ""
	}
	left := time.Duration(float64(p.Elapsed) * float64(p.TotalStored-p.Stored) / float64(p.Stored))
	return fmt.Sprintf(", %.0f%%, ETA %s", 100*float64(p.Stored)/float64(p.TotalStored), left.Round(time.Second))
}

func writeDedupSummary(w io.Writer, s dedup.Summary) {
	st := s.Settings
	fmt.Fprintf(w, "neardup dedup: %d docs read (%.1f MB), %d kept, %d removed (%d exact, %d near", s.Docs,
		float64(s.Bytes)/1e6, s.Kept, s.Removed, s.ExactDuplicates, s.NearDuplicates)
	if st.Index != "" {
		fmt.Fprintf(w, ", %d in the index", s.IndexDuplicates)
	}
	fmt.Fprintf(w, "), %d clusters\n", s.Clusters)
	fmt.Fprintf(w, "  candidates %d: %d verified, %d rejected, %d not verified (decided already)", s.Candidates, s.Verified, s.Rejected, s.Skipped)
	if s.BadInputs > 0 {
		fmt.Fprintf(w, "; %d bad inputs skipped", s.BadInputs)
	}
	if s.SkippedRecords > 0 {
		fmt.Fprintf(w, "; %d WARC records not pages", s.SkippedRecords)
	}
	if s.SketchModulus > 1 {
		fmt.Fprintf(w, "; shingle sets sampled 1/%d (budget reached)", s.SketchModulus)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %.2fs (read %.2fs, candidates %.2fs, output %.2fs), %.1f MB/s\n", s.Seconds, s.ReadSeconds,
		s.CandidateSeconds, s.OutputSeconds, s.MBPerSecond)
	if st.Method == rule.MethodSimHash {
		fmt.Fprintf(w, "  settings: simhash profile %s k %d (short docs < %d tokens: k %d)", st.Profile, st.K, st.Short, st.KShort)
	} else {
		fmt.Fprintf(w, "  settings: minhash %d bands x %d rows", st.Bands, st.Rows)
	}
	fmt.Fprintf(w, ", verify %s", st.Verify)
	if st.Verify != rule.VerifyNone {
		fmt.Fprintf(w, " >= %g", st.Threshold)
	}
	fmt.Fprintf(w, " (%d-shingles), %s keep %s", st.Shingle, st.Cluster, st.Keep)
	if st.KeepField != "" {
		fmt.Fprintf(w, " %s %s", st.KeepOrder, st.KeepField)
	}
	if st.Index != "" {
		fmt.Fprintf(w, ", index %s", st.Index)
	}
	fmt.Fprintf(w, ", %d workers\n", st.Workers)
}

// writerFunc adapts a function to io.Writer.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// inputBytes is the size of the regular files among inputs and, for a
// directory, of the regular files in it (not below), a compressed file
// (named .gz, .zst or .parquet, whose pages are compressed) counting four
// times its size; 0 for what it cannot stat, such as standard
// input.
// totalMemory returns the machine's memory in bytes (MemTotal of
// /proc/meminfo), 0 when unknown.
func totalMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		var kb int64
		if n, _ := fmt.Sscanf(line, "MemTotal: %d kB", &kb); n == 1 {
			return kb << 10
		}
	}
	return 0
}

func inputBytes(inputs []string) int64 {
	var n int64
	for _, in := range inputs {
		st, err := os.Stat(in)
		switch {
		case err != nil:
		case st.Mode().IsRegular():
			n += st.Size()
			if ext := filepath.Ext(in); ext == ".gz" || ext == ".zst" || ext == ".zstd" || ext == ".parquet" {
				n += 3 * st.Size()
			}
		case st.IsDir():
			ents, _ := os.ReadDir(in)
			for _, e := range ents {
				if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
					n += fi.Size()
				}
			}
		}
	}
	return n
}
