package redisreplica

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

// TestMain stops the Redis server and cluster that the tests share
// (startRedis, startCluster).
func TestMain(m *testing.M) {
	code := m.Run()
	redistest.StopShared()
	os.Exit(code)
}

// testBackends are the shared Redis servers the tests run on: one Redis
// and a three-master cluster, each started by the first test that needs it.
var testBackends = []struct {
	name  string
	start func(t *testing.T) string
}{
	{"redis", startRedis},
	{"cluster", startCluster},
}

func startRedis(t *testing.T) string { return "redis://" + redistest.Shared(t).Addr() + "/0" }

func startCluster(t *testing.T) string {
	return "redis-cluster://" + strings.Join(redistest.SharedCluster(t).Addrs(), ",")
}

var prefixes atomic.Int64

// newPrefix returns a key prefix no other store of this process uses, so
// that the stores of one test share a Redis without seeing each other.
func newPrefix() string { return fmt.Sprintf("t%d:", prefixes.Add(1)) }

// testSettings stands for server.Settings: it names every option the tests
// vary, so that stores opened under other options are told apart.
func testSettings(o rule.Options) string {
	return fmt.Sprintf("method=%s profile=%s verify=%s shingle=%d", o.Method, o.Profile, o.Verify, o.Shingle)
}

func openStore(t testing.TB, addr, prefix string, opt Options) *Store {
	t.Helper()
	opt.Prefix = prefix
	if opt.Settings == nil {
		opt.Settings = testSettings
	}
	// The race detector on a loaded 2-core machine makes a round trip take
	// seconds now and then: the defaults (1 s, 10 s for the lock) would
	// report Redis unavailable when it is only slow.
	if opt.Timeout == 0 {
		opt.Timeout = 10 * time.Second
	}
	if opt.LockWait == 0 {
		opt.LockWait = time.Minute
	}
	// The replica's tables are sized for ExpectedDocs (1M by default): under
	// the race detector, making them for every store of the suite takes
	// seconds, inside the lock's hold time.
	if opt.ExpectedDocs == 0 {
		opt.ExpectedDocs = 1 << 12
	}
	s, err := Open(context.Background(), addr, opt)
	if err != nil {
		t.Fatalf("Open(%s): %v", addr, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// testStore runs the Store suite against stores on addr, in replica
// mode and in direct mode. The Set suite, declared with the Set interface in
// package server, runs there (server.TestRedisSet).
func testStore(t *testing.T, addr string) {
	for _, direct := range []bool{false, true} {
		t.Run(map[bool]string{false: "replica", true: "direct"}[direct], func(t *testing.T) {
			testStoreMode(t, addr, direct)
		})
	}
}

func testStoreMode(t *testing.T, addr string, direct bool) {
	prefixOf := map[store.Store]string{}
	open := func(t *testing.T) store.Store {
		p := newPrefix()
		s := openStore(t, addr, p, Options{Direct: direct})
		prefixOf[s] = p
		return s
	}
	reopen := func(t *testing.T, s store.Store) store.Store {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return openStore(t, addr, prefixOf[s], Options{Direct: direct})
	}
	t.Run("Store", func(t *testing.T) { storetest.Run(t, open, reopen) })
	t.Run("OtherSettingsRefused", func(t *testing.T) {
		p := newPrefix()
		openStore(t, addr, p, Options{Direct: direct})
		_, err := Open(context.Background(), addr, Options{Prefix: p, Settings: testSettings, Dedup: rule.Options{Shingle: 3}})
		if !errors.Is(err, store.ErrStoreFormat) {
			t.Errorf("Open with another shingle width: error %v, want ErrStoreFormat", err)
		}
		_, err = Open(context.Background(), addr, Options{Prefix: p, Settings: testSettings, Layout: "blocks:17:19"})
		if !errors.Is(err, store.ErrStoreFormat) {
			t.Errorf("Open with another plan: error %v, want ErrStoreFormat", err)
		}
		_, err = Open(context.Background(), addr, Options{Prefix: newPrefix(), Settings: testSettings, Direct: direct,
			Dedup: rule.Options{Method: rule.MethodMinHash}})
		if direct && !errors.Is(err, rule.ErrOptions) {
			t.Errorf("Open direct with method minhash: error %v, want ErrOptions", err)
		}
		if !direct && err != nil {
			t.Errorf("Open replica with method minhash: %v", err)
		}
	})
	t.Run("OldFormatRefused", func(t *testing.T) {
		// An index of format 2 holds sorted sets where this one writes
		// plain sets: Redis would answer its SADDs with WRONGTYPE.
		p := newPrefix()
		s := openStore(t, addr, p, Options{Direct: direct})
		if err := s.c.HSet(context.Background(), p+"meta", "format", "neardup-redis 2").Err(); err != nil {
			t.Fatal(err)
		}
		s.Close()
		_, err := Open(context.Background(), addr, Options{Prefix: p, Settings: testSettings, Direct: direct})
		if !errors.Is(err, store.ErrStoreFormat) || !strings.Contains(err.Error(), `"neardup-redis 2"`) {
			t.Errorf("Open on a format 2 index: error %v, want ErrStoreFormat naming it", err)
		}
	})
}

func TestStore(t *testing.T) {
	testStore(t, startRedis(t))
}

func TestClusterStore(t *testing.T) {
	testStore(t, startCluster(t))
}

// randomText returns n words drawn from a fixed vocabulary with seed: texts
// of different seeds share few shingles.
func randomText(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 10))
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("w%c%c%c", 'a'+r.IntN(26), 'a'+r.IntN(26), 'a'+r.IntN(26))
	}
	return strings.Join(words, " ")
}

// TestSettingsRequired: Open refuses options without Settings, before it
// dials, rather than record an index whose settings no server could check.
func TestSettingsRequired(t *testing.T) {
	_, err := Open(context.Background(), "redis://127.0.0.1:1/0", Options{})
	if !errors.Is(err, rule.ErrOptions) {
		t.Errorf("Open without Settings: error %v, want ErrOptions", err)
	}
}
