package server

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/simhash"
)

// The Set side of RedisStore: matching reads Redis, the source of truth, on
// every call, and decides with the Rule as dedup.Kept does.

// lookup returns the ids of the index entries for f: those of the table keys
// of f's fingerprint within k bits (with their fingerprints), and those of
// its exact key. One pipelined round trip.
func (s *RedisStore) lookup(ctx context.Context, fp, exact uint64, k int, withFP, withExact bool) (map[string]uint64, []string, error) {
	pipe := s.c.Pipeline()
	var tabs []*redis.StringSliceCmd
	if withFP {
		tabs = make([]*redis.StringSliceCmd, len(s.masks))
		for t := range s.masks {
			tabs[t] = pipe.ZRange(ctx, s.tableKey(t, fp), 0, -1)
		}
	}
	var ex *redis.StringSliceCmd
	if withExact {
		ex = pipe.ZRange(ctx, s.exactKey(exact), 0, -1)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, unavailable(err)
	}
	near := map[string]uint64{}
	for _, c := range tabs {
		for _, m := range c.Val() {
			if len(m) < 8 {
				continue
			}
			mfp := binary.BigEndian.Uint64([]byte(m[:8]))
			if simhash.Distance(mfp, fp) <= k {
				near[m[8:]] = mfp
			}
		}
	}
	var exacts []string
	if ex != nil {
		exacts = ex.Val()
	}
	return near, exacts, nil
}

// candidates returns the stored documents that may duplicate f, in sequence
// order: the index entries at the rule's QueryK and the exact key (the
// candidates of dedup.Kept), read from their document hashes in a second
// round trip. Entries whose document is gone or was stored again with
// another fingerprint are dropped.
func (s *RedisStore) candidates(ctx context.Context, f *dedup.Features) ([]Record, error) {
	noFP := f.FP == 0 && f.Tokens == 0 // as dedup: such documents match exact copies only
	near, exacts, err := s.lookup(ctx, f.FP, f.Exact, s.rule.QueryK(), !noFP, true)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(near)+len(exacts))
	for id := range near {
		ids = append(ids, id)
	}
	for _, id := range exacts {
		if _, ok := near[id]; !ok {
			ids = append(ids, id)
		}
	}
	rs, err := s.fetch(ctx, ids)
	if err != nil {
		return nil, err
	}
	rs = slices.DeleteFunc(rs, func(r Record) bool {
		fp, ok := near[r.ID]
		return !(ok && fp == r.Features.FP) && r.Features.Exact != f.Exact
	})
	slices.SortFunc(rs, func(a, b Record) int { return cmp.Compare(a.Seq, b.Seq) })
	return rs, nil
}

// matches keeps the candidates f duplicates, in order, with dedup.Rule.Match
// (the decision of dedup.Kept and of 'neardup dedup').
func (s *RedisStore) matches(f *dedup.Features, cands []Record, limit int) []dedup.KeptMatch {
	fs := make([]*dedup.Features, len(cands))
	for i := range cands {
		fs[i] = &cands[i].Features
	}
	var out []dedup.KeptMatch
	for i := 0; i < len(fs); {
		j := s.rule.Match(f, fs[i:])
		if j < 0 {
			break
		}
		c := &cands[i+j]
		out = append(out, dedup.KeptMatch{ID: c.ID, Seq: c.Seq, Distance: simhash.Distance(c.Features.FP, f.FP),
			Score: s.rule.Score(&c.Features, f), Exact: c.Features.Exact == f.Exact})
		if limit > 0 && len(out) >= limit {
			break
		}
		i += j + 1
	}
	return out
}

// MatchAll implements Set.
func (s *RedisStore) MatchAll(ctx context.Context, f *dedup.Features, limit int) ([]dedup.KeptMatch, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	cands, err := s.candidates(ctx, f)
	if err != nil {
		return nil, err
	}
	return s.matches(f, cands, limit), nil
}

// Match implements Set.
func (s *RedisStore) Match(ctx context.Context, f *dedup.Features) (dedup.KeptMatch, bool, error) {
	ms, err := s.MatchAll(ctx, f, 1)
	if err != nil || len(ms) == 0 {
		return dedup.KeptMatch{}, false, err
	}
	return ms[0], true, nil
}

// AddIfNew implements Set. The match runs first without the lock: a
// decline needs none (the blocking document was stored when it was read).
// Under the lock the match is repeated only if a write was committed since
// the counter "done" was read before it; then the next sequence number and
// the write. r.Seq is ignored.
func (s *RedisStore) AddIfNew(ctx context.Context, r Record) (m dedup.KeptMatch, dup bool, err error) {
	done0, err := s.done(ctx)
	if err != nil {
		return m, false, err
	}
	if m, dup, err = s.Match(ctx, &r.Features); err != nil || dup {
		return m, dup, err
	}
	err = s.locked(ctx, func(ctx context.Context) error {
		done, err := s.done(ctx)
		if err != nil {
			return err
		}
		if done != done0 {
			if m, dup, err = s.Match(ctx, &r.Features); err != nil || dup {
				return err
			}
		}
		return s.addLocked(ctx, r)
	})
	return m, dup, err
}

