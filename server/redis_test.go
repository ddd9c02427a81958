package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redisstore"
)

// The Redis store is a SharedStore that counts what its matches read.
var (
	_ SharedStore  = (*redisstore.Store)(nil)
	_ matchCounter = (*redisstore.Store)(nil)
)

// testBackends are the stores the service tests run over: the embedded path
// (MemStore behind the server's kept set) and the stateless Redis index
// (package redisstore) on one Redis and on a cluster. start returns the
// address for openBackend of the server or cluster the package's tests
// share (each store under its own key prefix), started by the first test
// that needs it.
var testBackends = []testBackend{
	{"mem", func(*testing.T) string { return "" }},
	{"redis-stateless", startRedis},
	{"cluster-stateless", startCluster},
}

// testBackend is a store the service tests run over: the embedded path, or
// Redis through the stateless store (package redisstore).
type testBackend struct {
	name  string
	start func(t *testing.T) string
}

// methods returns the methods the backend decides under: both, on every
// backend.
func (b testBackend) methods() []string {
	return []string{rule.MethodSimHash, rule.MethodMinHash}
}

func startRedis(t *testing.T) string { return "redis://" + redistest.Shared(t).Addr() + "/0" }

func startCluster(t *testing.T) string {
	return "redis-cluster://" + strings.Join(redistest.SharedCluster(t).Addrs(), ",")
}

// openBackend opens an empty store of b on addr ("" for a MemStore) under
// a key prefix no other store of the test uses.
func openBackend(t testing.TB, b testBackend, addr string, opt rule.Options) store.Store {
	if addr == "" {
		return store.NewMemStore()
	}
	return openShared(t, b, addr, newPrefix(), opt)
}

// openShared opens a store of b on addr under prefix: stores opened on the
// same prefix share one index.
func openShared(t testing.TB, _ testBackend, addr, prefix string, opt rule.Options) store.Store {
	return openStateless(t, addr, prefix, opt)
}

