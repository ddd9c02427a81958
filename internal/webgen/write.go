package webgen

import (
	"context"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// chunk is the number of documents a worker makes at a time.
const chunk = 512

// Write writes documents first .. first+n-1 to w as JSON lines (AppendJSON),
// made by workers goroutines (0: GOMAXPROCS) in chunks and written in order:
// the bytes do not depend on workers.
func (g *Generator) Write(ctx context.Context, w io.Writer, first, n int64, workers int) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	chunks := (n + chunk - 1) / chunk
	workers = int(min(int64(workers), max(chunks, 1)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Workers take the next chunk as they become free, so one descheduled
	// worker holds back one chunk, not every other one. At most window
	// chunks are in flight (a token each, returned once written); chunk c
	// waits for the writer in slots[c%window], free by then.
	window := 4 * workers
	tokens := make(chan struct{}, window)
	slots := make([]chan []byte, window)
	for i := range slots {
		slots[i] = make(chan []byte, 1)
	}
	free := make(chan []byte, window)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s := NewScratch()
			for {
				select {
				case tokens <- struct{}{}:
				case <-ctx.Done():
					return
				}
				c := next.Add(1) - 1
				if c >= chunks {
					return
				}
				var buf []byte
				select {
				case buf = <-free:
				default:
				}
				buf = buf[:0]
				end := min(first+(c+1)*chunk, first+n)
				for i := first + c*chunk; i < end; i++ {
					buf = g.AppendJSON(buf, i, s)
				}
				slots[c%int64(window)] <- buf
			}
		})
	}
	var err error
	for c := int64(0); c < chunks; c++ {
		var buf []byte
		select {
		case buf = <-slots[c%int64(window)]:
		case <-ctx.Done():
		}
		if err = ctx.Err(); err != nil {
			break
		}
		if _, err = w.Write(buf); err != nil {
			break
		}
		free <- buf
		<-tokens
	}
	cancel()
	wg.Wait()
	return err
}
