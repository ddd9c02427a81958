package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/testcorpora"
)

// TestServeSnapshot builds a snapshot with 'neardup index build --from-text'
// from real texts, starts 'neardup serve --snapshot' on it (a child process
// on 127.0.0.1:0), and checks that a near-copy of one text is reported as an
// unverified duplicate of its id, an unrelated text is not, add_if_new is
// declined by the unverified match and stats count the fingerprint-only
// documents; then that a deleted snapshot document stays deleted after a
// restart (started through NEARDUP_SNAPSHOT this time).
func TestServeSnapshot(t *testing.T) {
	tmp := t.TempDir()
	docs := filepath.Join(tmp, "docs.jsonl")
	texts := testcorpora.Texts(t, "en_spdx", 30, 150)
	var b bytes.Buffer
	for i, text := range texts {
		line, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("lic-%d", i), "text": text})
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(docs, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(tmp, "seen.ndx")
	if code, _, errs := run(t, "", "index", "build", "--from-text", "--profile", "en-words", "--out", snap, docs); code != 0 {
		t.Fatalf("index build: exit %d: %s", code, errs)
	}
	data := filepath.Join(tmp, "data")

	type dup struct {
		ID       string   `json:"id"`
		Verified bool     `json:"verified"`
		Jaccard  *float64 `json:"jaccard"`
	}
	type reply struct {
		Stored     bool  `json:"stored"`
		Duplicates []dup `json:"duplicates"`
	}
	do := func(method, url string, body any, out any) int {
		t.Helper()
		var r io.Reader
		if body != nil {
			data, _ := json.Marshal(body)
			r = bytes.NewReader(data)
		}
		req, _ := http.NewRequest(method, url, r)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				t.Fatalf("%s %s: %v", method, url, err)
			}
		}
		return resp.StatusCode
	}
	type stats struct {
		Documents       int `json:"documents"`
		FingerprintOnly int `json:"fingerprint_only_documents"`
	}

	c := startServe(t, data, "--snapshot", snap)
	var st stats
	if do("GET", c.base+"/v1/stats", nil, &st); st.Documents != len(texts) || st.FingerprintOnly != len(texts) {
		t.Fatalf("stats %+v, want %d documents, all fingerprint-only", st, len(texts))
	}
	const target = 11
	near := nearCopyWords(texts[target])
	var res reply
	if code := do("POST", c.base+"/v1/documents", map[string]string{"text": near, "mode": "check"}, &res); code != http.StatusOK {
		t.Fatalf("check: %d", code)
	}
	found := false
	for _, d := range res.Duplicates {
		if d.Verified || d.Jaccard != nil {
			t.Errorf("duplicate %+v: want verified false, no jaccard", d)
		}
		found = found || d.ID == fmt.Sprintf("lic-%d", target)
	}
	if !found {
		t.Fatalf("near-copy of lic-%d: duplicates %+v", target, res.Duplicates)
	}
	if do("POST", c.base+"/v1/documents", map[string]string{"text": randomText(rand.New(rand.NewPCG(1, 2))), "mode": "check"}, &res); len(res.Duplicates) != 0 {
		t.Fatalf("unrelated text: duplicates %+v, want none", res.Duplicates)
	}
	res = reply{}
	if code := do("POST", c.base+"/v1/documents", map[string]string{"id": "n", "text": near, "mode": "add_if_new"}, &res); code != http.StatusOK ||
		res.Stored || len(res.Duplicates) != 1 || res.Duplicates[0].Verified {
		t.Fatalf("add_if_new of a near-copy: %d %+v, want declined by an unverified match", code, res)
	}
	gone := fmt.Sprintf("lic-%d", target)
	if code := do("DELETE", c.base+"/v1/documents/"+gone, nil, nil); code != http.StatusOK {
		t.Fatalf("DELETE %s: %d", gone, code)
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("after SIGTERM: %v", err)
		}
		c.done <- nil
	case <-time.After(30 * time.Second):
		t.Fatal("no exit 30 s after SIGTERM")
	}

	t.Setenv("NEARDUP_SNAPSHOT", snap)
	c = startServe(t, data)
	if do("GET", c.base+"/v1/stats", nil, &st); st.FingerprintOnly != len(texts)-1 {
		t.Fatalf("stats after restart %+v, want %d fingerprint-only", st, len(texts)-1)
	}
	if code := do("GET", c.base+"/v1/documents/"+gone, nil, nil); code != http.StatusNotFound {
		t.Fatalf("GET deleted %s after restart: %d, want 404", gone, code)
	}
	var g struct {
		Fingerprint     string `json:"fingerprint"`
		FingerprintOnly bool   `json:"fingerprint_only"`
	}
	if code := do("GET", c.base+"/v1/documents/lic-0", nil, &g); code != http.StatusOK || !g.FingerprintOnly || len(g.Fingerprint) != 16 {
		t.Fatalf("GET lic-0: %d %+v, want its fingerprint, fingerprint_only", code, g)
	}
}

func TestServeSnapshotUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--method", "minhash"},
		{"--store", "redis://127.0.0.1:1/0"},
	} {
		a := []string{"serve", "--addr", "127.0.0.1:0", "--snapshot", "seen.ndx"}
		if args[0] != "--store" {
			a = append(a, "--data", t.TempDir())
		}
		a = append(a, args...)
		if code, _, errs := run(t, "", a...); code != 2 || !strings.Contains(errs, "snapshot") {
			t.Errorf("serve --snapshot %v: exit %d, stderr %q; want a usage error (2)", args, code, errs)
		}
	}
}

// nearCopyWords replaces one word in the middle of text.
func nearCopyWords(text string) string {
	w := strings.Fields(text)
	w[len(w)/2] = "zyxwvut"
	return strings.Join(w, " ")
}
