package redisstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// fences maps a master's address to a key of a slot it serves: a write to
// it, then WAIT on the same connection, waits for every earlier write of
// that master to reach its replicas (WAIT covers the replication stream up
// to the connection's last write, which follows every earlier write).
type fences struct {
	mu   sync.Mutex
	keys map[string]string
}

// replicate waits until Options.WaitReplicas replicas of every master hold
// every write made before the call (REDIS.md, "Durability and faults"): a
// write that fewer replicas acknowledge within Timeout answers
// store.ErrUnavailable, also while a master has fewer replicas than that
// (after a failover, until a replica joins it again). Counting only the
// replicas connected would not do: a replica still in its first
// synchronisation can be promoted with nothing. It does nothing when
// WaitReplicas is 0.
func (s *Store) replicate(ctx context.Context) error {
	if s.opt.WaitReplicas <= 0 {
		return nil
	}
	wait := func(ctx context.Context, c *redis.Client, key string) error {
		var w *redis.Cmd
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, key)
			w = p.Do(ctx, "WAIT", s.opt.WaitReplicas, s.opt.Timeout.Milliseconds())
			return nil
		})
		if err != nil {
			return unavailable(err)
		}
		if n, _ := w.Int(); n < s.opt.WaitReplicas {
			return fmt.Errorf("%w: %s: %d of %d replicas acknowledged the write in %v", store.ErrUnavailable,
				c.Options().Addr, n, s.opt.WaitReplicas, s.opt.Timeout)
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
