//go:build unix

package features

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used, so
// that benchmarks can report throughput per CPU-second: unlike wall time it
// does not drop when other processes share the machine's cores.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
