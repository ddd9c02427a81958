package index

import (
	"slices"
	"testing"
)

func TestUnionFind(t *testing.T) {
	tests := []struct {
		n      int
		unions [][2]int
		want   []int // Smallest
		sets   int
		merged int // unions that merged two sets
	}{
		{0, nil, []int{}, 0, 0},
		{3, nil, []int{0, 1, 2}, 3, 0},
		{5, [][2]int{{3, 4}, {1, 3}, {4, 1}}, []int{0, 1, 2, 1, 1}, 3, 2},
		{6, [][2]int{{5, 4}, {3, 2}, {4, 2}, {0, 0}}, []int{0, 1, 2, 2, 2, 2}, 3, 3},
	}
	for _, tt := range tests {
		u := NewUnionFind(tt.n)
		merged := 0
		for _, p := range tt.unions {
			if u.Union(p[0], p[1]) {
				merged++
			}
		}
		if got := u.Smallest(); !slices.Equal(got, tt.want) {
			t.Errorf("unions %v: Smallest = %v, want %v", tt.unions, got, tt.want)
		}
		if u.Sets() != tt.sets || merged != tt.merged || u.Len() != tt.n {
			t.Errorf("unions %v: Sets %d merged %d Len %d, want %d %d %d", tt.unions, u.Sets(), merged, u.Len(), tt.sets, tt.merged, tt.n)
		}
	}
}

func TestUnionFindSize(t *testing.T) {
	u := NewUnionFind(10)
	for i := 1; i < 10; i += 2 {
		u.Union(i-1, i)
	}
	u.Union(0, 9)
	if got := u.Size(9); got != 4 {
		t.Errorf("Size(9) = %d, want 4", got)
	}
	if !u.Same(1, 8) || u.Same(2, 4) {
		t.Errorf("Same(1, 8) = %v, Same(2, 4) = %v; want true, false", u.Same(1, 8), u.Same(2, 4))
	}
}
