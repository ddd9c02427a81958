package dedup

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/rule"
)

// words is the vocabulary of the synthetic corpora: random text over it has
// no accidental near-duplicates.
var words = func() []string {
	var w []string
	for i := range 2000 {
		w = append(w, fmt.Sprintf("w%dx%c", i, 'a'+i%26))
	}
	return w
}()

func randomText(rng *rand.Rand, n int) []string {
	t := make([]string, n)
	for i := range t {
		t[i] = words[rng.IntN(len(words))]
	}
	return t
}

// edit returns a copy of t with every 50th word replaced: 2% of the words, J
// of 5-shingles about 0.82.
func edit(rng *rand.Rand, t []string) []string {
	u := slices.Clone(t)
	for i := 25; i < len(u); i += 50 {
		u[i] = words[rng.IntN(len(words))]
	}
	return u
}

type testDoc struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Extra any    `json:"extra,omitempty"`
}

// plantedCorpus is 40 unrelated documents of 300 words (ids u00..u39), each
// of the first ten with a near-copy (n00..n09, read after them), two exact
// copies differing only in case and punctuation (x00, x01 of u10, u11), and
// short texts: s0 (40 words) and s1 (s0 plus a word), and s2 unrelated.
func plantedCorpus() []testDoc {
	rng := rand.New(rand.NewPCG(1, 2))
	var docs []testDoc
	var texts [][]string
	for i := range 40 {
		t := randomText(rng, 300)
		texts = append(texts, t)
		docs = append(docs, testDoc{ID: fmt.Sprintf("u%02d", i), Text: strings.Join(t, " ")})
	}
	for i := range 10 {
		docs = append(docs, testDoc{ID: fmt.Sprintf("n%02d", i), Text: strings.Join(edit(rng, texts[i]), " ")})
	}
	for i := range 2 {
		docs = append(docs, testDoc{ID: fmt.Sprintf("x%02d", i), Text: strings.ToUpper(strings.Join(texts[10+i], ", ")) + "!"})
	}
	s0 := randomText(rng, 40)
	docs = append(docs,
		testDoc{ID: "s0", Text: strings.Join(s0, " ")},
		testDoc{ID: "s1", Text: strings.Join(append(slices.Clone(s0), "extra"), " ")},
		testDoc{ID: "s2", Text: strings.Join(randomText(rng, 40), " ")},
	)
	return docs
}

// wantRemoved is what the defaults remove from plantedCorpus.
var wantRemoved = []string{"n00", "n01", "n02", "n03", "n04", "n05", "n06", "n07", "n08", "n09", "s1", "x00", "x01"}

func writeJSONL(tb testing.TB, path string, docs []testDoc) []byte {
	tb.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func readDuplicates(tb testing.TB, path string) []Duplicate {
	tb.Helper()
	var out []Duplicate
	for _, line := range readLines(tb, path) {
		var d Duplicate
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			tb.Fatalf("%s: %v", line, err)
		}
		out = append(out, d)
	}
	return out
}

func readLines(tb testing.TB, path string) []string {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

func dupIDs(ds []Duplicate) []string {
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.DupID)
	}
	slices.Sort(ids)
	return ids
}

func TestRunPlanted(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, in, plantedCorpus())
	for _, method := range []string{rule.MethodSimHash, rule.MethodMinHash} {
		t.Run(method, func(t *testing.T) {
			dups := filepath.Join(dir, method+"-dups.jsonl")
			clusters := filepath.Join(dir, method+"-clusters.jsonl")
			sum, err := Run(context.Background(), []string{in}, Options{Options: rule.Options{Method: method}, Duplicates: dups, Clusters: clusters})
			if err != nil {
				t.Fatal(err)
			}
			got := readDuplicates(t, dups)
			if ids := dupIDs(got); !slices.Equal(ids, wantRemoved) {
				t.Fatalf("removed %v, want %v", ids, wantRemoved)
			}
			if sum.Docs != 55 || sum.Removed != 13 || sum.Kept != 42 || sum.ExactDuplicates != 2 || sum.NearDuplicates != 11 || sum.Clusters != 13 {
				t.Errorf("summary %+v, want 55 docs, 13 removed (2 exact, 11 near), 42 kept, 13 clusters", sum)
			}
			for _, d := range got {
				wantKept := "u" + d.DupID[1:]
				switch d.DupID[0] {
				case 'x':
					wantKept = fmt.Sprintf("u%02d", 10+int(d.DupID[2]-'0'))
				case 's':
					wantKept = "s0"
				}
				if d.KeptID != wantKept {
					t.Errorf("%s kept %s, want %s", d.DupID, d.KeptID, wantKept)
				}
				if d.Exact != (d.DupID[0] == 'x') {
					t.Errorf("%s: exact %v", d.DupID, d.Exact)
				}
				if d.Jaccard == nil || *d.Jaccard < 0.8 {
					t.Errorf("%s: jaccard %v, want >= 0.8", d.DupID, d.Jaccard)
				}
				if (d.Distance != nil) != (method == rule.MethodSimHash) {
					t.Errorf("%s: distance %v with method %s", d.DupID, d.Distance, method)
				}
			}
			if n := len(readLines(t, clusters)); n != 13 {
				t.Errorf("%d clusters in the file, want 13", n)
			}
		})
	}
}

