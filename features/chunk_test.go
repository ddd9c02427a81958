package features

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// hugeText returns about n bytes of varied words separated by spaces and
// newlines, with markup and a few non-ASCII words.
func hugeText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "word%d the <b>bold</b> caf\u00e9 %d-th line of text&amp;more", i%50000, i%977)
		if i%7 == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// TestChunkedMatchesWhole: for word profiles, cutting a long text at white
// space gives the features of the whole text, so the fingerprint is the same
// either way.
func TestChunkedMatchesWhole(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the run without it asserts this")
	}
	text := hugeText(chunkBytes + chunkBytes/2)
	for _, name := range []string{"en-words", "zh-ngrams"} {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bits := range []int{64, 128} {
			pb, _ := p.WithBits(bits)
			got := pb.Fingerprint(text) // len > chunkBytes: in pieces

			s := new(scratch)
			pb.tokenize(s, text)
			s.tab.reset(len(s.toks))
			pb.addTerms(s, false)
			pb.weigh(s)
			want := pb.sum(s)
			if got != want {
				t.Errorf("%s/%d: chunked %v, whole %v", name, bits, got, want)
			}
		}
	}
}

func TestCutPoint(t *testing.T) {
	tests := []struct {
		text string
		max  int
		want int
	}{
		{"short", 10, 5},
		{"aaaa bbbb cccc", 12, 10},           // after the last space in the window
		{"aaaaaaaaaaaaaaaaaaaa", 8, 8},       // no space: at the limit
		{"aa\u00e9\u00e9\u00e9\u00e9", 5, 4}, // never inside a UTF-8 sequence
	}
	for _, tt := range tests {
		if got := cutPoint(tt.text, tt.max); got != tt.want {
			t.Errorf("cutPoint(%q, %d) = %d, want %d", tt.text, tt.max, got, tt.want)
		}
	}
}

// TestHugeDocumentMemory: past the piece size, the memory allocated to
// fingerprint a document stops growing with the document: four pieces' worth
// costs about what two do (in one piece it would double, at ~16 bytes per
// input byte).
func TestHugeDocumentMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 24 MiB of text")
	}
	p, _ := Lookup("en-words")
	allocFor := func(text string) uint64 {
		// Two collections empty the scratch pool, so each run starts cold.
		runtime.GC()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if r := p.Fingerprint(text); r.Empty {
			t.Fatal("empty fingerprint for a huge text")
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	two, four := allocFor(hugeText(2*chunkBytes)), allocFor(hugeText(4*chunkBytes))
	t.Logf("two pieces: %d MiB allocated; four pieces: %d MiB", two>>20, four>>20)
	if four > two*3/2 {
		t.Errorf("doubling the document from two to four pieces grew allocation from %d to %d bytes; want under 1.5x", two, four)
	}
}
