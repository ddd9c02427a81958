package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// The write path (REDIS.md, "Adding a document"). An addition is written
// pending (its record, then its band entries), then decided against the
// candidates its entries' buckets hold, then committed or cancelled by
// setting its state field once (HSETNX): of two near-duplicates added at
// once, the one that wrote its entry into a shared bucket second sees the
// other, and settles the pair: it waits for a pending one that comes first
// in priority, and cancels one that comes after it. Cancelling and
// committing are the same HSETNX on one field, so exactly one of them
// happens.

// countTokenTTL is how long (seconds) a batch's count token stays: longer
// than any retry of its commit.
const countTokenTTL = 600

// Scripts (one key each, or keys of one hash tag, so legal on a cluster).
var (
	// countOnce raises the count KEYS[1] by ARGV[1] unless the batch
	// token KEYS[2] (same hash tag) is already there, and sets the token
	// for ARGV[2] seconds: a commit that the client sends again after a
	// timeout (go-redis retries a pipeline whose reply it did not get)
	// counts its documents once.
	countOnce = redis.NewScript(`
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then
  return redis.call('INCRBY', KEYS[1], ARGV[1])
end
return 0`)

	// raiseSeq sets KEYS[1] to ARGV[1] if that is larger.
	raiseSeq = redis.NewScript(`
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > v then redis.call('SET', KEYS[1], ARGV[1]) end
return 0`)
	// swapID sets id ARGV[1] of hash KEYS[1] to ARGV[3] if it is ARGV[2].
	swapID = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 1
end
return 0`)
	// dropID deletes id ARGV[1] of hash KEYS[1] if it is ARGV[2].
	dropID = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0`)
	// settleState sets the state field ARGV[2] of record ARGV[1] (hash
	// KEYS[1]) to ARGV[3] unless it has one, and returns the state it
	// has then: '' when the record is gone (cancelled and cleared).
	settleState = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return '' end
redis.call('HSETNX', KEYS[1], ARGV[2], ARGV[3])
return redis.call('HGET', KEYS[1], ARGV[2])`)
	// addSeq appends the seq ARGV[2] to field ARGV[1] of bucket KEYS[1]
	// (unless it is there: a retried call) and returns what the field
	// held before.
	addSeq = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1]) or ''
for i = 1, #v, 5 do
  if string.sub(v, i, i + 4) == ARGV[2] then return v end
end
redis.call('HSET', KEYS[1], ARGV[1], v .. ARGV[2])
return v`)
	// dropSeq removes the seq ARGV[2] from field ARGV[1] of bucket
	// KEYS[1], and the field when it is left empty.
	dropSeq = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local out = {}
for i = 1, #v, 5 do
  local s = string.sub(v, i, i + 4)
  if s ~= ARGV[2] then out[#out + 1] = s end
end
if #out == 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], table.concat(out))
end
return 1`)
	// takeCommitted deletes a committed record (fields ARGV[1], ARGV[2]
	// of KEYS[1]: record and state) and its prefilter (ARGV[3]), and
	// returns the record; nil when it is not committed.
	takeCommitted = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[2]) ~= 'c' then return false end
local b = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1], ARGV[2], ARGV[3])
return b`)
	// putRecord sets the record field ARGV[1] of KEYS[1] to ARGV[2]
	// unless it has one, and then its prefilter field ARGV[3] to ARGV[4]
	// (unless that is empty: unknown), and returns 1; 0 when the record
	// field was taken, leaving the record there and its prefilter as they
	// were.
	putRecord = redis.NewScript(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], ARGV[3], ARGV[4]) end
