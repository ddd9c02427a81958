//go:build race

package rule

// raceEnabled skips, under the race detector, the internal tests that run
// one goroutine over code that starts none (the postings tables, the binary
// codecs, the arena, the radix sort): the detector has nothing to find
// there, they are many times slower under it, and the run without it
// asserts them. The Loader and AddIfNew tests, whose code runs goroutines,
// run under it.
const raceEnabled = true