// done reads the count of committed writes.
func (s *RedisStore) done(ctx context.Context) (string, error) {
	v, err := s.c.Get(ctx, s.p+"done").Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return v, unavailable(err)
}

// Add implements Set: under the write lock, the next sequence number and
// the write. r.Seq is ignored.
func (s *RedisStore) Add(ctx context.Context, r Record) error {
	return s.locked(ctx, func(ctx context.Context) error { return s.addLocked(ctx, r) })
}

func (s *RedisStore) addLocked(ctx context.Context, r Record) error {
	n, err := s.c.Exists(ctx, s.docKey(r.ID)).Result()
	if err != nil {
		return unavailable(err)
	}
	if n > 0 {
		return fmt.Errorf("%w: %q", ErrExists, r.ID)
	}
	seq, err := s.c.Incr(ctx, s.p+"seq").Uint64()
	if err != nil {
		return unavailable(err)
	}
	r.Seq = seq
	err = s.write(ctx, []Record{r})
	// Counted after the document hash is written and before the lock is
	// released, whether the write succeeded or not (it may have been
	// partly applied): AddIfNew's unlocked match relies on it.
	if derr := s.c.Incr(ctx, s.p+"done").Err(); err == nil {
		err = unavailable(derr)
	}
	return err
}

// Remove implements Set, under the write lock.
func (s *RedisStore) Remove(ctx context.Context, id string) (ok bool, err error) {
	if err := s.check(); err != nil {
		return false, err
	}
	err = s.locked(ctx, func(ctx context.Context) error {
		ok, err = s.remove(ctx, id)
		return err
	})
	return ok, err
}

// QueryFingerprint implements SharedStore: the table keys of fp, filtered
// by distance, checked against the document hashes.
func (s *RedisStore) QueryFingerprint(ctx context.Context, fp uint64, k, limit int) ([]index.Match, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if k < 0 || k > s.plan.K {
		return nil, fmt.Errorf("%w: k=%d, the shared index answers up to %d", index.ErrDistance, k, s.plan.K)
	}
	near, _, err := s.lookup(ctx, fp, 0, k, true, false)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(near))
	for id := range near {
		ids = append(ids, id)
	}
	rs, err := s.fetch(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []index.Match
	for _, r := range rs {
		if r.Features.FP == near[r.ID] {
			out = append(out, index.Match{ID: r.ID, Fingerprint: r.Features.FP, Distance: simhash.Distance(r.Features.FP, fp)})
		}
	}
	slices.SortFunc(out, func(a, b index.Match) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.ID, b.ID))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// The write lock: SET lock token NX PX ttl, released by compare-and-delete
// so that a holder whose lock expired cannot release another's (REDIS.md).
var unlock = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// errLockBusy is wrapped when the write lock could not be taken in time.
var errLockBusy = errors.New("write lock busy")

// locked runs fn holding the write lock. fn's context ends when the lock's
// time to live runs out, so that fn does not write without the lock.
func (s *RedisStore) locked(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := s.check(); err != nil {
		return err
	}
	key := s.p + "lock"
	token := s.nonce + ":" + strconv.FormatUint(s.tokens.Add(1), 10)
	wait, cancel := context.WithTimeout(ctx, s.opt.LockWait)
	defer cancel()
	backoff := 50 * time.Microsecond
	for {
		t0 := time.Now()
		ok, err := s.c.SetNX(wait, key, token, s.opt.LockTTL).Result()
		if err != nil {
			if errors.Is(wait.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
				return fmt.Errorf("%w: %w", ErrUnavailable, errLockBusy)
			}
			return unavailable(err)
		}
		if ok {
			// Stop writing well before the lock can expire: a write that
			// outlives it might overlap another server's.
			hold, cancel := context.WithDeadline(ctx, t0.Add(s.opt.LockTTL/2))
			err := fn(hold)
			cancel()
			// Release even when ctx is done: a fresh context, bounded.
			rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), s.opt.Timeout)
			// A failed release needs nothing more: the lock expires by itself.
			_ = unlock.Run(rctx, s.c, []string{key}, token).Err()
			rcancel()
			return err
		}
		select {
		case <-wait.Done():
			if ctx.Err() != nil {
				return unavailable(ctx.Err())
			}
			return fmt.Errorf("%w: %w", ErrUnavailable, errLockBusy)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Millisecond)
	}
}
