//go:build race

package index

// raceEnabled trims the largest tests under the race detector, which slows
// them tenfold.
const raceEnabled = true
