package rule_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/rule"
)

// TestBanderRecomputesBands: for texts with and without repeated
// shingles, the band keys a Bander computes from the extracted set (with
// or without the extra zero) are the ones Extract gave, and with the
// other choice of zero they differ for some text (so the flag a store
// keeps carries information).
func TestBanderRecomputesBands(t *testing.T) {
	o := rule.Options{}
	ex, err := rule.NewExtractor(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rule.NewBander(o)
	if err != nil || b == nil {
		t.Fatalf("NewBander: %v, %v", b, err)
	}
	differ := 0
	for i := range 200 {
		words := make([]string, 20+i)
		for j := range words {
			words[j] = fmt.Sprintf("w%d", (j*7+i)%(10+i)) // repeats shingles for most i
		}
		f := ex.Extract(strings.Join(words, " "))
		plain := b.AppendBands(nil, f.Sketch.Hashes(), false)
		zero := b.AppendBands(nil, f.Sketch.Hashes(), true)
		if !slices.Equal(plain, f.Bands) && !slices.Equal(zero, f.Bands) {
			t.Fatalf("text %d: neither recomputation gives Extract's bands", i)
		}
		if !slices.Equal(plain, zero) {
			differ++
		}
	}
	if differ == 0 {
		t.Error("the extra zero never changed the bands: the test proves nothing about it")
	}
	if b, err := rule.NewBander(rule.Options{Method: rule.MethodSimHash}); err != nil || b != nil {
		t.Errorf("NewBander(simhash) = %v, %v; want nil, nil", b, err)
	}
}
