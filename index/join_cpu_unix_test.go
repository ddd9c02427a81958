//go:build unix

package index

import (
	"syscall"
	"time"
)

// joinCPUTime returns the CPU time (user and system) the process has used, so
// that benchmarks on a busy machine can report work as well as wall time.
func joinCPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
