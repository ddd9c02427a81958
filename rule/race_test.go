//go:build race

package rule_test

// raceEnabled skips, under the race detector, the external tests that run
// one goroutine over corpora (the tokenizer against eval's ground truth):
// the detector has nothing to find there, and the run without it asserts
// them.
const raceEnabled = true
