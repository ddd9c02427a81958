//go:build race

package server

// raceEnabled skips, under the race detector, the tests that exercise no
// concurrency of ours and are many times slower there: the corpus-scale
// online-equals-batch comparison (asserted by the run without it) and the
// browser test. The concurrent paths (group commit, the shared Redis index,
// add_if_new races, crash and fault tests) run under it.
const raceEnabled = true
