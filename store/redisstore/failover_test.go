package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/store"
)

// TestFailover kills a master of a cluster with a replica per master (AOF
// fsynced on every write, the documented settings) in the middle of a
// stream of additions through a store that waits for replicas
// (WaitReplicas 1): requests fail with store.ErrUnavailable (503) during
// the election and nothing else, the same store writes again after it
// without a restart, and every addition it acknowledged is in the index
// afterwards, read through a new store.
func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("a failover takes seconds")
	}
	ctx := context.Background()
	rec := extractor(t)
	c := redistest.StartReplicated(t)
	addr := "redis-cluster://" + strings.Join(c.Addrs(), ",")
	p := newPrefix()
	s := open(t, addr, p, Options{WaitReplicas: 1, Timeout: 500 * time.Millisecond, Retries: 1})

	var (
		mu     sync.Mutex
		acked  []string
		failed atomic.Int64 // answered ErrUnavailable
		after  atomic.Int64 // acknowledged after the first failure
		killed atomic.Bool
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := rec(fmt.Sprintf("w%d-%d", w, i), text(uint64(w)<<32|uint64(i), 40))
				_, dup, err := s.AddIfNew(ctx, r)
				switch {
				case err == nil && !dup:
					mu.Lock()
					acked = append(acked, r.ID)
					mu.Unlock()
					if failed.Load() > 0 {
						after.Add(1)
					}
				case err == nil:
					errs <- fmt.Errorf("%s declined: %v", r.ID, dup)
					return
				case errors.Is(err, store.ErrUnavailable) && killed.Load():
					failed.Add(1)
					time.Sleep(20 * time.Millisecond)
				default:
					errs <- fmt.Errorf("%s: %v, want success or ErrUnavailable", r.ID, err)
					return
				}
			}
		}()
	}
	var victim *redistest.Server
	waitFor := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(d); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				var nodes string
				for _, n := range c.Nodes() {
					if n != victim {
						nodes = n.CLI("CLUSTER", "NODES")
						break
					}
				}
				t.Fatalf("%s: not within %v (%d acknowledged, %d unavailable, %d after)\n%s", what, d, len(acked), failed.Load(), after.Load(), nodes)
			}
		}
	}
	waitFor("a first hundred additions", 30*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 100 })
	masters := c.Masters()
	if len(masters) != 3 {
		t.Fatalf("%d masters, want 3", len(masters))
	}
	victim = masters[0]
	killed.Store(true)
	victim.Kill(t)
	waitFor("an addition refused while the master is down", 30*time.Second, func() bool { return failed.Load() > 0 })
	// Its replica takes over; the old master comes back as a replica, so
	// that the new master has one to wait for again.
	waitFor("a new master", 30*time.Second, func() bool { return len(c.Masters()) == 3 })
	victim.Restart(t)
	waitFor("additions after the failover", 60*time.Second, func() bool { return after.Load() >= 100 })
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	check := open(t, addr, p, Options{})
	for _, id := range acked {
		if _, err := check.Get(ctx, id); err != nil {
			t.Errorf("acknowledged %s: %v", id, err)
		}
	}
	t.Logf("%d additions acknowledged (%d after the failover), %d refused with 503 while a master was down",
		len(acked), after.Load(), failed.Load())
}
