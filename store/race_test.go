//go:build race

package store

// raceEnabled skips, under the race detector, the damage tests that trip a
// race inside bbolt's own failure path (see TestStoreFileDamage).
const raceEnabled = true
