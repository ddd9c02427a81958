package measure

import (
	"cmp"
	"math"
	"slices"
)

// Term is one dimension of a sparse vector: a term's key (usually the hash of
// the term) and its weight (for example TF-IDF).
type Term struct {
	Key    uint64
	Weight float64
}

// Vector is a sparse vector of terms, sorted by Key with unique keys. Build
// one with NewVector; a hand-made Vector must keep that invariant.
type Vector []Term

// NewVector sorts t by key and merges terms with equal keys by adding their
// weights, in place, returning the result (which shares t's memory). Adding
// is what a caller building term frequencies one token at a time wants.
func NewVector(t []Term) Vector {
	slices.SortFunc(t, func(a, b Term) int { return cmp.Compare(a.Key, b.Key) })
	out := t[:0]
	for _, x := range t {
		if n := len(out); n > 0 && out[n-1].Key == x.Key {
			out[n-1].Weight += x.Weight
			continue
		}
		out = append(out, x)
	}
	return Vector(out)
}

// Dot returns the inner product of a and b by a merge walk.
func Dot(a, b Vector) float64 {
	var s float64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i].Key < b[j].Key:
			i++
		case a[i].Key > b[j].Key:
			j++
		default:
			s += a[i].Weight * b[j].Weight
			i++
			j++
		}
	}
	return s
}

// Norm returns the Euclidean length of v.
func (v Vector) Norm() float64 {
	var s float64
	for _, t := range v {
		s += t.Weight * t.Weight
	}
	return math.Sqrt(s)
}

// Cosine returns the cosine of the angle between a and b, dot(a,b) /
// (|a| |b|), as in seed 001's ComputeCosineSimilarity over TF-IDF vectors. For
// non-negative weights the result is in [0, 1]; it is clamped to [-1, 1]
// against rounding. Two zero vectors give 1, one zero vector gives 0.
func Cosine(a, b Vector) float64 {
	na, nb := a.Norm(), b.Norm()
	switch {
	case na == 0 && nb == 0:
		return 1
	case na == 0 || nb == 0:
		return 0
	}
	c := Dot(a, b) / (na * nb)
	return max(-1, min(1, c))
}
