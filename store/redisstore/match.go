package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// cand is a candidate found in a band bucket: its seq and where its entry
// is (for the collector, should its record be gone).
type cand struct {
	seq         uint64
	bucket, tag string
}

// readCmds queues, for each candidate key, the read of its field.
//
// HMGET of the one field, not HGET: a field absent (most of them) is then a
// nil in an array rather than a redis.Nil reply, which go-redis reads as an
// error (errors.As over its error types: ~4% of a search's CPU).
func (s *Store) readCmds(ctx context.Context, pipe redis.Pipeliner, keys []uint64) []*redis.SliceCmd {
	out := make([]*redis.SliceCmd, len(keys))
	for i, k := range keys {
		b, tag := s.bandKey(k)
		out[i] = pipe.HMGet(ctx, b, tag)
	}
	return out
}

// candidatesOf returns the candidates in the fields' values vals (one per
// key), by seq, without self (the caller's own seq, or maxSeq+1 for none).
func (s *Store) candidatesOf(keys []uint64, vals []string, self uint64) []cand {
	var cs []cand
	var seqs []uint64
	for i, v := range vals {
		seqs = seqsOfValue(seqs[:0], v)
		for _, seq := range seqs {
			if seq == self {
				continue
			}
			b, tag := s.bandKey(keys[i])
			cs = append(cs, cand{seq: seq, bucket: b, tag: tag})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Compare(a.seq, b.seq) })
	return slices.CompactFunc(cs, func(a, b cand) bool { return a.seq == b.seq })
}

// readFields returns the values of keys' fields ("" for none), in one
// round trip.
func (s *Store) readFields(ctx context.Context, keys []uint64) ([]string, error) {
	var cmds []*redis.SliceCmd
	if err := s.g.do(ctx, func(pipe redis.Pipeliner) { cmds = s.readCmds(ctx, pipe, keys) }); err != nil {
		return nil, unavailable(err)
	}
	if err := errOf(cmds...); err != nil {
		return nil, err
	}
	out := make([]string, len(cmds))
	for i, c := range cmds {
		if vs := c.Val(); len(vs) == 1 {
			out[i], _ = vs[0].(string)
		}
	}
	return out, nil
}

// stored is a candidate's record as read: pending when it has a record and
// no state yet.
type stored struct {
	rec   store.Record
	at    time.Time // when it was written
	state string    // "", stateCommitted or stateKilled
	ok    bool      // the record exists
}

// readRecords reads the records and states of seqs in one pipeline.
func (s *Store) readRecords(ctx context.Context, seqs []uint64) ([]stored, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.SliceCmd, len(seqs))
	err := s.g.do(ctx, func(pipe redis.Pipeliner) {
		for i, seq := range seqs {
			key, rf, sf := s.recordKey(seq)
			cmds[i] = pipe.HMGet(ctx, key, rf, sf)
		}
	})
	if err != nil {
		return nil, unavailable(err)
	}
	if err := errOf(cmds...); err != nil {
		return nil, err
	}
	out := make([]stored, len(seqs))
	for i, c := range cmds {
		vs := c.Val()
		b, _ := vs[0].(string)
		if b == "" {
			continue
		}
		r, at, err := s.decodeRecord(seqs[i], b)
		if err != nil {
			return nil, err
		}
		st, _ := vs[1].(string)
		out[i] = stored{rec: r, at: at, state: st, ok: true}
	}
	return out, nil
}

// Match returns the first stored document, in priority order, that f
// duplicates.
func (s *Store) Match(ctx context.Context, f *rule.Features) (rule.KeptMatch, bool, error) {
	ms, err := s.MatchAll(ctx, f, 1)
	if err != nil || len(ms) == 0 {
		return rule.KeptMatch{}, false, err
	}
	return ms[0], true, nil
}

// directMax is the most candidates whose records are read at once, in
// one round trip, without their prefilters first: reading the prefilters
// costs a round trip, which pays only when it saves enough record reads
// (REDIS.md, "Reads"; BenchmarkCandidates).
const directMax = 2

// readCandidates reads the records of the candidates cs of f (the query,
// or an addition), as readRecords does, but for those it leaves out: with
// more than directMax candidates, their prefilters and states are read
// first (one round trip, about 50 bytes each), and the records of the
// cancelled ones and of the committed ones that the rule's prefilter rules
// out against f (rule.PrefilterRejects: never a duplicate) are not read.
// It returns the candidates read, in the order of cs, with their records.
func (s *Store) readCandidates(ctx context.Context, f *rule.Features, cs []cand) ([]cand, []stored, error) {
	s.matches.Add(1)
	if len(cs) > max(s.directMax, 0) && s.prefilter && f.Pre.Known() {
		var err error
		if cs, err = s.prefilterCands(ctx, f, cs); err != nil {
			return nil, nil, err
		}
	}
	s.examined.Add(uint64(len(cs)))
	recs, err := s.readRecords(ctx, seqsOf(cs))
	return cs, recs, err
}

