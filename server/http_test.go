package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/store"
)

const (
	textA = "The quick brown fox jumps over the lazy dog while the cat watches from the fence and the bird sings in the old oak tree"
	textB = "The quick brown fox jumps over the lazy dog while the cat watches from the fence and the bird sings in the old oak tree today"
	textC = "An entirely different document about the history of printing presses in northern Europe during the fifteenth century"
)

func storedIDs(t *testing.T, s *Server) []string {
	t.Helper()
	var ids []string
	if err := s.store.Load(context.Background(), func(r store.Record) error { ids = append(ids, r.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestDocumentsLifecycle(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) store.Store{
		"mem": func(t *testing.T) store.Store { return store.NewMemStore() },
		"bolt": func(t *testing.T) store.Store {
			s, err := store.OpenBolt(t.TempDir(), store.BoltOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"pebble": func(t *testing.T) store.Store {
			s, err := store.OpenPebble(t.TempDir(), store.PebbleOptions{MemTableSize: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newTestServer(t, open(t), Options{})
			h := s.Handler()
			var res docResponse
			if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"id": "a", "text": textA, "meta": map[string]string{"title": "fox"}}), &res); code != http.StatusCreated || !res.Stored || len(res.Duplicates) != 0 || len(res.Fingerprint) != 16 {
				t.Fatalf("add a: %d %+v", code, res)
			}
			// add stores b and reports a; add_if_new refuses b2 naming a.
			if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"id": "b", "text": textB}), &res); code != http.StatusCreated || len(res.Duplicates) != 1 || res.Duplicates[0].ID != "a" || res.Duplicates[0].Jaccard == nil || *res.Duplicates[0].Jaccard < 0.8 {
				t.Fatalf("add b: %d %+v, want stored with duplicate a", code, res)
			}
			if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"id": "b2", "text": textB, "mode": "add_if_new"}), &res); code != http.StatusOK || res.Stored || len(res.Duplicates) != 1 || res.Duplicates[0].ID != "a" {
				t.Fatalf("add_if_new b2: %d %+v, want declined for a", code, res)
			}
			if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"text": textB, "mode": "check"}), &res); code != http.StatusOK || res.Stored || len(res.Duplicates) != 2 {
				t.Fatalf("check: %d %+v, want a and b", code, res)
			}
			if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"id": "a", "text": textC}), nil); code != http.StatusConflict {
				t.Fatalf("add with a stored id: %d, want 409", code)
			}
			if got, want := storedIDs(t, s), []string{"a", "b"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("stored %v, want %v", got, want)
			}

			var got getResponse
			if code := call(t, h, "GET", "/v1/documents/a", "", &got); code != http.StatusOK || got.ID != "a" || string(got.Meta) != `{"title":"fox"}` {
				t.Fatalf("GET a: %d %+v", code, got)
			}
			var sr searchResponse
			if code := call(t, h, "POST", "/v1/search", mustJSON(t, map[string]any{"text": textA}), &sr); code != http.StatusOK || !sr.Verified || len(sr.Results) != 2 || sr.Results[0].ID != "a" {
				t.Fatalf("search by text: %d %+v", code, sr)
			}
			if code := call(t, h, "POST", "/v1/search", mustJSON(t, map[string]any{"fingerprint": got.Fingerprint, "k": 0}), &sr); code != http.StatusOK || sr.Verified || len(sr.Results) == 0 || sr.Results[0].ID != "a" || sr.Results[0].Distance != 0 {
				t.Fatalf("search by fingerprint: %d %+v", code, sr)
			}

			if code := call(t, h, "DELETE", "/v1/documents/a", "", nil); code != http.StatusOK {
				t.Fatalf("DELETE a: %d", code)
			}
			if code := call(t, h, "DELETE", "/v1/documents/a", "", nil); code != http.StatusNotFound {
				t.Fatalf("second DELETE a: %d, want 404", code)
			}
			if code := call(t, h, "GET", "/v1/documents/a", "", nil); code != http.StatusNotFound {
				t.Fatalf("GET deleted a: %d, want 404", code)
			}
			// Every trace is gone: the text now matches only b, and a may come back.
			if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"text": textA, "mode": "check"}), &res); code != http.StatusOK || len(res.Duplicates) != 1 || res.Duplicates[0].ID != "b" {
				t.Fatalf("check after delete: %d %+v, want only b", code, res)
			}
			if got, want := storedIDs(t, s), []string{"b"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("stored %v after delete, want %v", got, want)
			}

			var br struct {
				Results []struct {
					Status     int          `json:"status"`
					Duplicates []dupJSON    `json:"duplicates"`
					Error      *errorDetail `json:"error"`
				} `json:"results"`
			}
			body := mustJSON(t, map[string]any{"mode": "add_if_new", "documents": []map[string]any{
				{"id": "c", "text": textC}, {"id": "c2", "text": textC}, {"id": "b", "text": "新的文本，内容完全不同。", "mode": "add"},
			}})
			if code := call(t, h, "POST", "/v1/documents:batch", body, &br); code != http.StatusOK || len(br.Results) != 3 ||
				br.Results[0].Status != 201 || br.Results[1].Status != 200 || br.Results[1].Duplicates[0].ID != "c" || br.Results[2].Status != 409 || br.Results[2].Error.Code != "already_exists" {
				t.Fatalf("batch: %d %+v", code, br)
			}
			var st map[string]any
			if code := call(t, h, "GET", "/v1/stats", "", &st); code != http.StatusOK || st["documents"] != float64(2) {
				t.Fatalf("stats: %d %v", code, st)
			}
			if _, durable := s.store.(interface{ Size() int64 }); durable {
				if b, _ := st["store_bytes"].(float64); b <= 0 {
					t.Errorf("stats: store_bytes %v, want the size of the store's files", st["store_bytes"])
				}
			}
		})
	}
}

