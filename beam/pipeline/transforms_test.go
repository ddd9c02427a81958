package pipeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/neardup/neardup/dedup"
)

func init() {
	register.Function2x1[uint64, uint64, labelKV](toLabelKV)
}

// labelKV is a component label as one value, for passert.
type labelKV struct{ K, V uint64 }

func toLabelKV(k, v uint64) labelKV { return labelKV{k, v} }

// TestHotKeySplit puts 60 documents with one fingerprint in one key of every
// table and splits keys above 4 entries: the pairs must be all 1770, each
// once, as without the split.
func TestHotKeySplit(t *testing.T) {
	const n = 60
	var in []bandEntry
	for i := range n {
		in = append(in, bandEntry{E: Entry{Pos: Pos(0, i+1), FP: 0xdeadbeef, Exact: uint64(i + 1), Tokens: 100}})
	}
	var want []Pair
	for a := range n {
		for b := a + 1; b < n; b++ {
			want = append(want, newPair(Pos(0, a+1), Pos(0, b+1)))
		}
	}
	for _, maxBucket := range []int{4, 1000} {
		t.Run(fmt.Sprint("max-bucket=", maxBucket), func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			opt := Options{Inputs: []string{"x"}, MaxBucket: maxBucket, Method: dedup.MethodSimHash}
			opt.EnsureDefaults()
			pairs := Candidates(s, opt, beam.CreateList(s, in))
			passert.Equals(s, pairs, toAny(want)...)
			ptest.RunAndValidate(t, p)
		})
	}
}

// TestSplitMeetsOnce checks splitFn's shard pairs directly: with s shards
// every two entries of a hot key meet in exactly one group, and a group
// holds about 2n/s entries.
func TestSplitMeetsOnce(t *testing.T) {
	const n, s = 200, 7
	hot := func(k *string, v *int) bool { return false }
	f := &splitFn{}
	f.once.Do(func() {})
	f.hot = map[string]int{"k": s}
	groups := map[string][]Entry{}
	for i := range n {
		f.ProcessElement("k", Entry{Pos: uint64(i)}, hot, func(k string, e Entry) { groups[k] = append(groups[k], e) })
	}
	if len(groups) != s*(s+1)/2 {
		t.Fatalf("%d groups, want %d", len(groups), s*(s+1)/2)
	}
	meet := map[[2]uint64]int{}
	for key, es := range groups {
		i, j := key[len(key)-4:len(key)-2], key[len(key)-2:]
		if len(es) > 2*n/s*2 {
			t.Errorf("group %q holds %d entries, want about %d", key, len(es), 2*n/s)
		}
		for x := range es {
			for y := x + 1; y < len(es); y++ {
				a, b := es[x], es[y]
				if i != j && a.Shard == b.Shard {
					continue // pairFn pairs across shards only
				}
				meet[[2]uint64{min(a.Pos, b.Pos), max(a.Pos, b.Pos)}]++
			}
		}
	}
	if len(meet) != n*(n-1)/2 {
		t.Errorf("%d pairs met, want %d", len(meet), n*(n-1)/2)
	}
	for p, c := range meet {
		if c != 1 {
			t.Errorf("pair %v met %d times, want once", p, c)
		}
	}
}

// TestComponents labels a long chain, a star and a separate edge.
func TestComponents(t *testing.T) {
	var pairs []Pair
	for i := uint64(1); i < 300; i++ { // a path 999-998-...-700
		pairs = append(pairs, newPair(1000-i, 1000-i-1))
	}
	for i := uint64(2001); i < 2050; i++ {
		pairs = append(pairs, newPair(2000, i))
	}
	pairs = append(pairs, newPair(5, 7))
	var want []any
	for i := uint64(0); i < 300; i++ {
		want = append(want, labelKV{700 + i, 700})
	}
	for i := uint64(2000); i < 2050; i++ {
		want = append(want, labelKV{i, 2000})
	}
	want = append(want, labelKV{5, 5}, labelKV{7, 5})

	p, s := beam.NewPipelineWithRoot()
	labels := Components(s, DefaultRounds, beam.CreateList(s, pairs))
	passert.Equals(s, beam.ParDo(s, toLabelKV, labels), want...)
	ptest.RunAndValidate(t, p)
}

// TestComponentsCheck: too few rounds for a long path must fail the run,
// never label it wrongly.
func TestComponentsCheck(t *testing.T) {
	var pairs []Pair
	for i := uint64(1); i < 300; i++ {
		pairs = append(pairs, newPair(i, i+1))
	}
	p, s := beam.NewPipelineWithRoot()
	Components(s, 1, beam.CreateList(s, pairs))
	err := ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), "did not converge") {
		t.Fatalf("one round over a 300-node path: err %v, want a convergence error", err)
	}
}

func toAny[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
