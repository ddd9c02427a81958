//go:build !race

package keptmem

const raceEnabled = false
