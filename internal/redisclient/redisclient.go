// Package redisclient opens the go-redis client of a store address, for the
// Redis store (store/redisstore), and maps its
// failures to store.ErrUnavailable.
package redisclient

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// Options configure Dial.
type Options struct {
	Timeout  time.Duration // each dial, read and write
	Retries  int           // retries of a command failing on the network (backoff 8 to 512 ms); negative: none
	PoolSize int           // connections per Redis server (0: go-redis's default)
}

// Dial returns the client of addr: "redis://host:port/db" (or rediss://)
// for one server, with redis.ParseURL's options, or
// "redis-cluster://[user:password@]host1:port,host2:port" for a Redis
// Cluster.
func Dial(addr string, o Options) (redis.UniversalClient, error) {
	retries := o.Retries
	if retries < 0 {
		retries = -1 // go-redis: -1 disables retries
	}
	switch {
	case strings.HasPrefix(addr, "redis-cluster://"):
		u, err := url.Parse(addr)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", addr, err)
		}
		hosts := strings.Split(u.Host, ",")
		if u.Host == "" || slices.Contains(hosts, "") {
			return nil, fmt.Errorf("%q names no cluster nodes", addr)
		}
		co := &redis.ClusterOptions{Addrs: hosts, DialTimeout: o.Timeout, ReadTimeout: o.Timeout,
			WriteTimeout: o.Timeout, MaxRetries: retries, MinRetryBackoff: 8 * time.Millisecond,
			MaxRetryBackoff: 512 * time.Millisecond, PoolSize: o.PoolSize}
		if u.User != nil {
			co.Username = u.User.Username()
			co.Password, _ = u.User.Password()
		}
		return redis.NewClusterClient(co), nil
	case strings.HasPrefix(addr, "redis://"), strings.HasPrefix(addr, "rediss://"):
		ro, err := redis.ParseURL(addr)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", addr, err)
		}
		ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout = o.Timeout, o.Timeout, o.Timeout
		ro.MaxRetries, ro.MinRetryBackoff, ro.MaxRetryBackoff = retries, 8*time.Millisecond, 512*time.Millisecond
		if o.PoolSize > 0 {
			ro.PoolSize = o.PoolSize
		}
		return redis.NewClient(ro), nil
	}
	return nil, fmt.Errorf("store %q: want redis://host:port/db or redis-cluster://host:port,...", addr)
}

// Unavailable wraps a Redis error: the store could not be reached or
// failed, so the request is answered 503.
func Unavailable(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return fmt.Errorf("%w: redis: %w", store.ErrUnavailable, err)
}