// openStateless opens a redisstore.Store on addr under prefix.
func openStateless(t testing.TB, addr, prefix string, opt rule.Options) *redisstore.Store {
	t.Helper()
	s, err := redisstore.Open(context.Background(), addr, redisstore.Options{Dedup: opt, Settings: Settings(opt),
		Prefix: prefix, Capacity: 1 << 12, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("redisstore.Open(%s): %v", addr, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var prefixes atomic.Int64

// newPrefix returns a key prefix no other store of this process uses, so
// that the stores of one test share a Redis without seeing each other.
func newPrefix() string { return fmt.Sprintf("t%d:", prefixes.Add(1)) }

// TestRedisOtherSettingsRefused: with the settings the service records
// (Settings), a store opened under another shingle width than the index's
// is refused; redisstore's own tests check the refusal with settings of
// their own.
func TestRedisOtherSettingsRefused(t *testing.T) {
	addr, p := startRedis(t), newPrefix()
	openStateless(t, addr, p, rule.Options{})
	o := rule.Options{Shingle: 3}
	_, err := redisstore.Open(context.Background(), addr, redisstore.Options{Prefix: p, Settings: Settings(o), Dedup: o})
	if !errors.Is(err, store.ErrStoreFormat) {
		t.Errorf("redisstore.Open with another shingle width: error %v, want ErrStoreFormat", err)
	}
}

// TestRedisSharedByTwoServers runs two services, each with its own Redis
// client, on one Redis (and on one cluster), under either method:
// what one acknowledges the other finds on its next request, what one
// deletes the other no longer finds, and of near-identical documents sent to
// both at once through add_if_new exactly one is stored, every round.
func TestRedisSharedByTwoServers(t *testing.T) {
	for _, backend := range testBackends[1:] {
		for _, m := range backend.methods() {
			t.Run(backend.name+"/"+m, func(t *testing.T) { testRedisSharedByTwoServers(t, backend, m) })
		}
	}
}

func testRedisSharedByTwoServers(t *testing.T, backend testBackend, method string) {
	addr := backend.start(t)
	prefix := newPrefix()
	o := rule.Options{Method: method}
	// Two stores on one prefix: the same shared index.
	var hs [2]http.Handler
	for i := range hs {
		hs[i] = newTestServer(t, openShared(t, backend, addr, prefix, o), Options{Dedup: o}).Handler()
	}
	text := "the quick brown fox jumps over the lazy dog and keeps running through the forest until night falls on the hills"
	if code := call(t, hs[0], "POST", "/v1/documents", mustJSON(t, map[string]any{"id": "a", "text": text}), nil); code != http.StatusCreated {
		t.Fatalf("add through server 0: %d, want 201", code)
	}
	var res docResponse
	body := mustJSON(t, map[string]any{"id": "b", "text": text + " again", "mode": "add_if_new"})
	if code := call(t, hs[1], "POST", "/v1/documents", body, &res); code != http.StatusOK || len(res.Duplicates) != 1 || res.Duplicates[0].ID != "a" {
		t.Fatalf("add_if_new through server 1: %d %+v, want 200 naming a", code, res)
	}
	var found searchResponse
	if code := call(t, hs[1], "POST", "/v1/search", mustJSON(t, map[string]any{"text": text}), &found); code != http.StatusOK || len(found.Results) != 1 {
		t.Fatalf("search through server 1: %d %+v, want a", code, found)
	}
	if code := call(t, hs[1], "GET", "/v1/documents/a", "", nil); code != http.StatusOK {
		t.Fatalf("GET a through server 1: %d", code)
	}
	if code := call(t, hs[1], "DELETE", "/v1/documents/a", "", nil); code != http.StatusOK {
		t.Fatalf("DELETE a through server 1: %d", code)
	}
	if code := call(t, hs[0], "GET", "/v1/documents/a", "", nil); code != http.StatusNotFound {
		t.Fatalf("GET a through server 0 after the delete: %d, want 404", code)
	}
	found = searchResponse{}
	if code := call(t, hs[0], "POST", "/v1/search", mustJSON(t, map[string]any{"text": text}), &found); code != http.StatusOK || len(found.Results) != 0 {
		t.Fatalf("search through server 0 after server 1 deleted a: %d %+v, want nothing", code, found)
	}

	const rounds = 200
	for round := range rounds {
		base := randomText(uint64(round), 40)
		var wg sync.WaitGroup
		var stored atomic.Int32
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var res docResponse
				body := mustJSON(t, map[string]any{"id": fmt.Sprintf("r%d-%d", round, i), "text": base + strings.Repeat(" indeed", i), "mode": "add_if_new"})
				switch code := call(t, hs[i], "POST", "/v1/documents", body, &res); code {
				case http.StatusCreated:
					stored.Add(1)
				case http.StatusOK:
				default:
					errs[i] = fmt.Errorf("server %d: status %d", i, code)
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if n := stored.Load(); n != 1 {
			t.Fatalf("round %d: %d of two near-identical documents stored, want exactly 1", round, n)
		}
	}
}

// randomText returns n words drawn from a fixed vocabulary with seed: texts
// of different seeds share few shingles.
func randomText(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 10))
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("w%c%c%c", 'a'+r.IntN(26), 'a'+r.IntN(26), 'a'+r.IntN(26))
	}
	return strings.Join(words, " ")
}

// TestRedisFault kills Redis in the middle of a stream of requests and
// starts it again on the same port: while it is down writes and searches
// get 503 with the JSON error "unavailable" and /readyz fails; afterwards the
// same server, not restarted, stores again.
func TestRedisFault(t *testing.T) {
	srv := redistest.Start(t)
	st, err := redisstore.Open(context.Background(), "redis://"+srv.Addr()+"/0",
		redisstore.Options{Prefix: newPrefix(), Settings: Settings(rule.Options{}), Timeout: 200 * time.Millisecond, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := newTestServer(t, st, Options{}).Handler()
	post := func(i int) (int, errorBody) {
		var e errorBody
		body := mustJSON(t, map[string]any{"id": fmt.Sprint("d", i), "text": randomText(uint64(1000+i), 40), "mode": "add_if_new"})
		code := call(t, h, "POST", "/v1/documents", body, &e)
		return code, e
	}
	const before, down = 10, 5
	for i := range before {
		if code, e := post(i); code != http.StatusCreated {
			t.Fatalf("d%d before the fault: %d %+v", i, code, e)
		}
	}
	srv.Kill(t)
	for i := before; i < before+down; i++ {
		code, e := post(i)
		if code != http.StatusServiceUnavailable || e.Error.Code != "unavailable" || !strings.Contains(e.Error.Message, "store unavailable") {
			t.Fatalf("d%d with Redis down: %d %+v, want 503 unavailable", i, code, e)
		}
	}
	var e errorBody
	if code := call(t, h, "POST", "/v1/search", `{"text":"anything at all"}`, &e); code != http.StatusServiceUnavailable || e.Error.Code != "unavailable" {
		t.Errorf("search with Redis down: %d %+v, want 503 unavailable", code, e)
	}
	if code := call(t, h, "GET", "/readyz", "", &e); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with Redis down: %d, want 503", code)
	}
	srv.Restart(t)
	// The client reconnects by itself; a few requests may still meet
	// connections broken by the kill.
	recovered := false
	for i := before + down; i < before+down+20 && !recovered; i++ {
		code, _ := post(i)
		recovered = code == http.StatusCreated
	}
	if !recovered {
		t.Fatal("no document stored in 20 requests after Redis came back")
	}
	if code := call(t, h, "GET", "/readyz", "", nil); code != http.StatusOK {
		t.Errorf("/readyz after Redis came back: %d, want 200", code)
	}
}

// TestStatelessSet runs the Set suite against the stateless Redis store
// (package redisstore), on one Redis and on a cluster.
func TestStatelessSet(t *testing.T) {
	for _, b := range testBackends[1:] {
		t.Run(b.name, func(t *testing.T) {
			addr := b.start(t)
			testSet(t, func(t *testing.T, opt rule.Options) Set { return openStateless(t, addr, newPrefix(), opt) })
		})
	}
}

// TestStatelessStats: over the stateless Redis index, /v1/stats and the
// metrics show this server's matches on the store, the candidates whose
// records they read and those the prefilter ruled out first: pages that
// share a template are many candidates of one another, nearly all ruled
// out.
func TestStatelessStats(t *testing.T) {
	s := newTestServer(t, openStateless(t, startRedis(t), newPrefix(), rule.Options{}), Options{})
	h := s.Handler()
	r := rand.New(rand.NewPCG(9, 10))
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = fmt.Sprintf("w%d", r.IntN(1_000_000))
		}
		return strings.Join(w, " ")
	}
	template := words(150)
	const pages = 60
	for i := range pages {
		body := fmt.Sprintf(`{"id":"p%d","text":%q}`, i, template+" "+words(100))
		if code := call(t, h, "POST", "/v1/documents", body, nil); code != http.StatusCreated {
			t.Fatalf("add p%d: %d", i, code)
		}
	}
	for range 10 {
		if code := call(t, h, "POST", "/v1/search", fmt.Sprintf(`{"text":%q}`, template+" "+words(100)), nil); code != http.StatusOK {
			t.Fatalf("search: %d", code)
		}
	}
	var got struct {
		Shared map[string]float64 `json:"shared_store"`
	}
	if code := call(t, h, "GET", "/v1/stats", "", &got); code != http.StatusOK {
		t.Fatalf("stats: %d", code)
	}
	t.Logf("shared_store: %v", got.Shared)
	if m, p := got.Shared["matches"], got.Shared["candidates_prefiltered"]; m < pages+10 || p == 0 || got.Shared["candidates_examined"] > p {
		t.Errorf("shared_store %v: want %d matches or more and most candidates ruled out by the prefilter", got.Shared, pages+10)
	}
	metrics := newRecorder(t, h, "GET", "/metrics")
	for _, name := range []string{"neardup_shared_store_matches_total", "neardup_shared_store_candidates_examined_total", "neardup_shared_store_candidates_prefiltered_total"} {
		if !strings.Contains(metrics, name+" ") {
			t.Errorf("/metrics has no %s", name)
		}
	}
}

// TestRedisBatch posts one batch mixing add_if_new runs (which a
// redisstore.Store decides together), a check and an add in the middle,
// and a repeated id, and expects per document what the embedded service
// answers.
func TestRedisBatch(t *testing.T) {
	a, b := randomText(21, 50), randomText(22, 50)
	docs := []map[string]any{
		{"id": "a", "text": a, "mode": "add_if_new"},
		{"id": "a2", "text": a + " more", "mode": "add_if_new"},
		{"id": "b", "text": b, "mode": "add_if_new"},
		{"id": "q", "text": b + " more", "mode": "check"},
		{"id": "b2", "text": b + " more more", "mode": "add"},
		{"id": "b3", "text": b + " more", "mode": "add_if_new"},
		{"id": "a", "text": randomText(23, 50), "mode": "add_if_new"},
		{"id": "c", "text": randomText(24, 50), "mode": "add_if_new"},
	}
	body := mustJSON(t, map[string]any{"documents": docs})
	type item struct {
		Status     int       `json:"status"`
		Stored     bool      `json:"stored"`
		Duplicates []dupJSON `json:"duplicates"`
	}
	run := func(t *testing.T, store store.Store) []string {
		var out struct{ Results []item }
		h := newTestServer(t, store, Options{}).Handler()
		if code := call(t, h, "POST", "/v1/documents:batch", body, &out); code != http.StatusOK {
			t.Fatalf("batch: %d", code)
		}
		var got []string
		for _, it := range out.Results {
			s := fmt.Sprint(it.Status, it.Stored)
			for _, d := range it.Duplicates {
				s += " " + d.ID
			}
			got = append(got, s)
		}
		return got
	}
	want := run(t, store.NewMemStore())
	addr := startRedis(t)
	for _, b := range testBackends {
		if b.name == "mem" || strings.HasPrefix(b.name, "cluster") {
			continue
		}
		if got := run(t, openBackend(t, b, addr, rule.Options{})); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want the embedded service's %q", b.name, got, want)
		}
	}
	t.Logf("%q", want)
}

