package command

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/outfile"
)

// buildFrozen is index build --frozen: a compressed read-only index
// (index.Frozen) with integer ids, built by an external sort (runs in
// --temp-dir). With --raw the one input is a file (or stdin) of
// little-endian 8-byte fingerprints, read once and never held in memory,
// and the tables go to the snapshot as the merge yields them
// (index.BuildFrozenFile), so the build's memory is the sort memory;
// otherwise the fingerprints read as for
// an Index keep their ids when every id is a decimal integer, else take
// their positions in the input, and the string ids are stored as the
// positions' names (Frozen.SetNames), which index query prints.
func (f *indexBuildCmd) buildFrozen(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	opt := index.FrozenOptions{K: f.k, Workers: f.workers, TempDir: f.tempDir}
	if f.plan != "" && f.plan != "auto" {
		opt.Layout = f.plan
		if !f.kSet {
			opt.K = 0
		}
	}
	if f.budget != "" {
		b, err := parseBytes(f.budget)
		if err != nil {
			return usagef("--budget: %v", err)
		}
		opt.SortMemory = b
	}
	var src index.Source
	var names []string
	idsFrom := "positions in the input"
	if f.raw {
		if len(args) > 1 {
			return usagef("--raw reads one file of 8-byte fingerprints (or - for stdin)")
		}
		if len(args) == 0 || args[0] == "-" {
			src = index.ReaderSource(stdin, "stdin")
		} else {
			if _, err := os.Stat(args[0]); err != nil {
				return err
			}
			src = index.FileSource(args[0])
		}
	} else {
		sids, fps, err := f.readInput(ctx, args, stdin, stderr)
		if err != nil {
			return err
		}
		ids := make([]uint64, len(sids))
		for i, s := range sids {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				ids = nil
				break
			}
			ids[i] = v
		}
		if ids != nil {
			idsFrom = "the input's ids"
		} else {
			names = sids
			idsFrom = "positions in the input, named by the input's ids"
		}
		src = index.SliceSource(fps, ids)
	}
	var (
		x    *index.Frozen
		size int64
		err  error
	)
	if names == nil && streamable(f.out) {
		// Straight into the snapshot: the tables are never in memory.
		if x, err = index.BuildFrozenFile(ctx, src, f.out, opt); err != nil {
			return err
		}
		defer x.Close()
		if fi, err := os.Stat(f.out); err == nil {
			size = fi.Size()
		}
	} else {
		if x, err = index.BuildFrozen(ctx, src, opt); err != nil {
			return err
		}
		if names != nil {
			if err := x.SetNames(names); err != nil {
				return err
			}
		}
		if err := outfile.WriteFile(f.out, stdout, func(w io.Writer) (err error) { size, err = x.WriteTo(w); return err }); err != nil {
			return err
		}
	}
	if f.out == outfile.Stdout {
		stdout = stderr
	}
	n := max(x.Len(), 1)
	if f.json {
		p := x.Plan()
		return json.NewEncoder(stdout).Encode(buildSummary{
			Out: f.out, Fingerprints: x.Len(), Plan: p.String(), Tables: len(p.Tables), KeyBits: p.KeyBits(0),
			BytesPerFingerprint: float64(x.Bytes()) / float64(n), MemoryBytes: x.Bytes(), FileBytes: size,
			Why: "frozen: Elias-Fano tables (" + x.Layout() + "), ids from " + idsFrom,
		})
	}
	fmt.Fprintf(stdout, "froze %d fingerprints into %s (%d bytes, %.1f per fingerprint; ids: %s)\n", x.Len(), f.out, size, float64(size)/float64(n), idsFrom)
	fmt.Fprintf(stdout, "%s\n", x.Layout())
	return nil
}

// streamable reports whether the snapshot can be written where it goes
// while it is built: a regular file, or a new one (not stdout, a device
// or a FIFO, which outfile writes in place).
func streamable(path string) bool {
	if path == outfile.Stdout {
		return false
	}
	fi, err := os.Stat(path)
	return os.IsNotExist(err) || err == nil && fi.Mode().IsRegular()
}

// queryFrozen answers index query from a frozen snapshot, mapped in place.
func (f *indexQueryCmd) queryFrozen(queries []fpRecord, stdout io.Writer) error {
	x, err := index.OpenFrozen(f.index, index.FrozenOpenOptions{NoVerify: f.noVerify})
	if err != nil {
		return err
	}
	defer x.Close()
	k := f.k
	if k < 0 {
		k = x.Plan().K
	}
	if k > x.Plan().K {
		return usagef("--k %d: the index answers k up to %d (rebuild it with a larger --k)", k, x.Plan().K)
	}
	res := make([][]index.Match, len(queries))
	for i, q := range queries {
		ms, err := x.Query(q.FP, k, f.limit)
		if err != nil {
			return err
		}
		for _, m := range ms {
			id := strconv.FormatUint(m.ID, 10)
			if name, ok := x.Name(m.ID); ok {
				id = name
			}
			res[i] = append(res[i], index.Match{ID: id, Fingerprint: m.Fingerprint, Distance: m.Distance})
		}
	}
	return f.write(queries, res, stdout)
}

// isFrozenFile reports whether path holds a frozen snapshot.
func isFrozenFile(path string) bool {
	fd, err := os.Open(path)
	if err != nil {
		return false
	}
	defer fd.Close()
	var b [8]byte
	n, _ := io.ReadFull(fd, b[:])
	return index.IsFrozenSnapshot(b[:n])
}

// frozenStats describes a frozen snapshot for index stats: its memory is
// what a query may touch of the mapping.
func frozenStats(path string) (statsOutput, error) {
	x, err := index.OpenFrozen(path, index.FrozenOpenOptions{NoVerify: true})
	if err != nil {
		return statsOutput{}, err
	}
	defer x.Close()
	p := x.Plan()
	kb := 64
	for t := range p.Tables {
		kb = min(kb, p.KeyBits(t))
	}
	n := x.Len()
	return statsOutput{
		Fingerprints: n, K: p.K, Plan: x.Layout() + " (frozen)", Blocks: p.Blocks,
		Tables: len(p.Tables), StoredTables: len(p.Tables), KeyBits: kb,
		Candidates:  float64(len(p.Tables)) * probes(kb, x.Radius()) * float64(n) / float64(uint64(1)<<kb),
		MemoryBytes: x.Bytes(), BytesPerFingerprint: float64(x.Bytes()) / float64(max(n, 1)),
		TableBytes: x.Bytes() - x.IDBytes(), IDBytes: x.IDBytes(),
	}, nil
}

// probes returns the keys a query probes in a table of kb-bit keys: those
// within radius bits of its own.
func probes(kb, radius int) float64 {
	c, b := 0.0, 1.0
	for i := 0; i <= radius; i++ {
		c += b
		b = b * float64(kb-i) / float64(i+1)
	}
	return c
}
