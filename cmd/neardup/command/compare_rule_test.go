package command

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/store"
)

// TestCompareVerdictIsTheRule: 'neardup compare', POST /v1/compare and
// 'neardup dedup' give every pair the same verdict under the same flags, the
// README's example included.
func TestCompareVerdictIsTheRule(t *testing.T) {
	real := testcorpora.Texts(t, "en_prose", 1, 300)[0]
	words := strings.Fields(real)
	words[len(words)/2] = "zebra"
	edited := strings.Join(words, " ")
	pairs := []struct {
		name, a, b string
	}{
		{"readme", "the cat sat on the mat", "the cat sat on a mat"},
		{"real one-word edit", real, edited},
		{"exact copy", real, real},
		{"stopwords only", "the the the the the the", "the the the the the the the"},
		{"punctuation only", "!!! ...", "??? ,,,"},
		{"unrelated", real, "Completely unrelated words about cooking pasta with tomatoes, garlic and basil for dinner tonight."},
	}
	for _, flags := range [][]string{
		nil,
		{"--k", "3", "--shingle", "3", "--threshold", "0.5"},
		{"--method", "minhash"},
		{"--verify", "none", "--profile", "default"},
	} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			h := compareServer(t, flags)
			for _, p := range pairs {
				r, _ := compareJSON(t, "", append(append([]string{"--text"}, flags...), p.a, p.b)...)
				var sr struct {
					Duplicate bool `json:"duplicate"`
				}
				req := httptest.NewRequest("POST", "/v1/compare", strings.NewReader(mustMarshal(t, map[string]string{"a": p.a, "b": p.b})))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					t.Fatalf("%s: /v1/compare %d %s", p.name, w.Code, w.Body)
				}
				if err := json.Unmarshal(w.Body.Bytes(), &sr); err != nil {
					t.Fatal(err)
				}
				batch := dedupRemoves(t, flags, p.a, p.b)
				if r.Near != sr.Duplicate || r.Near != batch {
					t.Errorf("%s: compare near %v (%s), /v1/compare duplicate %v, dedup removes b %v: want one verdict",
						p.name, r.Near, r.Reason, sr.Duplicate, batch)
				}
				if want := map[string]bool{"readme": false, "real one-word edit": true, "exact copy": true,
					"stopwords only": false, "punctuation only": false, "unrelated": false}[p.name]; flags == nil && r.Near != want {
					t.Errorf("%s with the defaults: near %v (%s), want %v", p.name, r.Near, r.Reason, want)
				}
			}
		})
	}
}

// compareServer returns the service's handler under the decision flags,
// parsed as 'neardup serve' parses them.
func compareServer(t *testing.T, flags []string) http.Handler {
	t.Helper()
	var opt server.Options
	var d decisionFlags
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	d.register(fs, &opt.Dedup)
	fs.StringVar(&opt.Dedup.Verify, "verify", "", "")
	if err := fs.Parse(flags); err != nil {
		t.Fatal(err)
	}
	d.apply(&opt.Dedup)
	opt.Registry = prometheus.NewRegistry()
	s, err := server.New(store.NewMemStore(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Handler()
}

// dedupRemoves reports whether 'neardup dedup' with flags removes b as a
// duplicate of a.
func dedupRemoves(t *testing.T, flags []string, a, b string) bool {
	t.Helper()
	dir := t.TempDir()
	in, dups := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "dups.jsonl")
	body := mustMarshal(t, map[string]string{"id": "a", "text": a}) + "\n" + mustMarshal(t, map[string]string{"id": "b", "text": b}) + "\n"
	if err := os.WriteFile(in, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"dedup", "-q", "--duplicates", dups}, flags...), in)
	if code, _, errs := run(t, "", args...); code != 0 {
		t.Fatalf("dedup %v: exit %d, %s", flags, code, errs)
	}
	out, err := os.ReadFile(dups)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(out), `"dup_id":"b"`)
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
