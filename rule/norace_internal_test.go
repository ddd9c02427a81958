//go:build !race

package rule

const raceEnabled = false