// prefilterCands reads the prefilters and states of cs (HMGET p<n> sn) and
// returns cs without the cancelled candidates (handed to the collector) and
// the committed ones the prefilter rules out against f. Pending ones are
// kept whatever their prefilter: their records tell how long they have been
// pending (a stale one is handed to the collector), and they are few. A
// record without a prefilter field (written before the layout kept one) has
// an unknown prefilter, which rules nothing out.
func (s *Store) prefilterCands(ctx context.Context, f *rule.Features, cs []cand) ([]cand, error) {
	cmds := make([]*redis.SliceCmd, len(cs))
	err := s.g.do(ctx, func(pipe redis.Pipeliner) {
		for i, c := range cs {
			key, rf, sf := s.recordKey(c.seq)
			cmds[i] = pipe.HMGet(ctx, key, preField(rf), sf)
		}
	})
	if err != nil {
		return nil, unavailable(err)
	}
	if err := errOf(cmds...); err != nil {
		return nil, err
	}
	kept := make([]cand, 0, len(cs))
	for i, c := range cs {
		vs := cmds[i].Val()
		switch st, _ := vs[1].(string); st {
		case stateKilled:
			s.gc.record(c.seq)
			continue
		case stateCommitted:
			pv, _ := vs[0].(string)
			if p := decodePrefilter(pv); s.rule.PrefilterRejects(&p, &f.Pre) {
				continue
			}
		}
		kept = append(kept, c)
	}
	s.prefiltered.Add(uint64(len(cs) - len(kept)))
	return kept, nil
}

// MatchCounts returns, since Open, the matches (MatchAll's, and the
// decisions of add_if_new), the candidates whose records they read, and
// the candidates the prefilter ruled out before their records were read
// (not counted in examined): over matches, the record reads a match costs.
func (s *Store) MatchCounts() (matches, examined, prefiltered uint64) {
	return s.matches.Load(), s.examined.Load(), s.prefiltered.Load()
}

// MatchAll returns the stored documents f duplicates, in priority order, at
// most limit of them when limit > 0: one pipelined read of f's candidate
// keys' entries, one of the candidates' records (and before it, with more
// than directMax candidates, one of their prefilters, which rules most
// unrelated candidates out), decided by the rule as the batch and the
// in-memory kept set decide. Only committed documents count.
func (s *Store) MatchAll(ctx context.Context, f *rule.Features, limit int) ([]rule.KeptMatch, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := s.wide(f); err != nil {
		return nil, err
	}
	keys := s.keys(f)
	vals, err := s.readFields(ctx, keys)
	if err != nil {
		return nil, err
	}
	cs, recs, err := s.readCandidates(ctx, f, s.candidatesOf(keys, vals, maxSeq+1))
	if err != nil {
		return nil, err
	}
	var ms []rule.KeptMatch
	for i, c := range cs {
		r := &recs[i]
		if s.dead(c, r) || r.state != stateCommitted {
			continue
		}
		if m, ok := s.verdict(r, f); ok {
			ms = append(ms, m)
			if limit > 0 && len(ms) >= limit {
				break
			}
		}
	}
	return ms, nil
}

func seqsOf(cs []cand) []uint64 {
	out := make([]uint64, len(cs))
	for i, c := range cs {
		out[i] = c.seq
	}
	return out
}

// dead reports whether candidate c is gone or cancelled, or pending for
// longer than PendingTTL, and hands it to the collector.
func (s *Store) dead(c cand, r *stored) bool {
	switch {
	case !r.ok:
		s.gc.entry(c.bucket, c.tag, c.seq)
		return true
	case r.state == stateKilled:
		s.gc.record(c.seq)
		return true
	case r.state == "" && time.Since(r.at) > s.opt.PendingTTL:
		s.gc.stale(c.seq)
		return false // still pending until the collector cancels it
	}
	return false
}

// verdict decides on the pair (stored r, new f) as the batch does.
func (s *Store) verdict(r *stored, f *rule.Features) (rule.KeptMatch, bool) {
	g := &r.rec.Features
	if !s.rule.Duplicates(g, f) {
		return rule.KeptMatch{}, false
	}
	return s.rule.KeptMatch(r.rec.ID, r.rec.Seq, g, f), true
}

// Get returns the record of id, or an error wrapping store.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (store.Record, error) {
	if err := s.check(); err != nil {
		return store.Record{}, err
	}
	seq, ok, err := s.seqOf(ctx, id)
	if err != nil {
		return store.Record{}, err
	}
	if ok {
		rs, err := s.readRecords(ctx, []uint64{seq})
		if err != nil {
			return store.Record{}, err
		}
		if rs[0].ok && rs[0].state == stateCommitted && rs[0].rec.ID == id {
			return rs[0].rec, nil
		}
	}
	return store.Record{}, fmt.Errorf("%w: %q", store.ErrNotFound, id)
}

