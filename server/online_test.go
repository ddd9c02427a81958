package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/rule"
)

// TestOnlineEqualsBatch posts a corpus one document at a time, in file order,
// with mode add_if_new, and checks that the declined documents and the kept
// document named for each are exactly what 'neardup dedup' (dedup.Run, keep
// first) removes and names on the same file with the same options.
//
// It runs over the embedded path (a MemStore behind a keptset.Set, under each
// method: the kept set's candidates of MethodSimHash are its prefix keys) and over the
// shared stores, one Redis and a Redis Cluster, where every decision is taken
// against the replica that follows the change log, or against Redis itself
// in direct mode.
func TestOnlineEqualsBatch(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the run without it asserts the verdicts")
	}
	for _, backend := range testBackends {
		t.Run(backend.name, func(t *testing.T) {
			// The backends share nothing but the batch verdicts and
			// wait mostly on Redis round trips: run them together.
			t.Parallel()
			addr := backend.start(t)
			for _, m := range backend.methods() {
				t.Run(m, func(t *testing.T) { testOnlineEqualsBatch(t, backend, addr, m) })
			}
		})
	}
}

// TestOnlineEqualsBatchNoVerify is TestOnlineEqualsBatch over the embedded
// path under --method simhash --verify none, where the kept set finds every
// candidate by fingerprint distance (its index of fingerprints) rather than
// by keys.
func TestOnlineEqualsBatchNoVerify(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the run without it asserts the verdicts")
	}
	testOnlineEqualsBatchOpt(t, testBackends[0], "", rule.Options{Method: rule.MethodSimHash, Verify: rule.VerifyNone})
}

func testOnlineEqualsBatch(t *testing.T, backend testBackend, addr string, method string) {
	testOnlineEqualsBatchOpt(t, backend, addr, rule.Options{Method: method})
}

func testOnlineEqualsBatchOpt(t *testing.T, backend testBackend, addr string, ropt rule.Options) {
	for _, name := range []string{"en_spdx", "zh_fortunes"} {
		t.Run(name, func(t *testing.T) {
			path := testcorpora.Path(t, name)
			opt := dedup.Options{Options: ropt}
			want, sum := batchVerdicts(t, path, opt)
			if len(want) == 0 {
				t.Fatalf("the batch run removed nothing from %s: the comparison would prove nothing", name)
			}

			s := newTestServer(t, openBackend(t, backend, addr, opt.Options), Options{Dedup: opt.Options})
			if s.shared == nil && s.big == nil {
				t.Fatal("the service over an embedded store does not use a keptset.Set")
			}
			h := s.Handler()
			r, err := corpus.Open([]string{path}, corpus.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got := map[string]string{}
			n := 0
			for {
				doc, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if !utf8.ValidString(doc.Text) || strings.TrimSpace(doc.Text) == "" {
					t.Fatalf("document %s cannot be posted (invalid UTF-8 or empty): the corpus needs filtering first", doc.ID)
				}
				n++
				var res docResponse
				body := mustJSON(t, map[string]any{"id": doc.ID, "text": doc.Text, "mode": "add_if_new"})
				switch code := call(t, h, "POST", "/v1/documents", body, &res); code {
				case http.StatusCreated:
					if !res.Stored || len(res.Duplicates) != 0 {
						t.Fatalf("%s: 201 with stored=%v duplicates=%v", doc.ID, res.Stored, res.Duplicates)
					}
				case http.StatusOK:
					if res.Stored || len(res.Duplicates) != 1 {
						t.Fatalf("%s: 200 with stored=%v duplicates=%v, want one blocking document", doc.ID, res.Stored, res.Duplicates)
					}
					got[doc.ID] = res.Duplicates[0].ID
				default:
					t.Fatalf("%s: status %d", doc.ID, code)
				}
			}
			if n != sum.Docs {
				t.Fatalf("posted %d documents, the batch run read %d", n, sum.Docs)
			}
			for dup, kept := range want {
				if got[dup] != kept {
					t.Errorf("%s: online named %q, batch %q", dup, got[dup], kept)
				}
			}
			for dup, kept := range got {
				if _, ok := want[dup]; !ok {
					t.Errorf("%s: declined online (for %s), kept by the batch run", dup, kept)
				}
			}
			if stored, err := s.Len(context.Background()); err != nil || stored != n-len(want) {
				t.Errorf("stored %d documents (%v), batch kept %d", stored, err, n-len(want))
			}
			t.Logf("%s: %d documents, %d declined online and in batch", name, n, len(want))
		})
	}
}

// batchRuns holds batchVerdicts' results: every backend compares against the
// same batch run of a corpus and method.
var batchRuns struct {
	sync.Mutex
	m map[string]*batchRun // by path and method
}

type batchRun struct {
	once sync.Once
	dups map[string]string
	sum  dedup.Summary
	err  error
}

// batchVerdicts returns what dedup.Run with opt removes from path (each
// removed document's kept document) and its summary, running it once per
// test binary.
func batchVerdicts(t *testing.T, path string, opt dedup.Options) (map[string]string, dedup.Summary) {
	t.Helper()
	batchRuns.Lock()
	if batchRuns.m == nil {
		batchRuns.m = map[string]*batchRun{}
	}
	key := path + "\x00" + opt.Method + "\x00" + opt.Verify
	br := batchRuns.m[key]
	if br == nil {
		br = new(batchRun)
		batchRuns.m[key] = br
	}
	batchRuns.Unlock()
	br.once.Do(func() {
		dir, err := os.MkdirTemp("", "online")
		if err != nil {
			br.err = err
			return
		}
		defer os.RemoveAll(dir)
		opt.Duplicates = filepath.Join(dir, "dups.jsonl")
		if br.sum, br.err = dedup.Run(context.Background(), []string{path}, opt); br.err != nil {
			return
		}
		br.dups, br.err = readDuplicatesFile(opt.Duplicates)
	})
	if br.err != nil {
		t.Fatal(br.err)
	}
	return br.dups, br.sum
}

// readDuplicatesFile reads a duplicates file into each removed document's
// kept document.
func readDuplicatesFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d dedup.Duplicate
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, err
		}
		out[d.DupID] = d.KeptID
	}
	return out, sc.Err()
}
