package command

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redisstore"
)

// TestImportMatchesDedup: 'neardup import' stores exactly the documents
// 'neardup dedup' keeps, in its order; the service started on them finds,
// for every removed document, the kept document dedup named, and every kept
// document is a duplicate of itself.
func TestImportMatchesDedup(t *testing.T) {
	corpus := testcorpora.Path(t, "en_spdx")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	dups := filepath.Join(dir, "dups.jsonl")
	if code, _, stderr := run(t, "", "import", "--data", data, "--duplicates", dups, "-q", corpus); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	want := dedupKept(t, dir, corpus)

	st, err := store.OpenPebble(data, store.PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := st.Load(context.Background(), func(r store.Record) error {
		got = append(got, r.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if !slices.Equal(got, want) {
		t.Fatalf("import stored %d documents, dedup kept %d: not the same ids in the same order", len(got), len(want))
	}

	checkServed(t, startServe(t, data), "en_spdx", dups, want)
}

// dedupKept returns the ids 'neardup dedup' keeps of corpus, in order.
func dedupKept(t *testing.T, dir, corpus string, flags ...string) []string {
	t.Helper()
	kept := filepath.Join(dir, "kept.jsonl")
	if code, _, stderr := run(t, "", append(append([]string{"dedup"}, flags...), "--output", kept, "-q", corpus)...); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	var want []string
	eachJSON(t, kept, func(d struct{ ID string }) { want = append(want, d.ID) })
	return want
}

// checkServed checks the service c started on an import of the shared
// corpus name against dedup's verdicts: for every document in the
// duplicates report dups, its first match is the kept document dedup
// named; the first 200 kept documents match themselves first.
func checkServed(t *testing.T, c *serveChild, name, dups string, kept []string) {
	t.Helper()
	texts := map[string]string{}
	for _, d := range testcorpora.Docs(t, name) {
		texts[d.ID] = d.Text
	}
	removed := 0
	eachJSON(t, dups, func(d struct {
		DupID  string `json:"dup_id"`
		KeptID string `json:"kept_id"`
	}) {
		removed++
		if first := searchFirst(t, c.base, texts[d.DupID]); first != d.KeptID {
			t.Errorf("removed %s: the service's first match is %q, dedup kept it for %q", d.DupID, first, d.KeptID)
		}
	})
	if removed == 0 {
		t.Fatal("no document removed: the test tests little")
	}
	for _, id := range kept[:min(len(kept), 200)] {
		if first := searchFirst(t, c.base, texts[id]); first != id {
			t.Errorf("kept %s: the service's first match is %q", id, first)
		}
	}
}

// TestImportRefuses: a directory that is not empty, and a failed import,
// which leaves no directory behind.
func TestImportRefuses(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o644)
	code, _, stderr := run(t, "", "import", "--data", dir, "-q", testcorpora.Path(t, "en_spdx"))
	if code == 0 || !strings.Contains(stderr, "not empty") {
		t.Fatalf("import into a non-empty directory: exit %d: %s", code, stderr)
	}
	data := filepath.Join(t.TempDir(), "data")
	code, _, stderr = run(t, "", "import", "--data", data, "-q", filepath.Join(dir, "missing.jsonl"))
	if code == 0 {
		t.Fatalf("import of a missing file succeeded: %s", stderr)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("a failed import left %s behind (%v)", data, err)
	}
	code, _, stderr = run(t, "", "import", "--data", data, "--verify", "cosine", "-q", testcorpora.Path(t, "en_spdx"))
	if code == 0 || !strings.Contains(stderr, "cosine") {
		t.Fatalf("import with a decision the service cannot make: exit %d: %s", code, stderr)
	}
}

// eachJSON calls fn with every line of the JSONL file at path, decoded.
func eachJSON[T any](t *testing.T, path string, fn func(T)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		fn(v)
	}
}

// searchFirst returns the id of the service's first match of text, or "".
func searchFirst(t *testing.T, base, text string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"text": text, "limit": 1})
	resp, err := http.Post(base+"/v1/search", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Results []struct{ ID string } `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 {
		t.Fatalf("search: %d %v", resp.StatusCode, err)
	}
	if len(r.Results) == 0 {
		return ""
	}
	return r.Results[0].ID
}

// TestImportRedis loads a corpus into a new Redis index with 'neardup
// import --store' and checks it as TestImportMatchesDedup checks a data
// directory: the kept ids in order, and the first match 'neardup serve
// --store' gives every removed document, under either method. An index
// that is not empty is refused, and a failed import leaves no key behind.
func TestImportRedis(t *testing.T) {
	srv := redistest.Start(t)
	addr := "redis://" + srv.Addr() + "/0"
	for _, m := range []string{rule.MethodMinHash, rule.MethodSimHash} {
		t.Run(m, func(t *testing.T) { testImportRedis(t, srv, addr, m) })
	}
}

func testImportRedis(t *testing.T, srv *redistest.Server, addr, method string) {
	corpus := testcorpora.Path(t, "en_spdx")
	dir := t.TempDir()
	dups := filepath.Join(dir, "dups.jsonl")
	prefix := "imp-" + method + ":"
	if code, _, stderr := run(t, "", "import", "--method", method, "--store", addr, "--redis-prefix", prefix, "--duplicates", dups, "-q", corpus); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	want := dedupKept(t, dir, corpus, "--method", method)
	o := rule.Options{Method: method}
	st, err := redisstore.Open(context.Background(), addr, redisstore.Options{Prefix: prefix, Dedup: o, Settings: server.Settings(o)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := st.Load(context.Background(), func(r store.Record) error {
		got = append(got, r.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Len(context.Background()); err != nil || n != len(want) {
		t.Errorf("Len = %d, %v; want %d", n, err, len(want))
	}
	st.Close()
	if !slices.Equal(got, want) {
		t.Fatalf("import stored %d documents, dedup kept %d: not the same ids in the same order", len(got), len(want))
	}

	checkServed(t, startServe(t, t.TempDir(), "--method", method, "--store", addr, "--redis-prefix", prefix), "en_spdx", dups, want)

	code, _, stderr := run(t, "", "import", "--method", method, "--store", addr, "--redis-prefix", prefix, "-q", corpus)
	if code == 0 || !strings.Contains(stderr, "not empty") {
		t.Fatalf("import into an index that is not empty: exit %d: %s", code, stderr)
	}
	before := srv.CLI("DBSIZE")
	code, _, stderr = run(t, "", "import", "--method", method, "--store", addr, "--redis-prefix", "other:", "-q", filepath.Join(dir, "missing.jsonl"))
	if code == 0 {
		t.Fatalf("import of a missing file succeeded: %s", stderr)
	}
	if after := srv.CLI("DBSIZE"); after != before {
		t.Fatalf("a failed import left keys behind: DBSIZE %s, was %s", after, before)
	}
}
