package command

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/simhash"
)

type indexQueryCmd struct {
	index    string
	k        int
	limit    int
	json     bool
	fpFormat string
	noVerify bool
}

func newIndexQueryCommand() *cobra.Command {
	var f indexQueryCmd
	c := &cobra.Command{
		Use:   "query --index FILE [--k K] [--limit N] [--json] FP...|-",
		Short: "Find the stored fingerprints within k bits of each query",
		Long: `Load an index snapshot and print, for each query fingerprint, every stored
fingerprint within --k bits, nearest first (ties by id), at most --limit. A
frozen snapshot ('neardup index build --frozen') is mapped and read in place
instead of loaded; its ids are integers.

Queries are arguments or, with -, lines on stdin in the formats 'neardup index
build' reads; a line's id (or FILE:LINE) labels its results. --fp-format
applies to the arguments (decided once for all of them) and to stdin.

` + fpFormatHelp + `

Text output is one line per match:
  query<TAB>id<TAB>fingerprint<TAB>distance
With --json it is one object per query:
  {"query": "...", "fingerprint": "...", "matches": [{"id", "fingerprint", "distance"}]}`,
		Example: `  neardup index query --index docs.ndx --k 3 0123456789abcdef
  neardup fingerprint new.jsonl | neardup index query --index docs.ndx --limit 5 --json -`,
		RunE: func(c *cobra.Command, args []string) error {
			if !c.Flags().Changed("k") {
				f.k = -1
			}
			return f.run(c.Context(), args, c.InOrStdin(), c.OutOrStdout())
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.index, "index", "", "index snapshot (required)")
	fs.IntVarP(&f.k, "k", "k", 0, "largest distance (default: the index's k)")
	fs.IntVarP(&f.limit, "limit", "n", 0, "at most this many matches per query (0: all)")
	fs.BoolVar(&f.json, "json", false, "write one JSON object per query")
	fs.BoolVar(&f.noVerify, "no-verify", false, "frozen snapshot: skip the checksums of its large sections (start-up reads ~2.5 bits a fingerprint a table instead of the whole file)")
	registerFPFormat(fs, &f.fpFormat)
	return c
}

// decideArgsFormat decides the format of the query arguments (all but "-")
// as one input: the first that reads only one way decides, and arguments
// that are all 16 decimal digits need --fp-format.
func decideArgsFormat(args []string, format fpFormat) (fpFormat, error) {
	if format != fpAuto {
		return format, nil
	}
	ambiguous := ""
	for _, a := range args {
		if a == "-" {
			continue
		}
		tok := []byte(strings.TrimSpace(a))
		_, hexErr := parseFPToken(tok, fpHex)
		_, decErr := parseFPToken(tok, fpDecimal)
		switch {
		case hexErr == nil && decErr != nil:
			return fpHex, nil
		case decErr == nil && hexErr != nil:
			return fpDecimal, nil
		case hexErr == nil && ambiguous == "":
			ambiguous = a
		}
	}
	if ambiguous != "" {
		return 0, usagef("query %q is 16 decimal digits, which read as hex and as decimal give different values: say which with --fp-format hex or --fp-format decimal", ambiguous)
	}
	return fpHex, nil // nothing decides: every argument is malformed or -
}

type queryMatch struct {
	ID          string `json:"id"`
	Fingerprint string `json:"fingerprint"`
	Distance    int    `json:"distance"`
}

type queryResult struct {
	Query       string       `json:"query"`
	Fingerprint string       `json:"fingerprint"`
	Matches     []queryMatch `json:"matches"`
}

func (f *indexQueryCmd) run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	format, err := parseFPFormat(f.fpFormat)
	if err != nil {
		return err
	}
	if f.index == "" {
		return usagef("--index FILE is required")
	}
	if len(args) == 0 {
		return usagef("no query fingerprints (give them as arguments or - for stdin)")
	}
	if f.limit < 0 {
		return usagef("--limit %d: want 0 or more", f.limit)
	}
	argFormat, err := decideArgsFormat(args, format)
	if err != nil {
		return err
	}
	var queries []fpRecord
	for _, a := range args {
		if a == "-" {
			err := readFPInput(ctx, stdin, "-", fpReadOptions{format: format, lineIDs: true}, func(fps []uint64, ids []string) error {
				for i, fp := range fps {
					queries = append(queries, fpRecord{ID: ids[i], FP: fp})
				}
				return nil
			})
			if err != nil {
				return err
			}
			continue
		}
		fp, err := parseFPToken([]byte(strings.TrimSpace(a)), argFormat)
		if err != nil {
			return usagef("query %q: %v", a, err)
		}
		queries = append(queries, fpRecord{ID: a, FP: fp})
	}
	if isFrozenFile(f.index) {
		return f.queryFrozen(queries, stdout)
	}
	x, err := index.LoadFile(f.index, index.Options{})
	if err != nil {
		return err
	}
	k := f.k
	if k < 0 {
		k = x.K()
	}
	if k > x.K() {
		return usagef("--k %d: the index answers k up to %d (rebuild it with a larger --k)", k, x.K())
	}
	fps := make([]uint64, len(queries))
	for i, q := range queries {
		fps[i] = q.FP
	}
	res, err := x.QueryBatch(fps, k, f.limit)
	if err != nil {
		return err
	}
	return f.write(queries, res, stdout)
}

// write prints the matches res[i] of each query i.
func (f *indexQueryCmd) write(queries []fpRecord, res [][]index.Match, stdout io.Writer) error {
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(w)
	for i, q := range queries {
		if f.json {
			r := queryResult{Query: q.ID, Fingerprint: simhash.Fingerprint(q.FP).String(), Matches: []queryMatch{}}
			for _, m := range res[i] {
				r.Matches = append(r.Matches, queryMatch{m.ID, simhash.Fingerprint(m.Fingerprint).String(), m.Distance})
			}
			if err := enc.Encode(r); err != nil {
				return err
			}
			continue
		}
		for _, m := range res[i] {
			fmt.Fprintf(w, "%s\t%s\t%v\t%d\n", q.ID, m.ID, simhash.Fingerprint(m.Fingerprint), m.Distance)
		}
	}
	return w.Flush()
}
