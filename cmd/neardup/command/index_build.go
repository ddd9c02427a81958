package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/outfile"
)

type indexBuildCmd struct {
	out      string
	k        int
	plan     string
	budget   string
	json     bool
	fromText bool
	in       inputFlags
	prof     profileFlags
	workers  int
	fpFormat string
	kSet     bool // --k given explicitly
	frozen   bool
	raw      bool
	tempDir  string
}

func newIndexBuildCommand() *cobra.Command {
	var f indexBuildCmd
	c := &cobra.Command{
		Use:   "build --out FILE [flags] [INPUT|-]...",
		Short: "Build an index snapshot from fingerprints or text",
		Long: `Build an index of fingerprints and save it as a snapshot file (written to a
temporary file, synced and renamed; a device or FIFO is written in place,
never replaced). --out - writes the snapshot to stdout and the report to
stderr.

Inputs (files or - for stdin, the default) hold one fingerprint per line:
  - a fingerprint alone; its id is FILE:LINE;
  - id<TAB or spaces>fingerprint, as 'neardup fingerprint' writes;
  - a JSON object with "id" and "fingerprint" (hex string or decimal number)
    fields, as 'neardup fingerprint --json' writes.
Blank lines and lines starting with # are skipped. Ids must be unique. A
malformed line stops the run with its FILE:LINE unless --skip-bad.

` + fpFormatHelp + `

With --from-text the inputs are documents instead (the formats of 'neardup
fingerprint': JSONL, text files, directories, .gz/.zst), fingerprinted with
--profile (64 bits). The flags --format, --id-field, --text-field, --profile,
--bits and --idf apply to --from-text only; --fp-format to fingerprint files
only.

The plan (tables) is chosen for the number of fingerprints, --k and --budget
and printed; --plan overrides it: seeds-4x16, manku-20, blocks:K:B or auto.

--frozen writes a compressed, read-only index instead (package index,
Frozen: two Elias-Fano tables probed within 1 bit, flip-2x32, about 13-14
bytes a fingerprint from 10M to 1B with integer ids; --plan seeds-4x16 for
four exact tables, 22-25 bytes; mapped in place by 'neardup index query').
Its ids are integers: the input's ids when every one is a decimal integer,
else the fingerprints' positions in the input (0, 1, ...), with the input's
ids stored as their names (printed by 'index query'; read from the file
only for a match). It is built by an external sort: sorted runs go to
--temp-dir (8 bytes a fingerprint a table, 8 more for the ids) and are
merged. With --raw the one input is a file (or -, stdin) of little-endian
8-byte fingerprints (ids: positions), as 'neardup index gen' writes, read
once and never held in memory, and the tables go to --out as they are
merged: the build's memory is --budget, the sort memory (default 1GiB).`,
		Example: `  neardup fingerprint --json docs.jsonl | neardup index build --out docs.ndx
  neardup index build --out big.ndx --k 3 --budget 8GiB fps.txt
  neardup index build --out docs.ndx --from-text --profile en-words docs.jsonl
  neardup index build --frozen --raw --out big.ndf fps.u64
  neardup index gen --n 1000000000 | neardup index build --frozen --raw --out big.ndf -`,
		RunE: func(c *cobra.Command, args []string) error {
			f.kSet = c.Flags().Changed("k")
			return f.run(c.Context(), args, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	fs.StringVarP(&f.out, "out", "o", "", "snapshot file to write (required; - for stdout)")
	fs.IntVarP(&f.k, "k", "k", 3, "largest distance queries will ask for (0..63)")
	fs.StringVar(&f.plan, "plan", "auto", "table layout: auto, seeds-4x16, manku-20 or blocks:K:B (--frozen: also flip-2x32, flip:K:T)")
	fs.StringVar(&f.budget, "budget", "", "memory budget for the planner, e.g. 4GiB (default: 64 bytes per fingerprint, at least 256MiB)")
	fs.BoolVar(&f.json, "json", false, "print the summary as JSON")
	fs.BoolVar(&f.fromText, "from-text", false, "inputs are documents to fingerprint, not fingerprints")
	fs.IntVarP(&f.workers, "workers", "j", 0, "goroutines (0: one per core)")
	fs.BoolVar(&f.frozen, "frozen", false, "write a compressed read-only index with integer ids (see above)")
	fs.BoolVar(&f.raw, "raw", false, "with --frozen: the input is a file of little-endian 8-byte fingerprints")
	fs.StringVar(&f.tempDir, "temp-dir", "", "with --frozen: directory of the sort runs (default $TMPDIR or /tmp)")
	registerFPFormat(fs, &f.fpFormat)
	f.in.register(fs)
	f.prof.register(fs)
	return c
}

// buildSummary is the --json output of index build.
type buildSummary struct {
	Out                 string  `json:"out"`
	Fingerprints        int     `json:"fingerprints"`
	Plan                string  `json:"plan"`
	Tables              int     `json:"tables"`
	KeyBits             int     `json:"key_bits"`
	Candidates          float64 `json:"expected_candidates"`
	BytesPerFingerprint float64 `json:"bytes_per_fingerprint"`
	MemoryBytes         int64   `json:"memory_bytes"`
	FileBytes           int64   `json:"file_bytes"`
	Why                 string  `json:"why"`
}

// readInput reads the ids and fingerprints to index: texts fingerprinted
// (--from-text) or fingerprint files in --format, standard input when args
// is empty.
func (f *indexBuildCmd) readInput(ctx context.Context, args []string, stdin io.Reader, stderr io.Writer) ([]string, []uint64, error) {
	format, err := parseFPFormat(f.fpFormat)
	if err != nil {
		return nil, nil, err
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	if f.fromText {
		return f.readText(ctx, args, stdin, stderr)
	}
	return readFingerprintFiles(ctx, args, stdin, fpReadOptions{format: format, skipBad: f.in.skipBad, warn: stderr, workers: f.workers})
}

func (f *indexBuildCmd) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.out == "" {
		return usagef("--out FILE is required")
	}
	if f.k < 0 || f.k > 63 {
		return usagef("--k %d: want 0..63", f.k)
	}
	if f.raw && !f.frozen {
		return usagef("--raw needs --frozen")
	}
	if f.frozen {
		return f.buildFrozen(ctx, args, stdin, stdout, stderr)
	}
	var budget int64
	if f.budget != "" {
		b, err := parseBytes(f.budget)
		if err != nil {
			return usagef("--budget: %v", err)
		}
		budget = b
	}
	var plan *index.Plan
	if f.plan != "" && f.plan != "auto" {
		p, err := index.ParseLayout(f.plan)
		if err != nil {
			return usagef("--plan: %v", err)
		}
		plan = &p
	}
	ids, fps, err := f.readInput(ctx, args, stdin, stderr)
	if err != nil {
		return err
	}
	if plan == nil {
		c, err := index.Choose(len(fps), f.k, budget)
		if err != nil {
			return usagef("%v", err)
		}
		plan = &c.Plan
	} else if f.kSet && f.k > plan.K {
		return usagef("--k %d exceeds the k=%d of --plan %s", f.k, plan.K, f.plan)
	}
	x, err := index.Build(ids, fps, index.Options{Plan: plan, BudgetBytes: budget, Workers: f.workers})
	if err != nil {
		return err
	}
	// As index.SaveFile, but counting the bytes: a device or FIFO has no
	// size to stat afterwards.
	var size int64
	if err := outfile.WriteFile(f.out, stdout, func(w io.Writer) (err error) { size, err = x.WriteTo(w); return err }); err != nil {
		return err
	}
	if f.out == outfile.Stdout {
		stdout = stderr // the snapshot took standard output; the report goes beside the errors
	}
	st := x.Stats()
	c := st.Choice
	if f.plan == "" || f.plan == "auto" {
		if ch, err := index.Choose(len(fps), f.k, budget); err == nil {
			c.Why = ch.Why
		}
	} else {
		c.Why = "--plan " + f.plan
	}
	if f.json {
		return json.NewEncoder(stdout).Encode(buildSummary{
			Out: f.out, Fingerprints: x.Len(), Plan: c.Plan.String(), Tables: c.Tables, KeyBits: c.KeyBits,
			Candidates: c.Candidates, BytesPerFingerprint: st.BytesPerFingerprint, MemoryBytes: st.Bytes,
			FileBytes: size, Why: c.Why,
		})
	}
	fmt.Fprintf(stdout, "indexed %d fingerprints into %s (%d bytes, %.1f per fingerprint)\n", x.Len(), f.out, size, float64(size)/float64(max(x.Len(), 1)))
	fmt.Fprintf(stdout, "%v\n", c)
	fmt.Fprintf(stdout, "memory when loaded: %.1f bytes/fingerprint measured\n", st.BytesPerFingerprint)
	return nil
}

// readFingerprintFiles reads fingerprint files (readFPInput); a line without
// an id is named FILE:LINE.
func readFingerprintFiles(ctx context.Context, args []string, stdin io.Reader, opt fpReadOptions) ([]string, []uint64, error) {
	var ids []string
	var fps []uint64
	opt.lineIDs = true
	for _, a := range args {
		r, err := openInput(a, stdin)
		if err != nil {
			return nil, nil, err
		}
		err = readFPInput(ctx, r, a, opt, func(f []uint64, i []string) error {
			ids = append(ids, i...)
			fps = append(fps, f...)
			return nil
		})
		r.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	return ids, fps, nil
}

// readText fingerprints documents with the chosen profile, on all cores.
func (f *indexBuildCmd) readText(ctx context.Context, args []string, stdin io.Reader, stderr io.Writer) ([]string, []uint64, error) {
	p, err := f.prof.load()
	if err != nil {
		return nil, nil, err
	}
	if p.Bits() != 64 {
		return nil, nil, usagef("--bits %d: the index holds 64-bit fingerprints", p.Bits())
	}
	var st inputStats
	r, err := f.in.open(args, stdin, func() io.Writer { return stderr }, &st)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	workers := f.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var ids []string
	var fps []uint64
	var texts []string
	flush := func() {
		start := len(fps)
		fps = append(fps, make([]uint64, len(texts))...)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < len(texts); i += workers {
					fps[start+i] = uint64(p.Fingerprint(texts[i]).Fingerprint)
				}
			})
		}
		wg.Wait()
		texts = texts[:0]
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		doc, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		ids = append(ids, doc.ID)
		texts = append(texts, doc.Text)
		if len(texts) == 4096 {
			flush()
		}
	}
	flush()
	return ids, fps, nil
}
