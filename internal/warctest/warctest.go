// Package warctest makes real WARC archives for tests: it serves pages from
// an httptest server on loopback and has GNU wget (Debian's package) fetch
// them with --warc-file, so the archives come from a crawler nobody here
// wrote, with its requests, responses, warcinfo and log records.
//
//	path, base := warctest.Crawl(t, []warctest.Page{
//		{Path: "/a", Body: []byte("<p>a page</p>")},
//		{Path: "/old", Status: 302, Location: "/a"},
//	})
//	// path: t.TempDir()/crawl.warc.gz; base: http://127.0.0.1:PORT
//
// Without wget on PATH a test skips with a message saying so, unless the
// environment variable CI is set: then it fails, so that CI never passes by
// skipping (.ci/run installs wget).
package warctest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Page is one resource the server answers.
type Page struct {
	Path        string // "/a.html"
	ContentType string // "": text/html; charset=utf-8
	Status      int    // 0: 200
	Location    string // a redirect's target (Status 3xx)
	Body        []byte
}

// Options change a crawl.
type Options struct {
	Plain bool     // an uncompressed .warc (wget --no-warc-compression); else .warc.gz
	Args  []string // more wget arguments
}

// NeedWget skips tb when wget is not installed (fails it under CI).
func NeedWget(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("wget")
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatal("wget not found and CI is set: install wget (apt-get install wget); the WARC tests crawl with it")
		}
		tb.Skip("wget not found: the WARC tests are SKIPPED; install wget (apt-get install wget) to run them (CI fails instead)")
	}
	return p
}

// Crawl serves pages and fetches each of them once, in order, with wget
// into a WARC archive in a new temporary directory. It returns the
// archive's path and the server's base URL (pages are at base+Path).
func Crawl(tb testing.TB, pages []Page) (path, base string) {
	return CrawlWith(tb, pages, Options{})
}

// CrawlWith is Crawl with options.
func CrawlWith(tb testing.TB, pages []Page, opt Options) (path, base string) {
	tb.Helper()
	wget := NeedWget(tb)
	byPath := map[string]Page{}
	for _, p := range pages {
		byPath[p.Path] = p
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := byPath[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		ct := p.ContentType
		if ct == "" {
			ct = "text/html; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		if p.Location != "" {
			w.Header().Set("Location", p.Location)
		}
		if p.Status != 0 {
			w.WriteHeader(p.Status)
		}
		w.Write(p.Body)
	}))
	defer srv.Close()
	dir := tb.TempDir()
	var urls bytes.Buffer
	for _, p := range pages {
		urls.WriteString(srv.URL + p.Path + "\n")
	}
	list := filepath.Join(dir, "urls.txt")
	if err := os.WriteFile(list, urls.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	args := []string{"--no-config", "--no-verbose", "--tries=1", "--timeout=20",
		"--warc-file=" + filepath.Join(dir, "crawl"), "-O", os.DevNull, "-i", list}
	name := "crawl.warc.gz"
	if opt.Plain {
		args = append(args, "--no-warc-compression")
		name = "crawl.warc"
	}
	args = append(args, opt.Args...)
	cmd := exec.Command(wget, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "no_proxy=*", "http_proxy=", "https_proxy=")
	out, err := cmd.CombinedOutput()
	// wget exits 8 when a page answered an error (a 404 wanted by a test).
	if err != nil && !strings.Contains(err.Error(), "exit status 8") {
		tb.Fatalf("wget: %v\n%s", err, out)
	}
	path = filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("wget wrote no archive: %v\n%s", err, out)
	}
	return path, srv.URL
}
