package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBearerSchemeCaseInsensitive: RFC 7235 section 2.1, the auth scheme
// is case-insensitive and one or more spaces follow it.
func TestBearerSchemeCaseInsensitive(t *testing.T) {
	s := newTestServer(t, nil, Options{Token: "s3cret"})
	h := s.Handler()
	for i, tc := range []struct {
		auth string
		want int
	}{
		{"Bearer s3cret", 201},
		{"bearer s3cret", 201},
		{"BEARER s3cret", 201},
		{"bEaReR  s3cret", 201},
		{"Basic s3cret", 401},
		{"Bearers3cret", 401},
		{"bearer S3CRET", 401}, // the token is not
		{"s3cret", 401},
	} {
		body := mustJSON(t, map[string]any{"id": fmt.Sprint("d", i), "text": textA})
		if code := call(t, h, "POST", "/v1/documents", body, nil, "Authorization", tc.auth); code != tc.want {
			t.Errorf("Authorization %q: %d, want %d", tc.auth, code, tc.want)
		}
	}
}

// TestServiceDetails: the 413 names the limit and the flag that sets it; a
// batch's refused documents carry their id; a path the mux would clean is a
// JSON 404 without a redirect; search's limit 0 is refused, not taken for
// the default; the metrics count by numeric status.
func TestServiceDetails(t *testing.T) {
	s := newTestServer(t, nil, Options{MaxBodyBytes: 1 << 12})
	h := s.Handler()
	if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"id": "a", "text": textA}), nil); code != http.StatusCreated {
		t.Fatalf("add a: %d", code)
	}

	var eb errorBody
	big := mustJSON(t, map[string]any{"id": "big", "text": strings.Repeat("word ", 2000)})
	if code := call(t, h, "POST", "/v1/documents", big, &eb); code != http.StatusRequestEntityTooLarge ||
		eb.Error.Code != "body_too_large" || !strings.Contains(eb.Error.Message, "4096 bytes") || !strings.Contains(eb.Error.Message, "--max-body") {
		t.Errorf("large body: %d %+v, want 413 naming 4096 bytes and --max-body", code, eb)
	}

	var br struct {
		Results []struct {
			Status int          `json:"status"`
			ID     string       `json:"id"`
			Error  *errorDetail `json:"error"`
		} `json:"results"`
	}
	batch := mustJSON(t, map[string]any{"documents": []map[string]any{{"id": "c", "text": textC}, {"id": "a", "text": textC}, {"text": textB, "mode": "check"}}})
	if code := call(t, h, "POST", "/v1/documents:batch", batch, &br); code != http.StatusOK || len(br.Results) != 3 {
		t.Fatalf("batch: %d %+v", code, br)
	}
	for i, want := range []struct {
		status int
		id     string
	}{{201, "c"}, {409, "a"}, {200, ""}} {
		if got := br.Results[i]; got.Status != want.status || got.ID != want.id {
			t.Errorf("batch result %d: status %d id %q, want %d %q", i, got.Status, got.ID, want.status, want.id)
		}
	}

	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"dot-dot", "GET", "/v1/documents/..", "", 404, "not_found"},
		{"dot", "GET", "/v1/documents/./a", "", 404, "not_found"},
		{"double slash", "DELETE", "/v1//documents/a", "", 404, "not_found"},
		{"limit 0", "POST", "/v1/search", `{"text":"` + textA + `","limit":0}`, 400, "invalid_argument"},
		{"limit 0 by fingerprint", "POST", "/v1/search", `{"fingerprint":"0123456789abcdef","limit":0}`, 400, "invalid_argument"},
		{"limit 0 (slow decoder)", "POST", "/v1/search", `{"text":"` + textA + `", "limit" : 0, "k": null}`, 400, "invalid_argument"},
		{"limit 1", "POST", "/v1/search", `{"text":"` + textA + `","limit":1}`, 200, ""},
		{"limit absent", "POST", "/v1/search", `{"text":"` + textA + `"}`, 200, ""},
	} {
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.status || (tc.code != "" && !strings.Contains(w.Body.String(), `"code":"`+tc.code+`"`)) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, w.Code, w.Body, tc.status, tc.code)
		}
		if loc := w.Header().Get("Location"); loc != "" {
			t.Errorf("%s: Location %q, want none", tc.name, loc)
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q, want JSON", tc.name, ct)
		}
	}

	m := newRecorder(t, h, "GET", "/metrics")
	for _, want := range []string{`code="201",route="POST /v1/documents"`, `code="413",route="POST /v1/documents"`, `code="404",route="unmatched"`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(m, `code="Created"`) || strings.Contains(m, `code="OK"`) {
		t.Errorf("metrics label codes by status text:\n%s", m)
	}
}
