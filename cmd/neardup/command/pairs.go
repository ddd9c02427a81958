package command

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/index"
)

// joinFlags are the flags shared by pairs and clusters.
type joinFlags struct {
	k        int
	json     bool
	skipBad  bool
	fpFormat string
	blocks   int
	workers  int
	verbose  bool
}

func (f *joinFlags) register(fs *pflag.FlagSet) {
	fs.IntVarP(&f.k, "k", "k", 3, "largest Hamming distance that counts as near (0 to 63)")
	fs.BoolVar(&f.json, "json", false, "print JSON lines instead of tab-separated text")
	fs.BoolVar(&f.skipBad, "skip-bad", false, "skip malformed lines with a warning instead of stopping")
	registerFPFormat(fs, &f.fpFormat)
	fs.IntVar(&f.blocks, "blocks", 0, "split the 64 bits into this many blocks, one table per choice of blocks-k (0: chosen for the input size)")
	fs.IntVar(&f.workers, "workers", 0, "goroutines sorting and comparing (0: all cores)")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "print the plan, its estimated cost and timings to stderr")
}

// joinFormatHelp describes the input of pairs and clusters.
const joinFormatHelp = `Inputs (files or - for stdin, the default) hold one fingerprint per line, as
seomoz/simhash-cpp's tools read them and 'neardup fingerprint' writes them:
  - a fingerprint alone;
  - id<TAB or spaces>fingerprint (a quoted id is unquoted);
  - a JSON object with "id" and "fingerprint" (hex string or decimal number)
    fields.
Blank lines and lines starting with # are skipped. Fingerprints are named by
their id, or when they have none by their 0-based position among the
fingerprints read (blank, comment and skipped lines do not count). A malformed
line stops the run with its FILE:LINE unless --skip-bad.

` + fpFormatHelp

// options validates the flags and returns the join options for n
// fingerprints, with the plan's estimate for --verbose.
func (f *joinFlags) options(n int) (index.JoinOptions, index.JoinEstimate, error) {
	if f.k < 0 || f.k > 63 {
		return index.JoinOptions{}, index.JoinEstimate{}, usagef("--k %d: must be between 0 and 63", f.k)
	}
	workers, err := workersFlag(f.workers)
	if err != nil {
		return index.JoinOptions{}, index.JoinEstimate{}, err
	}
	opt := index.JoinOptions{Workers: workers}
	if f.blocks == 0 {
		e := index.PlanJoin(n, f.k)
		opt.Plan = &e.Plan
		return opt, e, nil
	}
	p, err := index.BlockPlan(f.k, f.blocks)
	if err != nil {
		return index.JoinOptions{}, index.JoinEstimate{}, usagef("--blocks %d: %v", f.blocks, err)
	}
	opt.Plan = &p
	return opt, index.EstimateJoin(p, n), nil
}

// joinInput is the fingerprints read from the inputs, with their ids.
type joinInput struct {
	fps []uint64
	ids []string // nil when no line had an id; "" for a line without one
}

// label names fingerprint i in text output: its id, or its position.
func (in *joinInput) label(i int) string {
	if in.ids != nil && in.ids[i] != "" {
		id := in.ids[i]
		if strings.ContainsAny(id, "\t\n\r") || strings.HasPrefix(id, `"`) {
			return strconv.Quote(id)
		}
		return id
	}
	return strconv.Itoa(i)
}

// appendLabel appends label(i) to b without allocating for positions.
func (in *joinInput) appendLabel(b []byte, i int) []byte {
	if in.ids == nil || in.ids[i] == "" {
		return strconv.AppendInt(b, int64(i), 10)
	}
	return append(b, in.label(i)...)
}

// id returns fingerprint i's id, "" if none.
func (in *joinInput) id(i int) string {
	if in.ids == nil {
		return ""
	}
	return in.ids[i]
}

