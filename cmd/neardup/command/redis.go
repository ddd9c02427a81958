package command

import (
	"context"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redisstore"
)

// redisFlags choose and size a shared Redis index (serve, import).
type redisFlags struct {
	prefix         string
	capacity, wait int
}

func (r *redisFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&r.prefix, "redis-prefix", redisstore.DefaultPrefix, "prefix of every key of the index, so that several indexes share one Redis")
	fs.IntVar(&r.wait, "redis-wait-replicas", 0, "acknowledge a write only once this many replicas of each master hold it (else 503), so that a failover loses nothing acknowledged (store/redisstore/REDIS.md)")
	fs.IntVar(&r.capacity, "redis-capacity", redisstore.DefaultCapacity, "documents a new Redis index's buckets are sized for (store/redisstore/REDIS.md, \"Sizing\"); an existing index keeps its own")
	registerRemovedRedisFlags(fs)
}

// removedRedisFlags are the flags of the replica layout (store/redisreplica,
// removed in issue 34), kept hidden so that a command line that still gives
// one gets a line saying what replaced it instead of "unknown flag".
var removedRedisFlags = map[string]string{
	"redis-replica": "every server now reads the one stateless Redis index, which serves both methods and fingerprint search: drop the flag",
	"redis-direct":  "every server now reads the one stateless Redis index, which serves both methods and fingerprint search: drop the flag",
	"redis-layout":  "fingerprint search over Redis now uses seed 004's four 16-bit block keys, with no layout to choose: drop the flag",
}

func registerRemovedRedisFlags(fs *pflag.FlagSet) {
	fs.Bool("redis-replica", false, "removed")
	fs.Bool("redis-direct", false, "removed")
	fs.String("redis-layout", "", "removed")
	for name := range removedRedisFlags {
		_ = fs.MarkHidden(name)
	}
}

// checkRemovedRedisFlags refuses a flag of the removed replica layout with
// what replaced it.
func checkRemovedRedisFlags(fs *pflag.FlagSet) error {
	for _, name := range []string{"redis-replica", "redis-direct", "redis-layout"} {
		if fl := fs.Lookup(name); fl != nil && fl.Changed {
			return usagef("--%s was removed with the replica layout (issue 34): %s", name, removedRedisFlags[name])
		}
	}
	return nil
}

// open opens the shared index at addr.
func (r *redisFlags) open(ctx context.Context, addr string, o rule.Options, log *slog.Logger) (store.Store, error) {
	s, err := redisstore.Open(ctx, addr, redisstore.Options{Dedup: o, Settings: server.Settings(o),
		Capacity: r.capacity, Prefix: r.prefix, WaitReplicas: r.wait, Logger: log})
	if err != nil {
		return nil, err
	}
	return s, nil
}
