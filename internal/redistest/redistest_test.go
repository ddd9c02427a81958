package redistest

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestStart(t *testing.T) {
	s := Start(t)
	if got := s.CLI("SET", "k", "v"); got != "OK" {
		t.Fatalf("SET = %q, want OK", got)
	}
	s.Kill(t)
	if got := s.CLI("PING"); got == "PONG" {
		t.Fatalf("PING after Kill = %q", got)
	}
	s.Restart(t)
	if got := s.CLI("GET", "k"); got != "" {
		t.Errorf("GET after restart = %q, want nothing (no persistence)", got)
	}
}

func TestStartCluster(t *testing.T) {
	c := StartCluster(t)
	if len(c.Addrs()) != 3 {
		t.Fatalf("%d masters, want 3", len(c.Addrs()))
	}
	for _, s := range c.Nodes() {
		if info := s.CLI("CLUSTER", "INFO"); !strings.Contains(info, "cluster_known_nodes:3") {
			t.Errorf("%s: CLUSTER INFO lacks cluster_known_nodes:3:\n%s", s.Addr(), info)
		}
	}
}

func TestShared(t *testing.T) {
	defer StopShared()
	s := Shared(t)
	if again := Shared(t); again != s {
		t.Fatalf("second Shared = %s, want the first, %s", again.Addr(), s.Addr())
	}
	if got := s.CLI("PING"); got != "PONG" {
		t.Fatalf("PING = %q", got)
	}
	c := SharedCluster(t)
	if again := SharedCluster(t); again != c {
		t.Fatal("second SharedCluster is another cluster")
	}
	if info := c.Nodes()[0].CLI("CLUSTER", "INFO"); !clusterOK(info) {
		t.Fatalf("shared cluster not ok:\n%s", info)
	}
	StopShared()
	if got := s.CLI("PING"); got == "PONG" {
		t.Fatal("shared server answers PING after StopShared")
	}
}

// TestPortTaken: a redis-server whose port another process holds fails at
// once with errBind (which Start and the clusters retry on another port),
// not after startTimeout of PINGs.
func TestPortTaken(t *testing.T) {
	need(t, "redis-server", "redis-cli")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // hang up at once: redis-cli's PING then gets no answer, and returns
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	s := &Server{port: ln.Addr().(*net.TCPAddr).Port, dir: t.TempDir()}
	t0 := time.Now()
	err = s.tryStart()
	if !errors.Is(err, errBind) {
		t.Fatalf("start on a taken port: %v, want errBind", err)
	}
	if d := time.Since(t0); d > startTimeout/2 {
		t.Fatalf("start on a taken port took %v to fail", d)
	}
}
