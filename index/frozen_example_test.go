package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/index"
)

func ExampleBuildFrozen() {
	fps := []uint64{0x0123456789abcdef, 0x0123456789abcdee, 0xfedcba9876543210}
	ids := []uint64{100, 101, 102}
	f, err := index.BuildFrozen(context.Background(), index.SliceSource(fps, ids), index.FrozenOptions{K: 3})
	if err != nil {
		panic(err)
	}
	path := filepath.Join(os.TempDir(), "example.ndf")
	defer os.Remove(path)
	if err := f.SaveFile(path); err != nil {
		panic(err)
	}
	g, err := index.OpenFrozen(path, index.FrozenOpenOptions{})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	matches, err := g.Query(0x0123456789abcdef, 3, 0)
	if err != nil {
		panic(err)
	}
	for _, m := range matches {
		fmt.Printf("%d %016x %d\n", m.ID, m.Fingerprint, m.Distance)
	}
	// Output:
	// 100 0123456789abcdef 0
	// 101 0123456789abcdee 1
}
