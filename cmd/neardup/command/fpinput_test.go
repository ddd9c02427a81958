package command

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/simhash"
)

// formatTestFingerprints returns n fingerprints of which many have exactly 16
// decimal digits (values in [10^15, 10^16), the ones a per-line guess read as
// hex), many have a hex form of digits only (16 hex digits that are also a
// decimal number), the rest uniform, and a fifth are near-copies (1 to 3 bits
// flipped) of earlier ones. The first 50 are 16-digit decimals, so that in
// decimal an auto reader must look past them to decide.
func formatTestFingerprints(n int, seed uint64) []uint64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	fps := make([]uint64, n)
	for i := range fps {
		switch r := rng.IntN(10); {
		case i < 50 || r < 4:
			fps[i] = 1e15 + rng.Uint64N(9e15)
		case r < 5:
			v, _ := strconv.ParseUint(strconv.FormatUint(1e15+rng.Uint64N(9e15), 10), 16, 64)
			fps[i] = v // hex form is 16 decimal digits
		case r < 7 && i > 0:
			v := fps[rng.IntN(i)]
			for range 1 + rng.IntN(3) {
				v ^= 1 << rng.IntN(64)
			}
			fps[i] = v
		default:
			fps[i] = rng.Uint64()
		}
	}
	return fps
}

// exhaustivePairs is every pair i < j within k bits, "i\tj\td", sorted.
func exhaustivePairs(fps []uint64, k int) []string {
	var out []string
	for i := range fps {
		for j := i + 1; j < len(fps); j++ {
			if d := bits.OnesCount64(fps[i] ^ fps[j]); d <= k {
				out = append(out, fmt.Sprintf("%d\t%d\t%d", i, j, d))
			}
		}
	}
	slices.Sort(out)
	return out
}

