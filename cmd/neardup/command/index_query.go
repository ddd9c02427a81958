package command

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/simhash"
)

type indexQueryCmd struct {
	index string
	k     int
	limit int
	json  bool
}

func newIndexQueryCommand() *cobra.Command {
	var f indexQueryCmd
	c := &cobra.Command{
		Use:   "query --index FILE [--k K] [--limit N] [--json] FP...|-",
		Short: "Find the stored fingerprints within k bits of each query",
		Long: `Load an index snapshot and print, for each query fingerprint, every stored
fingerprint within --k bits, nearest first (ties by id), at most --limit.

Queries are arguments (16 hex digits, 0x hex, 0b binary or decimal) or, with
-, lines on stdin in the formats 'neardup index build' reads; a line's id (or
FILE:LINE) labels its results.

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
			return f.run(args, c.InOrStdin(), c.OutOrStdout())
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.index, "index", "", "index snapshot (required)")
	fs.IntVarP(&f.k, "k", "k", 0, "largest distance (default: the index's k)")
	fs.IntVarP(&f.limit, "limit", "n", 0, "at most this many matches per query (0: all)")
	fs.BoolVar(&f.json, "json", false, "write one JSON object per query")
	return c
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

func (f *indexQueryCmd) run(args []string, stdin io.Reader, stdout io.Writer) error {
	if f.index == "" {
		return usagef("--index FILE is required")
	}
	if len(args) == 0 {
		return usagef("no query fingerprints (give them as arguments or - for stdin)")
	}
	if f.limit < 0 {
		return usagef("--limit %d: want 0 or more", f.limit)
	}
	var queries []fpRecord
	for _, a := range args {
		if a == "-" {
			err := readFingerprints(stdin, "-", func(r fpRecord) error {
				queries = append(queries, r)
				return nil
			})
			if err != nil {
				return err
			}
			continue
		}
		fp, err := simhash.Parse(strings.TrimSpace(a))
		if err != nil {
			return usagef("query %q: %v", a, err)
		}
		queries = append(queries, fpRecord{ID: a, FP: uint64(fp)})
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
