package redisreplica

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/keptmem"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// replica is a Store's local copy of the shared index (replica mode,
// the default; REDIS.md "Replica mode"): a keptmem.Set that follows the change
// log. Every request that reads the set first brings it to the head of the
// log (sync), so what another server acknowledged before the request arrived
// is in it; it holds only committed documents, since it changes only by log
// entries, its own writes' included once Redis acknowledged them. Writes go
// through one committer goroutine (group commit). It is safe for concurrent
// use.
type replica struct {
	s       *Store
	kept    atomic.Pointer[keptmem.Set] // replaced whole by a rebuild
	version atomic.Uint64               // incremented after every change of kept; 0 before the first load

	mu      sync.Mutex // guards the fields below; held while kept changes and while the log is read into it
	loaded  bool       // the log was read whole once
	last    streamID   // the last entry applied (zero: none)
	lastDoc string     // its document id: tells a log that was reset and regrew past last
	skipped int        // additions of an id present, ignored (REDIS.md: should not happen)
	// The additions applied since version recentFrom, in order, with the
	// version each made: an add_if_new whose unlocked match saw version v
	// >= recentFrom is decided by matching these alone (decide).
	recent     *keptmem.Set
	recentVer  map[string]uint64
	recentFrom uint64

	batch    *keptmem.Set // the committer's: the additions of the batch being decided
	batchIDs []string

	smu     sync.Mutex // guards running and next
	running *syncCall  // the sync in flight
	next    *syncCall  // the sync that starts when running ends, shared by everyone who came meanwhile

	ctx    context.Context // of reads and commits; cancelled by close
	cancel context.CancelFunc
	ops    chan *redisOp // to the committer
	quit   chan struct{} // closed by close
	done   chan struct{} // closed when the committer has exited
}

// maxCommitBatch bounds the writes of one group commit; maxRecent the
// additions kept in replica.recent.
const (
	maxCommitBatch = 512
	maxRecent      = 4096
)