// readJoinInputs reads every input; with skipBad, malformed lines are
// reported to warn and skipped.
func (f *joinFlags) readInputs(ctx context.Context, args []string, stdin io.Reader, warn io.Writer) (*joinInput, error) {
	format, err := parseFPFormat(f.fpFormat)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	in := &joinInput{}
	for _, a := range args {
		r, err := openInput(a, stdin)
		if err != nil {
			return nil, err
		}
		err = in.read(ctx, r, a, fpReadOptions{format: format, skipBad: f.skipBad, warn: warn, sizeHint: regularSize(r)})
		r.Close()
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// read appends the fingerprints of one input (shared with 'neardup index
// build': readFPInput). Appending chunk after chunk to a slice that grows by
// 1.25x copied and faulted in 400 MB at 10M fingerprints, more than parsing
// cost; so they go into blocks that never move, the first sized for the
// input when its size is known (opt.sizeHint; a line is at least 17 bytes
// in the usual forms, and capacity never written costs no memory), and are
// copied once at the end only when they overflowed it.
func (in *joinInput) read(ctx context.Context, r io.Reader, name string, opt fpReadOptions) error {
	in.fps = slices.Grow(in.fps, max(int(opt.sizeHint/17), 1<<16))
	var spill [][]uint64 // blocks after in.fps is full
	add := func(fps []uint64) {
		for len(fps) > 0 {
			cur := &in.fps
			if len(spill) > 0 {
				cur = &spill[len(spill)-1]
			}
			if len(*cur) == cap(*cur) {
				spill = append(spill, make([]uint64, 0, 2*cap(*cur)))
				continue
			}
			k := min(len(fps), cap(*cur)-len(*cur))
			*cur = append(*cur, fps[:k]...)
			fps = fps[k:]
		}
	}
	start := len(in.fps)
	err := readFPInput(ctx, r, name, opt, func(fps []uint64, ids []string) error {
		if ids != nil && in.ids == nil {
			in.ids = make([]string, start, start+len(fps))
			in.ids = append(in.ids, make([]string, in.len(spill)-start)...)
		}
		if in.ids != nil {
			if ids == nil {
				in.ids = append(in.ids, make([]string, len(fps))...)
			} else {
				in.ids = append(in.ids, ids...)
			}
		}
		add(fps)
		return nil
	})
	if len(spill) > 0 {
		in.fps = slices.Grow(in.fps, in.len(spill)-len(in.fps))
		for _, b := range spill {
			in.fps = append(in.fps, b...)
		}
	}
	return err
}

// len is the number of fingerprints in in.fps and the blocks of spill.
func (in *joinInput) len(spill [][]uint64) int {
	n := len(in.fps)
	for _, b := range spill {
		n += len(b)
	}
	return n
}

type pairsCmd struct {
	joinFlags
	sort bool
}

func newPairsCommand() *cobra.Command {
	var f pairsCmd
	c := &cobra.Command{
		Use:   "pairs [flags] [FILE|-]...",
		Short: "List every pair of fingerprints within k bits (self-join)",
		Long: `List every pair of fingerprints within --k bits of each other, each pair once:

  A<TAB>B<TAB>distance

where A comes before B in the input. With --json each line is an object
{"a", "b", "distance"} with the 0-based positions, plus "a_id" and "b_id"
when the input has ids.

` + joinFormatHelp + `

The join is exact (Manku, Jain, Das Sarma 2007, section 3: one radix-sorted
table per choice of blocks; --blocks overrides the plan, -v prints it) and
streams pairs in no particular order unless --sort, which holds them all in
memory. m identical fingerprints make m(m-1)/2 pairs: use 'neardup clusters'
when only the groups matter.`,
		Example: `  neardup pairs --k 3 fps.txt
  neardup fingerprint --json docs.jsonl | neardup pairs --k 3 --json
  neardup pairs --k 6 --sort -v fps.txt`,
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c.Context(), args, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f.register(c.Flags())
	c.Flags().BoolVar(&f.sort, "sort", false, "sort pairs by A then B (holds all pairs in memory)")
	return c
}

// pairJSON is one line of 'pairs --json'.
type pairJSON struct {
	A        int    `json:"a"`
	B        int    `json:"b"`
	Distance int    `json:"distance"`
	AID      string `json:"a_id,omitempty"`
	BID      string `json:"b_id,omitempty"`
}

func (f *pairsCmd) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if _, _, err := f.options(0); err != nil {
		return err // flag errors before reading the input
	}
	if _, err := parseFPFormat(f.fpFormat); err != nil {
		return err
	}
	t0 := time.Now()
	defer joinGC(args)()
	in, err := f.readInputs(ctx, args, stdin, stderr)
	if err != nil {
		return err
	}
	opt, est, err := f.options(len(in.fps))
	if err != nil {
		return err
	}
	if f.verbose {
		fmt.Fprintf(stderr, "read %d fingerprints in %v\nplan: %v\n", len(in.fps), time.Since(t0).Round(time.Millisecond), est)
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	enc := json.NewEncoder(w)
	var line []byte
	write := func(p index.Pair) error {
		if f.json && in.ids != nil {
			return enc.Encode(pairJSON{p.A, p.B, p.Distance, in.id(p.A), in.id(p.B)})
		}
		if f.json { // positions only: what enc.Encode would write, without reflection
			line = append(line[:0], `{"a":`...)
			line = strconv.AppendInt(line, int64(p.A), 10)
			line = append(line, `,"b":`...)
			line = strconv.AppendInt(line, int64(p.B), 10)
			line = append(line, `,"distance":`...)
			line = strconv.AppendInt(line, int64(p.Distance), 10)
			line = append(line, "}\n"...)
			_, err := w.Write(line)
			return err
		}
		line = in.appendLabel(line[:0], p.A)
		line = append(line, '\t')
		line = in.appendLabel(line, p.B)
		line = append(line, '\t')
		line = strconv.AppendInt(line, int64(p.Distance), 10)
		line = append(line, '\n')
		_, err := w.Write(line)
		return err
	}
	t1 := time.Now()
	var all []index.Pair
	n := 0
	err = index.Join(ctx, in.fps, f.k, opt, func(p index.Pair) error {
		n++
		if f.sort {
			all = append(all, p)
			return nil
		}
		return write(p)
	})
	if err != nil {
		return err
	}
	if f.sort {
		slices.SortFunc(all, func(x, y index.Pair) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
		for _, p := range all {
			if err := write(p); err != nil {
				return err
			}
		}
	}
	if f.verbose {
		fmt.Fprintf(stderr, "%d pairs within %d bits in %v\n", n, f.k, time.Since(t1).Round(time.Millisecond))
	}
	if err := w.Flush(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return err
	}
	return nil
}
