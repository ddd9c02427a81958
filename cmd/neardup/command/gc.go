package command

import (
	"os"
	"runtime/debug"
)

// joinGC sets the collector for a join over the fingerprints of the input
// files, held in memory, and returns what restores it. The join allocates its
// big arrays (fingerprints, one table's entries, reused across tables) once;
// with the default GOGC the collector still runs every time the small garbage
// of parsing doubles the heap, and returning the freed pages to the system and
// faulting them back cost a quarter of 'neardup pairs' at 10M (sys 1.8-2.6 s
// of a 3.1-3.8 s run; 0.7 s with the collector off). So the collector runs
// only near a soft limit: 1 GiB plus 8 bytes per input byte (a fingerprint
// line has at least 2 bytes, the join needs about 30 bytes per fingerprint),
// as the dedup command does with its own limit. GOGC or GOMEMLIMIT in the
// environment win; standard input counts as empty (the limit is soft).
func joinGC(inputs []string) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	var size int64
	for _, in := range inputs {
		if st, err := os.Stat(in); err == nil && st.Mode().IsRegular() {
			size += st.Size()
		}
	}
	limit := debug.SetMemoryLimit(1<<30 + 8*size)
	pct := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}
}
