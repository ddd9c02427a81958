package redistest

import (
	"strings"
	"testing"
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
