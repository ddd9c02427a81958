package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/neardup/neardup/store"
)

// newTestServer returns a loaded service over st (a MemStore when nil).
func newTestServer(t testing.TB, st store.Store, opt Options) *Server {
	t.Helper()
	if st == nil {
		st = store.NewMemStore()
	}
	if opt.Registry == nil {
		opt.Registry = prometheus.NewRegistry()
	}
	s, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// call sends one request to h in process and decodes the JSON reply into out
// (when not nil); it returns the status.
func call(t testing.TB, h http.Handler, method, path, body string, out any, header ...string) int {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if out != nil {
		if err := json.Unmarshal(w.Body.Bytes(), out); err != nil {
			t.Fatalf("%s %s: reply %q: %v", method, path, w.Body.String(), err)
		}
	}
	return w.Code
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// setLen is the number of documents in the server's set.
func setLen(s *Server) int {
	n, _ := s.set.Len(context.Background())
	return n
}
