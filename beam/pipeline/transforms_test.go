package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/neardup/neardup/rule"
)

func init() {
	register.Function2x1[uint64, uint64, labelKV](toLabelKV)
	register.Function1x2[Pair, uint64, uint64](pairKV)
}

// labelKV is a component label as one value, for passert.
type labelKV struct{ K, V uint64 }

func toLabelKV(k, v uint64) labelKV { return labelKV{k, v} }

func pairKV(p Pair) (uint64, uint64) { return p.A, p.B }

func componentsOf(t *testing.T, pairs []Pair, opt Options, want []any) error {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	opt.Inputs = []string{"x"}
	opt.EnsureDefaults()
	labels := Components(s, opt, beam.ParDo(s, pairKV, beam.CreateList(s, pairs)), 3)
	if want != nil {
		passert.Equals(s, beam.ParDo(s, toLabelKV, labels), want...)
	}
	return ptest.Run(p)
}

// TestComponents labels a long chain, a star and a separate edge, with the
// default rounds and with one round, which leaves the chain to the
// residual union-find: the labels must be the same.
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
	for _, rounds := range []int{DefaultRounds, 1} {
		t.Run(fmt.Sprint("rounds=", rounds), func(t *testing.T) {
			if err := componentsOf(t, pairs, Options{Rounds: rounds}, want); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestComponentsResidualBound: a path one round cannot collapse, with a
// residual bound too small for what the round leaves, must fail the run
// and say what to raise, never label it wrongly.
func TestComponentsResidualBound(t *testing.T) {
	var pairs []Pair
	for i := uint64(1); i < 300; i++ {
		pairs = append(pairs, newPair(i, i+1))
	}
	err := componentsOf(t, pairs, Options{Rounds: 1, MaxResidual: 2}, nil)
	if err == nil || !strings.Contains(err.Error(), "raise --cc-rounds") {
		t.Fatalf("one round over a 300-node path, residual bound 2: err %v, want the residual error", err)
	}
}

// TestVerifyLeafPairs: a centre near neither of two leaves that are near
// each other, as in a band bucket of a document and two versions of
// another. The star's edges must join the two leaves (with their own
// verified edge), and leave the centre out; a third leaf far from
// everything stays alone. With no room to hold the leaves, the star is
// linked unverified instead, all in one component.
func TestVerifyLeafPairs(t *testing.T) {
	words := func(from, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "w%d ", from+i)
		}
		return b.String()
	}
	texts := []string{
		words(0, 60),                       // centre
		words(1000, 60),                    // a
		words(1000, 59) + " changed",       // a's near copy
		words(5000, 30) + words(0, 30),     // half the centre
		words(9000, 60) + " something new", // far from all
	}
	opt := Options{Inputs: []string{"x"}}
	opt.EnsureDefaults()
	ext, err := rule.NewRuleExtractor(opt.DedupOptions().Options)
	if err != nil {
		t.Fatal(err)
	}
	var data []docData
	for i, text := range texts {
		ft := ext.Extract(text)
		b, _ := ft.MarshalBinary()
		data = append(data, docData{Pos: uint64(i + 1), ID: fmt.Sprint("d", i), Features: b})
	}
	iter := func(ds []docData) func(*docData) bool {
		return func(d *docData) bool {
			if len(ds) == 0 {
				return false
			}
			*d = ds[0]
			ds = ds[1:]
			return true
		}
	}
	for _, tt := range []struct {
		hold int64
		want []Pair
	}{
		{DefaultHoldBytes, []Pair{{2, 3}}},
		{1, []Pair{{1, 2}, {1, 3}, {1, 4}, {1, 5}}},
	} {
		f := &verifyFn{Rule: opt.ruleConfig(), HoldBytes: tt.hold, MaxChecks: DefaultMaxChecks}
		if err := f.Setup(); err != nil {
			t.Fatal(err)
		}
		var got []Pair
		err := f.ProcessElement(context.Background(), 1, iter(data[:1]), iter(data[1:]), func(a, b uint64) { got = append(got, Pair{a, b}) })
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("hold %d: edges %v, want %v", tt.hold, got, tt.want)
		}
	}
}

