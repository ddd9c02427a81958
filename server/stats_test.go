package server

import (
	"maps"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// TestStatsSettings: /v1/stats reports the settings of the method the
// service runs: MinHash's bands and rows (those its LSH shape takes at the
// threshold) and no SimHash distance under the default method; SimHash's
// distances and no bands under --method simhash.
func TestStatsSettings(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opt       rule.Options
		want      map[string]any
		wantNoKey []string
	}{
		{"default", rule.Options{},
			map[string]any{"method": "minhash", "bands": 24.0, "rows": 6.0, "perms": 144.0, "threshold": 0.8, "shingle": 5.0,
				"verify": "jaccard", "profile": rule.DefaultProfile},
			[]string{"k", "k_short", "short_tokens"}},
		{"minhash at 0.7", rule.Options{Threshold: 0.7, Shingle: 3},
			map[string]any{"method": "minhash", "threshold": 0.7, "shingle": 3.0}, []string{"k"}},
		{"simhash", rule.Options{Method: rule.MethodSimHash, K: 5},
			map[string]any{"method": "simhash", "k": 5.0, "k_short": 12.0, "short_tokens": 64.0, "threshold": 0.8},
			[]string{"bands", "rows", "perms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := Options{Dedup: tc.opt}
			var st store.Store
			if tc.opt.Method != rule.MethodSimHash { // the scaled set, as the service runs it
				dir := t.TempDir()
				ps, err := store.OpenPebble(filepath.Join(dir, "data"), store.PebbleOptions{Settings: Settings(tc.opt)})
				if err != nil {
					t.Fatal(err)
				}
				st, opt.KeptDir = ps, filepath.Join(dir, "keptset")
			}
			s := newTestServer(t, st, opt)
			var got struct {
				Settings map[string]any `json:"settings"`
				KeptSet  map[string]any `json:"kept_set"`
			}
			if code := call(t, s.Handler(), "GET", "/v1/stats", "", &got); code != http.StatusOK {
				t.Fatalf("stats: %d", code)
			}
			if _, ok := got.KeptSet["parts"]; ok != (s.big != nil) {
				t.Errorf("kept_set %v with a keptset.Set %v", got.KeptSet, s.big != nil)
			}
			if s.big != nil {
				// A search of a stored text reads that text's record: the
				// kept set counts the match and the candidate.
				text := "the kept set counts its matches and the candidates they read, one record each, so that an operator sees what a search costs"
				if code := call(t, s.Handler(), "POST", "/v1/documents", `{"id":"a","text":"`+text+`"}`, nil); code != http.StatusCreated {
					t.Fatalf("add: %d", code)
				}
				before := maps.Clone(got.KeptSet) // decoding into got again reuses its map
				if code := call(t, s.Handler(), "POST", "/v1/search", `{"text":"`+text+`"}`, nil); code != http.StatusOK {
					t.Fatalf("search: %d", code)
				}
				if code := call(t, s.Handler(), "GET", "/v1/stats", "", &got); code != http.StatusOK {
					t.Fatalf("stats: %d", code)
				}
				for _, k := range []string{"matches", "candidates_examined"} {
					if b, a := before[k].(float64), got.KeptSet[k].(float64); a < b+1 {
						t.Errorf("kept_set %s %v after a search that read a record, %v before", k, a, b)
					}
				}
				if _, ok := got.KeptSet["candidates_prefiltered"].(float64); !ok {
					t.Errorf("kept_set %v has no candidates_prefiltered", got.KeptSet)
				}
			}
			for k, v := range tc.want {
				if got.Settings[k] != v {
					t.Errorf("settings[%q] = %v, want %v (all: %v)", k, got.Settings[k], v, got.Settings)
				}
			}
			for _, k := range tc.wantNoKey {
				if v, ok := got.Settings[k]; ok {
					t.Errorf("settings[%q] = %v under %s: not a setting of that method", k, v, got.Settings["method"])
				}
			}
		})
	}
	// The shape reported is the one the rule bands with.
	o := rule.Options{Threshold: 0.7}
	o.EnsureDefaults()
	bands, rows := o.LSHShape()
	if got := statsSettings(rule.Options{Threshold: 0.7}); got["bands"] != bands || got["rows"] != rows {
		t.Errorf("at 0.7: bands %v rows %v, LSHShape says %d x %d", got["bands"], got["rows"], bands, rows)
	}
}
