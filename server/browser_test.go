package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/neardup/neardup/rule"
)

// chromium returns Debian's headless browser, skipping the test when it is
// missing outside CI and failing it under CI (.ci/run installs it).
func chromium(t *testing.T) string {
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed; CI needs it for the web page test (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); the web page is not tested")
	return ""
}

// browser starts headless Chromium for the test and returns its context.
func browser(t *testing.T, bin string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Headless,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pageServer starts a server on a loopback port for a browser test, closed
// with the test, and finds Chromium; under the race detector it skips (the
// page is tested without it).
func pageServer(t *testing.T) (s *Server, url, chromiumBin string) {
	return pageServerWith(t, Options{})
}

// pageServerWith is pageServer with the server's options.
func pageServerWith(t *testing.T, opt Options) (s *Server, url, chromiumBin string) {
	t.Helper()
	if raceEnabled {
		t.Skip("race detector: the browser test runs without it")
	}
	bin := chromium(t)
	s = newTestServer(t, nil, opt)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts.URL, bin
}

// TestPageCompare drives the web page in headless Chromium: it types two
// Chinese texts, clicks Compare and checks the distance shown is the API's.
func TestPageCompare(t *testing.T) {
	s, url, bin := pageServer(t)

	a := "天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。"
	b := "天下大势，分久必合，合久必分。周末七国纷争，并入于秦。秦灭之后，楚汉分争，又并入于汉朝。"
	var want compareResponse
	if code := call(t, s.Handler(), http.MethodPost, "/v1/compare", mustJSON(t, map[string]string{"a": a, "b": b}), &want); code != 200 {
		t.Fatalf("API compare: %d", code)
	}

	ctx := browser(t, bin)
	err := chromedp.Do(ctx,
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(chromedp.ID("compare")),
		chromedp.SendKeys(chromedp.ID("text-a"), a),
		chromedp.SendKeys(chromedp.ID("text-b"), b),
		chromedp.Click(chromedp.ID("compare")),
		chromedp.WaitVisible(chromedp.ID("compare-out")),
	)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("distance")))
	if err != nil {
		t.Fatal(err)
	}
	verdict, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("verdict")))
	if err != nil {
		t.Fatal(err)
	}
	typed, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("text-a").value`))
	if err != nil || typed != a {
		t.Fatalf("typed text %q (%v), want %q", typed, err, a)
	}
	diffMarked, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#bits-a .diff").length`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := strconv.Atoi(shown); err != nil || got != want.Distance {
		t.Errorf("page shows distance %q (verdict %q), API says %d", shown, verdict, want.Distance)
	}
	if diffMarked != want.Distance {
		t.Errorf("page marks %d differing bits, want %d", diffMarked, want.Distance)
	}
	png := filepath.Join(t.TempDir(), "compare.png")
	if err := os.WriteFile(png, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("distance %d shown; screenshot %s (%d bytes)", want.Distance, png, len(shot))
}

// page drives the web page through JavaScript: set a field, click a button,
// read an element, wait for a condition.
type page struct {
	t   *testing.T
	ctx context.Context
}

func (p page) eval(js string) {
	p.t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`(() => { `+js+`; return true })()`)); err != nil {
		p.t.Fatalf("%s: %v", js, err)
	}
}

func (p page) set(id, value string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`document.getElementById(%q).value = %s`, id, mustJSON(p.t, value)))
}

func (p page) click(id string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`document.getElementById(%q).click()`, id))
}

