package index_test

import (
	"bytes"
	"fmt"

	"github.com/neardup/neardup/index"
)

func Example() {
	x, err := index.New(index.Options{K: 3})
	if err != nil {
		panic(err)
	}
	x.Add("a", 0xf0f0f0f0f0f0f0f0)
	x.Add("b", 0xf0f0f0f0f0f0f0f1) // 1 bit from a
	x.Add("c", 0x0f0f0f0f0f0f0f0f) // far from both
	ms, _ := x.Query(0xf0f0f0f0f0f0f0f0, 3, 0)
	for _, m := range ms {
		fmt.Println(m.ID, m.Distance)
	}
	// Output:
	// a 0
	// b 1
}

func ExampleBuild() {
	ids := []string{"x", "y", "z"}
	fps := []uint64{0b0000, 0b0111, 0b1111}
	x, _ := index.Build(ids, fps, index.Options{Layout: "seeds-4x16"})
	ms, _ := x.Query(0b1111, 3, 0)
	fmt.Println(ms)
	// Output:
	// [{z 15 0} {y 7 1}]
}

func ExampleIndex_Query_limit() {
	x, _ := index.Build([]string{"p", "q", "r"}, []uint64{1, 2, 4}, index.Options{})
	ms, _ := x.Query(0, 1, 2) // three at distance 1; the first two ids
	fmt.Println(ms)
	// Output:
	// [{p 1 1} {q 2 1}]
}

func ExampleIndex_Update() {
	x, _ := index.Build([]string{"doc"}, []uint64{0}, index.Options{})
	x.Update("doc", 0xff)
	x.Remove("doc")
	fmt.Println(x.Len(), x.Remove("doc"))
	// Output:
	// 0 index: id not found: "doc"
}

func ExampleChoose() {
	c, _ := index.Choose(10_000_000, 3, 0)
	fmt.Println(c.Plan)
	fmt.Printf("%.0f candidates per query\n", c.Candidates)
	// Output:
	// k=3 blocks=16,16,16,16 tables=4 key bits=16
	// 610 candidates per query
}

func ExampleParseLayout() {
	p, _ := index.ParseLayout("blocks:6:7")
	fmt.Println(p)
	// Output:
	// k=6 blocks=10,9,9,9,9,9,9 tables=7 key bits=9-10
}

func ExampleIndex_WriteTo() {
	x, _ := index.Build([]string{"a", "b"}, []uint64{10, 11}, index.Options{})
	var buf bytes.Buffer
	x.WriteTo(&buf)
	y, _ := index.Read(&buf, index.Options{})
	fmt.Println(y.Len(), y.Plan())
	// Output:
	// 2 k=3 blocks=16,16,16,16 tables=4 key bits=16
}

func ExampleIndex_QueryBatch() {
	x, _ := index.Build([]string{"a", "b"}, []uint64{0, 0xffff}, index.Options{})
	res, _ := x.QueryBatch([]uint64{1, 0xfffe, 0xff00ff00ff00ff00}, 2, 0)
	for i, ms := range res {
		fmt.Println(i, ms)
	}
	// Output:
	// 0 [{a 0 1}]
	// 1 [{b 65535 1}]
	// 2 []
}

func ExampleIndex_Stats() {
	x, _ := index.Build([]string{"a", "b", "c"}, []uint64{1, 2, 3}, index.Options{})
	x.Remove("b")
	st := x.Stats()
	fmt.Println(st.Len, st.Removed, st.Segments, st.Choice.Tables)
	// Output:
	// 2 1 1 4
}

func ExampleExplain() {
	c := index.Explain(index.Manku20, 1<<30)
	fmt.Printf("%d tables, key bits >= %d, %.0f candidates per query\n", c.Tables, c.KeyBits, c.Candidates)
	// Output:
	// 20 tables, key bits >= 31, 6 candidates per query
}

func ExampleIndex_Close() {
	x, _ := index.New(index.Options{})
	defer x.Close() // waits for a background merge, if one runs
	x.Add("a", 1)
	ms, _ := x.Query(1, 0, 0)
	fmt.Println(ms)
	// Output:
	// [{a 1 0}]
}