// Without verification, the SimHash stage alone decides: the short unrelated
// pair s0/s2 must still not merge at the default k, and every planted pair
// must be found.
func TestRunNoVerify(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, in, plantedCorpus())
	dups := filepath.Join(dir, "dups.jsonl")
	if _, err := Run(context.Background(), []string{in}, Options{Options: rule.Options{Method: rule.MethodSimHash, Verify: rule.VerifyNone}, Duplicates: dups}); err != nil {
		t.Fatal(err)
	}
	got := dupIDs(readDuplicates(t, dups))
	for _, w := range wantRemoved {
		if !slices.Contains(got, w) {
			t.Errorf("without verification %s was not removed (removed %v)", w, got)
		}
	}
}

func TestRunCosine(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, in, plantedCorpus())
	dups := filepath.Join(dir, "dups.jsonl")
	if _, err := Run(context.Background(), []string{in}, Options{Options: rule.Options{Verify: rule.VerifyCosine}, Duplicates: dups}); err != nil {
		t.Fatal(err)
	}
	got := readDuplicates(t, dups)
	if ids := dupIDs(got); !slices.Equal(ids, wantRemoved) {
		t.Fatalf("removed %v, want %v", ids, wantRemoved)
	}
	for _, d := range got {
		if d.Cosine == nil || *d.Cosine < 0.9 || d.Jaccard != nil {
			t.Errorf("%s: cosine %v jaccard %v", d.DupID, d.Cosine, d.Jaccard)
		}
	}
}

func TestKeepPolicies(t *testing.T) {
	base := strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon ", 10)
	docs := []testDoc{
		{ID: "a", Text: base, Extra: 3},
		{ID: "b", Text: base + " phi chi", Extra: 7},
		{ID: "c", Text: base + " phi", Extra: 1},
		{ID: "d", Text: base + " psi chi"}, // no field: never kept by field
	}
	tests := []struct {
		name string
		opt  Options
		want string
	}{
		{"first", Options{}, "a"},
		{"longest", Options{Keep: KeepLongest}, "b"}, // b and d tie in length; b is first
		{"field max", Options{KeepField: "extra"}, "b"},
		{"field min", Options{KeepField: "extra", KeepOrder: "min"}, "c"},
		{"missing field", Options{KeepField: "nope"}, "a"},
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, in, docs)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "kept.jsonl")
			tt.opt.Output = out
			sum, err := Run(context.Background(), []string{in}, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			lines := readLines(t, out)
			if len(lines) != 1 || sum.Kept != 1 {
				t.Fatalf("kept %d docs (%q), want 1", sum.Kept, lines)
			}
			var d testDoc
			json.Unmarshal([]byte(lines[0]), &d)
			if d.ID != tt.want {
				t.Errorf("kept %s, want %s", d.ID, tt.want)
			}
		})
	}
}