func TestBadRequestsChangeNothing(t *testing.T) {
	s := newTestServer(t, nil, Options{MaxBodyBytes: 1 << 12, MaxBatch: 2})
	h := s.Handler()
	if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"id": "a", "text": textA}), nil); code != http.StatusCreated {
		t.Fatalf("setup add: %d", code)
	}
	long := strings.Repeat("x", index.MaxIDBytes+1)
	big := Options{}
	big.EnsureDefaults()
	tests := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"unknown field", "POST", "/v1/documents", `{"id":"x","text":"hello there","color":1}`, 400, "invalid_json"},
		{"trailing data", "POST", "/v1/documents", `{"id":"x","text":"hello there"} {}`, 400, "invalid_json"},
		{"trailing garbage", "POST", "/v1/documents", `{"id":"x","text":"hello there"}x`, 400, "invalid_json"},
		{"wrong type", "POST", "/v1/documents", `{"id":7,"text":"hello there"}`, 400, "invalid_json"},
		{"not an object", "POST", "/v1/documents", `["x"]`, 400, "invalid_json"},
		{"empty body", "POST", "/v1/documents", ``, 400, "invalid_json"},
		{"invalid utf-8", "POST", "/v1/documents", "{\"id\":\"x\",\"text\":\"hello \xff there\"}", 400, "invalid_utf8"},
		{"empty text", "POST", "/v1/documents", `{"id":"x","text":"  "}`, 400, "invalid_argument"},
		{"missing text", "POST", "/v1/documents", `{"id":"x"}`, 400, "invalid_argument"},
		{"missing id", "POST", "/v1/documents", `{"text":"hello there"}`, 400, "invalid_argument"},
		{"bad mode", "POST", "/v1/documents", `{"id":"x","text":"hello there","mode":"upsert"}`, 400, "invalid_argument"},
		{"meta not object", "POST", "/v1/documents", `{"id":"x","text":"hello there","meta":[1]}`, 400, "invalid_argument"},
		{"id too long", "POST", "/v1/documents", `{"id":"` + long + `","text":"hello there"}`, 413, "body_too_large"},
		{"body too large", "POST", "/v1/documents", `{"id":"x","text":"` + strings.Repeat("word ", 1000) + `"}`, 413, "body_too_large"},
		{"duplicate id", "POST", "/v1/documents", `{"id":"a","text":"something else entirely"}`, 409, "already_exists"},
		{"batch too big", "POST", "/v1/documents:batch", `{"documents":[{"id":"x","text":"a b"},{"id":"y","text":"c d"},{"id":"z","text":"e f"}]}`, 400, "invalid_argument"},
		{"batch empty", "POST", "/v1/documents:batch", `{"documents":[]}`, 400, "invalid_argument"},
		{"batch one bad", "POST", "/v1/documents:batch", `{"documents":[{"id":"x","text":"a b"},{"id":"y","text":""}]}`, 400, "invalid_argument"},
		{"search both", "POST", "/v1/search", `{"text":"x y","fingerprint":"0000000000000001"}`, 400, "invalid_argument"},
		{"search bad fp", "POST", "/v1/search", `{"fingerprint":"zz"}`, 400, "invalid_argument"},
		{"search k too big", "POST", "/v1/search", `{"fingerprint":"0000000000000001","k":40}`, 400, "invalid_argument"},
		{"compare missing b", "POST", "/v1/compare", `{"a":"x y"}`, 400, "invalid_argument"},
		{"get absent", "GET", "/v1/documents/nope", ``, 404, "not_found"},
		{"delete absent", "DELETE", "/v1/documents/nope", ``, 404, "not_found"},
	}
	before := storedIDs(t, s)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e errorBody
			if code := call(t, h, tt.method, tt.path, tt.body, &e); code != tt.status || e.Error.Code != tt.code || e.Error.Message == "" {
				t.Errorf("got %d %+v, want %d %s", code, e, tt.status, tt.code)
			}
			if got := storedIDs(t, s); !reflect.DeepEqual(got, before) || setLen(s) != len(before) {
				t.Errorf("store %v (index %d), want %v unchanged", got, setLen(s), before)
			}
		})
	}

	// The id limit itself, with a body limit that lets the id through.
	s2 := newTestServer(t, nil, Options{})
	var e errorBody
	if code := call(t, s2.Handler(), "POST", "/v1/documents", `{"id":"`+long+`","text":"hello there"}`, &e); code != 400 || e.Error.Code != "invalid_argument" || setLen(s2) != 0 {
		t.Errorf("id of %d bytes: %d %+v, index %d; want 400 and nothing stored", len(long), code, e, setLen(s2))
	}
}