// exhaustiveClusters is the connected components of two or more members,
// as 'clusters' prints them: members in input order, clusters by first member.
func exhaustiveClusters(fps []uint64, k int) []string {
	parent := make([]int, len(fps))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		if parent[x] != x {
			parent[x] = find(parent[x])
		}
		return parent[x]
	}
	for i := range fps {
		for j := i + 1; j < len(fps); j++ {
			if bits.OnesCount64(fps[i]^fps[j]) <= k {
				a, b := find(i), find(j)
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	members := map[int][]string{}
	var roots []int
	for i := range fps {
		r := find(i)
		if _, ok := members[r]; !ok {
			roots = append(roots, r)
		}
		members[r] = append(members[r], strconv.Itoa(i))
	}
	var out []string
	for _, r := range roots {
		if len(members[r]) > 1 {
			out = append(out, strings.Join(members[r], "\t"))
		}
	}
	return out
}

// formatTestFiles writes fps in every form the readers take, one file each.
func formatTestFiles(t *testing.T, fps []uint64) map[string]string {
	t.Helper()
	forms := map[string]func(i int, v uint64) string{
		"decimal":      func(_ int, v uint64) string { return strconv.FormatUint(v, 10) },
		"hex":          func(_ int, v uint64) string { return fmt.Sprintf("%016x", v) },
		"id-decimal":   func(i int, v uint64) string { return fmt.Sprintf("%d\t%d", i, v) },
		"id-hex":       func(i int, v uint64) string { return fmt.Sprintf("%d  %016X", i, v) },
		"json-string":  func(i int, v uint64) string { return fmt.Sprintf(`{"id":"%d","fingerprint":"%016x"}`, i, v) },
		"json-number":  func(_ int, v uint64) string { return fmt.Sprintf(`{"fingerprint":%d}`, v) },
		"json-decimal": func(i int, v uint64) string { return fmt.Sprintf(`{"id":%d,"fingerprint":%d}`, i, v) },
	}
	dir := t.TempDir()
	files := map[string]string{}
	for name, form := range forms {
		var sb strings.Builder
		sb.WriteString("# " + name + "\n")
		for i, v := range fps {
			sb.WriteString(form(i, v) + "\n")
		}
		files[name] = writeFile(t, dir, name+".txt", sb.String())
	}
	return files
}

// TestFormatsGiveSamePairs: the same fingerprints written in decimal, in hex
// and as JSON give the same pairs and clusters, equal to an exhaustive check,
// although hundreds of them have exactly 16 decimal digits.
func TestFormatsGiveSamePairs(t *testing.T) {
	fps := formatTestFingerprints(3000, 7)
	sixteen := 0
	for _, v := range fps {
		if len(strconv.FormatUint(v, 10)) == 16 {
			sixteen++
		}
	}
	if sixteen < 500 {
		t.Fatalf("only %d fingerprints with 16 decimal digits; the test needs many", sixteen)
	}
	wantPairs := exhaustivePairs(fps, 3)
	wantClusters := exhaustiveClusters(fps, 3)
	if len(wantPairs) < 300 {
		t.Fatalf("only %d pairs within 3 bits; the planted copies should give more", len(wantPairs))
	}
	files := formatTestFiles(t, fps)
	for name, path := range files {
		flags := [][]string{{}}
		switch name {
		case "decimal", "id-decimal":
			flags = append(flags, []string{"--fp-format", "decimal"})
		case "hex", "id-hex", "json-string":
			flags = append(flags, []string{"--fp-format", "hex"})
		}
		for _, fl := range flags {
			args := append(append([]string{"pairs", "--k", "3"}, fl...), path)
			code, out, errs := run(t, "", args...)
			if code != 0 {
				t.Errorf("%s %v: code %d, stderr %s", name, fl, code, errs)
				continue
			}
			if got := sortedLines(out); !slices.Equal(got, wantPairs) {
				t.Errorf("%s %v: %d pairs, want %d (exhaustive); first differences: %v", name, fl, len(got), len(wantPairs), firstDiff(got, wantPairs))
			}
			args[0] = "clusters"
			code, out, errs = run(t, "", args...)
			if got := strings.Split(strings.TrimRight(out, "\n"), "\n"); code != 0 || !slices.Equal(got, wantClusters) {
				t.Errorf("clusters %s %v: code %d, %d clusters, want %d (stderr %s)", name, fl, code, len(got), len(wantClusters), errs)
			}
		}
	}
	// The same through stdin, where auto must hold the first 50 lines
	// (16-digit decimals) until a longer number decides.
	var sb strings.Builder
	for _, v := range fps {
		sb.WriteString(strconv.FormatUint(v, 10) + "\n")
	}
	code, out, errs := run(t, sb.String(), "pairs", "--k", "3")
	if got := sortedLines(out); code != 0 || !slices.Equal(got, wantPairs) {
		t.Errorf("decimal on stdin: code %d, %d pairs, want %d (stderr %s)", code, len(got), len(wantPairs), errs)
	}
}

func firstDiff(got, want []string) []string {
	var d []string
	for _, s := range got {
		if !slices.Contains(want, s) && len(d) < 3 {
			d = append(d, "extra "+s)
		}
	}
	for _, s := range want {
		if !slices.Contains(got, s) && len(d) < 6 {
			d = append(d, "missing "+s)
		}
	}
	return d
}

// TestAutoDecidesAfterManyChunks: an auto reader holds every line until one
// decides, even past several chunks, and then reads them all that way.
func TestAutoDecidesAfterManyChunks(t *testing.T) {
	n := 3*fpChunkSize/17 + 10 // 16 digits and a newline each: more than three chunks
	var sb strings.Builder
	for i := range n {
		sb.WriteString(strconv.FormatUint(1e15+uint64(i), 10) + "\n")
	}
	sb.WriteString("18446744073709551615\n") // 20 digits: decimal
	in := &joinInput{}
	if err := in.read(t.Context(), strings.NewReader(sb.String()), "big", fpReadOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(in.fps) != n+1 {
		t.Fatalf("read %d fingerprints, want %d", len(in.fps), n+1)
	}
	for i := range n {
		if in.fps[i] != 1e15+uint64(i) {
			t.Fatalf("fingerprint %d = %d, want %d (read as decimal)", i, in.fps[i], 1e15+uint64(i))
		}
	}
	if in.fps[n] != 1<<64-1 {
		t.Errorf("last = %d, want 2^64-1", in.fps[n])
	}
}

// TestAmbiguousInput: an input of nothing but 16-digit decimal numbers stops
// every reader with an error that names --fp-format; the flag settles it.
func TestAmbiguousInput(t *testing.T) {
	const input = "# simhash-cpp output\n1234567890123456\n1234567890123457\n"
	dir := t.TempDir()
	path := writeFile(t, dir, "amb.txt", input)
	for _, args := range [][]string{
		{"pairs", path},
		{"clusters", path},
		{"index", "build", "--out", filepath.Join(dir, "x.ndx"), path},
		{"pairs", "-"},
	} {
		code, out, errs := run(t, input, args...)
		name := args[len(args)-1]
		if code != 2 || out != "" || !strings.Contains(errs, "--fp-format") || !strings.Contains(errs, name+":2:") {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want code 2 and an error at %s:2 naming --fp-format", args, code, out, errs, name)
		}
	}
	// The flag settles it, and the two readings differ: 10^15 and 10^15+15
	// are 4 bits apart, 0x1000000000000000 and 0x1000000000000015 3 bits.
	for _, tt := range []struct {
		format string
		want   string
	}{
		{"decimal", ""},
		{"hex", "0\t1\t3\n"},
	} {
		code, out, errs := run(t, "1000000000000000\n1000000000000015\n", "pairs", "--k", "3", "--fp-format", tt.format)
		if code != 0 || out != tt.want {
			t.Errorf("--fp-format %s: code %d, out %q, want %q (stderr %q)", tt.format, code, out, tt.want, errs)
		}
	}
	code, _, errs := run(t, "", "index", "query", "--index", "unused.ndx", "1234567890123456")
	if code != 2 || !strings.Contains(errs, "--fp-format") {
		t.Errorf("index query with a 16-digit argument: code %d, stderr %q; want 2 naming --fp-format", code, errs)
	}
}

// TestDisagreeingLine: once an input's format is decided, a line in the other
// form stops the run at its FILE:LINE, or is skipped with --skip-bad; each
// input is decided on its own.
func TestDisagreeingLine(t *testing.T) {
	dir := t.TempDir()
	dec := writeFile(t, dir, "dec.txt", "17361641481138401520\n1234567890123456\n00c8f1a3e7b2d9c4\n17361641481138401521\n")
	hex := writeFile(t, dir, "hex.txt", "f0f0f0f0f0f0f0f0\n1234567890123456\n56560681611352516\nf0f0f0f0f0f0f0f1\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"hex line in decimal", []string{"pairs", "--k", "1", dec}, 1, "", dec + ":3: \"00c8f1a3e7b2d9c4\" is hex, but this input's fingerprints are decimal"},
		{"decimal line in hex", []string{"pairs", "--k", "1", hex}, 1, "", hex + ":3: \"56560681611352516\" is decimal, but this input's fingerprints are hex"},
		{"skip-bad decimal", []string{"pairs", "--k", "1", "--skip-bad", dec}, 0, "0\t2\t1\n", "skipped " + dec + ":3:"},
		{"skip-bad hex", []string{"pairs", "--k", "1", "--skip-bad", hex}, 0, "0\t2\t1\n", "skipped " + hex + ":3:"},
		{"told hex, decimal file", []string{"pairs", "--fp-format", "hex", dec}, 1, "", dec + ":1: \"17361641481138401520\" is decimal"},
		{"told decimal, hex file", []string{"pairs", "--fp-format", "decimal", hex}, 1, "", hex + ":1: \"f0f0f0f0f0f0f0f0\" is hex"},
		{"bad flag", []string{"pairs", "--fp-format", "octal", hex}, 2, "", "--fp-format \"octal\""},
		{"index build", []string{"index", "build", "--out", filepath.Join(dir, "x.ndx"), dec}, 1, "", dec + ":3:"},
	}
	for _, tt := range tests {
		code, out, errs := run(t, "", tt.args...)
		if code != tt.code || out != tt.stdout || !strings.Contains(errs, tt.stderr) {
			t.Errorf("%s: code %d, stdout %q, stderr %q; want code %d, stdout %q, stderr containing %q", tt.name, code, out, errs, tt.code, tt.stdout, tt.stderr)
		}
	}
	// Two inputs in one run, each decided on its own: the same 16 digits are
	// decimal in the first (its other line is 19 digits) and hex in the
	// second (its other line has hex letters), and each pairs with the value
	// written in the other file's form.
	a := writeFile(t, dir, "a.txt", "1234567890123456\n1311768467284833366\n")
	b := writeFile(t, dir, "b.txt", "000462d53c8abac0\n1234567890123456\n")
	code, out, errs := run(t, "", "pairs", "--k", "0", "--sort", a, b)
	if want := "0\t2\t0\n1\t3\t0\n"; code != 0 || out != want {
		t.Errorf("two inputs: code %d, out %q, want %q (stderr %q)", code, out, want, errs)
	}
}

// TestJSONFingerprints: a JSON number is decimal, read exactly (2^53+1 and
// 2^64-1 survive; float64 would round them), a string is hex; other JSON
// values are errors with FILE:LINE.
func TestJSONFingerprints(t *testing.T) {
	in := &joinInput{}
	input := `{"fingerprint":9007199254740993}
{"fingerprint":18446744073709551615}
{"fingerprint":"1234567890123456"}
{"fingerprint":1234567890123456}
`
	if err := in.read(t.Context(), strings.NewReader(input), "j", fpReadOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []uint64{1<<53 + 1, 1<<64 - 1, 0x1234567890123456, 1234567890123456}
	if !slices.Equal(in.fps, want) {
		t.Errorf("got %d, want %d", in.fps, want)
	}
	for _, bad := range []string{`1.5e3`, `-1`, `18446744073709551616`, `"56560681611352516"`, `null`, `true`, `1e19`} {
		in := &joinInput{}
		err := in.read(t.Context(), strings.NewReader("{\"fingerprint\":0}\n{\"fingerprint\":"+bad+"}\n"), "j", fpReadOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), "j:2: ") {
			t.Errorf("fingerprint %s: err = %v, want an error at j:2", bad, err)
		}
	}
}

// TestIndexDecimalFile: index build and query read 16-digit decimal
// fingerprints as decimal once the input shows it is decimal.
func TestIndexDecimalFile(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "fps.txt", "1234567890123456\n1234567890123457\n18446744073709551615\n")
	x := filepath.Join(dir, "x.ndx")
	if code, _, errs := run(t, "", "index", "build", "--out", x, in); code != 0 {
		t.Fatalf("build: code %d, %s", code, errs)
	}
	code, out, errs := run(t, "", "index", "query", "--index", x, "--k", "0", "--fp-format", "decimal", "1234567890123457")
	if want := "1234567890123457\t" + in + ":2\t000462d53c8abac1\t0\n"; code != 0 || out != want {
		t.Errorf("query: code %d, out %q, want %q (stderr %s)", code, out, want, errs)
	}
	// Query arguments are one input: the 20-digit one decides decimal.
	code, out, _ = run(t, "", "index", "query", "--index", x, "--k", "0", "1234567890123456", "18446744073709551615")
	if want := "1234567890123456\t" + in + ":1\t000462d53c8abac0\t0\n18446744073709551615\t" + in + ":3\tffffffffffffffff\t0\n"; code != 0 || out != want {
		t.Errorf("query: code %d, out %q, want %q", code, out, want)
	}
}

// TestJoinInputIDsAcrossInputs: ids that appear only in a later input (and
// after a spill past the first block) line up with their fingerprints.
func TestJoinInputIDsAcrossInputs(t *testing.T) {
	in := &joinInput{}
	var sb strings.Builder
	n := 1<<16 + 100 // more than the first block without a size hint
	for i := range n {
		sb.WriteString(strconv.Itoa(i+1000) + "\n")
	}
	if err := in.read(t.Context(), strings.NewReader(sb.String()), "a", fpReadOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := in.read(t.Context(), strings.NewReader("x 7\n8\ny\t9\n"), "b", fpReadOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(in.fps) != n+3 || len(in.ids) != n+3 {
		t.Fatalf("%d fingerprints, %d ids; want %d of each", len(in.fps), len(in.ids), n+3)
	}
	for i := range n {
		if in.fps[i] != uint64(i+1000) || in.label(i) != strconv.Itoa(i) {
			t.Fatalf("fingerprint %d: %d labelled %q", i, in.fps[i], in.label(i))
		}
	}
	for i, want := range []struct {
		fp    uint64
		label string
	}{{7, "x"}, {8, strconv.Itoa(n + 1)}, {9, "y"}} {
		if got := in.fps[n+i]; got != want.fp || in.label(n+i) != want.label {
			t.Errorf("fingerprint %d: %d labelled %q, want %d labelled %q", n+i, got, in.label(n+i), want.fp, want.label)
		}
	}
}

// FuzzParseFPToken: the allocation-free fast paths read exactly what package
// simhash reads, in each format, and reject what it rejects.
func FuzzParseFPToken(f *testing.F) {
	for _, s := range []string{"00c8f1a3e7b2d9c4", "1234567890123456", "18446744073709551615", "18446744073709551616",
		"99999999999999999999", "0x1", "0b" + strings.Repeat("1", 64), "", "+1", "-1", "00C8F1A3E7B2D9C4", "1 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseFPToken([]byte(s), fpDecimal)
		want, werr := simhash.ParseDecimal(s)
		if (err == nil) != (werr == nil) || err == nil && got != uint64(want) {
			t.Fatalf("decimal %q: got %d, %v; simhash.ParseDecimal %d, %v", s, got, err, want, werr)
		}
		got, err = parseFPToken([]byte(s), fpHex)
		want, werr = simhash.Parse(s)
		if (err == nil) != (werr == nil) || err == nil && got != uint64(want) {
			t.Fatalf("hex %q: got %d, %v; simhash.Parse %d, %v", s, got, err, want, werr)
		}
	})
}