func (p page) text(id string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.getElementById(%q).textContent`, id)))
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

func (p page) hidden(id string) bool {
	p.t.Helper()
	h, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](fmt.Sprintf(`document.getElementById(%q).hidden`, id)))
	if err != nil {
		p.t.Fatal(err)
	}
	return h
}

// waitText waits until element id's text contains want.
func (p page) waitText(id, want string) string {
	p.t.Helper()
	var got string
	for range 200 {
		if got = p.text(id); strings.Contains(got, want) {
			return got
		}
		time.Sleep(25 * time.Millisecond)
	}
	p.t.Fatalf("#%s shows %q, want it to contain %q", id, got, want)
	return got
}

// TestPageMethod checks that the page's header names the method the server
// runs, with its settings, under each method, and that the settings are
// shown one to a row.
func TestPageMethod(t *testing.T) {
	for _, tc := range []struct {
		method string
		want   []string
		not    string
	}{
		{rule.MethodMinHash, []string{"MinHash signatures", "bands of", "exact Jaccard similarity", "at 0.8"}, "SimHash"},
		{rule.MethodSimHash, []string{"SimHash fingerprints", fmt.Sprintf("within %d bits", rule.DefaultK), "exact Jaccard similarity"}, "MinHash"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			_, url, bin := pageServerWith(t, Options{Dedup: rule.Options{Method: tc.method}})
			ctx := browser(t, bin)
			if err := chromedp.Do(ctx, chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("compare"))); err != nil {
				t.Fatal(err)
			}
			p := page{t, ctx}
			got := p.waitText("method", tc.want[0])
			for _, w := range tc.want[1:] {
				if !strings.Contains(got, w) {
					t.Errorf("header %q does not say %q", got, w)
				}
			}
			if strings.Contains(got, tc.not) {
				t.Errorf("header %q names %s, which this server does not run", got, tc.not)
			}
			t.Logf("header: %s", got)
			if m := p.text("stat-method"); m != tc.method {
				t.Errorf("settings row method shows %q, want %q", m, tc.method)
			}
		})
	}
}

// TestPageErrorsAndStore drives the page through an error after a result
// (the old result must go, the error must be styled as one) and through the
// stored documents: plain add with meta, show, check, duplicate id, delete,
// and the statistics that follow them.
func TestPageErrorsAndStore(t *testing.T) {
	_, url, bin := pageServer(t)
	ctx := browser(t, bin)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("compare"))); err != nil {
		t.Fatal(err)
	}
	p := page{t, ctx}

	// A result, then an error: the error replaces it.
	p.set("text-a", textA)
	p.set("text-b", textB)
	p.click("compare")
	p.waitText("verdict", "yes")
	if p.hidden("compare-out") || p.text("bits-a") == "" {
		t.Fatal("no comparison shown")
	}
	p.set("text-b", "  ")
	p.click("compare")
	msg := p.waitText("compare-error", "invalid_argument")
	if !p.hidden("compare-out") {
		t.Errorf("error %q shown with the previous result still visible", msg)
	}
	for _, id := range []string{"verdict", "distance", "similarity", "jaccard", "bits-a", "bits-b", "feat-a"} {
		if got := p.text(id); got != "" {
			t.Errorf("after an error #%s still shows %q", id, got)
		}
	}
	color, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("compare-error")).color`))
	if err != nil || color != "rgb(153, 0, 0)" {
		t.Errorf("error colour %q (%v), want the .error style's rgb(153, 0, 0)", color, err)
	}
	// A good comparison again clears the error; a text without features
	// says it matches exact copies only.
	p.set("text-b", "!!! ...")
	p.click("compare")
	p.waitText("compare-note", noteExactOnly)
	if !p.hidden("compare-error") {
		t.Error("the error stays after a successful comparison")
	}

	p.waitText("stat-documents", "0")
	p.set("text-s", textA)
	p.set("doc-id", "fox")
	p.set("meta", `{"title": "the fox"}`)
	p.click("add")
	p.waitText("store-out", "Stored fox")
	p.waitText("stat-documents", "1")
	p.click("get")
	got := p.waitText("store-out", `"title": "the fox"`)
	if !strings.Contains(got, "fingerprint") || !strings.Contains(got, "tokens") {
		t.Errorf("show: %q, want the fingerprint, tokens and meta", got)
	}
	p.set("text-s", textB)
	p.click("check")
	p.waitText("store-out", "Near-duplicate of:\nfox")
	p.set("text-s", textC)
	p.click("add") // the id is taken
	p.waitText("store-error", "already_exists")
	if got := p.text("store-out"); got != "" {
		t.Errorf("after an error the store output still shows %q", got)
	}
	p.click("delete")
	p.waitText("store-out", "Deleted fox")
	if !p.hidden("store-error") {
		t.Error("the error stays after a successful delete")
	}
	p.waitText("stat-documents", "0")
	p.click("get")
	p.waitText("store-error", "not_found")
}
