package redisreplica

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// The write path of Store, the same in both modes (REDIS.md, "What each
// operation sends"): every change is made holding the write lock, and commit
// writes the keys of the layout and then appends the change to the log with
// a script that checks the lock first (fencing), so that a holder whose lock
// expired appends nothing, and releases it.

// change is one write: an added document, or a deleted one (rec holds its id
// and the Features it was stored with, whose index entries go). rec.Seq is
// the change's sequence number.
type change struct {
	del bool
	rec store.Record
}

// logAppend appends changes to the log if the lock still holds the caller's
// token, raises the sequence counter to ARGV[2], counts the write, adjusts
// the document count by ARGV[3] and releases the lock, all at once. It
// returns the id of the last entry. KEYS: lock, log, seq, done, count (one
// hash slot). ARGV: token, last seq, count delta, then op, id, seq, f per
// change (f empty for a delete).
var logAppend = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('NOLOCK the write lock was lost')
end
local id = ''
for i = 4, #ARGV, 4 do
  if ARGV[i] == 'add' then
    id = redis.call('XADD', KEYS[2], '*', 'op', 'add', 'id', ARGV[i+1], 'seq', ARGV[i+2], 'f', ARGV[i+3])
  else
    id = redis.call('XADD', KEYS[2], '*', 'op', 'del', 'id', ARGV[i+1], 'seq', ARGV[i+2])
  end
end
if tonumber(ARGV[2]) > tonumber(redis.call('GET', KEYS[3]) or '0') then
  redis.call('SET', KEYS[3], ARGV[2])
