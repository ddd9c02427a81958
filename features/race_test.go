//go:build race

package features

// raceEnabled skips, under the race detector, the property tests over whole
// corpora or samples of them, and the comparisons of the Chinese tokenizers
// with gse and with the staged pipeline on real text: they run no goroutines
// of their own and are many times slower there; the run without it asserts
// them. The concurrency tests (TestConcurrent, TestZhConcurrent) run under
// it.
const raceEnabled = true
