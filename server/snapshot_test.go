package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// writeSnapshot saves an index snapshot (as 'neardup index build' writes
// it) of the default profile's fingerprints of texts, under ids, and returns
// its path and the fingerprints.
func writeSnapshot(t testing.TB, ids, texts []string) (string, []uint64) {
	t.Helper()
	ex, err := rule.NewExtractor(rule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fps := make([]uint64, len(texts))
	for i, text := range texts {
		fps[i] = ex.Extract(text).FP
	}
	x, err := index.Build(ids, fps, index.Options{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "seen.ndx")
	if err := x.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	return path, fps
}

// nearCopy replaces one word in the middle of text.
func nearCopy(text string) string {
	w := strings.Fields(text)
	w[len(w)/2] = "zyxwvut"
	return strings.Join(w, " ")
}

func unrelatedText(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, seed))
	var b strings.Builder
	for range 200 {
		fmt.Fprintf(&b, "w%x ", r.IntN(1<<24))
	}
	return b.String()
}

type statsReply struct {
	Documents       int `json:"documents"`
	FingerprintOnly int `json:"fingerprint_only_documents"`
}

// TestSnapshotStart starts the service from an index snapshot of real texts
// over a bbolt store and checks the replies: a near-copy of a snapshot text
// is an unverified duplicate of its id, an unrelated text is nothing's,
// add_if_new is declined by the unverified match, GET, stats and search say
// fingerprint only; then a delete that survives a restart, an id reused after
// that delete, and the start-up error for an id both in a snapshot and in
// the store. It runs on both embedded engines.
func TestSnapshotStart(t *testing.T) {
	t.Run(store.EngineBolt, func(t *testing.T) {
		testSnapshotStart(t, func(dir, settings string) (store.Store, error) {
			return store.OpenBolt(dir, store.BoltOptions{Settings: settings})
		})
	})
	t.Run(store.EnginePebble, func(t *testing.T) {
		testSnapshotStart(t, func(dir, settings string) (store.Store, error) {
			return store.OpenPebble(dir, store.PebbleOptions{Settings: settings, MemTableSize: 1 << 20})
		})
	})
}

