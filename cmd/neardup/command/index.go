package command

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

func newIndexCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "index",
		Short: "Build, query and inspect a Hamming-distance index of fingerprints",
		Long: `Build, query and inspect an index that finds every stored fingerprint within k
bits of a query without a scan (Manku, Jain, Das Sarma 2007, section 3).

  neardup index build --out corpus.ndx fps.txt
  neardup index query --index corpus.ndx --k 3 0123456789abcdef
  neardup index stats --index corpus.ndx`,
		Args: noArgsHelp,
	}
	c.AddCommand(newIndexBuildCommand(), newIndexQueryCommand(), newIndexStatsCommand(), newIndexGenCommand(), newIndexBenchCommand())
	return c
}

// fpRecord is one fingerprint read from a fingerprint file.
type fpRecord struct {
	ID string
	FP uint64
}

// openInput opens a path, "-" meaning stdin.
func openInput(path string, stdin io.Reader) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(stdin), nil
	}
	return os.Open(path)
}

// regularSize is r's size when it is a regular file, else 0.
func regularSize(r io.Reader) int64 {
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return 0
}

// parseBytes reads a size such as 4GiB, 500MB, 1.5G or 1048576.
func parseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v*mult > 1<<62 {
		return 0, fmt.Errorf("bad size %q (want e.g. 4GiB, 500MB, 1048576)", s)
	}
	return int64(v * mult), nil
}
