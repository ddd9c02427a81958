package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteClusters labels each fingerprint with the smallest index of its
// connected component, by depth-first search over the brute-force pairs.
func bruteClusters(fps []uint64, k int) []int {
	adj := make([][]int, len(fps))
	for _, p := range brutePairs(fps, k) {
		adj[p.A] = append(adj[p.A], p.B)
		adj[p.B] = append(adj[p.B], p.A)
	}
	rep := make([]int, len(fps))
	for i := range rep {
		rep[i] = -1
	}
	for i := range fps {
		if rep[i] >= 0 {
			continue
		}
		stack := []int{i}
		rep[i] = i
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, y := range adj[x] {
				if rep[y] < 0 {
					rep[y] = i
					stack = append(stack, y)
				}
			}
		}
	}
	return rep
}

func TestClustersMatchBruteForce(t *testing.T) {
	for k := 0; k <= 8; k++ {
		rng := rand.New(rand.NewPCG(uint64(k), 9))
		inputs := map[string][]uint64{
			"planted":     plantedFingerprints(rng, 500, k+2),
			"many copies": manyCopies(rng),
		}
		for name, fps := range inputs {
			want := bruteClusters(fps, k)
			for _, bucket := range []int{0, 16} {
				t.Run(fmt.Sprintf("k=%d/%s/bucket=%d", k, name, bucket), func(t *testing.T) {
					got, err := Clusters(context.Background(), fps, k, JoinOptions{Workers: 2, bucketSize: bucket, finalBits: bucket / 4})
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("got %v..., want %v...", got[:20], want[:20])
					}
				})
			}
		}
	}
}

func TestClusterGroups(t *testing.T) {
	tests := []struct {
		rep  []int
		want [][]int
	}{
		{nil, nil},
		{[]int{0, 1, 2}, nil},
		{[]int{0, 0, 2, 0, 2, 5}, [][]int{{0, 1, 3}, {2, 4}}},
		{[]int{0, 1, 1, 1}, [][]int{{1, 2, 3}}},
		{[]int{3, 3, 0, 0}, [][]int{{0, 1}, {2, 3}}},
		{[]int{-1, 7, -1, 7, 5}, [][]int{{0, 2}, {1, 3}}}, // labels, not indices
	}
	for _, tt := range tests {
		got := ClusterGroups(tt.rep)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("ClusterGroups(%v) = %v, want %v", tt.rep, got, tt.want)
		}
	}
}

// TestClustersManyIdentical joins 100,000 copies of one fingerprint, which
// make five billion pairs: Clusters must join them without enumerating the
// pairs (this test would not finish otherwise).
func TestClustersManyIdentical(t *testing.T) {
	const copies = 100_000
	fps := make([]uint64, copies+3)
	for i := range fps {
		fps[i] = 0xfeedfacecafebeef
	}
	fps[1] = 0x0123456789abcdef        // alone
	fps[2] = 0xfeedfacecafebeef ^ 1<<9 // one bit from the copies
	fps[copies+2] = ^uint64(0)         // alone
	rep, err := Clusters(context.Background(), fps, 3, JoinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rep {
		want := 0
		if i == 1 || i == copies+2 {
			want = i
		}
		if r != want {
			t.Fatalf("rep[%d] = %d, want %d", i, r, want)
		}
	}
	if g := ClusterGroups(rep); len(g) != 1 || len(g[0]) != copies+1 {
		t.Fatalf("got %d groups, want one of %d", len(g), copies+1)
	}
}
