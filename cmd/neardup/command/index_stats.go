package command

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/index"
)

type indexStatsCmd struct {
	index string
	json  bool
}

func newIndexStatsCommand() *cobra.Command {
	var f indexStatsCmd
	c := &cobra.Command{
		Use:   "stats --index FILE [--json]",
		Short: "Describe an index snapshot: plan, sizes, expected query cost",
		Long: `Load an index snapshot and describe it: the number of fingerprints, the plan
(blocks, tables, key bits), the expected candidates per query, the memory it
takes when loaded and the size of the file.`,
		Example: `  neardup index stats --index docs.ndx
  neardup index stats --index docs.ndx --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c.OutOrStdout())
		},
	}
	c.Flags().StringVar(&f.index, "index", "", "index snapshot (required)")
	c.Flags().BoolVar(&f.json, "json", false, "write JSON")
	return c
}

type statsOutput struct {
	Fingerprints        int     `json:"fingerprints"`
	K                   int     `json:"k"`
	Plan                string  `json:"plan"`
	Blocks              []int   `json:"blocks"`
	Tables              int     `json:"tables"`
	StoredTables        int     `json:"stored_tables"`
	KeyBits             int     `json:"key_bits"`
	Candidates          float64 `json:"expected_candidates"`
	MemoryBytes         int64   `json:"memory_bytes"`
	BytesPerFingerprint float64 `json:"bytes_per_fingerprint"`
	TableBytes          int64   `json:"table_bytes"`
	IDBytes             int64   `json:"id_bytes"`
	FileBytes           int64   `json:"file_bytes"`
	FileBytesPerFP      float64 `json:"file_bytes_per_fingerprint"`
}

func (f *indexStatsCmd) run(stdout io.Writer) error {
	if f.index == "" {
		return usagef("--index FILE is required")
	}
	fi, err := os.Stat(f.index)
	if err != nil {
		return err
	}
	var o statsOutput
	if isFrozenFile(f.index) {
		if o, err = frozenStats(f.index); err != nil {
			return err
		}
	} else {
		x, err := index.LoadFile(f.index, index.Options{})
		if err != nil {
			return err
		}
		st := x.Stats()
		c := st.Choice
		o = statsOutput{
			Fingerprints: st.Len, K: c.Plan.K, Plan: c.Plan.String(), Blocks: c.Plan.Blocks,
			Tables: c.Tables, StoredTables: c.StoredTables, KeyBits: c.KeyBits, Candidates: c.Candidates,
			MemoryBytes: st.Bytes, BytesPerFingerprint: st.BytesPerFingerprint,
			TableBytes: st.TableBytes, IDBytes: st.IDBytes,
		}
	}
	o.FileBytes = fi.Size()
	o.FileBytesPerFP = float64(fi.Size()) / float64(max(o.Fingerprints, 1))
	if f.json {
		return json.NewEncoder(stdout).Encode(o)
	}
	fmt.Fprintf(stdout, "fingerprints: %d\n", o.Fingerprints)
	fmt.Fprintf(stdout, "plan: %s\n", o.Plan)
	fmt.Fprintf(stdout, "tables: %d (%d stored), key bits >= %d\n", o.Tables, o.StoredTables, o.KeyBits)
	fmt.Fprintf(stdout, "expected candidates per query: %.1f\n", o.Candidates)
	fmt.Fprintf(stdout, "memory: %d bytes (%.1f per fingerprint; tables %d, ids %d)\n", o.MemoryBytes, o.BytesPerFingerprint, o.TableBytes, o.IDBytes)
	fmt.Fprintf(stdout, "file: %d bytes (%.1f per fingerprint)\n", o.FileBytes, o.FileBytesPerFP)
	return nil
}
