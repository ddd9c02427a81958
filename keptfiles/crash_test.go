package keptfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/rule"
)

const testSettings = "method=minhash test"

type testDoc struct {
	id string
	f  rule.Features
}

// testDocs returns n documents of random words, every fifth a near copy of
// the one before (one word changed).
func testDocs(tb testing.TB, n int) (*rule.Rule, []testDoc) {
	tb.Helper()
	opt := rule.Options{Method: rule.MethodMinHash}
	rl, err := rule.NewRule(opt)
	if err != nil {
		tb.Fatal(err)
	}
	ex, err := rule.NewExtractor(opt)
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(33, 2))
	var docs []testDoc
	var words []string
	for i := range n {
		if i%5 != 4 {
			words = make([]string, 200)
			for j := range words {
				words[j] = fmt.Sprintf("w%d", rng.IntN(5000))
			}
		} else {
			words[rng.IntN(len(words))] = "changed"
		}
		docs = append(docs, testDoc{fmt.Sprintf("d%03d", i), ex.Extract(strings.Join(words, " "))})
	}
	return rl, docs
}

func mustLoad(tb testing.TB, idx string, rl *rule.Rule, update bool) *Set {
	tb.Helper()
	k, err := Files{}.Load(idx, rl, testSettings, update)
	if err != nil {
		tb.Fatal(err)
	}
	return k.(*Set)
}

func addAll(tb testing.TB, k *Set, docs []testDoc) {
	tb.Helper()
	for _, d := range docs {
		if err := k.Add(d.id, d.f); err != nil {
			tb.Fatal(err)
		}
	}
}

