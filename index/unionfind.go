package index

import "math"

// A UnionFind is a disjoint-set forest over the integers 0..n-1, with union by
// size and path halving (Tarjan and van Leeuwen, "Worst-case analysis of set
// union algorithms", JACM 1984): any sequence of m operations takes
// O(m α(n)) time. Clusters uses it to turn the pairs of a self-join into
// connected components.
//
// A UnionFind is not safe for concurrent use.
type UnionFind struct {
	parent []int32 // parent[i] == i for roots
	size   []int32 // size[r] for roots r: the number of elements in r's set
	sets   int     // number of disjoint sets
}

// NewUnionFind returns n singleton sets {0}, {1}, ..., {n-1}. It panics if n
// is negative or exceeds math.MaxInt32 (32-bit links halve the memory of a
// forest over hundreds of millions of fingerprints).
func NewUnionFind(n int) *UnionFind {
	if n < 0 || n > math.MaxInt32 {
		panic("index: NewUnionFind size out of range")
	}
	u := &UnionFind{parent: make([]int32, n), size: make([]int32, n), sets: n}
	for i := range u.parent {
		u.parent[i] = int32(i)
		u.size[i] = 1
	}
	return u
}

// Len returns the number of elements.
func (u *UnionFind) Len() int { return len(u.parent) }

// Sets returns the number of disjoint sets.
func (u *UnionFind) Sets() int { return u.sets }

// Find returns the representative of a's set. Two elements are in the same set
// exactly when Find returns the same value for both. The representative is
// arbitrary; Clusters maps it to the smallest member.
func (u *UnionFind) Find(a int) int {
	p := u.parent
	x := int32(a)
	for p[x] != x {
		p[x] = p[p[x]] // path halving: point x at its grandparent
		x = p[x]
	}
	return int(x)
}

// Union merges the sets of a and b and reports whether they were disjoint.
func (u *UnionFind) Union(a, b int) bool {
	ra, rb := int32(u.Find(a)), int32(u.Find(b))
	if ra == rb {
		return false
	}
	if u.size[ra] < u.size[rb] {
		ra, rb = rb, ra
	}
	u.parent[rb] = ra
	u.size[ra] += u.size[rb]
	u.sets--
	return true
}

// Same reports whether a and b are in the same set.
func (u *UnionFind) Same(a, b int) bool { return u.Find(a) == u.Find(b) }

// Size returns the number of elements in a's set.
func (u *UnionFind) Size(a int) int { return int(u.size[u.Find(a)]) }

// Smallest returns, for each element, the smallest element of its set: the
// "keep the first, mark the rest" assignment, in which element i is a
// duplicate of an earlier one exactly when Smallest()[i] != i.
func (u *UnionFind) Smallest() []int {
	return u.smallest(make([]int32, len(u.parent)))
}

// smallest is Smallest with low, len(u.parent) int32s, as its scratch:
// low[r] is the smallest element of root r's set. Clusters passes u.size,
// which it no longer needs, so that the assignment costs 4 bytes a
// fingerprint less at its peak (the join's table is garbage by then, but
// 'neardup clusters' holds the collector back).
func (u *UnionFind) smallest(low []int32) []int {
	n := len(u.parent)
	// elements are visited in increasing order
	for i := range low {
		low[i] = -1
	}
	rep := make([]int, n)
	for i := range n {
		r := u.Find(i)
		if low[r] < 0 {
			low[r] = int32(i)
		}
		rep[i] = int(low[r])
	}
	return rep
}
