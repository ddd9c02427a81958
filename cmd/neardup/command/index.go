package command

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/simhash"
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
	c.AddCommand(newIndexBuildCommand(), newIndexQueryCommand(), newIndexStatsCommand())
	return c
}

// fpRecord is one fingerprint read from a fingerprint file.
type fpRecord struct {
	ID string
	FP uint64
}

// maxFPLine bounds one line of a fingerprint file.
const maxFPLine = 1 << 20

// readFingerprints reads fingerprint records from r, calling emit for each.
// A line is a fingerprint alone (16 hex digits, 0x hex, 0b binary or
// decimal; the id is then name:line), "id<TAB or spaces>fingerprint" (the
// output of 'neardup fingerprint'; a quoted id is unquoted), or a JSON object
// with "id" and "fingerprint" fields (the output of 'neardup fingerprint
// --json'; a number fingerprint is taken as is). Blank lines and lines
// starting with # are skipped.
func readFingerprints(r io.Reader, name string, emit func(fpRecord) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxFPLine)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		rec, err := parseFPLine(s)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if rec.ID == "" {
			rec.ID = name + ":" + strconv.Itoa(line)
		}
		if err := emit(rec); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return nil
}

func parseFPLine(s string) (fpRecord, error) {
	if s[0] == '{' {
		var v struct {
			ID          json.RawMessage `json:"id"`
			Fingerprint json.RawMessage `json:"fingerprint"`
		}
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return fpRecord{}, fmt.Errorf("malformed JSON: %v", err)
		}
		if len(v.Fingerprint) == 0 {
			return fpRecord{}, fmt.Errorf("JSON object without a \"fingerprint\" field (documents need --from-text)")
		}
		fp, err := parseFPJSON(v.Fingerprint)
		if err != nil {
			return fpRecord{}, err
		}
		var id string
		if len(v.ID) > 0 && string(v.ID) != "null" {
			if err := json.Unmarshal(v.ID, &id); err != nil {
				id = string(v.ID) // a number
			}
		}
		return fpRecord{ID: id, FP: fp}, nil
	}
	i := strings.LastIndexFunc(s, unicode.IsSpace)
	if i < 0 {
		fp, err := simhash.Parse(s)
		return fpRecord{FP: uint64(fp)}, err
	}
	id, fps := strings.TrimSpace(s[:i]), s[i+1:]
	if strings.HasPrefix(id, `"`) {
		if u, err := strconv.Unquote(id); err == nil {
			id = u
		}
	}
	fp, err := simhash.Parse(fps)
	return fpRecord{ID: id, FP: uint64(fp)}, err
}

func parseFPJSON(raw json.RawMessage) (uint64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		fp, err := simhash.Parse(s)
		return uint64(fp), err
	}
	v, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("fingerprint %s is neither a string nor a 64-bit unsigned number", raw)
	}
	return v, nil
}

// openInput opens a path, "-" meaning stdin.
func openInput(path string, stdin io.Reader) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(stdin), nil
	}
	return os.Open(path)
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
