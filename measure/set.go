package measure

import "slices"

// Set is a set of 64-bit feature hashes (for example the hashes of a
// document's word shingles), kept sorted in increasing order without
// repeats. Build one with NewSet; a hand-made Set must keep that invariant.
type Set []uint64

// NewSet sorts h and removes repeats in place, returning the result (which
// shares h's memory).
func NewSet(h []uint64) Set {
	slices.Sort(h)
	return Set(slices.Compact(h))
}

// Contains reports whether x is in s, by binary search.
func (s Set) Contains(x uint64) bool {
	_, ok := slices.BinarySearch(s, x)
	return ok
}

// Intersection returns |a ∩ b| by a merge walk of the two sorted sets.
func Intersection(a, b Set) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// Jaccard returns the Jaccard similarity |a ∩ b| / |a ∪ b| of two sets
// (Broder, "On the resemblance and containment of documents", 1997). Two
// empty sets give 1; one empty set and a non-empty one give 0.
func Jaccard(a, b Set) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	in := Intersection(a, b)
	return float64(in) / float64(len(a)+len(b)-in)
}
