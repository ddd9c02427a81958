//go:build !race

package rule_test

const raceEnabled = false