// TestPrefilterStar: a centre with a near copy among its leaves, two leaves
// that are near copies of each other and far from the centre (as two
// versions of a page in a band bucket whose least member is another page of
// their site), and a leaf far from everything. The centre's prefilter
// rejects the last three; the near pair must still be linked, with each
// other, and both sent to the centre for a verified star, the far leaf
// neither linked nor sent. Past MaxChecks the star is linked and sent
// whole, as without the prefilter.
func TestPrefilterStar(t *testing.T) {
	words := func(from, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "w%d ", from+i)
		}
		return b.String()
	}
	texts := []string{
		words(0, 200),                       // 1: centre
		words(0, 199) + "changed",           // 2: the centre's near copy
		words(1000, 200),                    // 3
		words(1000, 199) + "changed",        // 4: 3's near copy
		words(9000, 200) + " something new", // 5: far from all
	}
	opt := Options{Inputs: []string{"x"}}
	opt.EnsureDefaults()
	ext, err := rule.NewRuleExtractor(opt.DedupOptions().Options)
	if err != nil {
		t.Fatal(err)
	}
	pres := make([]rule.Prefilter, len(texts))
	var ls []starLeaf
	for i, text := range texts {
		pres[i] = ext.Extract(text).Pre
		ls = append(ls, starLeaf{centre: 1, member: uint64(i + 1), pre: &pres[i]})
	}
	for _, tt := range []struct {
		maxChecks   int64
		links, sent string
	}{
		{DefaultMaxChecks, "[{1 2} {3 4}]", "[{2 1} {3 1} {4 1} {1 1}]"},
		{1, "[{1 2} {1 3} {1 4} {1 5}]", "[{1 1} {2 1} {3 1} {4 1} {5 1}]"},
	} {
		f := &centreFn{Rule: opt.ruleConfig(), MaxChecks: tt.maxChecks}
		if err := f.Setup(); err != nil {
			t.Fatal(err)
		}
		var links []Pair
		var sent []starEdge
		var st prefilterStar
		err := f.star(context.Background(), &st, ls,
			func(m, c uint64) { sent = append(sent, starEdge{Member: m, Centre: c}) },
			func(a, b uint64) { links = append(links, newPair(a, b)) })
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(links) != tt.links || fmt.Sprint(sent) != tt.sent {
			t.Errorf("max checks %d: links %v, sent %v; want links %s, sent %s", tt.maxChecks, links, sent, tt.links, tt.sent)
		}
	}
}

// TestLinkBatchRoundTrip: link entries (with and without a prefilter, one
// or several centres, centres in another range) decode to what was
// encoded, and a batch cut short fails to decode.
func TestLinkBatchRoundTrip(t *testing.T) {
	pre := rule.Prefilter{1, 2, 3, 1 << 63, 5, 6}
	want := []linkEntry{
		{member: Pos(2, 5), known: true, pre: pre, centres: []uint64{Pos(2, 5)}},
		{member: Pos(2, 9), centres: []uint64{Pos(0, 1), Pos(2, 5), Pos(2, 9)}},
		{member: Pos(3, 1), known: true, pre: pre, centres: []uint64{Pos(1, 7)}},
	}
	var b []byte
	var last uint64
	for i := range want {
		b = appendLinkEntry(b, last, &want[i])
		last = want[i].member
	}
	got, err := appendLinkEntries(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
	for n := 1; n < len(b); n++ {
		if es, err := appendLinkEntries(nil, b[:n]); err == nil && len(es) == len(want) {
			t.Errorf("a batch cut to %d of %d bytes decoded whole", n, len(b))
		}
	}
}
