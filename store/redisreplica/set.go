package redisreplica

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
	"github.com/neardup/neardup/store"
)

// The Set side of Store. In replica mode every method goes to the
// replica (redis_replica.go). In direct mode matching reads Redis, the
// source of truth, on every call, and decides with the Rule as keptmem.Set
// does.

// lookup returns the ids of the index entries for f: those of the table keys
// of f's fingerprint within k bits (with their fingerprints), and those of
// its exact key. One pipelined round trip.
func (s *Store) lookup(ctx context.Context, fp, exact uint64, k int, withFP, withExact bool) (map[string]uint64, []string, error) {
	pipe := s.c.Pipeline()
	var tabs []*redis.StringSliceCmd
	if withFP {
		tabs = make([]*redis.StringSliceCmd, len(s.masks))
		for t := range s.masks {
			tabs[t] = pipe.SMembers(ctx, s.tableKey(t, fp))
		}
	}
	var ex *redis.StringSliceCmd
	if withExact {
		ex = pipe.SMembers(ctx, s.exactKey(exact))
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
// candidates of keptmem.Set), read from their document hashes in a second
// round trip. Entries whose document is gone or was stored again with
// another fingerprint are dropped.
func (s *Store) candidates(ctx context.Context, f *rule.Features) ([]store.Record, error) {
	exactOnly := s.rule.ExactOnly(f) // as dedup: such documents match exact copies only
	near, exacts, err := s.lookup(ctx, f.FP, f.Exact, s.rule.QueryK(), !exactOnly, true)
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
	rs = slices.DeleteFunc(rs, func(r store.Record) bool {
		fp, ok := near[r.ID]
		return !(ok && fp == r.Features.FP) && r.Features.Exact != f.Exact
	})
	slices.SortFunc(rs, func(a, b store.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	return rs, nil
}

// matches keeps the candidates f duplicates, in order, with rule.Rule.Match
// (the decision of keptmem.Set and of 'neardup dedup').
func (s *Store) matches(f *rule.Features, cands []store.Record, limit int) []rule.KeptMatch {
	fs := make([]*rule.Features, len(cands))
	for i := range cands {
		fs[i] = &cands[i].Features
	}
	var out []rule.KeptMatch
	for i := 0; i < len(fs); {
		j := s.rule.Match(f, fs[i:])
		if j < 0 {
			break
		}
		c := &cands[i+j]
		out = append(out, rule.KeptMatch{ID: c.ID, Seq: c.Seq, Distance: simhash.Distance(c.Features.FP, f.FP),
			Score: s.rule.Score(&c.Features, f), Exact: c.Features.Exact == f.Exact})
		if limit > 0 && len(out) >= limit {
			break
		}
		i += j + 1
	}
	return out
}

// MatchAll implements server.Set.
func (s *Store) MatchAll(ctx context.Context, f *rule.Features, limit int) ([]rule.KeptMatch, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.rep != nil {
		return s.rep.matchAll(ctx, f, limit)
	}
	cands, err := s.candidates(ctx, f)
	if err != nil {
		return nil, err
	}
	return s.matches(f, cands, limit), nil
}

// Match implements server.Set.
func (s *Store) Match(ctx context.Context, f *rule.Features) (rule.KeptMatch, bool, error) {
	ms, err := s.MatchAll(ctx, f, 1)
	if err != nil || len(ms) == 0 {
		return rule.KeptMatch{}, false, err
	}
	return ms[0], true, nil
}

// AddIfNew implements server.Set. In direct mode the match runs first without the
// lock: a decline needs none (the blocking document was stored when it was
// read). Under the lock the match is repeated only if a write was committed
// since the counter "done" was read before it; then the write, with the
// next sequence number. r.Seq is ignored.
func (s *Store) AddIfNew(ctx context.Context, r store.Record) (m rule.KeptMatch, dup bool, err error) {
	if err := s.check(); err != nil {
		return m, false, err
	}
	if s.rep != nil {
		return s.rep.addIfNew(ctx, r)
	}
	done0, err := s.c.Get(ctx, s.doneKey).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return m, false, unavailable(err)
	}
	if m, dup, err = s.Match(ctx, &r.Features); err != nil || dup {
		return m, dup, err
	}
	err = s.locked(ctx, func(ctx context.Context, token string, lr lockRead) error {
		if lr.done != done0 {
			if m, dup, err = s.Match(ctx, &r.Features); err != nil || dup {
				return err
			}
		}
		r.Seq = lr.seq + 1
		return s.writeDirect(ctx, token, r)
	})
	return m, dup, err
}

// AddIfNewBatch decides on rs in order, as AddIfNew would one at a time; in
// replica mode they share one sync and their commits.
func (s *Store) AddIfNewBatch(ctx context.Context, rs []store.Record) ([]rule.KeptMatch, []bool, []error) {
	if s.rep != nil && s.check() == nil {
		return s.rep.addIfNewBatch(ctx, rs)
	}
	ms, dups, errs := make([]rule.KeptMatch, len(rs)), make([]bool, len(rs)), make([]error, len(rs))
	for i, r := range rs {
		ms[i], dups[i], errs[i] = s.AddIfNew(ctx, r)
	}
	return ms, dups, errs
}

// Add implements server.Set: under the write lock, the next sequence number and
// the write. r.Seq is ignored.
func (s *Store) Add(ctx context.Context, r store.Record) error {
	if err := s.check(); err != nil {
		return err
	}
	if s.rep != nil {
		return s.rep.submit(ctx, &redisOp{kind: opAdd, rec: r}).err
	}
	return s.locked(ctx, func(ctx context.Context, token string, lr lockRead) error {
		r.Seq = lr.seq + 1
		return s.writeDirect(ctx, token, r)
	})
}

// Remove implements server.Set, under the write lock: the document hash goes first
// (direct mode's commit point), then its index entries, and the deletion is
// appended to the change log.
func (s *Store) Remove(ctx context.Context, id string) (ok bool, err error) {
	if err := s.check(); err != nil {
		return false, err
	}
	if s.rep != nil {
		res := s.rep.submit(ctx, &redisOp{kind: opRemove, rec: store.Record{ID: id}})
		return res.ok, res.err
	}
	err = s.locked(ctx, func(ctx context.Context, token string, lr lockRead) error {
		vs, err := s.c.HMGet(ctx, s.docKey(id), "seq", "f").Result()
		if err != nil {
			return unavailable(err)
		}
		r, found, err := decodeDoc(id, vs)
		if err != nil || !found {
			return err
		}
		r.Seq = lr.seq + 1
		_, err = s.commit(ctx, token, []change{{del: true, rec: r}})
		ok = err == nil
		return err
	})
	return ok, err
}

// QueryFingerprint implements server.SharedStore: the table keys of fp, filtered
// by distance, checked against the document hashes.
func (s *Store) QueryFingerprint(ctx context.Context, fp uint64, k, limit int) ([]index.Match, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if k < 0 || k > s.plan.K {
		return nil, fmt.Errorf("%w: k=%d, the shared index answers up to %d", index.ErrDistance, k, s.plan.K)
	}
	if s.rep != nil {
		return s.rep.queryFingerprint(ctx, fp, k, limit)
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
