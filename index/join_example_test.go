package index_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/index"
)

func ExampleJoin() {
	fps := []uint64{
		0xf0f0f0f0f0f0f0f0,
		0x0123456789abcdef,
		0xf0f0f0f0f0f0f0f1, // 1 bit from the first
		0xf0f0f0f0f0f0f0f0, // a copy of the first
	}
	var pairs []index.Pair
	err := index.Join(context.Background(), fps, 3, index.JoinOptions{}, func(p index.Pair) error {
		pairs = append(pairs, p) // called from one goroutine at a time
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Pairs come in no particular order.
	slices.SortFunc(pairs, func(a, b index.Pair) int { return (a.A-b.A)*len(fps) + a.B - b.B })
	for _, p := range pairs {
		fmt.Printf("%d %d distance %d\n", p.A, p.B, p.Distance)
	}
	// Output:
	// 0 2 distance 1
	// 0 3 distance 0
	// 2 3 distance 1
}

func ExampleClusters() {
	fps := []uint64{
		0x0000000000000000,
		0xffffffffffffffff,
		0x0000000000000007, // 3 bits from fps[0]
		0xfffffffffffffffe, // 1 bit from fps[1]
		0x000000000000003f, // 3 bits from fps[2], 6 from fps[0]: joined through fps[2]
	}
	rep, err := index.Clusters(context.Background(), fps, 3, index.JoinOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("keep the first:", rep)
	fmt.Println("groups:", index.ClusterGroups(rep))
	// Output:
	// keep the first: [0 1 0 1 0]
	// groups: [[0 2 4] [1 3]]
}

func ExamplePlanJoin() {
	e := index.PlanJoin(10_000_000, 3)
	fmt.Println(e.Plan)
	// Output:
	// k=3 blocks=13,13,13,13,12 tables=10 key bits=25-26
}

func ExampleUnionFind() {
	u := index.NewUnionFind(5)
	u.Union(3, 4)
	u.Union(1, 3)
	fmt.Println(u.Same(1, 4), u.Same(0, 4), u.Sets(), u.Smallest())
	// Output:
	// true false 3 [0 1 2 1 1]
}
