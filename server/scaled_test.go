package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// TestScaledRestart: the service over pebble with its kept set's parts in a
// directory gives the same verdicts after a restart (parts mapped, nothing
// replayed), after losing its parts (rebuilt from the store), and after a
// damaged part (rebuilt, with a log line naming it), under each method.
func TestScaledRestart(t *testing.T) {
	for _, method := range []string{rule.MethodMinHash, rule.MethodSimHash} {
		t.Run(method, func(t *testing.T) { testScaledRestart(t, rule.Options{Method: method}) })
	}
}

func testScaledRestart(t *testing.T, ropt rule.Options) {
	dir := t.TempDir()
	keptDir := filepath.Join(dir, "keptset")
	var logBuf bytes.Buffer
	open := func() *Server {
		st, err := store.OpenPebble(filepath.Join(dir, "data"), store.PebbleOptions{Settings: Settings(ropt)})
		if err != nil {
			t.Fatal(err)
		}
		logBuf.Reset()
		s, err := New(st, Options{Dedup: ropt, KeptDir: keptDir, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Load(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s.big == nil {
			t.Fatalf("the service does not use a keptset.Set under method %s", ropt.Method)
		}
		return s
	}
	r, err := corpus.Open([]string{testcorpora.Path(t, "en_spdx")}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []corpus.Doc
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, corpus.Doc{ID: d.ID, Text: strings.Clone(d.Text)})
	}
	r.Close()

	ctx := context.Background()
	s := open()
	verdict := map[string]string{} // id -> the stored document it duplicates ("" when stored)
	for _, d := range docs {
		res, err := s.Add(ctx, Doc{ID: d.ID, Text: d.Text, Mode: ModeAddIfNew})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Duplicates) > 0 {
			verdict[d.ID] = res.Duplicates[0].ID
		} else {
			verdict[d.ID] = ""
		}
	}
	stored, _ := s.Len(ctx)
	check := func(s *Server, when string) {
		t.Helper()
		if n, _ := s.Len(ctx); n != stored {
			t.Fatalf("%s: %d documents, want %d", when, n, stored)
		}
		for _, d := range docs {
			res, err := s.Search(ctx, d.Text, 1)
			if err != nil {
				t.Fatal(err)
			}
			want := verdict[d.ID]
			if want == "" {
				want = d.ID // a stored document finds itself first
			}
			if len(res.Duplicates) == 0 || res.Duplicates[0].ID != want {
				t.Fatalf("%s: %s finds %v, want %s", when, d.ID, res.Duplicates, want)
			}
			if verdict[d.ID] != "" {
				continue
			}
			// A stored document's fingerprint finds it, named by the set.
			ms, err := s.SearchFingerprint(ctx, res.FP, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(ms, func(m index.Match) bool { return m.ID == d.ID && m.Distance == 0 }) {
				t.Fatalf("%s: the fingerprint search of %s finds %v", when, d.ID, ms)
			}
		}
	}
	check(s, "before restart")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open()
	if st := s.big.Stats(); st.Parts == 0 || st.DeltaDocs != 0 {
		t.Fatalf("restart: %+v, want the parts mapped and nothing replayed", st)
	}
	check(s, "after restart")
	s.Close()

	os.RemoveAll(keptDir)
	s = open()
	check(s, "after losing the parts")
	s.Close()

	parts, _ := filepath.Glob(filepath.Join(keptDir, "*.part"))
	if len(parts) == 0 {
		t.Fatal("no part written")
	}
	b, _ := os.ReadFile(parts[0])
	b[len(b)/3] ^= 1
	os.WriteFile(parts[0], b, 0o644)
	s = open()
	if !strings.Contains(logBuf.String(), filepath.Base(parts[0])) || !strings.Contains(logBuf.String(), "rebuild") {
		t.Fatalf("no log line names the damaged part: %s", logBuf.String())
	}
	check(s, "after a damaged part")
	s.Close()
}
