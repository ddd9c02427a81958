package index

import (
	"context"
	"math"
)

// Clusters groups fingerprints into the connected components of the graph
// whose edges are the pairs within k bits (single-linkage clustering, as
// seomoz/simhash-cpp's find_clusters does) and returns, for each fingerprint,
// the smallest index in its component: "keep the first, mark the rest", so
// fps[i] is a near-duplicate of an earlier fingerprint exactly when
// rep[i] != i.
//
// Components are transitive: a chain of fingerprints each within k bits of
// the next forms one component even when its ends are far apart.
//
// Identical fingerprints are joined in linear time, without enumerating the
// pairs among them, so many copies of one value cost no more than one.
// Memory at the peak is about 28 bytes per fingerprint beyond the input:
// the join's table (12; garbage once the join is done, unless the caller
// holds its collector back, as 'neardup clusters' does), the union-find (8,
// whose sizes then serve as the assignment's scratch) and the result (8).
// No pair list is kept.
func Clusters(ctx context.Context, fps []uint64, k int, opt JoinOptions) ([]int, error) {
	if len(fps) > maxJoin {
		return nil, joinErrTooMany(len(fps))
	}
	u := NewUnionFind(len(fps))
	err := join(ctx, fps, k, opt, false, func(p Pair) error {
		u.Union(p.A, p.B)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u.smallest(u.size), nil // u is discarded: its sizes are the scratch
}

// ClusterGroups lists the clusters of two or more members in a
// representative assignment such as the one Clusters returns (members i with
// the same rep[i] form a cluster): each group holds its members in increasing
// order, so with Clusters' assignment the first member is the one kept, and
// groups are in order of their first member.
func ClusterGroups(rep []int) [][]int {
	// state[r] counts the members with rep r, then once r's group exists
	// holds -(its index+1): one int32 per element rather than a map, which at
	// 100M fingerprints would take gigabytes.
	n := len(rep)
	state := make([]int32, n)
	for _, r := range rep {
		if r < 0 || r >= n || n > math.MaxInt32 {
			return clusterGroupsMap(rep)
		}
		state[r]++
	}
	var groups [][]int
	for i, r := range rep {
		switch s := state[r]; {
		case s < 0:
			groups[-s-1] = append(groups[-s-1], i)
		case s >= 2:
			groups = append(groups, append(make([]int, 0, s), i))
			state[r] = int32(-len(groups))
		}
	}
	return groups
}

// clusterGroupsMap is ClusterGroups for labels that are not indices.
func clusterGroupsMap(rep []int) [][]int {
	count := make(map[int]int)
	for _, r := range rep {
		count[r]++
	}
	slot := make(map[int]int)
	var groups [][]int
	for i, r := range rep {
		n := count[r]
		if n < 2 {
			continue
		}
		s, ok := slot[r]
		if !ok {
			s = len(groups)
			slot[r] = s
			groups = append(groups, make([]int, 0, n))
		}
		groups[s] = append(groups[s], i)
	}
	return groups
}