// entries returns the names in dir.
func entries(tb testing.TB, dir string) []string {
	tb.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// checkSet checks that the set beside idx holds want, and no other.
func checkSet(tb testing.TB, what, idx string, rl *rule.Rule, want, absent []testDoc) {
	tb.Helper()
	k := mustLoad(tb, idx, rl, false)
	defer k.Close()
	if k.Len() != len(want) {
		tb.Errorf("%s: %d documents, want %d", what, k.Len(), len(want))
	}
	in := map[string]bool{}
	for _, d := range want {
		in[d.id] = true
	}
	for _, d := range want {
		if !k.Contains(d.id) {
			tb.Errorf("%s: %s missing", what, d.id)
		}
		// Itself, or a near copy before it.
		if m, dup, err := k.Match(&d.f); err != nil || !dup || !in[m.ID] {
			tb.Errorf("%s: %s matches %+v, %v, %v; want a document of the set", what, d.id, m, dup, err)
		}
	}
	for _, d := range absent {
		if k.Contains(d.id) {
			tb.Errorf("%s: %s is in the set", what, d.id)
		}
	}
}

// TestCrash: the set on disk is the one saved last, whatever a run that
// did not save (a crash) left, and wherever the saving run stopped.
func TestCrash(t *testing.T) {
	rl, docs := testDocs(t, 60)
	dir := t.TempDir()
	idx := filepath.Join(dir, "seen.idx")
	k, err := Files{}.New(idx, rl, testSettings)
	if err != nil {
		t.Fatal(err)
	}
	addAll(t, k.(*Set), docs[:20])
	if err := (Files{}).Save(k); err != nil {
		t.Fatal(err)
	}
	if err := (Files{}).Close(k); err != nil {
		t.Fatal(err)
	}
	checkSet(t, "saved", idx, rl, docs[:20], docs[20:])

	// A run that adds and removes, and stops before its Save: the disk as
	// it left it (copied while it is open), then as its Close leaves it.
	k2 := mustLoad(t, idx, rl, true)
	addAll(t, k2, docs[20:40])
	if !k2.Remove(docs[0].id) || k2.Contains(docs[0].id) {
		t.Fatal("Remove of a stored document failed")
	}
	if err := k2.flush(); err != nil {
		t.Fatal(err)
	}
	crashed := filepath.Join(dir, "crashed.idx")
	if err := os.CopyFS(Dir(crashed), os.DirFS(Dir(idx))); err != nil {
		t.Fatal(err)
	}
	if err := k2.Close(); err != nil {
		t.Fatal(err)
	}
	checkSet(t, "after a run without Save", idx, rl, docs[:20], docs[20:])
	checkSet(t, "after a crash", crashed, rl, docs[:20], docs[20:])
	if got := entries(t, Dir(crashed)); !slices.Equal(got, []string{"000001", currentName, lockName}) {
		t.Errorf("after a crash the directory holds %v, want the saved generation only", got)
	}

	// A run that saves: its generation is the set, the one before it is
	// removed, and the snapshot holds its documents.
	k3 := mustLoad(t, idx, rl, true)
	addAll(t, k3, docs[20:40])
	if !k3.Remove(docs[1].id) {
		t.Fatal("Remove of a stored document failed")
	}
	// A stored id added again is replaced, and moves last (dedup.Run
	// removes it first).
	if !k3.Remove(docs[2].id) || k3.Add(docs[2].id, docs[2].f) != nil {
		t.Fatal("replacing a stored document failed")
	}
	if g, ok := k3.Get(docs[2].id); !ok || g.Exact != docs[2].f.Exact {
		t.Fatal("Get of a replaced document failed")
	}
	if err := k3.Save(); err != nil {
		t.Fatal(err)
	}
	k3.Close()
	want := append(slices.Clone(docs[2:40]), docs[0])
	if m, dup, err := func() (rule.KeptMatch, bool, error) {
		k := mustLoad(t, idx, rl, false)
		defer k.Close()
		return k.Match(&docs[2].f)
	}(); err != nil || !dup || m.ID != docs[2].id || m.Seq < 40 {
		t.Errorf("the replaced document matches %+v, %v, %v; want itself, last", m, dup, err)
	}
	checkSet(t, "saved again", idx, rl, want, append(slices.Clone(docs[40:]), docs[1]))
	if got := entries(t, Dir(idx)); !slices.Equal(got, []string{"000002", currentName, lockName}) {
		t.Errorf("after a Save the directory holds %v", got)
	}
	x, err := index.LoadFile(idx, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if x.Len() != len(want) || !x.Contains(docs[0].id) || x.Contains(docs[1].id) {
		t.Errorf("the snapshot holds %d documents, want the set's %d", x.Len(), len(want))
	}
	x.Close()

	// A Save that stopped after its commit, before removing the old
	// generation and writing the snapshot: the new set, and the next Save
	// writes the snapshot.
	if err := os.Mkdir(genDir(Dir(idx), 1), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(idx); err != nil {
		t.Fatal(err)
	}
	checkSet(t, "after a crash past the commit", idx, rl, want, docs[40:])
	k4 := mustLoad(t, idx, rl, true)
	if err := k4.Save(); err != nil {
		t.Fatal(err)
	}
	k4.Close()
	if x, err := index.LoadFile(idx, index.Options{}); err != nil || x.Len() != len(want) {
		t.Errorf("the snapshot was not written again: %v", err)
	}
	if got := entries(t, Dir(idx)); !slices.Equal(got, []string{"000003", currentName, lockName}) {
		t.Errorf("the directory holds %v", got)
	}
}

// TestOpenErrors: what Load and New refuse.
func TestOpenErrors(t *testing.T) {
	rl, docs := testDocs(t, 5)
	dir := t.TempDir()
	idx := filepath.Join(dir, "seen.idx")
	if _, err := (Files{}).Load(idx, rl, testSettings, true); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("nothing at the path: %v, want fs.ErrNotExist", err)
	}
	if err := os.WriteFile(idx, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Files{}).Load(idx, rl, testSettings, true); !errors.Is(err, rule.ErrOptions) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a snapshot without a kept set: %v, want rule.ErrOptions", err)
	}
	k, err := Files{}.New(idx, rl, testSettings)
	if err != nil {
		t.Fatal(err)
	}
	addAll(t, k.(*Set), docs)
	if err := k.Add(docs[0].id, docs[0].f); !errors.Is(err, index.ErrDuplicateID) {
		t.Errorf("an id added twice: %v", err)
	}
	if _, err := (Files{}).New(idx, rl, testSettings); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a second run on a set open: %v", err)
	}
	if err := (Files{}).Save(k); err != nil {
		t.Fatal(err)
	}
	(Files{}).Close(k)

	if _, err := (Files{}).Load(idx, rl, testSettings+" other", true); !errors.Is(err, ErrFormat) {
		t.Errorf("other settings: %v, want ErrFormat", err)
	}
	ro := mustLoad(t, idx, rl, false)
	if err := ro.Add("new", docs[0].f); err == nil {
		t.Error("Add to a set opened without update: no error")
	}
	if ro.Remove(docs[0].id) || ro.Save() == nil {
		t.Error("a set opened without update was changed")
	}
	ro.Close()

}
