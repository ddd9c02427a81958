package measure_test

import (
	"fmt"

	"github.com/neardup/neardup/measure"
)

func ExampleJaccard() {
	a := measure.NewSet([]uint64{1, 2, 3})
	b := measure.NewSet([]uint64{2, 3, 4})
	fmt.Println(measure.Jaccard(a, b))
	// Output: 0.5
}

func ExampleNewSet() {
	fmt.Println(measure.NewSet([]uint64{3, 1, 3, 2}))
	// Output: [1 2 3]
}

func ExampleCosine() {
	// Seed 001's word-count vectors of 我/爱/北京/天安门 and 我们/都爱/北京/天安门.
	a := measure.NewVector([]measure.Term{{Key: 0, Weight: 1}, {Key: 1, Weight: 1}, {Key: 2, Weight: 1}, {Key: 3, Weight: 1}})
	b := measure.NewVector([]measure.Term{{Key: 0, Weight: 1}, {Key: 2, Weight: 1}, {Key: 3, Weight: 2}})
	fmt.Printf("%.4f\n", measure.Cosine(a, b))
	// Output: 0.8165
}

func ExampleNewVector() {
	// Terms may come one token at a time; equal keys are summed.
	v := measure.NewVector([]measure.Term{{Key: 7, Weight: 1}, {Key: 2, Weight: 1}, {Key: 7, Weight: 1}})
	fmt.Println(v)
	// Output: [{2 1} {7 2}]
}

func ExampleLevenshtein() {
	fmt.Println(measure.Levenshtein("kitten", "sitting"))
	fmt.Println(measure.Levenshtein("北京天安门", "北京的天安门"))
	// Output:
	// 3
	// 1
}

func ExampleLevenshteinSimilarity() {
	fmt.Printf("%.3f\n", measure.LevenshteinSimilarity("kitten", "sitting"))
	// Output: 0.571
}

func ExampleIntersection() {
	a := measure.NewSet([]uint64{1, 2, 3, 4})
	b := measure.NewSet([]uint64{3, 4, 5})
	fmt.Println(measure.Intersection(a, b), a.Contains(2), b.Contains(2))
	// Output: 2 true false
}

func ExampleDot() {
	a := measure.NewVector([]measure.Term{{Key: 1, Weight: 2}, {Key: 2, Weight: 1}})
	b := measure.NewVector([]measure.Term{{Key: 1, Weight: 3}, {Key: 3, Weight: 5}})
	fmt.Println(measure.Dot(a, b), measure.Vector{{Key: 1, Weight: 3}, {Key: 2, Weight: 4}}.Norm())
	// Output: 6 5
}