end
redis.call('INCR', KEYS[4])
redis.call('INCRBY', KEYS[5], ARGV[3])
redis.call('DEL', KEYS[1])
return id`)

// errLockLost is wrapped when the lock expired before a write could append
// to the log: nothing was appended.
var errLockLost = errors.New("write lock lost")

// commit writes cs holding the lock with token, and releases it when the
// log append succeeds; it returns the id of the last log entry. Index
// entries of an addition are written before its document hash, and the
// document hash of a deletion is removed before its entries (the commit
// point of direct mode, REDIS.md); the log append, which moves the "done"
// counter direct mode's add_if_new trusts, comes after both. One pipeline
// on one Redis, whose connection runs commands in order; on a cluster, whose
// pipelines run on every master at once, three in turn.
func (s *Store) commit(ctx context.Context, token string, cs []change) (_ streamID, err error) {
	defer func() {
		if err != nil {
			// A failed commit may have written document hashes, which
			// direct mode takes as stored: count it as a write, so that
			// direct-mode add_if_new matches again under the lock. Best
			// effort, like the old direct path.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opt.Timeout)
			_ = s.c.Incr(dctx, s.doneKey).Err()
			cancel()
		}
	}()
	pipe := s.c.Pipeline()
	for i := range cs {
		r := &cs[i].rec
		if cs[i].del {
			pipe.Del(ctx, s.docKey(r.ID))
			continue
		}
		s.indexEntries(ctx, pipe, r, false)
	}
	if s.cluster {
		if _, err := pipe.Exec(ctx); err != nil {
			return streamID{}, unavailable(err)
		}
		pipe = s.c.Pipeline()
	}
	var maxSeq uint64
	delta := 0
	args := make([]any, 3, 3+4*len(cs))
	for i := range cs {
		r := &cs[i].rec
		maxSeq = max(maxSeq, r.Seq)
		seq := strconv.FormatUint(r.Seq, 10)
		if cs[i].del {
			s.indexEntries(ctx, pipe, r, true)
			args = append(args, "del", r.ID, seq, "")
			delta--
			continue
		}
		f, err := r.Features.MarshalBinary()
		if err != nil {
			return streamID{}, err
		}
		pipe.Del(ctx, s.docKey(r.ID))
		if len(r.Meta) > 0 {
			pipe.HSet(ctx, s.docKey(r.ID), "seq", seq, "f", f, "m", []byte(r.Meta))
		} else {
			pipe.HSet(ctx, s.docKey(r.ID), "seq", seq, "f", f)
		}
		args = append(args, "add", r.ID, seq, f)
		delta++
	}
	if s.cluster {
		if _, err := pipe.Exec(ctx); err != nil {
			return streamID{}, unavailable(err)
		}
		pipe = s.c.Pipeline()
	}
	args[0], args[1], args[2] = token, strconv.FormatUint(maxSeq, 10), strconv.Itoa(delta)
	if s.opt.testBeforeCommit != nil {
		s.opt.testBeforeCommit()
	}
	app := logAppend.Eval(ctx, pipe, []string{s.lockKey, s.logKey, s.seqKey, s.doneKey, s.countKey}, args...)
	_, err = pipe.Exec(ctx)
	if e := app.Err(); e != nil && strings.HasPrefix(e.Error(), "NOLOCK") {
		return streamID{}, fmt.Errorf("%w: %w", store.ErrUnavailable, errLockLost)
	}
	if err != nil {
		return streamID{}, unavailable(err)
	}
	id, err := parseStreamID(app.Val().(string))
	if err != nil {
		return streamID{}, fmt.Errorf("%w: log append returned %v", store.ErrStoreFormat, app.Val())
	}
	return id, nil
}

// indexEntries adds to pipe the SADDs (or, with remove, the SREMs) of r's
// table and exact entries.
func (s *Store) indexEntries(ctx context.Context, pipe redis.Pipeliner, r *store.Record, remove bool) {
	fp := r.Features.FP
	for t := range s.masks {
		if s.minhash {
			break // MinHash features have no fingerprint: candidates come from the replica's bands
		}
		if remove {
			pipe.SRem(ctx, s.tableKey(t, fp), member(fp, r.ID))
		} else {
			pipe.SAdd(ctx, s.tableKey(t, fp), member(fp, r.ID))
		}
	}
	if remove {
		pipe.SRem(ctx, s.exactKey(r.Features.Exact), r.ID)
	} else {
		pipe.SAdd(ctx, s.exactKey(r.Features.Exact), r.ID)
	}
}

// lockRead is what the round trip that tries to take the lock reads besides.
type lockRead struct {
	held bool
	from streamID         // where the log was read from
	seq  uint64           // the last sequence number given
	done string           // the count of committed writes (direct mode's AddIfNew)
	log  []redis.XMessage // the log from the position asked for (nil when not asked)
}

// tryLock tries once to take the write lock with token, and in the same
// round trip (one hash slot) reads the sequence counter, the write count and,
// when from is not nil, the log from *from (readLog). The values are those
// under the lock when it was taken; otherwise they are a snapshot that may
// move on.
func (s *Store) tryLock(ctx context.Context, token string, from *streamID) (lockRead, error) {
	pipe := s.c.Pipeline()
	pipe.SetNX(ctx, s.lockKey, token, s.opt.LockTTL)
	// The holder, read back: a SET retried after a lost reply returns false
	// although the lock is ours.
	holder := pipe.Get(ctx, s.lockKey)
	seq := pipe.Get(ctx, s.seqKey)
	done := pipe.Get(ctx, s.doneKey)
	var lg *redis.XMessageSliceCmd
	var lr lockRead
	if from != nil {
		lg, lr.from = s.readLog(ctx, pipe, *from), *from
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return lr, unavailable(err)
	}
	lr.held = holder.Val() == token
	if v := seq.Val(); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return lr, fmt.Errorf("%w: sequence counter %q", store.ErrStoreFormat, v)
		}
		lr.seq = n
	}
	lr.done = done.Val()
	if lg != nil {
		lr.log = lg.Val()
		if lr.log == nil {
			lr.log = []redis.XMessage{}
		}
	}
	return lr, nil
}

// The lock is released by compare-and-delete, so that a holder whose lock
// expired cannot release another's (REDIS.md).
var unlock = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// release releases the lock if token still holds it. It runs even when ctx
// is done (a fresh context, bounded); a failed release needs nothing more:
// the lock expires by itself.
func (s *Store) release(ctx context.Context, token string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opt.Timeout)
	defer cancel()
	_ = unlock.Run(rctx, s.c, []string{s.lockKey}, token).Err()
}

// errLockBusy is wrapped when the write lock could not be taken in time.
var errLockBusy = errors.New("write lock busy")

// newToken returns a lock token no other store or call uses.
func (s *Store) newToken() string {
	return s.nonce + ":" + strconv.FormatUint(s.tokens.Add(1), 10)
}

// takeLock polls tryLock with backoff (50 us to 2 ms) until the lock is
// taken, for at most LockWait. seen, when not nil, is called with every
// read, taken or not; from, when not nil, gives the log position to read at
// each try. It returns the read that took the lock and when its round trip
// started: the lock lives LockTTL from at least then.
func (s *Store) takeLock(ctx context.Context, token string, from func() *streamID, seen func(lockRead) error) (lockRead, time.Time, error) {
	wait, cancel := context.WithTimeout(ctx, s.opt.LockWait)
	defer cancel()
	backoff := 50 * time.Microsecond
	for {
		var pos *streamID
		if from != nil {
			pos = from()
		}
		t0 := time.Now()
		lr, err := s.tryLock(wait, token, pos)
		if err == nil && seen != nil {
			err = seen(lr)
		}
		if err != nil {
			if lr.held {
				s.release(ctx, token)
			}
			if errors.Is(wait.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
				return lr, t0, fmt.Errorf("%w: %w", store.ErrUnavailable, errLockBusy)
			}
			return lr, t0, err
		}
		if lr.held {
			return lr, t0, nil
		}
		select {
		case <-wait.Done():
			if ctx.Err() != nil {
				return lr, t0, unavailable(ctx.Err())
			}
			return lr, t0, fmt.Errorf("%w: %w", store.ErrUnavailable, errLockBusy)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Millisecond)
	}
}

// locked runs fn holding the write lock (direct mode). fn's context ends
// when half the lock's time to live has passed, so that fn does not write
// without the lock; fn gets the lock's token and what was read when it was
// taken. The lock is released afterwards unless commit did.
func (s *Store) locked(ctx context.Context, fn func(ctx context.Context, token string, lr lockRead) error) error {
	if err := s.check(); err != nil {
		return err
	}
	token := s.newToken()
	lr, t0, err := s.takeLock(ctx, token, nil, nil)
	if err != nil {
		return err
	}
	hold, cancel := context.WithDeadline(ctx, t0.Add(s.opt.LockTTL/2))
	err = fn(hold, token, lr)
	cancel()
	s.release(ctx, token)
	return err
}
