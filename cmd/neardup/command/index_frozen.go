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
// (index.Frozen) with integer ids, built in bounded memory. With --raw the
// one input is a file of little-endian 8-byte fingerprints, read once per
// sort run and never held in memory; otherwise the fingerprints read as for
// an Index keep their ids when every id is a decimal integer, else take
// their positions in the input, and the string ids are stored as the
// positions' names (Frozen.SetNames), which index query prints.
func (f *indexBuildCmd) buildFrozen(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	opt := index.FrozenOptions{K: f.k, Workers: f.workers}
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
		if len(args) != 1 || args[0] == "-" {
			return usagef("--raw reads exactly one file (read several times, so not stdin)")
		}
		if _, err := os.Stat(args[0]); err != nil {
			return err
		}
		src = index.FileSource(args[0])
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
	x, err := index.BuildFrozen(ctx, src, opt)
	if err != nil {
		return err
	}
	if names != nil {
		if err := x.SetNames(names); err != nil {
			return err
		}
	}
	var size int64
	if err := outfile.WriteFile(f.out, stdout, func(w io.Writer) (err error) { size, err = x.WriteTo(w); return err }); err != nil {
		return err
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
			Why: "frozen: Elias-Fano tables, ids from " + idsFrom,
		})
	}
	fmt.Fprintf(stdout, "froze %d fingerprints into %s (%d bytes, %.1f per fingerprint; ids: %s)\n", x.Len(), f.out, size, float64(size)/float64(n), idsFrom)
	fmt.Fprintf(stdout, "%v\n", x.Plan())
	return nil
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
		Fingerprints: n, K: p.K, Plan: p.String() + " (frozen)", Blocks: p.Blocks,
		Tables: len(p.Tables), StoredTables: len(p.Tables), KeyBits: kb,
		Candidates:  float64(len(p.Tables)) * float64(n) / float64(uint64(1)<<kb),
		MemoryBytes: x.Bytes(), BytesPerFingerprint: float64(x.Bytes()) / float64(max(n, 1)),
		TableBytes: x.Bytes() - x.IDBytes(), IDBytes: x.IDBytes(),
	}, nil
}
