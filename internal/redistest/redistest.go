// Package redistest starts redis-server processes for tests: a single server
// or a three-master Redis Cluster, each on free loopback ports, with no
// persistence, in the test's temporary directory, stopped in t.Cleanup.
//
//	srv := redistest.Start(t)          // skips without redis-server unless CI is set
//	opt := &redis.Options{Addr: srv.Addr()}
//	srv.Kill(t); srv.Restart(t)        // fault tests: same port, empty data
//
//	c := redistest.StartCluster(t)     // c.Addrs(): the three masters
//
// Tests that only store under key prefixes of their own can share one server
// and one cluster per test binary, started on first use, instead of paying a
// start (a second or more for a cluster) each:
//
//	srv := redistest.Shared(t)         // never Kill, Restart or FLUSHALL it
//	c := redistest.SharedCluster(t)
//	func TestMain(m *testing.M) { code := m.Run(); redistest.StopShared(); os.Exit(code) }
//
// Without redis-server on PATH the tests skip with a message, unless the
// environment variable CI is set: then they fail, so CI never passes by
// skipping.
package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startTimeout bounds the wait for a server to answer PING and for a cluster
// to reach cluster_state:ok.
const startTimeout = 20 * time.Second

// need skips t (or fails it under CI) when the programs are absent.
func need(t testing.TB, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found and CI is set: install redis-server (it brings redis-cli)", p)
			}
			t.Skipf("%s not found: install redis-server to run the Redis tests (CI fails instead of skipping)", p)
		}
	}
}

// freePort returns a loopback port that was free a moment ago: redis-server
// does not accept port 0.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// clusterBus is the offset of a cluster node's bus port from its port
// (Redis's default): a cluster node listens on both.
const clusterBus = 10000

// freeClusterPort is freePort for a cluster node: its bus port is free too.
func freeClusterPort(t testing.TB) int {
	t.Helper()
	for {
		p := freePort(t)
		if p+clusterBus > 65535 {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+clusterBus))
		if err != nil {
			continue
		}
		ln.Close()
		return p
	}
}

// startAttempts is how many ports a server is tried on: a port free when
// picked can be taken by another process before redis-server binds it.
const startAttempts = 5

// errBind is a start that failed because the port was taken.
var errBind = errors.New("port taken")

// Server is one redis-server process.
type Server struct {
	port  int
	dir   string
	extra []string
	cmd   *exec.Cmd
	log   *bytes.Buffer
}

// Start starts a redis-server on a free loopback port and stops it when the
// test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	need(t, "redis-server", "redis-cli")
	s := startNew(t, t.TempDir())
	t.Cleanup(s.stop)
	return s
}

// startNew starts a server in dir on a free port, and fails t if it
// cannot.
func startNew(t testing.TB, dir string) *Server {
	t.Helper()
	s, err := startOn(func() int { return freePort(t) }, dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startOn starts a server in dir with the extra arguments on a port from
// pick, and on another one if that port is taken before redis-server binds
// it (startAttempts in all).
func startOn(pick func() int, dir string, extra ...string) (*Server, error) {
	var err error
	for range startAttempts {
		s := &Server{port: pick(), dir: dir, extra: extra}
		if err = s.tryStart(); err == nil {
			return s, nil
		} else if !errors.Is(err, errBind) {
			break
		}
	}
	return nil, err
}

// shared holds the servers of Shared and SharedCluster, which outlive the
// tests that start them.
var shared struct {
	mu      sync.Mutex
	server  *Server  // guarded by mu
	cluster *Cluster // guarded by mu
	dirs    []string // their data directories, removed by StopShared
}

// Shared returns a redis-server shared by the whole test binary, starting it
// on the first call (failing t if it cannot). Tests that use it must keep to
// key prefixes of their own and must not kill, restart or flush it; TestMain
// stops it with StopShared after m.Run.
func Shared(t testing.TB) *Server {
	t.Helper()
	need(t, "redis-server", "redis-cli")
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.server == nil {
		shared.server = startNew(t, sharedDir(t))
	}
	return shared.server
}

// SharedCluster is Shared for a three-master cluster.
func SharedCluster(t testing.TB) *Cluster {
	t.Helper()
	need(t, "redis-server", "redis-cli")
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cluster == nil {
		c, err := startCluster(t, sharedDir)
		if err != nil {
			for _, s := range c.nodes {
				s.stop()
			}
			t.Fatal(err)
		}
		shared.cluster = c
	}
	return shared.cluster
}

// sharedDir makes a data directory that outlives t.
func sharedDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "redistest")
	if err != nil {
		t.Fatal(err)
	}
	shared.dirs = append(shared.dirs, d)
	return d
}

// StopShared stops the servers Shared and SharedCluster started and removes
// their data directories.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.server != nil {
		shared.server.stop()
		shared.server = nil
	}
	if shared.cluster != nil {
		for _, s := range shared.cluster.nodes {
			s.stop()
		}
		shared.cluster = nil
	}
	for _, d := range shared.dirs {
		_ = os.RemoveAll(d)
	}
	shared.dirs = nil
}

// Addr returns host:port.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

func (s *Server) start(t testing.TB) {
	t.Helper()
	if err := s.tryStart(); err != nil {
		t.Fatal(err)
	}
}

