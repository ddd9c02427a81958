//go:build race

package features

// raceEnabled skips, under the race detector, the property tests over whole
// corpora that run no goroutines of their own and are many times slower
// there; the run without it asserts them. The concurrency tests
// (TestConcurrent, TestZhConcurrent) run under it.
const raceEnabled = true
