package redisstore

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// collector removes what cancelled and deleted additions leave behind: the
// band entries of a record that is gone, the record and entries of a
// cancelled addition, and cancels additions pending past PendingTTL (their
// server died). Readers hand it what they meet; it works in the background
// so that no request waits for clean-up, and drops work when it falls
// behind (the next reader of the same bucket hands it over again).
type collector struct {
	s    *Store
	jobs chan gcJob
	done chan struct{}
	// pending counts the jobs queued or being done (for tests: the index
	// is settled when it is zero).
	pending atomic.Int64
	wg      sync.WaitGroup
}

type gcJob struct {
	kind        byte // 'e' entry, 'r' record, 's' stale, 'c' own cancel
	seq         uint64
	bucket, tag string
	id          string
	keys        []uint64
	fp          uint64
}

func newCollector(s *Store) *collector {
	c := &collector{s: s, jobs: make(chan gcJob, 4096), done: make(chan struct{})}
	c.wg.Add(1)
	go c.run()
	return c
}

func (c *collector) put(j gcJob) {
	c.pending.Add(1)
	select {
	case <-c.done:
		c.pending.Add(-1)
	case c.jobs <- j:
	default: // behind: a later reader hands it over again
		c.pending.Add(-1)
	}
}

func (c *collector) entry(bucket, tag string, seq uint64) {
	c.put(gcJob{kind: 'e', bucket: bucket, tag: tag, seq: seq})
}
func (c *collector) record(seq uint64) { c.put(gcJob{kind: 'r', seq: seq}) }

// fpEntries removes the block entries of seq (fingerprint fp), whose
// record is gone.
func (c *collector) fpEntries(fp, seq uint64) {
	c.put(gcJob{kind: 'f', fp: fp, seq: seq})
}
func (c *collector) stale(seq uint64) { c.put(gcJob{kind: 's', seq: seq}) }

// cancel ends the caller's own addition seq (id, candidate keys,
// fingerprint) that will not be committed: its state is set first, at
// once, so that additions waiting for it go on; the rest is cleared in the
// background.
func (c *collector) cancel(seq uint64, id string, keys []uint64, fp uint64) {
	s := c.s
	ctx, stop := context.WithTimeout(context.Background(), s.opt.Timeout)
	defer stop()
	if _, err := s.setState(ctx, seq, stateKilled, false); err != nil {
		s.log.Warn("redis: cancelling an addition failed; it goes stale", "seq", seq, "err", err)
		return
	}
	c.put(gcJob{kind: 'c', seq: seq, id: id, keys: keys, fp: fp})
}

func (c *collector) close() {
	close(c.done)
	c.wg.Wait()
}

func (c *collector) run() {
	defer c.wg.Done()
	seen := map[uint64]bool{}
	for {
		select {
		case <-c.done:
			return
		case j := <-c.jobs:
			c.run1(j, seen)
			c.pending.Add(-1)
		}
	}
}

// run1 does job j, unless it is a record's that was done already.
func (c *collector) run1(j gcJob, seen map[uint64]bool) {
	if j.kind != 'e' && j.kind != 'f' {
		if seen[j.seq] {
			return
		}
		if len(seen) > 1<<14 {
			clear(seen)
		}
		seen[j.seq] = true
	}
	ctx, stop := context.WithTimeout(context.Background(), 4*c.s.opt.Timeout)
	defer stop()
	if err := c.do(ctx, j); err != nil {
		c.s.log.Debug("redis clean-up failed", "seq", j.seq, "err", err)
	}
}

func (c *collector) do(ctx context.Context, j gcJob) error {
	s := c.s
	switch j.kind {
	case 'e':
		return dropSeq.Run(ctx, s.c, []string{j.bucket}, j.tag, seqString(j.seq)).Err()
	case 'f':
		return s.scripts(ctx, s.fpCalls(j.seq, j.fp, true), nil)
	case 'c':
		return s.clear(ctx, j.seq, j.id, j.keys, j.fp)
	}
	if j.kind == 's' {
		rs, err := s.readRecords(ctx, []uint64{j.seq})
		if err != nil || !rs[0].ok || rs[0].state != "" || time.Since(rs[0].at) <= s.opt.PendingTTL {
			return err
		}
		if _, err := s.setState(ctx, j.seq, stateKilled, false); err != nil {
			return err
		}
		s.log.Info("redis: cancelled an addition pending past its time to live (its server stopped)", "seq", j.seq, "id", rs[0].rec.ID)
	}
	rs, err := s.readRecords(ctx, []uint64{j.seq})
	if err != nil || !rs[0].ok || rs[0].state != stateKilled {
		return err
	}
	return s.clear(ctx, j.seq, rs[0].rec.ID, s.keys(&rs[0].rec.Features), rs[0].rec.Features.FP)
}

// clear removes the cancelled addition seq: its entries, its id (if still
// its own) and then its record, prefilter and state.
func (s *Store) clear(ctx context.Context, seq uint64, id string, keys []uint64, fp uint64) error {
	calls := append(s.dropCalls(seq, keys, fp), call{sc: dropID, keys: []string{s.idKey(id)}, args: []any{id, strconv.FormatUint(seq, 10)}})
	if err := s.scripts(ctx, calls, nil); err != nil {
		return err
	}
	rk, rf, sf := s.recordKey(seq)
	return s.c.HDel(ctx, rk, rf, preField(rf), sf).Err()
}
