package redisstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// fences maps a master's address to a key of a slot it serves: a write to
// it, then WAIT on the same connection, waits for every earlier write of
// that master to reach its replicas (WAIT covers the replication stream up
// to the connection's last write, which follows every earlier write).
type fences struct {
	mu    sync.Mutex
	keys  map[string]string
	roles map[string]roleCount // by master address: replicas to wait for
}

// replicate waits until every write made before the call is held by the
// replicas of every master: up to Options.WaitReplicas of them, and no more
// than are connected (REDIS.md, "Durability and faults"). A write that a
// master with no replica acknowledged is on its disk (AOF), and no
// failover can lose it: there is nothing to fail over to. It does nothing
// when WaitReplicas is 0.
func (s *Store) replicate(ctx context.Context) error {
	if s.opt.WaitReplicas <= 0 {
		return nil
	}
	wait := func(ctx context.Context, c *redis.Client, key string) error {
		want, err := s.replicas(ctx, c)
		if err != nil {
			return err
		}
		var w *redis.Cmd
		_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, key)
			if want > 0 {
				w = p.Do(ctx, "WAIT", want, s.opt.Timeout.Milliseconds())
			}
			return nil
		})
		if err != nil {
			return unavailable(err)
		}
		if w == nil {
			return nil
		}
		if n, _ := w.Int(); n < want {
			s.fence.mu.Lock()
			delete(s.fence.roles, c.Options().Addr) // count them again next time
			s.fence.mu.Unlock()
			return fmt.Errorf("%w: %s: %d of %d replicas acknowledged the write in %v", store.ErrUnavailable,
				c.Options().Addr, n, want, s.opt.Timeout)
		}
		return nil
	}
	cc, ok := s.c.(*redis.ClusterClient)
	if !ok {
		return wait(ctx, s.c.(*redis.Client), s.p+"fence")
	}
	return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		key, err := s.fenceKey(ctx, cc, c.Options().Addr)
		if err != nil {
			return err
		}
		return wait(ctx, c, key)
	})
}

// replicas returns how many replicas to wait for at the master of c: its
// connected replicas (ROLE), at most WaitReplicas, counted at most once a
// second.
func (s *Store) replicas(ctx context.Context, c *redis.Client) (int, error) {
	addr := c.Options().Addr
	s.fence.mu.Lock()
	r, ok := s.fence.roles[addr]
	s.fence.mu.Unlock()
	if ok && time.Since(r.at) < time.Second {
		return r.n, nil
	}
	role, err := c.Do(ctx, "ROLE").Slice()
	if err != nil {
		return 0, unavailable(err)
	}
	n := 0
	if len(role) >= 3 {
		if reps, ok := role[2].([]any); ok {
			n = len(reps)
		}
	}
	n = min(n, s.opt.WaitReplicas)
	s.fence.mu.Lock()
	if s.fence.roles == nil {
		s.fence.roles = map[string]roleCount{}
	}
	s.fence.roles[addr] = roleCount{n: n, at: time.Now()}
	s.fence.mu.Unlock()
	return n, nil
}

type roleCount struct {
	n  int
	at time.Time
}

// fenceKey returns a key that the master at addr serves.
func (s *Store) fenceKey(ctx context.Context, cc *redis.ClusterClient, addr string) (string, error) {
	s.fence.mu.Lock()
	defer s.fence.mu.Unlock()
	if k, ok := s.fence.keys[addr]; ok {
		if c, err := cc.MasterForKey(ctx, k); err == nil && c.Options().Addr == addr {
			return k, nil
		}
	}
	for i := range 1 << 16 {
		k := fmt.Sprintf("%sfence{%d}", s.p, i)
		c, err := cc.MasterForKey(ctx, k)
		if err != nil {
			return "", unavailable(err)
		}
		if c.Options().Addr == addr {
			if s.fence.keys == nil {
				s.fence.keys = map[string]string{}
			}
			s.fence.keys[addr] = k
			return k, nil
		}
	}
	return "", fmt.Errorf("%w: no key served by master %s", store.ErrUnavailable, addr)
}
