package redisstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

// quiet drops go-redis's own log lines (a dial failing while a test has
// killed Redis on purpose).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	code := m.Run()
	redistest.StopShared()
	os.Exit(code)
}

var prefixes atomic.Int64

// newPrefix returns a key prefix no other test uses, so that tests share
// one Redis and one cluster.
func newPrefix() string { return fmt.Sprintf("t%d:", prefixes.Add(1)) }

func single(t testing.TB) string { return "redis://" + redistest.Shared(t).Addr() + "/0" }

func cluster(t testing.TB) string {
	return "redis-cluster://" + strings.Join(redistest.SharedCluster(t).Addrs(), ",")
}

// open opens a store on addr under prefix with opt's other fields.
func open(t testing.TB, addr, prefix string, opt Options) *Store {
	t.Helper()
	opt.Prefix = prefix
	if opt.Settings == "" {
		opt.Settings = "test"
	}
	if opt.Capacity == 0 {
		opt.Capacity = 1 << 12
	}
	s, err := Open(context.Background(), addr, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func backends(t *testing.T, fn func(t *testing.T, addr string)) {
	t.Run("redis", func(t *testing.T) { fn(t, single(t)) })
	t.Run("cluster", func(t *testing.T) {
		if testing.Short() {
			t.Skip("cluster under -short")
		}
		fn(t, cluster(t))
	})
}

func TestStore(t *testing.T) {
	backends(t, func(t *testing.T, addr string) {
		storetest.Run(t, func(t *testing.T) store.Store { return open(t, addr, newPrefix(), Options{}) },
			func(t *testing.T, s store.Store) store.Store {
				p := s.(*Store).p
				s.Close()
				return open(t, addr, p, Options{})
			})
	})
}

func TestOtherSettingsRefused(t *testing.T) {
	addr := single(t)
	p := newPrefix()
	open(t, addr, p, Options{Settings: "a"})
	if _, err := Open(context.Background(), addr, Options{Prefix: p, Settings: "b"}); err == nil || !strings.Contains(err.Error(), "settings") {
		t.Fatalf("Open with other settings: %v, want a settings mismatch", err)
	}
	if _, err := Open(context.Background(), addr, Options{Prefix: newPrefix(), Settings: "c", Dedup: rule.Options{Method: rule.MethodSimHash, Verify: rule.VerifyCosine}}); err == nil || !strings.Contains(err.Error(), "verify jaccard") {
		t.Fatalf("Open with method simhash, verify cosine: %v, want an error (no prefix filter without Jaccard)", err)
	}
	// No settings: refused before dialling (the address is not even read).
	if _, err := Open(context.Background(), "redis://127.0.0.1:1/0", Options{Prefix: newPrefix()}); !errors.Is(err, rule.ErrOptions) || !strings.Contains(err.Error(), "Settings") {
		t.Fatalf("Open without settings: %v, want a refusal naming Settings", err)
	}
}

// TestOldFormatRefused: an index written by an older layout (the replica
// layout's format 3, the stateless one before block keys, 4) is refused
// with one line saying how to load it again, and its meta hash is left as
// it was.
func TestOldFormatRefused(t *testing.T) {
	addr := single(t)
	c := redis.NewClient(&redis.Options{Addr: strings.TrimSuffix(strings.TrimPrefix(addr, "redis://"), "/0")})
	defer c.Close()
	ctx := context.Background()
	for _, f := range []string{"neardup-redis 3", "neardup-redis 4"} {
		p := newPrefix()
		if err := c.HSet(ctx, p+"meta", "format", f, "settings", "x").Err(); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ctx, addr, Options{Prefix: p, Settings: "test"})
		if !errors.Is(err, store.ErrStoreFormat) || !strings.Contains(err.Error(), "neardup import --store") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open over format %q: %v; want one line saying to re-import with neardup import --store", f, err)
		}
		if n, err := c.HLen(ctx, p+"meta").Result(); err != nil || n != 2 {
			t.Errorf("format %q: the meta hash has %d fields (%v) after the refusal, want its 2", f, n, err)
		}
	}
}