// failingStore fails every Put.
type failingStore struct{ *store.MemStore }

func (failingStore) Put(context.Context, store.Record) error { return errors.New("disk on fire") }

func TestStoreFailureUndoesAdd(t *testing.T) {
	s := newTestServer(t, failingStore{store.NewMemStore()}, Options{})
	h := s.Handler()
	var e errorBody
	for _, mode := range []string{"add", "add_if_new"} {
		if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"id": "a", "text": textA, "mode": mode}), &e); code != http.StatusServiceUnavailable || e.Error.Code != "unavailable" {
			t.Errorf("%s with a failing store: %d %+v, want 503 unavailable", mode, code, e)
		}
		if setLen(s) != 0 {
			t.Fatalf("%s: the index holds %d documents after the failed write, want 0", mode, setLen(s))
		}
	}
}

func TestToken(t *testing.T) {
	s := newTestServer(t, nil, Options{Token: "s3cret"})
	h := s.Handler()
	add := mustJSON(t, map[string]any{"id": "a", "text": textA})
	for _, tc := range []struct {
		header []string
		want   int
	}{
		{nil, 401},
		{[]string{"Authorization", "Bearer wrong"}, 401},
		{[]string{"Authorization", "s3cret"}, 401},
		{[]string{"Authorization", "Bearer s3cret"}, 201},
	} {
		if code := call(t, h, "POST", "/v1/documents", add, nil, tc.header...); code != tc.want {
			t.Errorf("add with %v: %d, want %d", tc.header, code, tc.want)
		}
	}
	if code := call(t, h, "DELETE", "/v1/documents/a", "", nil); code != 401 {
		t.Errorf("delete without token: %d, want 401", code)
	}
	// Reads are open unless TokenReads.
	if code := call(t, h, "GET", "/v1/documents/a", "", nil); code != 200 {
		t.Errorf("read without token: %d, want 200", code)
	}
	if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"text": textA, "mode": "check"}), nil); code != 200 {
		t.Errorf("check without token: %d, want 200", code)
	}
	s2 := newTestServer(t, nil, Options{Token: "s3cret", TokenReads: true})
	if code := call(t, s2.Handler(), "POST", "/v1/search", `{"text":"x y"}`, nil); code != 401 {
		t.Errorf("search without token under TokenReads: %d, want 401", code)
	}
}

