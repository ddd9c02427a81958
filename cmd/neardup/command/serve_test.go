package command

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/store"
)

// serveChildEnv makes the test binary run "neardup serve" with the arguments
// in it (tab-separated) instead of the tests: the crash test kills it.
const serveChildEnv = "NEARDUP_TEST_SERVE_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(serveChildEnv); args != "" {
		os.Exit(Main(strings.Split(args, "\t"), os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

type serveChild struct {
	cmd  *exec.Cmd
	base string
	done chan error
}

// startServe runs "neardup serve --addr 127.0.0.1:0 --data dir" in a child
// process and waits until it is ready; with --store in extra, dir is not
// passed (serve refuses --data beside --store).
func startServe(t *testing.T, dir string, extra ...string) *serveChild {
	t.Helper()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}
	if !slices.Contains(extra, "--store") {
		args = append(args, "--data", dir)
	}
	args = append(args, extra...)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveChildEnv+"="+strings.Join(args, "\t"))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &serveChild{cmd: cmd, done: make(chan error, 1)}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.done
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	go func() {
		io.Copy(io.Discard, out)
		c.done <- cmd.Wait()
	}()
	if err != nil {
		t.Fatalf("reading the child's address: %v", err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("child's first line %q, want \"listening on ...\"", line)
	}
	c.base = addr
	for i := 0; ; i++ {
		resp, err := http.Get(c.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c
			}
		}
		if i == 6000 { // a minute: the race detector on a loaded machine is slow
			t.Fatalf("child not ready: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for range 60 {
		fmt.Fprintf(&b, "w%x ", r.IntN(1<<20))
	}
	return b.String()
}

// TestServeCrash posts adds from several goroutines, kills the server with
// SIGKILL in mid-stream, restarts it on the same data directory and checks
// that every acknowledged document is there; then stops it with SIGTERM.
// It runs on both embedded engines.
func TestServeCrash(t *testing.T) {
	for _, engine := range []string{store.EngineBolt, store.EnginePebble} {
		t.Run(engine, func(t *testing.T) { testServeCrash(t, "--engine", engine) })
	}
}

func testServeCrash(t *testing.T, args ...string) {
	dir := t.TempDir()
	c := startServe(t, dir, args...)

	var mu sync.Mutex
	var acked []string
	var n atomic.Int64
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			client := &http.Client{Timeout: 10 * time.Second}
			for i := 0; ; i++ {
				id := fmt.Sprintf("g%d-%d", g, i)
				body := fmt.Sprintf(`{"id":%q,"text":%q,"meta":{"i":%d}}`, id, randomText(r), i)
				resp, err := client.Post(c.base+"/v1/documents", "application/json", strings.NewReader(body))
				if err != nil {
					select {
					case <-killed:
						return // the server is gone: expected
					default:
						t.Errorf("post %s before the kill: %v", id, err)
						return
					}
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusCreated {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
					if n.Add(1) == 300 {
						// Closed first: a post that the kill cuts off must
						// find it closed, not race the signal.
						close(killed)
						c.cmd.Process.Signal(syscall.SIGKILL)
					}
				} else {
					t.Errorf("post %s: status %d", id, resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-killed:
	default:
		t.Fatal("the writers stopped before the kill")
	}
	<-c.done
	c.done <- nil // for the cleanup

	c2 := startServe(t, dir, args...)
	for _, id := range acked {
		resp, err := http.Get(c2.base + "/v1/documents/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			ID   string         `json:"id"`
			Meta map[string]int `json:"meta"`
		}
		json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || got.ID != id {
			t.Errorf("GET %s after kill -9 and restart: status %d, id %q", id, resp.StatusCode, got.ID)
		}
	}
	t.Logf("%d acknowledged documents all present after kill -9", len(acked))

	// A graceful stop: SIGTERM ends the process with status 0.
	c2.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c2.done:
		if err != nil {
			t.Errorf("after SIGTERM: %v, want exit status 0", err)
		}
		c2.done <- nil
	case <-time.After(30 * time.Second):
		t.Fatal("no exit 30 s after SIGTERM")
	}
}

// TestServeEngine checks that a data directory is opened only with the
// engine that made it, and that NEARDUP_ENGINE is read and checked.
func TestServeEngine(t *testing.T) {
	dir := t.TempDir()
	s, err := store.OpenBolt(dir, store.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	code, _, errs := run(t, "", "serve", "--addr", "127.0.0.1:0", "--data", dir, "--engine", "pebble")
	if code != 1 || !strings.Contains(errs, "holds a bbolt store, not pebble") {
		t.Errorf("--engine pebble on a bbolt directory: exit %d, stderr %q; want 1 naming bbolt", code, errs)
	}
	// Without --engine a directory keeps its engine; a new one gets the default.
	for _, tc := range []struct{ dir, want string }{
		{dir, store.EngineBolt},
		{filepath.Join(t.TempDir(), "new"), store.DefaultEngine},
	} {
		if got, err := dataEngine("", tc.dir); got != tc.want || err != nil {
			t.Errorf("dataEngine(\"\", %s) = %q, %v; want %q", tc.dir, got, err, tc.want)
		}
	}
	pdir := filepath.Join(t.TempDir(), "p")
	p, err := store.OpenPebble(pdir, store.PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if got, err := dataEngine("", pdir); got != store.EnginePebble || err != nil {
		t.Errorf("dataEngine on a pebble directory = %q, %v; want pebble", got, err)
	}
	t.Setenv("NEARDUP_ENGINE", "leveldb")
	code, _, errs = run(t, "", "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir())
	if code != 2 || !strings.Contains(errs, `--engine "leveldb"`) {
		t.Errorf("NEARDUP_ENGINE=leveldb: exit %d, stderr %q; want usage error", code, errs)
	}
}

func TestServeEnvAndUsage(t *testing.T) {
	t.Setenv("NEARDUP_K", "not-a-number")
	code, _, errs := run(t, "", "serve", "--data", t.TempDir())
	if code != 2 || !strings.Contains(errs, "NEARDUP_K") {
		t.Errorf("bad NEARDUP_K: exit %d, stderr %q; want 2 naming the variable", code, errs)
	}
	t.Setenv("NEARDUP_K", "")
	code, _, errs = run(t, "", "serve", "--data", t.TempDir(), "--k", "40")
	if code != 2 || !strings.Contains(errs, "k 40") {
		t.Errorf("--k 40: exit %d, stderr %q; want usage error", code, errs)
	}
}

// TestServeModeFlags checks that a flag the chosen server does not read is
// refused, naming the flag and what the server does instead, before anything
// is opened: nothing listens, no directory is made.
func TestServeModeFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the message; "" when the flags are accepted up to the store
	}{
		{[]string{"--k", "10"}, "--k does nothing here: it sets SimHash candidate distances"},
		{[]string{"--short-tokens", "10"}, "--short-tokens does nothing here"},
		{[]string{"--redis-prefix", "x:"}, "--redis-prefix does nothing here: it configures a shared Redis store"},
		{[]string{"--store", "redis://127.0.0.1:1/0", "--engine", "bbolt"}, "--engine does nothing here: it configures the embedded store in --data"},
		{[]string{"--store", "redis://127.0.0.1:1/0", "--data", "elsewhere"}, "--data does nothing here"},
		{[]string{"--store", "redis://127.0.0.1:1/0", "--k", "3"}, "--k does nothing here"},
		{[]string{"--store", "redis://127.0.0.1:1/0", "--redis-replica"}, "--redis-replica was removed with the replica layout (issue 34): every server now reads the one stateless Redis index"},
		{[]string{"--store", "redis://127.0.0.1:1/0", "--redis-direct"}, "--redis-direct was removed"},
		{[]string{"--store", "redis://127.0.0.1:1/0", "--redis-layout", "seeds-4x16"}, "--redis-layout was removed with the replica layout (issue 34): fingerprint search over Redis now uses seed 004's"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir}, tc.args...)
		if slices.Contains(tc.args, "--store") {
			args = append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)
		}
		code, _, errs := run(t, "", args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: refused, but --data %s was made (%v)", tc.args, dir, err)
		}
	}
	// Under --method simhash the distances are read: the flags get as far
	// as opening the store (here one that cannot be reached).
	code, _, errs := run(t, "", "serve", "--addr", "127.0.0.1:0", "--store", "redis://127.0.0.1:1/0", "--method", "simhash", "--k", "10")
	if strings.Contains(errs, "does nothing here") || code == 0 {
		t.Errorf("--method simhash --k 10: exit %d, stderr %q; want the store's error, not a refusal of --k", code, errs)
	}
}

// TestServeRedis runs two 'neardup serve --store redis://...' processes on
// one Redis: a document stored through one is read and matched through the
// other.
func TestServeRedis(t *testing.T) {
	addr := "redis://" + redistest.Start(t).Addr() + "/0"
	a := startServe(t, t.TempDir(), "--store", addr)
	b := startServe(t, t.TempDir(), "--store", addr)
	text := randomText(rand.New(rand.NewPCG(7, 7)))
	post := func(c *serveChild, id, text string) int {
		body, _ := json.Marshal(map[string]string{"id": id, "text": text, "mode": "add_if_new"})
		resp, err := http.Post(c.base+"/v1/documents", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(a, "x", text); code != http.StatusCreated {
		t.Fatalf("add x through server a: %d, want 201", code)
	}
	resp, err := http.Get(b.base + "/v1/documents/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET x through server b: %d, want 200", resp.StatusCode)
	}
	if code := post(b, "y", text+" more"); code != http.StatusOK {
		t.Errorf("add_if_new of a near copy through server b: %d, want 200 (declined)", code)
	}
	code, _, errs := run(t, "", "serve", "--store", "memcached://x")
	if code != 2 || !strings.Contains(errs, "--store") {
		t.Errorf("--store memcached://x: exit %d, stderr %q; want usage error", code, errs)
	}
}
