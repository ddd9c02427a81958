package command

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/index"
)

type clustersCmd struct {
	joinFlags
	assign bool
}

func newClustersCommand() *cobra.Command {
	var f clustersCmd
	c := &cobra.Command{
		Use:   "clusters [flags] [FILE|-]...",
		Short: "Group fingerprints into clusters of near-duplicates (connected components)",
		Long: `Group fingerprints into clusters: the connected components of the graph whose
edges are the pairs within --k bits (single linkage, as seomoz/simhash-cpp's
find_clusters), found with union-find. One line per cluster of two or more,
members in input order separated by tabs; the first member is the one to keep
and the rest are its near-duplicates. Clusters come in order of their first
member.

With --assign, one line per fingerprint instead: "member<TAB>kept", where kept
is the first member of its cluster (itself when it is kept), the "keep the
first, mark the rest" assignment for deduplication.

With --json, each line is an object {"size", "members"} (0-based positions)
plus "ids" when the input has ids; with --assign {"position", "keep"} plus
"id" and "keep_id".

` + joinFormatHelp + `

Identical fingerprints are grouped in linear time, so heavy duplication costs
no more than the distinct values do.`,
		Example: `  neardup clusters --k 3 fps.txt
  neardup fingerprint docs.jsonl | neardup clusters --k 3 --assign
  neardup clusters --k 3 --json -v fps.txt`,
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c.Context(), args, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f.register(c.Flags())
	c.Flags().BoolVar(&f.assign, "assign", false, "print every fingerprint with the member kept for its cluster")
	return c
}

// clusterJSON is one line of 'clusters --json'.
type clusterJSON struct {
	Size    int      `json:"size"`
	Members []int    `json:"members"`
	IDs     []string `json:"ids,omitempty"`
}

// assignJSON is one line of 'clusters --json --assign'.
type assignJSON struct {
	Position int    `json:"position"`
	Keep     int    `json:"keep"`
	ID       string `json:"id,omitempty"`
	KeepID   string `json:"keep_id,omitempty"`
}

func (f *clustersCmd) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if _, _, err := f.options(0); err != nil {
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
	t1 := time.Now()
	rep, err := index.Clusters(ctx, in.fps, f.k, opt)
	if err != nil {
		return err
	}
	// The fingerprints, the join's table and the union-find are garbage
	// now, 28 bytes a fingerprint, but joinGC holds the collector back until
	// a soft limit far above them; collect once so that grouping reuses
	// their pages instead of growing the process (peak RSS at 100M 5.10 ->
	// 4.26 GB, 3.87 with index.Clusters' own saving; BENCHMARKS.md, issue 36).
	in.fps = nil
	runtime.GC()
	w := bufio.NewWriterSize(stdout, 64<<10)
	enc := json.NewEncoder(w)
	var line []byte // a text line, formatted without allocating
	if f.assign {
		for i, r := range rep {
			if f.json {
				err = enc.Encode(assignJSON{i, r, in.id(i), in.id(r)})
			} else {
				line = in.appendLabel(line[:0], i)
				line = append(line, '\t')
				line = in.appendLabel(line, r)
				line = append(line, '\n')
				_, err = w.Write(line)
			}
			if err != nil {
				return err
			}
		}
	}
	groups := index.ClusterGroups(rep)
	if !f.assign {
		for _, g := range groups {
			if f.json {
				c := clusterJSON{Size: len(g), Members: g}
				if in.ids != nil {
					for _, m := range g {
						c.IDs = append(c.IDs, in.id(m))
					}
				}
				err = enc.Encode(c)
			} else {
				line = line[:0]
				for i, m := range g {
					if i > 0 {
						line = append(line, '\t')
					}
					line = in.appendLabel(line, m)
				}
				line = append(line, '\n')
				_, err = w.Write(line)
			}
			if err != nil {
				return err
			}
		}
	}
	if f.verbose {
		dups := 0
		for _, g := range groups {
			dups += len(g) - 1
		}
		fmt.Fprintf(stderr, "%d clusters, %d near-duplicates marked, in %v\n", len(groups), dups, time.Since(t1).Round(time.Millisecond))
	}
	return w.Flush()
}