// TestFingerprintSearchEqualsEmbedded stores the same documents of en_spdx
// (mode add: near-duplicates too) in the embedded service over pebble and
// over bbolt and in the stateless Redis index (one Redis, a cluster),
// deletes every seventh, and searches by the fingerprints of texts
// (POST /v1/fingerprint, then /v1/search), some moved by a few bits, at
// k 0, 3 and the rule's QueryK: every store answers exactly as the
// embedded pebble service does, in the same order.
func TestFingerprintSearchEqualsEmbedded(t *testing.T) {
	r, err := corpus.Open([]string{testcorpora.Path(t, "en_spdx")}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []corpus.Doc
	for len(docs) < 400 {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	r.Close()
	embedded := func(engine string) func(t *testing.T) store.Store {
		return func(t *testing.T) store.Store {
			if engine == "bbolt" {
				s, err := store.OpenBolt(t.TempDir(), store.BoltOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			s, err := store.OpenPebble(t.TempDir(), store.PebbleOptions{MemTableSize: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	stores := []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"pebble", embedded("pebble")},
		{"bbolt", embedded("bbolt")},
		{"redis", func(t *testing.T) store.Store { return openStateless(t, startRedis(t), newPrefix(), rule.Options{}) }},
		{"cluster", func(t *testing.T) store.Store { return openStateless(t, startCluster(t), newPrefix(), rule.Options{}) }},
	}
	var want []string
	nonEmpty := 0
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			h := newTestServer(t, st.open(t), Options{}).Handler()
			for _, d := range docs {
				if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"id": d.ID, "text": d.Text}), nil); code != http.StatusCreated {
					t.Fatalf("add %s: %d", d.ID, code)
				}
			}
			for i := 0; i < len(docs); i += 7 {
				if code := call(t, h, "DELETE", "/v1/documents/"+d2id(docs[i].ID), "", nil); code != http.StatusOK {
					t.Fatalf("delete %s: %d", docs[i].ID, code)
				}
			}
			var got []string
			rnd := rand.New(rand.NewPCG(3, 4))
			for i := 0; i < len(docs); i += 5 {
				var fp struct {
					Fingerprint string `json:"fingerprint"`
				}
				if code := call(t, h, "POST", "/v1/fingerprint", mustJSON(t, map[string]any{"text": docs[i].Text}), &fp); code != http.StatusOK {
					t.Fatalf("fingerprint of %s: %d", docs[i].ID, code)
				}
				v, err := strconv.ParseUint(fp.Fingerprint, 16, 64)
				if err != nil {
					t.Fatal(err)
				}
				for _, flips := range []int{0, 2, 5} {
					q := v
					for _, b := range rnd.Perm(64)[:flips] {
						q ^= 1 << b
					}
					for _, k := range []any{0, 3, nil} {
						body := map[string]any{"fingerprint": fmt.Sprintf("%016x", q), "limit": 1000}
						if k != nil {
							body["k"] = k
						}
						var res searchResponse
						if code := call(t, h, "POST", "/v1/search", mustJSON(t, body), &res); code != http.StatusOK {
							t.Fatalf("search %v: %d", body, code)
						}
						line := fmt.Sprint(body["fingerprint"], " k ", *res.K, ":")
						for _, hit := range res.Results {
							line += fmt.Sprint(" ", hit.ID, "/", hit.Fingerprint, "/", hit.Distance)
						}
						got = append(got, line)
						if st.name == "pebble" && len(res.Results) > 1 {
							nonEmpty++
						}
					}
				}
			}
			if want == nil {
				want = got
				if nonEmpty == 0 {
					t.Fatal("no search found two documents or more: the comparison would prove little")
				}
				t.Logf("%d searches, %d with two hits or more", len(got), nonEmpty)
				return
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s\nwant (pebble) %s", got[i], want[i])
				}
			}
		})
	}
}

// d2id escapes id for a URL path.
func d2id(id string) string { return url.PathEscape(id) }
