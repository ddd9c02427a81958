//go:build race

package dedup_test

// raceEnabled skips the corpus-scale accuracy tests under the race detector:
// they check decisions, which the run without it already asserts, and are
// ten times slower there; the concurrent code paths run under it on the
// small corpora of the other tests.
const raceEnabled = true
