package server

import (
	"net/http"
	"testing"
)

// TestExactOnlyDocuments: a text without features (punctuation or
// stopwords only) has fingerprint 0 like every other such text; the service
// matches it against exact copies only, as 'neardup dedup' does, and says so
// in every reply about it.
func TestExactOnlyDocuments(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	h := s.Handler()
	add := func(id, text, mode string) docResponse {
		t.Helper()
		var res docResponse
		if code := call(t, h, "POST", "/v1/documents", mustJSON(t, map[string]any{"id": id, "text": text, "mode": mode}), &res); code != http.StatusOK && code != http.StatusCreated {
			t.Fatalf("add %s: %d %+v", id, code, res)
		}
		return res
	}
	tests := []struct {
		id, text  string
		exactOnly bool
		dups      []string // what it duplicates
	}{
		{"stop1", "the the the the the the", true, nil},
		{"stop2", "the the the the the the the", true, nil}, // same shingles, not the same text
		{"punct1", "!!! ...", true, nil},
		{"punct2", "??? ,,,", true, nil},
		{"stop1-copy", "The the THE the the the", true, []string{"stop1"}},
		{"punct1-copy", "!!! ...", true, []string{"punct1"}},
		{"word", textA, false, nil},
	}
	for _, tc := range tests {
		res := add(tc.id, tc.text, "add")
		var got []string
		for _, d := range res.Duplicates {
			got = append(got, d.ID)
		}
		if len(got) != len(tc.dups) || (len(got) > 0 && got[0] != tc.dups[0]) {
			t.Errorf("%s: duplicates %v, want %v", tc.id, got, tc.dups)
		}
		wantNote := ""
		if tc.exactOnly {
			wantNote = noteExactOnly
		}
		if res.ExactOnly != tc.exactOnly || res.Note != wantNote {
			t.Errorf("%s: exact_only %v note %q, want %v %q", tc.id, res.ExactOnly, res.Note, tc.exactOnly, wantNote)
		}
	}
	var sr searchResponse
	if code := call(t, h, "POST", "/v1/search", mustJSON(t, map[string]any{"text": "of the and"}), &sr); code != http.StatusOK || len(sr.Results) != 0 || !sr.ExactOnly || sr.Note != noteExactOnly {
		t.Errorf("search for other stopwords: %d %+v, want no results and the note", code, sr)
	}
	var g getResponse
	if code := call(t, h, "GET", "/v1/documents/stop1", "", &g); code != http.StatusOK || !g.ExactOnly || g.Note != noteExactOnly {
		t.Errorf("GET stop1: %d %+v, want exact_only and the note", code, g)
	}
	var cr compareResponse
	if code := call(t, h, "POST", "/v1/compare", mustJSON(t, map[string]any{"a": "the the the the the the", "b": "the the the the the the the"}), &cr); code != http.StatusOK || cr.Duplicate || !cr.A.ExactOnly || !cr.B.ExactOnly {
		t.Errorf("compare of two stopword texts: %d %+v, want not duplicates, both exact_only", code, cr)
	}
	var fp map[string]any
	if code := call(t, h, "POST", "/v1/fingerprint", mustJSON(t, map[string]any{"text": "..."}), &fp); code != http.StatusOK || fp["exact_only"] != true || fp["note"] != noteExactOnly {
		t.Errorf("fingerprint of punctuation: %d %v, want exact_only and the note", code, fp)
	}
}
