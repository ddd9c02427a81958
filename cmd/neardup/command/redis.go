package command

import (
	"context"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redisreplica"
	"github.com/neardup/neardup/store/redisstore"
)

// redisFlags choose and size a shared Redis index (serve, import).
type redisFlags struct {
	direct, replica bool
	layout, prefix  string
	capacity, wait  int
}

func (r *redisFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&r.replica, "redis-replica", false, "keep a replica of the Redis index in this server that follows a change log (the older layout; the default under --method simhash) instead of reading Redis per request (store/redisreplica/REDIS.md)")
	fs.BoolVar(&r.direct, "redis-direct", false, "with --method simhash: match by reading the fingerprint tables in Redis on every request instead of a local replica (store/redisreplica/REDIS.md)")
	fs.StringVar(&r.layout, "redis-layout", "", "with --redis-replica or --redis-direct: table layout of a new shared index (blocks:K:B; default: planned for 1M documents); every server on one index must agree")
	fs.StringVar(&r.prefix, "redis-prefix", redisstore.DefaultPrefix, "prefix of every key of the index, so that several indexes share one Redis")
	fs.IntVar(&r.wait, "redis-wait-replicas", 0, "acknowledge a write only once this many replicas of each master hold it (else 503), so that a failover loses nothing acknowledged (store/redisstore/REDIS.md)")
	fs.IntVar(&r.capacity, "redis-capacity", redisstore.DefaultCapacity, "documents a new Redis index's buckets are sized for (store/redisstore/REDIS.md, \"Sizing\"); an existing index keeps its own")
}

// stateless reports whether the index is redisstore's: the default, for
// every method with band keys (minhash).
func (r *redisFlags) stateless(o rule.Options) bool {
	rl, err := rule.NewRule(o)
	return err == nil && rl.Bands() > 0 && !r.direct && !r.replica
}

// openRedis opens the shared index at addr that the flags choose.
func (r *redisFlags) open(ctx context.Context, addr string, o rule.Options, log *slog.Logger) (store.Store, error) {
	if r.stateless(o) {
		s, err := redisstore.Open(ctx, addr, redisstore.Options{Dedup: o, Settings: server.Settings(o),
			Capacity: r.capacity, Prefix: r.prefix, WaitReplicas: r.wait, Logger: log})
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	s, err := redisreplica.Open(ctx, addr, redisreplica.Options{Dedup: o, Settings: server.Settings,
		Layout: r.layout, Direct: r.direct, Prefix: r.prefix, Logger: log})
	if err != nil {
		return nil, err
	}
	return s, nil
}