// Kept JSONL lines are copied byte for byte: field order, spacing, escapes and
// unknown fields survive.
func TestOutputUntouched(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	text := strings.Repeat("one two three four five six seven eight nine ten ", 20)
	lines := []string{
		`{"meta": {"z": 1, "a": [1,2]},   "text": "` + text + `", "id": "first"}`,
		`{"id":"second","text":"` + text + ` eleven"}`, // near-duplicate of first: removed
		`{"text":"caf\u00e9 \u4e2d\u6587 unrelated words here \"quoted\"","id":7, "n": 1.50}`,
		"",
		`{"id":"crlf","text":"something else entirely, not like the others"}` + "\r",
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "kept.jsonl")
	if _, err := Run(context.Background(), []string{in}, Options{Output: out}); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, out)
	want := []string{lines[0], lines[2], strings.TrimSuffix(lines[4], "\r")}
	if !slices.Equal(got, want) {
		t.Errorf("output\n%q\nwant\n%q", got, want)
	}
}

// A cancelled run leaves no output file, and an existing file is untouched.
func TestAtomicOnCancel(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, in, plantedCorpus())
	out := filepath.Join(dir, "kept.jsonl")
	dups := filepath.Join(dir, "dups.jsonl")
	if err := os.WriteFile(out, []byte("previous\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{"read", "candidates", "output"} {
		t.Run(stage, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opt := Options{Output: out, Duplicates: dups, ProgressInterval: 1,
				Progress: func(p Progress) {
					if p.Stage == stage {
						cancel()
					}
				}}
			_, err := Run(ctx, []string{in}, opt)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
			if b, _ := os.ReadFile(out); string(b) != "previous\n" {
				t.Errorf("output changed to %q", b)
			}
			if _, err := os.Stat(dups); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("duplicates file exists after cancellation: %v", err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 2 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("directory holds %v, want only the input and the old output", names)
			}
		})
	}
}

func TestDuplicateIDs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, in, []testDoc{{ID: "a", Text: "one text"}, {ID: "b", Text: "two text"}, {ID: "a", Text: "three text"}})
	_, err := Run(context.Background(), []string{in}, Options{})
	if !errors.Is(err, ErrDuplicateID) || !strings.Contains(err.Error(), "in.jsonl:1") || !strings.Contains(err.Error(), "in.jsonl:3") {
		t.Fatalf("got %v, want ErrDuplicateID naming lines 1 and 3", err)
	}
	sum, err := Run(context.Background(), []string{in}, Options{AllowDuplicateIDs: true})
	if err != nil || sum.Kept != 3 {
		t.Fatalf("with AllowDuplicateIDs: %+v, %v; want 3 kept", sum, err)
	}
}

func TestMalformedLines(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte("{\"id\":\"a\",\"text\":\"fine\"}\n{\"id\": \"b\", \"text\": \n{\"id\":\"c\",\"text\":\"also fine\"}\n"), 0o644)
	out := filepath.Join(dir, "kept.jsonl")
	_, err := Run(context.Background(), []string{in}, Options{Output: out})
	if err == nil || !strings.Contains(err.Error(), "in.jsonl:2") {
		t.Fatalf("got %v, want an error naming in.jsonl:2", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output written by a failed run")
	}
	opt := Options{Output: out}
	opt.Corpus.SkipBad = true
	sum, err := Run(context.Background(), []string{in}, opt)
	if err != nil || sum.Docs != 2 || sum.BadInputs != 1 {
		t.Fatalf("with SkipBad: %+v, %v; want 2 docs and 1 bad input", sum, err)
	}
	if got := readLines(t, out); len(got) != 2 {
		t.Errorf("output %q, want 2 lines", got)
	}
}

// Compressed input gives the same result as plain input.
func TestCompressedInput(t *testing.T) {
	dir := t.TempDir()
	plain := writeJSONL(t, filepath.Join(dir, "in.jsonl"), plantedCorpus())
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	os.WriteFile(filepath.Join(dir, "in.jsonl.gz"), gz.Bytes(), 0o644)
	enc, _ := zstd.NewWriter(nil)
	os.WriteFile(filepath.Join(dir, "in.jsonl.zst"), enc.EncodeAll(plain, nil), 0o644)
	for _, name := range []string{"in.jsonl", "in.jsonl.gz", "in.jsonl.zst"} {
		out := filepath.Join(dir, name+".kept")
		dups := filepath.Join(dir, name+".dups")
		sum, err := Run(context.Background(), []string{filepath.Join(dir, name)}, Options{Output: out, Duplicates: dups})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ids := dupIDs(readDuplicates(t, dups)); !slices.Equal(ids, wantRemoved) || sum.Kept != 42 || len(readLines(t, out)) != 42 {
			t.Errorf("%s: removed %v, kept %d", name, ids, sum.Kept)
		}
	}
}

