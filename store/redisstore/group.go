package redisstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// group sends the commands of concurrent requests to Redis together. A
// request queues its commands into the pipeline being filled and waits;
// the pipeline is sent at once when fewer than maxInFlight are in flight,
// else as soon as one returns. Under load every request's round trip then
// shares the reads, writes and wake-ups of one pipeline with the others',
// on Redis's side and on this one's; a lone request goes out at once.
// Commands keep their own results and errors: read them from the commands
// (errOf), not from the pipeline.
type group struct {
	c       redis.UniversalClient
	timeout time.Duration

	mu       sync.Mutex
	cur      *flight // the pipeline being filled; nil when none
	inFlight int
}

// maxInFlight bounds the pipelines in flight at once (to each master, on a
// cluster, where a pipeline goes to every master it names).
const maxInFlight = 4

type flight struct {
	pipe redis.Pipeliner
	done chan struct{}
}

// do queues commands with queue and returns once they were answered (or
// ctx ended: then they may still run).
func (g *group) do(ctx context.Context, queue func(p redis.Pipeliner)) error {
	g.mu.Lock()
	if g.cur == nil {
		g.cur = &flight{pipe: g.c.Pipeline(), done: make(chan struct{})}
	}
	f := g.cur
	queue(f.pipe)
	if g.inFlight < maxInFlight {
		g.cur = nil
		g.inFlight++
		g.mu.Unlock()
		go g.send(f)
	} else {
		g.mu.Unlock()
	}
	select {
	case <-f.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send sends f, then the pipeline filled meanwhile, if any.
func (g *group) send(f *flight) {
	for f != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 4*g.timeout)
		_, _ = f.pipe.Exec(ctx) // each command holds its own result
		cancel()
		close(f.done)
		g.mu.Lock()
		f = g.cur
		if f != nil {
			g.cur = nil
		} else {
			g.inFlight--
		}
		g.mu.Unlock()
	}
}

// errOf returns the first error of cmds other than redis.Nil (a missing
// key or field is an answer), as store.ErrUnavailable.
func errOf[C redis.Cmder](cmds ...C) error {
	for _, c := range cmds {
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return unavailable(err)
		}
	}
	return nil
}

// call is one script call of scripts.
type call struct {
	sc   *redis.Script
	keys []string
	args []any
	cmd  *redis.Cmd
}

// scripts runs calls in one round trip by their SHA (Redis keeps scripts
// compiled), and those Redis no longer knows (NOSCRIPT: it restarted, or a
// master is new) again in full. with, when not nil, queues more commands
// into the first round trip. It returns the first error of the calls.
func (s *Store) scripts(ctx context.Context, calls []call, with func(redis.Pipeliner)) error {
	run := func(full bool) error {
		return s.g.do(ctx, func(p redis.Pipeliner) {
			if !full && with != nil {
				with(p)
			}
			for i := range calls {
				c := &calls[i]
				switch {
				case !full:
					c.cmd = c.sc.EvalSha(ctx, p, c.keys, c.args...)
				case redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT"):
					c.cmd = c.sc.Eval(ctx, p, c.keys, c.args...)
				}
			}
		})
	}
	if err := run(false); err != nil {
		return unavailable(err)
	}
	for i := range calls {
		if redis.HasErrorPrefix(calls[i].cmd.Err(), "NOSCRIPT") {
			if err := run(true); err != nil {
				return unavailable(err)
			}
			break
		}
	}
	for i := range calls {
		if err := errOf(calls[i].cmd); err != nil {
			return err
		}
	}
	return nil
}