func newReplica(s *Store) *replica {
	r := &replica{s: s, ops: make(chan *redisOp, 4*maxCommitBatch), quit: make(chan struct{}), done: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	go r.commitLoop()
	return r
}

func (r *replica) close() {
	r.cancel()
	close(r.quit)
	<-r.done
}

// syncCall is one read of the log to its head, shared by the requests that
// wait for it.
type syncCall struct {
	done chan struct{}
	err  error
}

// sync brings the replica to the head of the log as it was at some moment
// after sync was called. Concurrent calls share reads: a call joins the read
// queued behind the one in flight (which may have started before it was
// called), so that at most one read runs and one waits.
func (r *replica) sync(ctx context.Context) error {
	r.smu.Lock()
	c, start := r.next, false
	switch {
	case r.running == nil:
		c = &syncCall{done: make(chan struct{})}
		r.running, start = c, true
	case c == nil:
		c = &syncCall{done: make(chan struct{})}
		r.next = c
	}
	r.smu.Unlock()
	if start {
		r.runSync(c)
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return unavailable(ctx.Err())
	}
}

// runSync runs c, then starts the call queued meanwhile, if any.
func (r *replica) runSync(c *syncCall) {
	c.err = r.catchUp(r.ctx, false)
	close(c.done)
	r.smu.Lock()
	next := r.next
	r.running, r.next = next, nil
	r.smu.Unlock()
	if next != nil {
		go r.runSync(next)
	}
}

// catchUp reads the log into the replica up to its head (atHead: it is
// there already, as of a read made holding the write lock): the whole log
// the first time, then from the last entry applied, logChunk entries a
// round trip. The reads run without r.mu, which the committer needs several
// times a batch: a sync runs whenever requests arrive, and the mutex held
// over its round trips made every commit wait for them. A read overtaken by
// another (the committer applied its own batch meanwhile) is dropped by
// applyReadLocked and made again from the new position.
func (r *replica) catchUp(ctx context.Context, atHead bool) error {
	for {
		if err := r.s.check(); err != nil {
			return err
		}
		r.mu.Lock()
		if !r.loaded || atHead {
			var err error
			if !r.loaded {
				err = r.rebuildLocked(ctx)
			}
			r.mu.Unlock()
			return err
		}
		from := r.last
		r.mu.Unlock()
		msgs, err := r.s.readLog(ctx, r.s.c, from).Result()
		if err != nil {
			return unavailable(err)
		}
		r.mu.Lock()
		atHead, err = r.applyReadLocked(ctx, from, msgs)
		r.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// applyReadLocked applies msgs, a read of the log from "from" (readLog), and
// reports whether the replica is at the head of the log as of that read. A
// read made from another position than the replica's is ignored (false: read
// again). A read that does not start with the last entry applied means the
// log was reset (FLUSHALL, a restarted Redis without persistence) or
// trimmed: the replica is rebuilt from what the log holds now.
func (r *replica) applyReadLocked(ctx context.Context, from streamID, msgs []redis.XMessage) (bool, error) {
	if !r.loaded || from != r.last {
		return false, nil
	}
	full := len(msgs) == logChunk
	if !from.zero() {
		if len(msgs) == 0 || msgs[0].ID != from.String() || msgs[0].Values["id"] != r.lastDoc {
			r.s.log.Warn("redis: the change log no longer holds the replica's last entry: rebuilding the replica",
				"prefix", r.s.p, "last", from.String())
			return true, r.rebuildLocked(ctx)
		}
		full = len(msgs) == logChunk+1
		msgs = msgs[1:]
	}
	es := make([]logEntry, len(msgs))
	for i, m := range msgs {
		e, err := decodeEntry(m)
		if err != nil {
			return false, err
		}
		es[i] = e
	}
	r.applyLocked(es)
	return !full, nil
}

// applyLocked applies log entries in order. An addition of an id present
// is ignored: under the fenced lock the log holds none (REDIS.md).
func (r *replica) applyLocked(es []logEntry) {
	if len(es) == 0 {
		return
	}
	k := r.kept.Load()
	ver := r.version.Load() + 1
	if r.recent == nil || r.recent.Len() >= maxRecent {
		r.resetRecentLocked(ver - 1)
	}
	for i := range es {
		e := &es[i]
		if e.del {
			k.Remove(e.doc)
			r.recent.Remove(e.doc)
			delete(r.recentVer, e.doc)
		} else if err := k.Add(e.doc, e.f); err != nil {
			r.skipped++
			r.s.log.Warn("redis: log entry not applied", "prefix", r.s.p, "id", e.doc, "entry", e.id.String(), "err", err)
		} else if r.recent.Add(e.doc, e.f) == nil {
			r.recentVer[e.doc] = ver
		}
	}
	r.last, r.lastDoc = es[len(es)-1].id, es[len(es)-1].doc
	r.version.Store(ver)
}

// resetRecentLocked empties recent: from now on it holds the additions
// after version v.
func (r *replica) resetRecentLocked(v uint64) {
	k, err := keptmem.New(r.s.rule, maxRecent)
	if err != nil {
		panic(err) // the rule's options were checked by keptmem.New before
	}
	r.recent, r.recentVer, r.recentFrom = k, make(map[string]uint64, maxRecent), v
}

// rebuildLocked reads the whole log, rebuildChunk entries a round trip, into
// a new Kept (additions in bulk, as server.Server.Load does), and makes it the
// replica.
func (r *replica) rebuildLocked(ctx context.Context) error {
	k, err := keptmem.New(r.s.rule, r.s.opt.ExpectedDocs)
	if err != nil {
		return err
	}
	var (
		ids     []string
		fs      []rule.Features
		pending = map[string]bool{}
		last    logEntry
		n       int
	)
	flush := func() error {
		if err := k.AddBulk(ids, fs); err != nil {
			return fmt.Errorf("redisreplica: %w", err)
		}
		ids, fs = ids[:0], fs[:0]
		clear(pending)
		return nil
	}
	start := "-"
	for {
		if err := r.s.check(); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return unavailable(err)
		}
		msgs, err := r.s.c.XRangeN(ctx, r.s.logKey, start, "+", rebuildChunk).Result()
		if err != nil {
			return unavailable(err)
		}
		for _, m := range msgs {
			e, err := decodeEntry(m)
			if err != nil {
				return err
			}
			last = e
			n++
			if e.del {
				if pending[e.doc] {
					if err := flush(); err != nil {
						return err
					}
				}
				k.Remove(e.doc)
				continue
			}
			if pending[e.doc] || k.Contains(e.doc) {
				r.skipped++
				continue
			}
			pending[e.doc] = true
			ids, fs = append(ids, e.doc), append(fs, e.f)
		}
		if len(ids) >= 1<<18 {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(msgs) < rebuildChunk {
			break
		}
		start = last.id.next().String()
	}
	if err := flush(); err != nil {
		return err
	}
	r.kept.Store(k)
	r.loaded, r.last, r.lastDoc = true, last.id, last.doc
	r.resetRecentLocked(r.version.Add(1))
	r.s.log.Info("redis: replica loaded from the change log", "prefix", r.s.p, "entries", n, "documents", k.Len())
	return nil
}

// The committer: writes queue up as redisOps; one goroutine takes the lock
// once for all those waiting, decides them in arrival order against the
// replica, writes them in one commit and answers each.

type opKind uint8

const (
	opAdd opKind = iota
	opAddIfNew
	opPut // Store.Put: r.Seq given
	opRemove
)

type redisOp struct {
	kind opKind
	rec  store.Record
	ver  uint64 // opAddIfNew: the replica's version its unlocked match saw, 0 for none
	ctx  context.Context
	res  chan opResult // buffered
}

type opResult struct {
	m   rule.KeptMatch
	dup bool
	ok  bool // opRemove: the document was there
	err error
}

// submit queues op and waits for its result.
func (r *replica) submit(ctx context.Context, op *redisOp) opResult {
	if err := r.enqueue(ctx, op); err != nil {
		return opResult{err: err}
	}
	return r.wait(ctx, op)
}

func (r *replica) enqueue(ctx context.Context, op *redisOp) error {
	if err := r.s.check(); err != nil {
		return err
	}
	op.ctx, op.res = ctx, make(chan opResult, 1)
	select {
	case r.ops <- op:
		return nil
	case <-r.quit:
		return store.ErrClosed
	case <-ctx.Done():
		return unavailable(ctx.Err())
	}
}

// wait returns op's result. A caller that gives up leaves op to be decided:
// it may still be stored, as with any timeout.
func (r *replica) wait(ctx context.Context, op *redisOp) opResult {
	select {
	case res := <-op.res:
		return res
	case <-r.done:
		select {
		case res := <-op.res:
			return res
		default:
			return opResult{err: store.ErrClosed}
		}
	case <-ctx.Done():
		return opResult{err: unavailable(ctx.Err())}
	}
}

func (r *replica) commitLoop() {
	defer close(r.done)
	var held *redisOp // a remove met while filling a batch: removes go alone
	for {
		op := held
		held = nil
		if op == nil {
			select {
			case op = <-r.ops:
			case <-r.quit:
				r.drain()
				return
			}
		}
		batch := []*redisOp{op}
	fill:
		for op.kind != opRemove && len(batch) < maxCommitBatch {
			select {
			case o := <-r.ops:
				if o.kind == opRemove {
					held = o
					break fill
				}
				batch = append(batch, o)
			default:
				break fill
			}
		}
		r.commitBatch(batch)
	}
}

// drain answers what is queued at Close.
func (r *replica) drain() {
	for {
		select {
		case op := <-r.ops:
			op.res <- opResult{err: store.ErrClosed}
		default:
			return
		}
	}
}

// commitBatch decides and writes one batch: take the lock, reading the log
// in the same round trip; read on to the head if needed; decide every op in
// order (each against the replica and the batch's additions before it);
// write the keys and the log entries in one commit, which releases the lock;
// apply the entries to the replica; answer. If the commit fails the replica
// has not changed and every write of the batch, and every decline in favour
// of one, is answered with the error.
func (r *replica) commitBatch(batch []*redisOp) {
	live := batch[:0]
	for _, op := range batch {
		if err := op.ctx.Err(); err != nil {
			op.res <- opResult{err: unavailable(err)}
		} else {
			live = append(live, op)
		}
	}
	if len(live) == 0 {
		return
	}
	s, ctx := r.s, r.ctx
	token := s.newToken()
	atHead := false
	lr, t0, err := s.takeLock(ctx, token,
		func() *streamID {
			r.mu.Lock()
			defer r.mu.Unlock()
			if !r.loaded {
				return nil
			}
			from := r.last
			return &from
		},
		func(lr lockRead) error {
			if lr.log == nil {
				return nil
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			var err error
			atHead, err = r.applyReadLocked(ctx, lr.from, lr.log)
			return err
		})
	if err != nil {
		answerAll(live, err)
		return
	}
	hold, hcancel := context.WithDeadline(ctx, t0.Add(s.opt.LockTTL/2))
	defer hcancel()
	// Holding the write lock, nothing appends to the log: caught up, the
	// replica stays at its head while the batch is decided.
	if err := r.catchUp(hold, atHead); err != nil {
		s.release(ctx, token)
		answerAll(live, err)
		return
	}
	r.mu.Lock()
	res, cs, undo, err := r.decide(live, lr.seq)
	head := r.last
	r.mu.Unlock()
	if err != nil {
		s.release(ctx, token)
		answerAll(live, err)
		return
	}
	if len(cs) > 0 {
		var id streamID
		if id, err = s.commit(hold, token, cs); err == nil {
			r.mu.Lock()
			// Unless a sync read the entries meanwhile.
			if r.last == head {
				r.applyLocked(changeEntries(cs, id))
			}
			r.mu.Unlock()
		}
	}
	if err != nil || len(cs) == 0 {
		s.release(ctx, token)
	}
	for i, op := range live {
		if err != nil && undo[i] {
			res[i] = opResult{err: err}
		}
		op.res <- res[i]
	}
}

func answerAll(ops []*redisOp, err error) {
	for _, op := range ops {
		op.res <- opResult{err: err}
	}
}

// decide decides ops in order, called with r.mu held and the replica at the
// head of the log under the write lock. seq is the last sequence number
// given. It returns each op's result, the changes to write, and which
// results stand only if the changes are written (writes, and declines in
// favour of a document of the batch).
func (r *replica) decide(ops []*redisOp, seq uint64) (res []opResult, cs []change, undo []bool, err error) {
	k := r.kept.Load()
	ver := r.version.Load()
	// The batch's additions, after every document of the replica in
	// priority: matching k then b is keptmem.Set.AddIfNew on their union. One
	// One keptmem.Set serves every batch.
	if r.batch == nil {
		if r.batch, err = keptmem.New(r.s.rule, maxCommitBatch); err != nil {
			return nil, nil, nil, err
		}
	}
	b := r.batch
	for _, id := range r.batchIDs {
		b.Remove(id)
	}
	r.batchIDs = r.batchIDs[:0]
	res = make([]opResult, len(ops))
	undo = make([]bool, len(ops))
	for i, op := range ops {
		rec := op.rec
		switch op.kind {
		case opRemove:
			f, ok := k.Get(rec.ID)
			if !ok {
				continue
			}
			seq++
			cs = append(cs, change{del: true, rec: store.Record{ID: rec.ID, Seq: seq, Features: f}})
			res[i].ok, undo[i] = true, true
			continue
		case opAddIfNew:
			var (
				m   rule.KeptMatch
				dup bool
				err error
			)
			m, dup, err = r.rematchLocked(k, op, ver)
			if err == nil && !dup {
				m, dup, err = b.Match(&rec.Features)
				undo[i] = dup
			}
			if err != nil || dup {
				res[i] = opResult{m: m, dup: dup, err: err}
				continue
			}
		}
		if k.Contains(rec.ID) || b.Contains(rec.ID) {
			res[i].err = fmt.Errorf("%w: %q", store.ErrExists, rec.ID)
			continue
		}
		if err := b.Add(rec.ID, rec.Features); err != nil {
			res[i].err = existsError(err)
			continue
		}
		r.batchIDs = append(r.batchIDs, rec.ID)
		if op.kind == opPut {
			seq = max(seq, rec.Seq)
		} else {
			seq++
			rec.Seq = seq
		}
		cs = append(cs, change{rec: rec})
		undo[i] = true
	}
	return res, cs, undo, nil
}

// rematchLocked matches op's document against the replica k, now at
// version ver. An unlocked match at version op.ver found nothing in the
// replica of then; deletions since cannot make a match, so the first match
// now is the first among the additions since op.ver, which recent holds
// when op.ver >= recentFrom. Otherwise (or for an op never matched, op.ver
// 0) k is matched whole.
func (r *replica) rematchLocked(k *keptmem.Set, op *redisOp, ver uint64) (rule.KeptMatch, bool, error) {
	switch {
	case op.ver == ver:
		return rule.KeptMatch{}, false, nil // it saw this very replica
	case op.ver == 0 || op.ver < r.recentFrom:
		return k.Match(&op.rec.Features)
	}
	ms, err := r.recent.MatchAll(&op.rec.Features, 0)
	for _, m := range ms {
		if r.recentVer[m.ID] > op.ver {
			return m, true, err
		}
	}
	return rule.KeptMatch{}, false, err
}

// changeEntries returns the log entries of cs, the last with id.
func changeEntries(cs []change, id streamID) []logEntry {
	es := make([]logEntry, len(cs))
	for i, c := range cs {
		es[i] = logEntry{del: c.del, doc: c.rec.ID, seq: c.rec.Seq, f: c.rec.Features}
	}
	es[len(es)-1].id = id
	return es
}

// The replica's side of Store's methods.

func (r *replica) matchAll(ctx context.Context, f *rule.Features, limit int) ([]rule.KeptMatch, error) {
	if err := r.sync(ctx); err != nil {
		return nil, err
	}
	return r.kept.Load().MatchAll(f, limit)
}

// addIfNew matches without the lock first: a decline needs none, since the
// replica holds only committed documents and was synced after the call.
func (r *replica) addIfNew(ctx context.Context, rec store.Record) (rule.KeptMatch, bool, error) {
	if err := r.sync(ctx); err != nil {
		return rule.KeptMatch{}, false, err
	}
	ver := r.version.Load()
	m, dup, err := r.kept.Load().Match(&rec.Features)
	if err != nil || dup {
		return m, dup, err
	}
	res := r.submit(ctx, &redisOp{kind: opAddIfNew, rec: rec, ver: ver})
	return res.m, res.dup, res.err
}

// addIfNewBatch decides on recs in order, as addIfNew one at a time, after
// one sync, queueing them all before waiting so that they share commits.
func (r *replica) addIfNewBatch(ctx context.Context, recs []store.Record) ([]rule.KeptMatch, []bool, []error) {
	ms, dups, errs := make([]rule.KeptMatch, len(recs)), make([]bool, len(recs)), make([]error, len(recs))
	if err := r.sync(ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return ms, dups, errs
	}
	ops := make([]*redisOp, len(recs))
	for i, rec := range recs {
		// As addIfNew: a match among committed documents is a decline.
		ver := r.version.Load()
		if ms[i], dups[i], errs[i] = r.kept.Load().Match(&rec.Features); errs[i] != nil || dups[i] {
			continue
		}
		ops[i] = &redisOp{kind: opAddIfNew, rec: rec, ver: ver}
		errs[i] = r.enqueue(ctx, ops[i])
	}
	for i, op := range ops {
		if op != nil && errs[i] == nil {
			res := r.wait(ctx, op)
			ms[i], dups[i], errs[i] = res.m, res.dup, res.err
		}
	}
	return ms, dups, errs
}

func (r *replica) get(ctx context.Context, id string) (store.Record, error) {
	if err := r.sync(ctx); err != nil {
		return store.Record{}, err
	}
	f, ok := r.kept.Load().Get(id)
	if !ok {
		return store.Record{}, fmt.Errorf("%w: %q", store.ErrNotFound, id)
	}
	vs, err := r.s.c.HMGet(ctx, r.s.docKey(id), "seq", "f", "m").Result()
	if err != nil {
		return store.Record{}, unavailable(err)
	}
	rec, ok, err := decodeDoc(id, vs)
	if err != nil || !ok || rec.Features.FP != f.FP || rec.Features.Exact != f.Exact {
		// A delete whose log append failed after the hash went: the
		// replica's features, no metadata (REDIS.md, limits).
		return store.Record{ID: id, Features: f}, nil
	}
	return rec, nil
}

func (r *replica) len(ctx context.Context) (int, error) {
	if err := r.sync(ctx); err != nil {
		return 0, err
	}
	return r.kept.Load().Len(), nil
}

func (r *replica) queryFingerprint(ctx context.Context, fp uint64, k, limit int) ([]index.Match, error) {
	if err := r.sync(ctx); err != nil {
		return nil, err
	}
	return r.kept.Load().Index().Query(fp, k, limit)
}