// Standard input is spooled so that the output pass can copy its lines.
func TestStdin(t *testing.T) {
	dir := t.TempDir()
	plain := writeJSONL(t, filepath.Join(dir, "in.jsonl"), plantedCorpus())
	out := filepath.Join(dir, "kept.jsonl")
	sum, err := Run(context.Background(), []string{"-"}, Options{Stdin: bytes.NewReader(plain), Output: out, TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := readLines(t, out); len(got) != 42 || sum.Kept != 42 {
		t.Errorf("kept %d lines (summary %d), want 42", len(got), sum.Kept)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d files left in the temp dir, want 2 (spool removed)", len(entries))
	}
}

// Text input: one document per file; the output lists the kept paths.
func TestTextFiles(t *testing.T) {
	dir := t.TempDir()
	docs := plantedCorpus()
	src := filepath.Join(dir, "docs")
	os.Mkdir(src, 0o755)
	for _, d := range docs[:12] {
		os.WriteFile(filepath.Join(src, d.ID+".txt"), []byte(d.Text), 0o644)
	}
	for _, d := range docs[40:42] { // n00, n01
		os.WriteFile(filepath.Join(src, d.ID+".txt"), []byte(d.Text), 0o644)
	}
	out := filepath.Join(dir, "kept.txt")
	sum, err := Run(context.Background(), []string{src}, Options{Output: out})
	if err != nil {
		t.Fatal(err)
	}
	got := readLines(t, out)
	// Files are read in lexical order: n00 comes before u00 and is kept.
	if sum.Removed != 2 || len(got) != 12 || !slices.Contains(got, filepath.Join(src, "n00.txt")) || slices.Contains(got, filepath.Join(src, "u00.txt")) {
		t.Errorf("removed %d, output %q", sum.Removed, got)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		opt  Options
	}{
		{"method", Options{Options: rule.Options{Method: "nope"}}},
		{"profile", Options{Options: rule.Options{Profile: "nope"}}},
		{"verify", Options{Options: rule.Options{Verify: "nope"}}},
		{"threshold", Options{Options: rule.Options{Threshold: 1.5}}},
		{"keep", Options{Keep: "nope"}},
		{"keep longest with field", Options{Keep: KeepLongest, KeepField: "x"}},
		{"keep order", Options{KeepField: "x", KeepOrder: "up"}},
		{"k", Options{Options: rule.Options{K: 40}}},
		{"bands", Options{Options: rule.Options{Method: rule.MethodMinHash, Bands: 100, Rows: 2}}},
		{"bands alone", Options{Options: rule.Options{Method: rule.MethodMinHash, Bands: 10}}},
		{"update without index", Options{UpdateIndex: true}},
		{"index without kept files", Options{Index: "seen.idx"}},
		{"cosine with minhash", Options{Options: rule.Options{Verify: rule.VerifyCosine, Method: rule.MethodMinHash}}},
	}
	for _, tt := range tests {
		o := tt.opt
		o.EnsureDefaults()
		if err := o.Validate(); !errors.Is(err, ErrOptions) {
			t.Errorf("%s: Validate() = %v, want ErrOptions", tt.name, err)
		}
	}
	var o Options
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// Documents without words (emoticons, punctuation) are duplicates only when
// byte-identical, with either method.
func TestNoWords(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, in, []testDoc{{ID: "a", Text: "(╯‵□′)╯︵┻━┻"}, {ID: "b", Text: "╮(╯▽╰)╭"}, {ID: "c", Text: "(╯‵□′)╯︵┻━┻"}, {ID: "d", Text: ""}, {ID: "e", Text: ""}})
	for _, method := range []string{rule.MethodSimHash, rule.MethodMinHash} {
		for _, verify := range []string{rule.VerifyJaccard, rule.VerifyNone} {
			dups := filepath.Join(dir, method+verify)
			if _, err := Run(context.Background(), []string{in}, Options{Options: rule.Options{Method: method, Verify: verify}, Duplicates: dups}); err != nil {
				t.Fatal(err)
			}
			got := readDuplicates(t, dups)
			if ids := dupIDs(got); !slices.Equal(ids, []string{"c", "e"}) {
				t.Errorf("%s/%s: removed %v, want [c e]", method, verify, ids)
			}
		}
	}
}