func testSnapshotStart(t *testing.T, open func(dir, settings string) (store.Store, error)) {
	texts := testcorpora.Texts(t, "en_spdx", 40, 150)
	ids := make([]string, len(texts))
	for i := range ids {
		ids[i] = fmt.Sprintf("snap-%d", i)
	}
	snap, fps := writeSnapshot(t, ids, texts)
	dir := t.TempDir()
	start := func(t *testing.T, snapshot string) (*Server, error) {
		t.Helper()
		opt := Options{Snapshot: snapshot}
		store, err := open(dir, Settings(opt.Dedup))
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(store, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Load(context.Background()); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	stats := func(t *testing.T, h http.Handler) statsReply {
		t.Helper()
		var st statsReply
		if code := call(t, h, "GET", "/v1/stats", "", &st); code != http.StatusOK {
			t.Fatalf("stats: %d", code)
		}
		return st
	}
	const target = 7

	s, err := start(t, snap)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	if st := stats(t, h); st.Documents != len(ids) || st.FingerprintOnly != len(ids) {
		t.Fatalf("stats after start: %+v, want %d documents, all fingerprint-only", st, len(ids))
	}

	// A near-copy: an unverified duplicate of its snapshot id.
	var res docResponse
	near := nearCopy(texts[target])
	if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"text": near, "mode": "check"}), &res); code != http.StatusOK {
		t.Fatalf("check: %d", code)
	}
	var found bool
	for _, d := range res.Duplicates {
		if d.Verified || d.Jaccard != nil {
			t.Errorf("duplicate %+v of a fingerprint-only document: want verified false and no jaccard", d)
		}
		found = found || d.ID == ids[target]
	}
	if !found {
		t.Fatalf("near-copy of %s: duplicates %+v, want %s among them", ids[target], res.Duplicates, ids[target])
	}
	first := res.Duplicates[0].ID

	// An unrelated text: nothing.
	if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"text": unrelatedText(1), "mode": "check"}), &res); code != http.StatusOK || len(res.Duplicates) != 0 {
		t.Fatalf("unrelated text: %d %+v, want no duplicates", code, res.Duplicates)
	}

	// add_if_new: declined by the first snapshot match, unverified.
	body := mustJSON(t, map[string]any{"id": "new", "text": near, "mode": "add_if_new"})
	if code := call(t, h, "POST", "/v1/documents", body, &res); code != http.StatusOK || res.Stored ||
		len(res.Duplicates) != 1 || res.Duplicates[0].ID != first || res.Duplicates[0].Verified {
		t.Fatalf("add_if_new of a near-copy: %d %+v, want declined for %s, unverified", code, res, first)
	}

	// An ordinary document and its near-copy: verified.
	plain := unrelatedText(2)
	if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"id": "plain", "text": plain}), &res); code != http.StatusCreated {
		t.Fatalf("add plain: %d %+v", code, res)
	}
	if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"text": nearCopy(plain), "mode": "check"}), &res); code != http.StatusOK ||
		len(res.Duplicates) != 1 || res.Duplicates[0].ID != "plain" || !res.Duplicates[0].Verified || res.Duplicates[0].Jaccard == nil {
		t.Fatalf("near-copy of plain: %d %+v, want a verified match", code, res.Duplicates)
	}

	// Search by text: the reply and the hit say unverified.
	var sr searchResponse
	if code := call(t, h, "POST", "/v1/search", mustJSON(t, map[string]any{"text": texts[target]}), &sr); code != http.StatusOK ||
		sr.Verified || len(sr.Results) == 0 || sr.Results[0].Verified {
		t.Fatalf("search: %d %+v, want unverified hits", code, sr)
	}

	// GET: the fingerprint, and no verification data.
	var g getResponse
	if code := call(t, h, "GET", "/v1/documents/"+ids[target], "", &g); code != http.StatusOK ||
		g.Fingerprint != fpString(fps[target]) || !g.FingerprintOnly || g.Note == "" || g.Seq != nil {
		t.Fatalf("GET %s: %d %+v", ids[target], code, g)
	}

	// DELETE, then the id is free for an ordinary document.
	if code := call(t, h, "DELETE", "/v1/documents/"+ids[target], "", nil); code != http.StatusOK {
		t.Fatalf("DELETE %s: %d", ids[target], code)
	}
	if code := call(t, h, "GET", "/v1/documents/"+ids[target], "", nil); code != http.StatusNotFound {
		t.Fatalf("GET after DELETE: %d, want 404", code)
	}
	if code := call(t, h, "DELETE", "/v1/documents/"+ids[target], "", nil); code != http.StatusNotFound {
		t.Fatalf("second DELETE: %d, want 404", code)
	}
	if st := stats(t, h); st.FingerprintOnly != len(ids)-1 || st.Documents != len(ids) {
		t.Fatalf("stats after delete: %+v", st)
	}
	deleted := ids[target+1]
	if code := call(t, h, "DELETE", "/v1/documents/"+deleted, "", nil); code != http.StatusOK {
		t.Fatalf("DELETE %s: %d", deleted, code)
	}
	if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"id": ids[target], "text": unrelatedText(3)}), &res); code != http.StatusCreated {
		t.Fatalf("add %s after its snapshot document was deleted: %d %+v", ids[target], code, res)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Restart: the snapshot again, then the store; the deletes hold.
	s, err = start(t, snap)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	h = s.Handler()
	if st := stats(t, h); st.FingerprintOnly != len(ids)-2 || st.Documents != len(ids) {
		t.Fatalf("stats after restart: %+v, want %d fingerprint-only of %d", st, len(ids)-2, len(ids))
	}
	if code := call(t, h, "GET", "/v1/documents/"+deleted, "", nil); code != http.StatusNotFound {
		t.Fatalf("GET deleted %s after restart: %d, want 404", deleted, code)
	}
	g = getResponse{}
	if code := call(t, h, "GET", "/v1/documents/"+ids[target], "", &g); code != http.StatusOK || g.FingerprintOnly || g.Seq == nil {
		t.Fatalf("GET %s (now an ordinary document) after restart: %d %+v", ids[target], code, g)
	}
	if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"text": nearCopy(texts[target+2]), "mode": "check"}), &res); code != http.StatusOK ||
		len(res.Duplicates) == 0 || res.Duplicates[0].Verified {
		t.Fatalf("near-copy of a snapshot text after restart: %d %+v", code, res.Duplicates)
	}
	s.Close()

	// A snapshot that holds an id the store holds too: start-up fails and
	// names it.
	other, _ := writeSnapshot(t, []string{"plain", "other"}, texts[:2])
	if _, err := start(t, other); !errors.Is(err, store.ErrExists) || !strings.Contains(err.Error(), `"plain"`) {
		t.Fatalf("start with a snapshot holding a stored id: %v, want ErrExists naming \"plain\"", err)
	}
}

// TestSnapshotRefused: no snapshot with MethodMinHash (no fingerprints), and
// a snapshot that is not one is a start-up error.
func TestSnapshotRefused(t *testing.T) {
	if _, err := New(store.NewMemStore(), Options{Dedup: rule.Options{Method: rule.MethodMinHash}, Snapshot: "x.ndx"}); !errors.Is(err, rule.ErrOptions) {
		t.Errorf("minhash with a snapshot: %v, want ErrOptions", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.ndx")
	s, err := New(store.NewMemStore(), Options{Snapshot: bad})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Load(context.Background()); err == nil || s.Ready() {
		t.Errorf("Load of a missing snapshot: %v, ready %v; want an error", err, s.Ready())
	}
}