return 1`)
)

// errKilled is returned by an addition cancelled by another server's: it
// is tried again.
var errKilled = errors.New("redisstore: addition cancelled by a concurrent one")

// maxAttempts bounds the retries of an addition cancelled by concurrent ones.
const maxAttempts = 8

// nextSeq returns a new sequence number from this server's block, taking a
// new block of seqBlock when it is used up.
func (s *Store) nextSeq(ctx context.Context) (uint64, error) {
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	if s.seqNext == s.seqHi {
		hi, err := s.c.IncrBy(ctx, s.seqKey, seqBlock).Uint64()
		if err != nil {
			return 0, unavailable(err)
		}
		if hi > maxSeq {
			return 0, fmt.Errorf("%w: redis index %q has used all %d sequence numbers", store.ErrStore, s.p, uint64(maxSeq))
		}
		s.seqNext, s.seqHi = hi-seqBlock, hi
	}
	seq := s.seqNext
	s.seqNext++
	return seq, nil
}

// AddIfNew adds r, last in priority, unless it duplicates a stored
// document, atomically across servers; it returns the match that kept r
// out. An id already stored is an error wrapping store.ErrExists.
func (s *Store) AddIfNew(ctx context.Context, r store.Record) (rule.KeptMatch, bool, error) {
	return s.add(ctx, r, true)
}

// Add adds r, last in priority, without deciding on it.
func (s *Store) Add(ctx context.Context, r store.Record) error {
	_, _, err := s.add(ctx, r, false)
	return err
}

func (s *Store) add(ctx context.Context, r store.Record, ifNew bool) (rule.KeptMatch, bool, error) {
	if err := s.check(); err != nil {
		return rule.KeptMatch{}, false, err
	}
	if err := s.ensureMeta(ctx); err != nil {
		return rule.KeptMatch{}, false, s.failed(err)
	}
	for attempt := 1; ; attempt++ {
		seq, err := s.nextSeq(ctx)
		if err != nil {
			return rule.KeptMatch{}, false, err
		}
		r.Seq = seq
		m, dup, err := s.tryAdd(ctx, &r, ifNew)
		if !errors.Is(err, errKilled) && !errors.Is(err, errSeqTaken) || attempt == maxAttempts {
			return m, dup, s.failed(err)
		}
		s.log.Debug("redis addition cancelled by a concurrent one: retrying", "id", r.ID, "attempt", attempt)
	}
}

// tryAdd is one attempt at adding r under r.Seq.
func (s *Store) tryAdd(ctx context.Context, r *store.Record, ifNew bool) (rule.KeptMatch, bool, error) {
	p, err := s.pend(ctx, r)
	if err != nil {
		return rule.KeptMatch{}, false, err
	}
	return s.decide(ctx, p, ifNew)
}

// pending is an addition written pending: its record, its candidate keys
// and what their fields held when it wrote into them.
type pending struct {
	r    *store.Record
	keys []uint64
	held []string
}

// cancel ends an addition that will not be committed; it runs without the
// request's context, which may be what ended it.
func (s *Store) cancel(p *pending, err error) error {
	s.gc.cancel(p.r.Seq, p.r.ID, p.keys, p.r.Features.FP)
	return err
}

// pend writes r pending (steps 1 and 2 of REDIS.md, "Adding a document").
func (s *Store) pend(ctx context.Context, r *store.Record) (*pending, error) {
	if err := s.wide(&r.Features); err != nil {
		return nil, err
	}
	enc, err := s.encodeRecord(r, time.Now())
	if err != nil {
		return nil, err
	}
	p := &pending{r: r, keys: s.keys(&r.Features)}
	// 1. The id and the record, pending.
	if err := s.claim(ctx, r, enc); err != nil {
		if errors.Is(err, errSeqTaken) {
			return nil, err // the record under seq is another's: leave it be
		}
		if errors.Is(err, store.ErrExists) {
			rk, rf, _ := s.recordKey(r.Seq)
			_ = s.c.HDel(context.WithoutCancel(ctx), rk, rf, preField(rf)).Err()
			return nil, err
		}
		return nil, s.cancel(p, err)
	}
	// 2. The band entries, and what the buckets held; the block entries.
	if p.held, err = s.addEntries(ctx, r.Seq, p.keys, r.Features.FP); err != nil {
		return nil, s.cancel(p, err)
	}
	return p, nil
}

// decide settles the pending addition p against its candidates (with
// ifNew) and commits it (steps 3 to 5).
func (s *Store) decide(ctx context.Context, p *pending, ifNew bool) (rule.KeptMatch, bool, error) {
	r := p.r
	// 3. The decision.
	if ifNew {
		m, dup, err := s.settle(ctx, &r.Features, r.Seq, s.candidatesOf(p.keys, p.held, r.Seq))
		if err != nil || dup {
			s.cancel(p, nil)
			return m, dup, err
		}
	}
	// 4. The commit, unless a concurrent addition cancelled this one; the
	// count is raised in the same round trip, and lowered again if not.
	st, err := s.setState(ctx, r.Seq, stateCommitted, true)
	if err != nil {
		// Unknown outcome: a later read of the state decides; the
		// collector cancels it if it stays pending.
		return rule.KeptMatch{}, false, err
	}
	if st != stateCommitted {
		if err := s.c.Decr(context.WithoutCancel(ctx), s.countKey).Err(); err != nil {
			s.log.Warn("redis document count not lowered after a cancelled commit", "id", r.ID, "err", err)
		}
		return rule.KeptMatch{}, false, s.cancel(p, errKilled)
	}
	if err := s.replicate(ctx); err != nil {
		return rule.KeptMatch{}, false, err
	}
	return rule.KeptMatch{}, false, nil
}

// AddIfNewBatch decides on rs in order, as AddIfNew called on each in turn
// would: each is matched against the stored documents and the ones before
// it in rs. Their round trips are shared: the batch gets its sequence
// numbers in order, every document is written pending, and only then is
// each decided, all at once. A pair of near-duplicates in rs then settles
// as any two concurrent additions do, in favour of the one with the lower
// sequence number, the earlier in rs (REDIS.md, "Adding a document").
func (s *Store) AddIfNewBatch(ctx context.Context, rs []store.Record) ([]rule.KeptMatch, []bool, []error) {
	ms := make([]rule.KeptMatch, len(rs))
	dups := make([]bool, len(rs))
	errs := make([]error, len(rs))
	fail := func(err error) ([]rule.KeptMatch, []bool, []error) {
		for i := range errs {
			errs[i] = err
		}
		return ms, dups, errs
	}
	if err := s.check(); err != nil {
		return fail(err)
	}
	if err := s.ensureMeta(ctx); err != nil {
		return fail(s.failed(err))
	}
	recs := make([]store.Record, len(rs))
	copy(recs, rs)
	for i := range recs {
		seq, err := s.nextSeq(ctx)
		if err != nil {
			return fail(s.failed(err))
		}
		recs[i].Seq = seq
	}
	ps := make([]*pending, len(recs))
	each := func(fn func(i int)) {
		var wg sync.WaitGroup
		for i := range recs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fn(i)
			}()
		}
		wg.Wait()
	}
	each(func(i int) { ps[i], errs[i] = s.pend(ctx, &recs[i]) })
	each(func(i int) {
		if errors.Is(errs[i], errSeqTaken) {
			ms[i], dups[i], errs[i] = s.add(ctx, rs[i], true)
			return
		}
		if errs[i] != nil {
			return
		}
		// Every document of the batch is pending now: read the fields
		// again, so that each sees the ones before it in rs even where it
		// wrote first (it then waits for them, or they cancel it).
		held, err := s.readFields(ctx, ps[i].keys)
		if err != nil {
			errs[i] = s.failed(s.cancel(ps[i], err))
			return
		}
		ps[i].held = held
		ms[i], dups[i], errs[i] = s.decide(ctx, ps[i], true)
		if errors.Is(errs[i], errKilled) {
			// Cancelled by a concurrent addition from elsewhere: try
			// again on its own, as AddIfNew does.
			ms[i], dups[i], errs[i] = s.add(ctx, rs[i], true)
		}
		errs[i] = s.failed(errs[i])
	})
	return ms, dups, errs
}

// claim writes r's id into the id map, unless another stored (or pending,
// and not stale) document has it, and r's record with its prefilter,
// pending.
func (s *Store) claim(ctx context.Context, r *store.Record, enc []byte) error {
	ik := s.idKey(r.ID)
	seqS := strconv.FormatUint(r.Seq, 10)
	rk, rf, _ := s.recordKey(r.Seq)
	var idSet *redis.BoolCmd
	put := []call{{sc: putRecord, keys: []string{rk}, args: []any{rf, enc, preField(rf), s.encodePrefilter(&r.Features)}}}
	err := s.scripts(ctx, put, func(pipe redis.Pipeliner) { idSet = pipe.HSetNX(ctx, ik, r.ID, seqS) })
	if err == nil {
		err = errOf(idSet)
	}
	if err != nil {
		return err
	}
	if n, _ := put[0].cmd.Int(); n == 0 {
		if err := s.seqTaken(ctx, r.Seq, enc); err != nil {
			if idSet.Val() {
				_ = dropID.Run(context.WithoutCancel(ctx), s.c, []string{ik}, r.ID, seqS).Err()
			}
			return err
		}
	}
	for range maxAttempts {
		if idSet.Val() {
			return nil
		}
		old, ok, err := s.seqOf(ctx, r.ID)
		if err != nil {
			return err
		}
		if ok && old == r.Seq {
			// Held by this very record: a write sent again (a retried
			// pipeline, or PutBatch called again with the same records).
			return nil
		}
		if ok {
			rs, err := s.readRecords(ctx, []uint64{old})
			if err != nil {
				return err
			}
			o := rs[0]
			if o.ok && o.rec.ID == r.ID && (o.state == stateCommitted || o.state == "" && time.Since(o.at) <= s.opt.PendingTTL) {
				return fmt.Errorf("%w: %q", store.ErrExists, r.ID)
			}
			if o.ok && o.state == "" {
				// Stale: cancel it first, so that a server that was only
				// paused cannot commit it under the id after all.
				st, err := s.setState(ctx, old, stateKilled, false)
				if err != nil {
					return err
				}
				if st == stateCommitted {
					return fmt.Errorf("%w: %q", store.ErrExists, r.ID)
				}
			}
			// The id's holder is gone, cancelled or stale: take the id.
			n, err := swapID.Run(ctx, s.c, []string{ik}, r.ID, strconv.FormatUint(old, 10), seqS).Int()
			if err != nil {
				return unavailable(err)
			}
			if n == 1 {
				return nil
			}
		}
		set, err := s.c.HSetNX(ctx, ik, r.ID, seqS).Result()
		if err != nil {
			return unavailable(err)
		}
		idSet = redis.NewBoolResult(set, nil)
	}
	return fmt.Errorf("%w: %q is being added concurrently", store.ErrExists, r.ID)
}

// errSeqTaken is returned for an addition whose seq already holds another
// record: the counter went back (a Redis that lost it). It is tried again
// with a new seq.
var errSeqTaken = errors.New("redisstore: sequence number already used")

// seqTaken checks the record already under seq: it is fine if it is enc (a
// retried write of this very addition); else the counter went back, and
// it is moved past every seq it may have given before (1<<24 further),
// with a log line.
func (s *Store) seqTaken(ctx context.Context, seq uint64, enc []byte) error {
	rk, rf, _ := s.recordKey(seq)
	got, err := s.c.HGet(ctx, rk, rf).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return unavailable(err)
	}
	if got == string(enc) {
		return nil
	}
	s.log.Error("redis sequence number already used: the counter went back (Redis lost writes); moving it on", "seq", seq)
	if err := s.c.IncrBy(ctx, s.seqKey, 1<<24).Err(); err != nil {
		return unavailable(err)
	}
	s.seqMu.Lock()
	s.seqNext, s.seqHi = 0, 0
	s.seqMu.Unlock()
	return errSeqTaken
}

// settle decides on the addition self (features f) against its candidates
// cs, in priority order: it returns the first committed one f duplicates,
// waiting for a pending duplicate before self in priority and cancelling
// one after it. errKilled means that a concurrent addition cancelled self.
func (s *Store) settle(ctx context.Context, f *rule.Features, self uint64, cs []cand) (rule.KeptMatch, bool, error) {
	cs, recs, err := s.readCandidates(ctx, f, cs)
	if err != nil {
		return rule.KeptMatch{}, false, err
	}
	for i, c := range cs {
		r := &recs[i]
		if !r.ok {
			s.gc.entry(c.bucket, c.tag, c.seq)
			continue
		}
		if r.state == stateKilled {
			s.gc.record(c.seq)
			continue
		}
		m, dup := s.verdict(r, f)
		if !dup {
			continue
		}
		if r.state == "" {
			st, err := s.resolve(ctx, c.seq, self, r.at)
			if err != nil {
				return rule.KeptMatch{}, false, err
			}
			r.state = st
		}
		if r.state == stateCommitted {
			return m, true, nil
		}
	}
	return rule.KeptMatch{}, false, nil
}

// resolve settles the pending duplicate seq of the addition self: it waits
// for one before self (it never waits for self, since it waits only for
// additions before it, so no cycle forms) until PendingTTL after it was
// written, and cancels one after self (or a stale one). It returns the
// candidate's final state.
func (s *Store) resolve(ctx context.Context, seq, self uint64, at time.Time) (string, error) {
	rk, rf, sf := s.recordKey(seq)
	if seq < self {
		wait := 200 * time.Microsecond
		for time.Since(at) <= s.opt.PendingTTL {
			select {
			case <-ctx.Done():
				return "", unavailable(ctx.Err())
			case <-time.After(wait):
			}
			wait = min(2*wait, 10*time.Millisecond)
			pipe := s.c.Pipeline()
			st := pipe.HGet(ctx, rk, sf)
			there := pipe.HExists(ctx, rk, rf)
			if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
				return "", unavailable(err)
			}
			switch {
			case st.Err() == nil:
				return st.Val(), nil
			case !there.Val():
				return stateKilled, nil // cancelled and cleared already
			}
		}
	}
	st, err := s.setState(ctx, seq, stateKilled, false)
	if err != nil {
		return "", err
	}
	if st == stateKilled {
		s.gc.record(seq)
	}
	return st, nil
}

// setState gives the record seq the state st unless it has one, and
// returns the state it has then ("" when it is gone).
func (s *Store) setState(ctx context.Context, seq uint64, st string, count bool) (string, error) {
	rk, rf, sf := s.recordKey(seq)
	calls := []call{{sc: settleState, keys: []string{rk}, args: []any{rf, sf, st}}}
	var incr func(redis.Pipeliner)
	if count {
		incr = func(p redis.Pipeliner) { p.Incr(ctx, s.countKey) }
	}
	if err := s.scripts(ctx, calls, incr); err != nil {
		return "", err
	}
	got, _ := calls[0].cmd.Text()
	return got, nil
}

// Remove removes id and reports whether it was stored.
func (s *Store) Remove(ctx context.Context, id string) (bool, error) {
	if err := s.check(); err != nil {
		return false, err
	}
	seq, ok, err := s.seqOf(ctx, id)
	if err != nil || !ok {
		return false, err
	}
	rk, rf, sf := s.recordKey(seq)
	b, err := takeCommitted.Run(ctx, s.c, []string{rk}, rf, sf, preField(rf)).Text()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, unavailable(err)
	}
	r, _, err := s.decodeRecord(seq, b)
	if err != nil {
		return false, err
	}
	// The record is gone: whatever follows is clean-up, which a reader
	// that finds an entry without a record would also do.
	calls := append(s.dropCalls(seq, s.keys(&r.Features), r.Features.FP), call{sc: dropID, keys: []string{s.idKey(id)}, args: []any{id, strconv.FormatUint(seq, 10)}})
	bg := context.WithoutCancel(ctx)
	var decr *redis.IntCmd
	err = s.scripts(bg, calls, func(p redis.Pipeliner) { decr = p.Decr(bg, s.countKey) })
	if err = errors.Join(err, errOf(decr)); err != nil {
		s.log.Warn("redis clean-up after a delete failed: the collector finishes it", "id", id, "err", err)
	}
	if err := s.replicate(ctx); err != nil {
		return true, err
	}
	return true, nil
}

// Delete removes id; an error wraps store.ErrNotFound when it is absent.
func (s *Store) Delete(ctx context.Context, id string) error {
	ok, err := s.Remove(ctx, id)
	if err == nil && !ok {
		err = fmt.Errorf("%w: %q", store.ErrNotFound, id)
	}
	return err
}

// dropCalls returns the calls that remove seq's entries: its band
// entries under keys and its block entries (fingerprint fp).
func (s *Store) dropCalls(seq uint64, keys []uint64, fp uint64) []call {
	v := seqString(seq)
	calls := make([]call, 0, len(keys)+fpBlocks+1)
	for _, k := range keys {
		b, tag := s.bandKey(k)
		calls = append(calls, call{sc: dropSeq, keys: []string{b}, args: []any{tag, v}})
	}
	return append(calls, s.fpCalls(seq, fp, true)...)
}

// addEntries writes seq's entries under keys and returns what each field
// held before (""): one HSETNX each, which creates a field that is free
// (nothing was under that key: the common case), then an addSeq for the
// fields that were taken, which appends to them and returns what they
// held. Either is atomic on its field, so of two additions under one key
// the second sees the first. The block entries of fp (fingerprint search)
// go in the first round trip: nothing is decided on them.
func (s *Store) addEntries(ctx context.Context, seq uint64, keys []uint64, fp uint64) ([]string, error) {
	v := seqString(seq)
	set := make([]*redis.BoolCmd, len(keys))
	err := s.scripts(ctx, s.fpCalls(seq, fp, false), func(pipe redis.Pipeliner) {
		for i, k := range keys {
			b, tag := s.bandKey(k)
			set[i] = pipe.HSetNX(ctx, b, tag, v)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := errOf(set...); err != nil {
		return nil, err
	}
	held := make([]string, len(keys))
	var taken []int
	for i, c := range set {
		if !c.Val() {
			taken = append(taken, i)
		}
	}
	if len(taken) == 0 {
		return held, nil
	}
	cmds := make([]*redis.Cmd, len(taken))
	err = s.g.do(ctx, func(pipe redis.Pipeliner) {
		for j, i := range taken {
			b, tag := s.bandKey(keys[i])
			cmds[j] = addSeq.Eval(ctx, pipe, []string{b}, tag, v)
		}
	})
	if err != nil {
		return nil, unavailable(err)
	}
	if err := errOf(cmds...); err != nil {
		return nil, err
	}
	for j, i := range taken {
		held[i], _ = cmds[j].Text()
	}
	return held, nil
}

// Put stores r under its own Seq, committed at once, without deciding on
// it (an import's kept documents, a tool's copy); its id must be new.
func (s *Store) Put(ctx context.Context, r store.Record) error {
	_, errs, err := s.PutBatch(ctx, []store.Record{r})
	if err != nil {
		return err
	}
	return errs[0]
}

// PutBatch stores rs as Put does, in three round trips for the batch:
// ids and records, entries, commits. errs[i] is rs[i]'s own error (an id
// already stored); err a failure of the batch, of which any part may have
// been written, none committed.
func (s *Store) PutBatch(ctx context.Context, rs []store.Record) ([]bool, []error, error) {
	if err := s.check(); err != nil {
		return nil, nil, err
	}
	if err := s.ensureMeta(ctx); err != nil {
		return nil, nil, s.failed(err)
	}
	ok, errs, err := s.putBatch(ctx, rs)
	return ok, errs, s.failed(err)
}

func (s *Store) putBatch(ctx context.Context, rs []store.Record) ([]bool, []error, error) {
	errs := make([]error, len(rs))
	ok := make([]bool, len(rs))
	encs := make([][]byte, len(rs))
	var top uint64
	for i := range rs {
		if rs[i].Seq > maxSeq {
			return nil, nil, fmt.Errorf("%w: seq %d past the layout's %d", store.ErrStore, rs[i].Seq, uint64(maxSeq))
		}
		if err := s.wide(&rs[i].Features); err != nil {
			return nil, nil, err
		}
		var err error
		if encs[i], err = s.encodeRecord(&rs[i], time.Now()); err != nil {
			return nil, nil, err
		}
		top = max(top, rs[i].Seq+1)
	}
	pipe := s.c.Pipeline()
	idSet := make([]*redis.BoolCmd, len(rs))
	// was: the records' states before this call. A record already
	// committed under its seq was stored by an earlier call with the same
	// records (sent again): it is stored, and not counted again.
	was := make([]*redis.StringCmd, len(rs))
	for i := range rs {
		idSet[i] = pipe.HSetNX(ctx, s.idKey(rs[i].ID), rs[i].ID, strconv.FormatUint(rs[i].Seq, 10))
		rk, rf, sf := s.recordKey(rs[i].Seq)
		was[i] = pipe.HGet(ctx, rk, sf)
		if pre := s.encodePrefilter(&rs[i].Features); pre != "" {
			pipe.HSet(ctx, rk, rf, encs[i], preField(rf), pre) // one command: no record without it
		} else {
			pipe.HSet(ctx, rk, rf, encs[i])
		}
	}
	raiseSeq.Eval(ctx, pipe, []string{s.seqKey}, top)
	if cmds, err := pipe.Exec(ctx); err != nil {
		if err := errOf(cmds...); err != nil { // a state not yet set is redis.Nil, not an error
			return nil, nil, err
		}
	}
	pipe = s.c.Pipeline()
	for i := range rs {
		if !idSet[i].Val() {
			// Taken: by a live document, or by a dead one's leftovers.
			if err := s.claim(ctx, &rs[i], encs[i]); err != nil {
				errs[i] = err
				rk, rf, _ := s.recordKey(rs[i].Seq)
				pipe.HDel(ctx, rk, rf, preField(rf))
				continue
			}
		}
		ok[i] = true
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, nil, unavailable(err)
	}
	// The entries: an HSETNX each, then addSeq for the fields taken.
	type ent struct {
		b, tag, v string
		set       *redis.BoolCmd
	}
	var ents []ent
	pipe = s.c.Pipeline()
	for i := range rs {
		if !ok[i] {
			continue
		}
		v := seqString(rs[i].Seq)
		for _, k := range s.keys(&rs[i].Features) {
			b, tag := s.bandKey(k)
			ents = append(ents, ent{b, tag, v, pipe.HSetNX(ctx, b, tag, v)})
		}
		for _, c := range s.fpCalls(rs[i].Seq, rs[i].Features.FP, false) {
			c.sc.Eval(ctx, pipe, c.keys, c.args...)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, nil, unavailable(err)
	}
	pipe = s.c.Pipeline()
	for _, e := range ents {
		if !e.set.Val() {
			addSeq.Eval(ctx, pipe, []string{e.b}, e.tag, e.v)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, nil, unavailable(err)
	}
	pipe = s.c.Pipeline()
	n := 0
	var first uint64 // the count's token: the batch's first new seq, which no other batch has
	for i := range rs {
		if ok[i] && was[i].Val() != stateCommitted {
			rk, _, sf := s.recordKey(rs[i].Seq)
			pipe.HSet(ctx, rk, sf, stateCommitted)
			if n == 0 || rs[i].Seq < first {
				first = rs[i].Seq
			}
			n++
		}
	}
	if n > 0 {
		countOnce.Eval(ctx, pipe, []string{s.countKey, s.countKey + ":" + strconv.FormatUint(first, 10)}, n, countTokenTTL)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, nil, unavailable(err)
	}
	if err := s.replicate(ctx); err != nil {
		return nil, nil, err
	}
	// A Put under a seq this server's block holds would collide with its
	// own additions: take a new block.
	s.seqMu.Lock()
	if s.seqHi > 0 && top > s.seqNext {
		s.seqNext, s.seqHi = 0, 0
	}
	s.seqMu.Unlock()
	return ok, errs, nil
}

// PutBulk stores rs as Put does, in three round trips (an import's
// batches): the first record's error, if any, is returned.
func (s *Store) PutBulk(ctx context.Context, rs []store.Record) error {
	_, errs, err := s.PutBatch(ctx, rs)
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}
