package measure

import "unicode/utf8"

// Levenshtein returns the edit distance between a and b: the least number of
// single-rune insertions, deletions and substitutions that turn a into b
// (Levenshtein 1966; computed with the Wagner-Fischer dynamic programme,
// keeping one row). It works on runes, not bytes, so "café" and "cafe" are one
// edit apart; each invalid UTF-8 byte counts as one rune U+FFFD.
//
// Time is O(len(a) * len(b)) and memory O(min(len(a), len(b))): it is meant
// for short strings (titles, lines, fortunes), not for whole documents.
func Levenshtein(a, b string) int {
	// A common prefix and suffix never need an edit; stripping them makes the
	// usual case (small edits of long strings) cheap.
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb || ra == utf8.RuneError {
			break
		}
		a, b = a[na:], b[nb:]
	}
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeLastRuneInString(a)
		rb, nb := utf8.DecodeLastRuneInString(b)
		if ra != rb || ra == utf8.RuneError {
			break
		}
		a, b = a[:len(a)-na], b[:len(b)-nb]
	}
	ra, rb := []rune(a), []rune(b)
	if len(ra) < len(rb) {
		ra, rb = rb, ra // rb is the shorter: the row has len(rb)+1 cells
	}
	if len(rb) == 0 {
		return len(ra)
	}
	row := make([]int, len(rb)+1)
	for j := range row {
		row[j] = j
	}
	for i, x := range ra {
		diag := row[0] // D[i][j-1] of the previous row, before overwriting
		row[0] = i + 1
		for j, y := range rb {
			cost := 1
			if x == y {
				cost = 0
			}
			up := row[j+1] // D[i][j+1]
			row[j+1] = min(up+1, row[j]+1, diag+cost)
			diag = up
		}
	}
	return row[len(rb)]
}

// LevenshteinSimilarity returns 1 - d/max(|a|, |b|), with d the Levenshtein
// distance and lengths counted in runes: 1 for equal strings (including two
// empty ones), 0 when every rune must change.
func LevenshteinSimilarity(a, b string) float64 {
	n := max(utf8.RuneCountInString(a), utf8.RuneCountInString(b))
	if n == 0 {
		return 1
	}
	return 1 - float64(Levenshtein(a, b))/float64(n)
}
