package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
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

// TestPageCompare drives the web page in headless Chromium: it types two
// Chinese texts, clicks Compare and checks the distance shown is the API's.
func TestPageCompare(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the browser test runs without it")
	}
	bin := chromium(t)
	s := newTestServer(t, nil, Options{})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	a := "天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。"
	b := "天下大势，分久必合，合久必分。周末七国纷争，并入于秦。秦灭之后，楚汉分争，又并入于汉朝。"
	var want compareResponse
	if code := call(t, s.Handler(), http.MethodPost, "/v1/compare", mustJSON(t, map[string]string{"a": a, "b": b}), &want); code != 200 {
		t.Fatalf("API compare: %d", code)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Headless,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	err := chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/"),
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