// seqOf returns the seq the id map gives id.
func (s *Store) seqOf(ctx context.Context, id string) (uint64, bool, error) {
	seq, err := s.c.HGet(ctx, s.idKey(id), id).Uint64()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, false, nil
	case err != nil:
		return 0, false, unavailable(err)
	}
	return seq, true, nil
}

// GetSeq returns the committed record whose Seq is seq.
func (s *Store) GetSeq(ctx context.Context, seq uint64) (store.Record, error) {
	if err := s.check(); err != nil {
		return store.Record{}, err
	}
	if seq <= maxSeq {
		rs, err := s.readRecords(ctx, []uint64{seq})
		if err != nil {
			return store.Record{}, err
		}
		if rs[0].ok && rs[0].state == stateCommitted {
			return rs[0].rec, nil
		}
	}
	return store.Record{}, fmt.Errorf("%w: seq %d", store.ErrNotFound, seq)
}

// Len returns the number of stored documents (the count key: see REDIS.md
// for what a crash can cost it).
func (s *Store) Len(ctx context.Context) (int, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	n, err := s.c.Get(ctx, s.countKey).Int()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, unavailable(err)
	}
	return n, nil
}

// Load calls fn for every stored record in seq order.
func (s *Store) Load(ctx context.Context, fn func(store.Record) error) error {
	return s.LoadFrom(ctx, 0, fn)
}

// LoadFrom calls fn for every stored record whose Seq is seq or more, in
// seq order, reading the record hashes in order, 256 to a round trip: a
// tool's pass over the index, not the service's start-up (which reads
// nothing).
func (s *Store) LoadFrom(ctx context.Context, seq uint64, fn func(store.Record) error) error {
	if err := s.check(); err != nil {
		return err
	}
	hi, err := s.c.Get(ctx, s.seqKey).Uint64()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return unavailable(err)
	}
	const batch = 256
	for b := seq >> recordBits; b <= hi>>recordBits; b += batch {
		pipe := s.c.Pipeline()
		cmds := make([]*redis.MapStringStringCmd, 0, batch)
		for i := b; i < b+batch && i <= hi>>recordBits; i++ {
			key, _, _ := s.recordKey(i << recordBits)
			cmds = append(cmds, pipe.HGetAll(ctx, key))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return unavailable(err)
		}
		for i, c := range cmds {
			base := (b + uint64(i)) << recordBits
			m := c.Val()
			var rs []store.Record
			for n := range uint64(1 << recordBits) {
				_, rf, sf := s.recordKey(base + n)
				if m[sf] != stateCommitted || base+n < seq {
					continue
				}
				r, _, err := s.decodeRecord(base+n, m[rf])
				if err != nil {
					return err
				}
				rs = append(rs, r)
			}
			for _, r := range rs {
				if err := fn(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Ping reports whether every master answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		return unavailable(cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() }))
	}
	return unavailable(s.c.Ping(ctx).Err())
}

// Sync does nothing: the server keeps nothing of the index to bring up to
// date. It checks that Redis answers and holds this index's format.
func (s *Store) Sync(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.checkMeta(ctx)
}

// Close releases the connections; later calls fail with store.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.gc.close()
	return s.c.Close()
}

// Empty reports whether the index has never been written to (no sequence
// number given): what an import loads into.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	if err := s.check(); err != nil {
		return false, err
	}
	n, err := s.c.Exists(ctx, s.seqKey).Result()
	if err != nil {
		return false, unavailable(err)
	}
	return n == 0, nil
}

// Drop deletes every key of the index (its prefix), on every master: a
// failed import's clean-up.
func (s *Store) Drop(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	drop := func(ctx context.Context, c redis.Cmdable) error {
		var batch []string
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			pipe := c.Pipeline()
			for _, k := range batch {
				pipe.Unlink(ctx, k)
			}
			_, err := pipe.Exec(ctx)
			batch = batch[:0]
			return err
		}
		// The key families of the layout, not the bare prefix, which
		// another index's prefix may extend.
		for _, pat := range []string{s.p + "b:*", s.p + "r:*", s.p + "i:*", s.p + "meta", s.p + "{" + s.p + "}*", s.p + "fence*"} {
			it := c.Scan(ctx, 0, pat, 1000).Iterator()
			for it.Next(ctx) {
				if batch = append(batch, it.Val()); len(batch) == 1000 {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			if err := errors.Join(it.Err(), flush()); err != nil {
				return err
			}
		}
		return nil
	}
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		return unavailable(cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return drop(ctx, c) }))
	}
	return unavailable(drop(ctx, s.c))
}
