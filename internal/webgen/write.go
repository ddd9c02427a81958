package webgen

import (
	"context"
	"io"
	"runtime"
	"sync"
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
	// Chunk c goes to worker c % workers, which sends it on its own channel;
	// the writer takes the channels in turn. free recycles the buffers.
	out := make([]chan []byte, workers)
	free := make(chan []byte, 3*workers)
	var wg sync.WaitGroup
	for wi := range workers {
		out[wi] = make(chan []byte, 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(out[wi])
			s := NewScratch()
			for c := int64(wi); c < chunks; c += int64(workers) {
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
				select {
				case out[wi] <- buf:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	var err error
	for c := int64(0); c < chunks; c++ {
		buf, ok := <-out[c%int64(workers)]
		if !ok {
			break
		}
		if err = ctx.Err(); err != nil {
			break
		}
		if _, err = w.Write(buf); err != nil {
			break
		}
		select {
		case free <- buf:
		default:
		}
	}
	cancel()
	wg.Wait()
	return err
}
