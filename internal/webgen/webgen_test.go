package webgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/testcorpora"
)

var (
	poolOnce sync.Once
	pool     *Pool
	poolErr  error
)

// testPool returns the pool of the shared English corpora, read once.
func testPool(tb testing.TB) *Pool {
	tb.Helper()
	paths := []string{testcorpora.Path(tb, "en_prose"), testcorpora.Path(tb, "en_gitdocs_dev"), testcorpora.Path(tb, "en_spdx")}
	poolOnce.Do(func() { pool, poolErr = LoadPool(paths...) })
	if poolErr != nil {
		tb.Fatal(poolErr)
	}
	return pool
}

func generate(tb testing.TB, opt Options, n int64, workers int) []byte {
	tb.Helper()
	g, err := New(testPool(tb), opt)
	if err != nil {
		tb.Fatal(err)
	}
	var b bytes.Buffer
	if err := g.Write(context.Background(), &b, 0, n, workers); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func parse(tb testing.TB, b []byte) []Doc {
	tb.Helper()
	var docs []Doc
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d Doc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			tb.Fatalf("line %d: %v", len(docs)+1, err)
		}
		docs = append(docs, d)
	}
	return docs
}

func TestPool(t *testing.T) {
	p := testPool(t)
	if p.Len() < 50000 {
		t.Errorf("pool has %d sentences, want at least 50,000", p.Len())
	}
	seen := map[string]bool{}
	for i := range p.Len() {
		s := p.Sentence(i)
		if seen[s] {
			t.Fatalf("sentence %d repeats: %q", i, s)
		}
		seen[s] = true
	}
}

func TestSentences(t *testing.T) {
	text := "Call me Ishmael. Some years ago, never mind how long precisely, I went to sea.\n\n" +
		"See e.g. the manual for details about it all. Mr. Smith went to Washington on a Tuesday morning!\n\n" +
		"Too short. Visit https://example.com for the rest of the story today.\n\n" +
		"A sentence that\nwraps over two lines and ends here. and a fragment without an end"
	var got []string
	Sentences(text, func(s string) { got = append(got, s) })
	want := []string{
		"Some years ago, never mind how long precisely, I went to sea.",
		"See e.g. the manual for details about it all.",
		"Mr. Smith went to Washington on a Tuesday morning!",
		// Not the last paragraph: it has no end a capital letter follows.
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Sentences:\n got %q\nwant %q", got, want)
	}
}

func TestDeterministic(t *testing.T) {
	for _, opt := range []Options{
		{Seed: 7, Hot: 0.2},
		{Seed: 7, Hot: 0.2, Sites: 50, ShortShare: 0.3},
	} {
		want := generate(t, opt, 3000, 1)
		for _, workers := range []int{1, 2, 3, 8} {
			if got := generate(t, opt, 3000, workers); !bytes.Equal(got, want) {
				t.Errorf("%+v, workers %d: %d bytes differ from one worker's %d", opt, workers, len(got), len(want))
			}
		}
		// A later range is the tail of the whole.
		g, _ := New(testPool(t), opt)
		var tail bytes.Buffer
		if err := g.Write(context.Background(), &tail, 1000, 2000, 2); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(want, tail.Bytes()) {
			t.Errorf("%+v: documents 1000..2999 written alone differ from the tail of 0..2999", opt)
		}
		other := opt
		other.Seed++
		if bytes.Equal(generate(t, other, 3000, 2), want) {
			t.Errorf("%+v: seeds 7 and 8 gave the same corpus", opt)
		}
	}
}

func TestPlantedJaccard(t *testing.T) {
	for _, opt := range []Options{{Seed: 3}, {Seed: 3, Sites: 2000, ShortShare: 0.3}} {
		t.Run(fmt.Sprintf("sites=%d", opt.Sites), func(t *testing.T) { testPlantedJaccard(t, opt) })
	}
}

func testPlantedJaccard(t *testing.T, opt Options) {
	docs := parse(t, generate(t, opt, 20000, 0))
	byID := map[string]string{}
	for _, d := range docs {
		byID[d.ID] = d.Text
	}
	counts := map[string]int{}
	low := 0 // near-copies in [0.80, 0.85)
	for _, d := range docs {
		p := d.Planted
		if p == nil {
			continue
		}
		counts[p.Kind]++
		of, ok := byID[p.Of]
		if !ok || p.Of >= d.ID {
			t.Fatalf("%s: planted copy of %s, which is not an earlier document", d.ID, p.Of)
		}
		if j := TextJaccard(d.Text, of); j != p.Jaccard {
			t.Errorf("%s: planted Jaccard %v, recomputed %v", d.ID, p.Jaccard, j)
		}
		switch p.Kind {
		case KindExact:
			if d.Text != of || p.Jaccard != 1 {
				t.Errorf("%s: exact copy of %s differs (J %v)", d.ID, p.Of, p.Jaccard)
			}
		case KindNear:
			if p.Jaccard < NearMin || p.Jaccard > NearMax {
				t.Errorf("%s: near-copy at J %v, want [%v, %v]", d.ID, p.Jaccard, NearMin, NearMax)
			}
			if p.Jaccard < 0.85 {
				low++
			}
		case KindControl:
			if p.Jaccard < ControlMin || p.Jaccard >= ControlMax {
				t.Errorf("%s: control at J %v, want [%v, %v)", d.ID, p.Jaccard, ControlMin, ControlMax)
			}
		default:
			t.Errorf("%s: kind %q", d.ID, p.Kind)
		}
	}
	if counts[KindNear] == 0 || float64(low) < 0.2*float64(counts[KindNear]) {
		t.Errorf("%d of %d near-copies in [0.80, 0.85), want at least a fifth", low, counts[KindNear])
	}
}

