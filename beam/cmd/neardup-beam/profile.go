package main

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// heapPeak writes a heap profile to path each time the live heap after a
// collection is the largest seen so far, polled every second until ctx is
// done: the profile left is the one of the peak, where a profile at exit
// would show what is left over.
func heapPeak(ctx context.Context, path string) {
	var peak uint64
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc <= peak*11/10 {
			continue
		}
		peak = ms.HeapAlloc
		f, err := os.Create(path)
		if err != nil {
			return
		}
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
}