func TestCompareAndMetrics(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	h := s.Handler()
	var c compareResponse
	if code := call(t, h, "POST", "/v1/compare", mustJSON(t, map[string]any{"a": textA, "b": textB}), &c); code != 200 {
		t.Fatalf("compare: %d", code)
	}
	if len(c.DifferingBits) != c.Distance || !c.Duplicate || c.Jaccard == nil || c.Cosine == nil || *c.Cosine <= 0.5 || len(c.A.Features) == 0 {
		t.Errorf("compare of near-duplicates: %+v", c)
	}
	for _, b := range c.DifferingBits {
		if c.A.Bits[63-b] == c.B.Bits[63-b] {
			t.Errorf("bit %d listed as differing but equal in %s and %s", b, c.A.Bits, c.B.Bits)
		}
	}
	var zh compareResponse
	if code := call(t, h, "POST", "/v1/compare", mustJSON(t, map[string]any{"a": "天下大势，分久必合，合久必分。周末七国分争，并入于秦。", "b": "天下大势，分久必合，合久必分。周末七国纷争，并入于秦。"}), &zh); code != 200 || zh.A.Tokens == 0 || zh.Distance >= 32 {
		t.Errorf("compare Chinese: %d %+v", code, zh)
	}
	rec := call(t, h, "GET", "/metrics", "", nil)
	if rec != 200 {
		t.Fatalf("metrics: %d", rec)
	}
	r := newRecorder(t, h, "GET", "/metrics")
	for _, want := range []string{`neardup_http_requests_total{code="200",route="POST /v1/compare"} 2`, "neardup_index_documents 0"} {
		if !strings.Contains(r, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func newRecorder(t *testing.T, h http.Handler, method, path string) string {
	t.Helper()
	var sb strings.Builder
	w := &bodyWriter{header: http.Header{}, b: &sb}
	r, _ := http.NewRequest(method, path, nil)
	h.ServeHTTP(w, r)
	return fmt.Sprint(sb.String())
}

type bodyWriter struct {
	header http.Header
	b      *strings.Builder
}

func (w *bodyWriter) Header() http.Header         { return w.header }
func (w *bodyWriter) Write(p []byte) (int, error) { return w.b.Write(p) }
func (w *bodyWriter) WriteHeader(int)             {}

// TestUnknownRoutes: a path no route serves is a JSON 404, a route asked
// with another method a JSON 405 with the Allow header, and the page and
// the API still answer.
func TestUnknownRoutes(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	h := s.Handler()
	for _, tc := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"GET", "/v1/nope", http.StatusNotFound, "not_found", ""},
		{"POST", "/v2/documents", http.StatusNotFound, "not_found", ""},
		{"PUT", "/v1/documents/a", http.StatusMethodNotAllowed, "method_not_allowed", "DELETE, GET, HEAD"},
		{"GET", "/v1/search", http.StatusMethodNotAllowed, "method_not_allowed", "POST"},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var body errorBody
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Errorf("%s %s: reply %q is not a JSON error: %v", tc.method, tc.path, w.Body.String(), err)
			continue
		}
		if w.Code != tc.status || body.Error.Code != tc.code || w.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d %q Allow %q, want %d %q Allow %q", tc.method, tc.path, w.Code, body.Error.Code,
				w.Header().Get("Allow"), tc.status, tc.code, tc.allow)
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: Content-Type %q", tc.method, tc.path, ct)
		}
	}
	if code := call(t, h, "GET", "/healthz", "", nil); code != http.StatusOK {
		t.Errorf("GET /healthz: %d", code)
	}
	r := httptest.NewRequest("GET", "/", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "<html") {
		t.Errorf("GET /: %d, want the page", w.Code)
	}
}