func TestFractions(t *testing.T) {
	const n = 20000
	g, err := New(testPool(t), Options{Seed: 5, Hot: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	s := NewScratch()
	counts := map[string]int{}
	var boiler, plain, hot, bytes int
	var originals []int64
	for i := range int64(n) {
		d := g.Doc(i, s)
		bytes += len(d.Text)
		if d.Planted != nil {
			counts[d.Planted.Kind]++
			of, err := strconv.ParseInt(d.Planted.Of[1:], 10, 64)
			if err != nil {
				t.Fatalf("%s: planted of %q", d.ID, d.Planted.Of)
			}
			originals = append(originals, of)
		}
		if strings.Contains(d.Text, g.hot) {
			hot++
		}
		if d.Planted == nil || d.Planted.Kind != KindNear && d.Planted.Kind != KindControl { // edits may touch the paragraph
			plain++
			if hasPara(g, d.Text) {
				boiler++
			}
		}
	}
	for _, c := range []struct {
		what      string
		got       int
		want, tol float64
	}{
		{"near", counts[KindNear], 0.09, 0.01},
		{"control", counts[KindControl], 0.01, 0.003},
		{"exact", counts[KindExact], 0.02, 0.004},
		{"boilerplate (of documents other than near-copies)", boiler * n / plain, 0.3, 0.02},
		{"hot", hot, 0.2, 0.02},
	} {
		if f := float64(c.got) / n; math.Abs(f-c.want) > c.tol {
			t.Errorf("%s: %d of %d documents (%.4f), want %.3f ± %.3f", c.what, c.got, n, f, c.want, c.tol)
		}
	}
	if mean := bytes / n; mean < 900 || mean > 1600 {
		t.Errorf("mean text %d bytes, want 900 to 1600", mean)
	}
	// Originals are uniform over the past: copies made late in the corpus
	// reach back into its first half as often as into its second.
	var early, late int
	for _, of := range originals {
		if of < n/4 {
			early++
		} else if of >= n/2 {
			late++
		}
	}
	if early == 0 || late == 0 {
		t.Errorf("copies of the first quarter %d, of the second half %d: want both", early, late)
	}
}

// hasPara reports whether text holds one of g's shared paragraphs (at its
// start or after a blank line).
func hasPara(g *Generator, text string) bool {
	for i := 0; i < len(text); i++ {
		if i > 0 {
			j := strings.Index(text[i:], "\n\n")
			if j < 0 {
				return false
			}
			i += j + 2
		}
		for _, p := range g.paras {
			if strings.HasPrefix(text[i:], p) {
				return true
			}
		}
	}
	return false
}

func TestDedupEndToEnd(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  Options
	}{
		{"default", Options{Seed: 11, Hot: 0.2}},
		{"crawl", Options{Seed: 11, Sites: 2000, ShortShare: 0.3}},
	} {
		t.Run(c.name, func(t *testing.T) { testDedupEndToEnd(t, c.opt) })
	}
}

func testDedupEndToEnd(t *testing.T, opt Options) {
	dir := t.TempDir()
	in := filepath.Join(dir, "web.jsonl")
	if err := os.WriteFile(in, generate(t, opt, 20000, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	dups := filepath.Join(dir, "dups.jsonl")
	sum, err := dedup.Run(context.Background(), []string{in}, dedup.Options{Duplicates: dups})
	if err != nil {
		t.Fatal(err)
	}
	cf, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	df, err := os.Open(dups)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	rep, err := Check(context.Background(), cf, df, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Logf("%d candidates, %d rejected\n%s", sum.Candidates, sum.Rejected, b.String())
	if rep.ExactRemoved != rep.Exact || rep.Exact == 0 {
		t.Errorf("exact copies: %d of %d removed, want all", rep.ExactRemoved, rep.Exact)
	}
	if rep.Recall < 0.99 {
		t.Errorf("recall %.4f of %d planted near-copies, want >= 0.99", rep.Recall, rep.Near)
	}
	if rep.ControlsRemoved != 0 || rep.FalseRemovals != 0 {
		t.Errorf("%d controls and %d removals below the threshold removed, want none", rep.ControlsRemoved, rep.FalseRemovals)
	}
	if opt.Sites == 0 && opt.ShortShare == 0 {
		// Nothing but the planted copies is alike (unrelated documents
		// that share paragraphs and sentences stay below the threshold).
		if rep.Unplanted != 0 {
			t.Errorf("%d documents removed that are no planted copy, want none: %+v", rep.Unplanted, rep.Examples)
		}
	} else if rep.UnplantedAbove != rep.Unplanted || rep.Unplanted > 20000/500 {
		// Short bodies of one sentence and pages of a site alike by their
		// template are near-duplicates nobody planted: a few, all at the
		// threshold or above.
		t.Errorf("%d documents removed that are no planted copy, %d of them at J >= 0.8; want all, and at most 1 in 500", rep.Unplanted, rep.UnplantedAbove)
	}
}

// TestCheckRightfulRemovals checks the cases a corpus of sites brings:
// a near-copy kept while its original was removed (left out of recall when
// it is unlike the document kept for the original), and a control removed
// for another document it is like (rightly).
func TestCheckRightfulRemovals(t *testing.T) {
	words := func(from, to int, swap map[int]string) string {
		var b strings.Builder
		for k := from; k < to; k++ {
			if w, ok := swap[k]; ok {
				b.WriteString(w)
			} else {
				fmt.Fprintf(&b, "w%d", k)
			}
			b.WriteByte(' ')
		}
		return b.String()
	}
	a := words(0, 100, nil)                                       // an original
	b := words(0, 100, map[int]string{50: "x"})                   // an original at J 0.90 to a
	n := words(0, 100, map[int]string{20: "y", 50: "x", 80: "z"}) // near-copy of b, J 0.81; 0.73 to a
	f := words(0, 100, map[int]string{10: "y"})                   // near-copy of a, J 0.90
	g := words(0, 100, map[int]string{30: "y"})                   // near-copy of a, J 0.90
	d := words(200, 300, nil)
	c := words(200, 300, map[int]string{250: "x"}) // planted as a control of a, but like d
	e := words(0, 60, nil)                         // a control of a at J 0.58
	corpus := ""
	for _, x := range []struct {
		id, text, planted string
	}{
		{"d0", a, ""},
		{"d1", b, ""},
		{"d2", n, `{"of":"d1","kind":"near","jaccard":0.811}`},
		{"d3", f, `{"of":"d0","kind":"near","jaccard":0.9}`},
		{"d4", g, `{"of":"d0","kind":"near","jaccard":0.9}`},
		{"d5", d, ""},
		{"d6", c, `{"of":"d0","kind":"control","jaccard":0.6}`},
		{"d7", e, `{"of":"d0","kind":"control","jaccard":0.58}`},
	} {
		line, _ := json.Marshal(map[string]any{"id": x.id, "text": x.text})
		if x.planted != "" {
			line = append(line[:len(line)-1], `,"planted":`+x.planted+`}`...)
		}
		corpus += string(line) + "\n"
	}
	// d2 stays (its original d1 is gone, and it is unlike d0); d3 is
	// missed; d6 is rightly removed for d5, d7 wrongly for d0.
	dups := `{"dup_id":"d1","kept_id":"d0"}
{"dup_id":"d4","kept_id":"d0"}
{"dup_id":"d6","kept_id":"d5"}
{"dup_id":"d7","kept_id":"d0"}
`
	rep, err := Check(context.Background(), strings.NewReader(corpus), strings.NewReader(dups), CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j := TextJaccard(n, a); j >= 0.8 {
		t.Fatalf("J(d2, d0) = %v, want below 0.8", j)
	}
	var ids []string
	for _, e := range rep.Examples {
		ids = append(ids, e.ID)
	}
	rep.Examples = nil
	want := Report{Threshold: 0.8, Docs: 8, Removed: 4,
		Near: 3, NearRemoved: 1, Recall: 0.5, NearOfRemoved: 1,
		Controls: 2, ControlsRemoved: 1, ControlsAbove: 1,
		Unplanted: 1, UnplantedAbove: 1, FalseRemovals: 1}
	if !reflect.DeepEqual(rep, want) {
		t.Errorf("report\n got %+v\nwant %+v", rep, want)
	}
	if got := strings.Join(ids, " "); got != "d7 d1 d6" {
		t.Errorf("examples %s, want d7 (false) d1 d6", got)
	}
	var text strings.Builder
	want.WriteText(&text)
	for _, line := range []string{"near-copies kept   1 whose original was removed", "controls removed   1 for another document"} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("text report lacks %q:\n%s", line, text.String())
		}
	}
}
