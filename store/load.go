package store

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/neardup/neardup/rule"
)

// decodeInOrder decodes the records that scan emits (a store key and value,
// valid only during the call, as pebble's iterator and bbolt's cursor give
// them) on every core and calls fn with each, in the order scan emitted
// them, from one goroutine. At start-up decoding the shingle sets was half
// the time of a scan that ran on one core while the other waited.
//
// scan runs on the calling goroutine and must return when emit returns an
// error (emit then returns the error that stops the load: fn's, a decoding
// error, or ctx's). decodeInOrder returns the first of those, or scan's own.
func decodeInOrder(ctx context.Context, scan func(emit func(key, v []byte) error) error, fn func(Record) error) error {
	const batchSize = 512
	type batch struct {
		raw  []byte   // the keys and values, copied
		ends []int    // raw[ends[2i-1]:ends[2i]] is key i, then its value
		recs []Record // decoded
		err  error
		done chan struct{}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	workers := max(1, runtime.GOMAXPROCS(0))
	work := make(chan *batch, 2*workers)
	ordered := make(chan *batch, 4*workers)
	// Batches go back to the scan once fn has seen their records: fresh
	// buffers cost a page fault every 4 KB (their copy was an eighth of
	// start-up) and garbage to collect.
	free := make(chan *batch, cap(work)+cap(ordered)+2) // every batch there can be
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var arena rule.Arena // the records' sketches are kept
			for b := range work {
				b.recs = slices.Grow(b.recs[:0], len(b.ends)/2)
				start := 0
				for i := 0; i < len(b.ends); i += 2 {
					key, v := b.raw[start:b.ends[i]], b.raw[b.ends[i]:b.ends[i+1]]
					start = b.ends[i+1]
					r, err := decodeRecordArena(key, v, &arena)
					if err != nil {
						b.err = err // the records before it still go to fn
						break
					}
					b.recs = append(b.recs, r)
				}
				close(b.done)
			}
		})
	}
	// The consumer calls fn in order; it stops the scan through ctx.
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		failed := false
		for b := range ordered {
			<-b.done
			if failed {
				continue // drain
			}
			err := context.Cause(ctx) // cancelled: call fn no more
			for i := 0; err == nil && i < len(b.recs); i++ {
				err = fn(b.recs[i])
			}
			if err == nil {
				err = b.err
			}
			if err != nil {
				failed = true
				cancel(err)
			}
			clear(b.recs) // fn has them: keep nothing alive
			select {
			case free <- b:
			default:
			}
		}
	}()

	var cur *batch
	size := 64 << 10 // of raw: the last batch's, and some
	flush := func() {
		if cur != nil {
			size = max(size, len(cur.raw)+len(cur.raw)/8)
			work <- cur
			ordered <- cur
			cur = nil
		}
	}
	n := 0
	scanErr := scan(func(key, v []byte) error {
		if n++; n%4096 == 0 {
			if err := context.Cause(ctx); err != nil {
				return err
			}
		}
		if cur == nil {
			select {
			case cur = <-free:
				cur.raw, cur.ends, cur.err = cur.raw[:0], cur.ends[:0], nil
			default:
				cur = &batch{raw: make([]byte, 0, size), ends: make([]int, 0, 2*batchSize)}
			}
			cur.done = make(chan struct{})
		}
		cur.raw = append(append(cur.raw, key...), v...)
		cur.ends = append(cur.ends, len(cur.raw)-len(v), len(cur.raw))
		if len(cur.ends) == 2*batchSize {
			flush()
		}
		return nil
	})
	flush()
	close(work)
	close(ordered)
	wg.Wait()
	<-consumed
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return scanErr
}