// tryStart starts the process and waits for it to answer PING.
func (s *Server) tryStart() error {
	args := []string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--protected-mode", "no"}
	args = append(args, s.extra...)
	s.log = &bytes.Buffer{}
	s.cmd = exec.Command("redis-server", args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return fmt.Errorf("redis-server: %v", err)
	}
	cmd := s.cmd
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // reap it; stop kills it
	gone := func() bool {
		select {
		case <-exited:
			return true
		default:
			return false
		}
	}
	if err := waitFor(func() bool { return gone() || s.cli("PING") == "PONG" }); err != nil || gone() {
		if gone() {
			s.cmd = nil // nothing to kill, and the port may be another process's
		} else {
			s.stop()
		}
		<-exited // its output is all in s.log
		if err == nil {
			err = errors.New("exited")
		}
		if strings.Contains(s.log.String(), "Address already in use") {
			err = fmt.Errorf("%w: %w", errBind, err)
		}
		return fmt.Errorf("redis-server on port %d did not answer PING: %w\n%s", s.port, err, s.log)
	}
	return nil
}

// cli runs redis-cli against the server and returns its trimmed output.
func (s *Server) cli(args ...string) string {
	out, _ := exec.Command("redis-cli", append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(s.port)}, args...)...).Output()
	return strings.TrimSpace(string(out))
}

// CLI runs one redis-cli command against the server and returns its output.
func (s *Server) CLI(args ...string) string { return s.cli(args...) }

func (s *Server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		// Wait until the port is closed, so that a restart can bind it.
		_ = waitFor(func() bool {
			c, err := net.DialTimeout("tcp", s.Addr(), 100*time.Millisecond)
			if err != nil {
				return true
			}
			c.Close()
			return false
		})
	}
	s.cmd = nil
}

// Kill kills the server (SIGKILL) and waits until its port is closed.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.stop()
}

// Restart starts the server again on the same port (with no data: the tests
// run without persistence).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.start(t)
}

// waitFor polls ok every 20 ms until it holds or startTimeout passes.
func waitFor(ok func() bool) error {
	deadline := time.Now().Add(startTimeout)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %v", startTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Cluster is a Redis Cluster: three masters, with or without a replica
// each.
type Cluster struct {
	nodes []*Server
}

// StartCluster starts three cluster-enabled servers, joins them with
// redis-cli --cluster create and waits for cluster_state:ok.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	need(t, "redis-server", "redis-cli")
	c, err := startCluster(t, func(t testing.TB) string { return t.TempDir() })
	for _, s := range c.nodes {
		t.Cleanup(s.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// StartReplicated starts a Redis Cluster of three masters with a replica
// each, persisting every write before it answers (appendonly yes,
// appendfsync always: the settings under which nothing acknowledged is
// lost), with a node timeout of 1 s so that a killed master's replica takes
// over within seconds, and returns once every replica is in sync. Addrs
// lists all six nodes; Masters the current masters.
func StartReplicated(t testing.TB) *Cluster {
	t.Helper()
	need(t, "redis-server", "redis-cli")
	c, err := startClusterOf(t, func(t testing.TB) string { return t.TempDir() }, 6, 1, "1000",
		"--appendonly", "yes", "--appendfsync", "always", "--cluster-replica-validity-factor", "0")
	for _, s := range c.nodes {
		t.Cleanup(s.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Every replica has finished its first synchronisation: before that
	// it can be promoted with nothing.
	for _, s := range c.nodes {
		if err := waitFor(func() bool {
			info := s.cli("INFO", "replication")
			return strings.Contains(info, "role:master") || strings.Contains(info, "master_link_status:up")
		}); err != nil {
			t.Fatalf("replica %s not in sync: %v\n%s", s.Addr(), err, s.cli("INFO", "replication"))
		}
	}
	return c
}

// Masters returns the nodes that are masters now (and not failed), as
// the first live node's CLUSTER NODES reports them.
func (c *Cluster) Masters() []*Server {
	for _, s := range c.nodes {
		if s.cmd == nil {
			continue
		}
		var out []*Server
		for _, line := range strings.Split(s.cli("CLUSTER", "NODES"), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
				continue
			}
			for _, n := range c.nodes {
				if strings.HasPrefix(f[1], n.Addr()+"@") {
					out = append(out, n)
				}
			}
		}
		return out
	}
	return nil
}

// startCluster starts the three servers in directories from dir and forms
// the cluster. The servers it started are in the Cluster it returns, also
// with an error, so that the caller stops them.
func startCluster(t testing.TB, dir func(testing.TB) string) (*Cluster, error) {
	return startClusterOf(t, dir, 3, 0, "5000")
}

// startClusterOf starts n servers (with extra arguments) and forms a
// cluster with the given replicas per master.
func startClusterOf(t testing.TB, dir func(testing.TB) string, n, replicas int, nodeTimeout string, extra ...string) (*Cluster, error) {
	t.Helper()
	c := &Cluster{}
	for range n {
		d := dir(t)
		s, err := startOn(func() int { return freeClusterPort(t) }, d, append([]string{"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(d, "nodes.conf"), "--cluster-node-timeout", nodeTimeout}, extra...)...)
		if err != nil {
			return c, err
		}
		c.nodes = append(c.nodes, s)
	}
	args := []string{"--cluster", "create"}
	args = append(args, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		return c, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, s := range c.nodes {
		if err := waitFor(func() bool { return clusterOK(s.cli("CLUSTER", "INFO")) }); err != nil {
			return c, fmt.Errorf("cluster node %s not ok: %v\n%s", s.Addr(), err, s.cli("CLUSTER", "INFO"))
		}
	}
	return c, nil
}

func clusterOK(info string) bool {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "cluster_state:ok" {
			return true
		}
	}
	return false
}

// Addrs returns the masters' host:port.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		out[i] = s.Addr()
	}
	return out
}

// Nodes returns the cluster's servers.
func (c *Cluster) Nodes() []*Server { return c.nodes }
