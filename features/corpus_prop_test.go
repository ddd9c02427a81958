package features

import (
	"math/bits"
	"strings"
	"testing"
)

// sample returns up to n documents of docs spread evenly over it.
func sample(docs []corpusDoc, n int) []corpusDoc {
	if len(docs) <= n {
		return docs
	}
	out := make([]corpusDoc, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, docs[i*len(docs)/n])
	}
	return out
}

// TestCorpusIdentical: identical text gives distance 0, whatever the copy.
func TestCorpusIdentical(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the run without it asserts this")
	}
	docs := sample(readCorpus(t, "en_prose"), 20)
	for _, name := range []string{"default", "en-words", "shingles", "ngrams"} {
		p, _ := Lookup(name)
		for _, d := range docs {
			copyText := strings.Clone(d.Text)
			if a, b := p.Fingerprint(d.Text), p.Fingerprint(copyText); a != b {
				t.Errorf("%s %s: identical texts differ: %v %v", name, d.ID, a.Fingerprint, b.Fingerprint)
			}
		}
	}
}

// TestCorpusOneWordEdit: replacing one word of a long document moves the
// fingerprint by at most 3 bits.
func TestCorpusOneWordEdit(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the run without it asserts this")
	}
	docs := sample(readCorpus(t, "en_prose"), 40)
	for _, name := range []string{"default", "en-words"} {
		p, _ := Lookup(name)
		worst := 0
		for _, d := range docs {
			words := strings.Fields(d.Text)
			if len(words) < 1000 {
				continue
			}
			for _, pos := range []int{len(words) / 3, len(words) / 2, len(words) - 2} {
				edited := make([]string, len(words))
				copy(edited, words)
				edited[pos] = "zyzzyva"
				a := p.Fingerprint(d.Text).Fingerprint
				b := p.Fingerprint(strings.Join(edited, " ")).Fingerprint
				// strings.Join changes the whitespace; that must not matter either.
				if c := p.Fingerprint(strings.Join(words, " ")).Fingerprint; c != a {
					t.Errorf("%s %s: re-spacing moved the fingerprint by %d bits", name, d.ID, a.Distance(c))
				}
				dist := a.Distance(b)
				worst = max(worst, dist)
				if dist > 3 {
					t.Errorf("%s %s: one-word edit at %d of %d moved %d bits, want <= 3", name, d.ID, pos, len(words), dist)
				}
			}
		}
		t.Logf("%s: worst one-word edit distance %d", name, worst)
	}
}

// TestCorpusUnrelated: en_prose has no near-duplicates, so its documents'
// fingerprints must be far apart: no pair within 3 bits, and distances
// spread around 32 as for independent random fingerprints.
func TestCorpusUnrelated(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the run without it asserts this")
	}
	docs := readCorpus(t, "en_prose")
	for _, name := range []string{"default", "en-words", "shingles", "ngrams"} {
		p, _ := Lookup(name)
		fps := make([]uint64, len(docs))
		for i, d := range docs {
			fps[i] = uint64(p.Fingerprint(d.Text).Fingerprint)
		}
		var hist [65]int
		sum, n, minD := 0, 0, 64
		for i := range fps {
			for j := i + 1; j < len(fps); j++ {
				d := bits.OnesCount64(fps[i] ^ fps[j])
				hist[d]++
				sum += d
				n++
				minD = min(minD, d)
			}
		}
		mean := float64(sum) / float64(n)
		t.Logf("%s: %d pairs, min distance %d, mean %.2f", name, n, minD, mean)
		if minD <= 3 {
			t.Errorf("%s: unrelated documents within %d bits", name, minD)
		}
		// Same-author collections (Moby-Dick chapters, one president's
		// addresses) share vocabulary, so the mean sits below 32; it must
		// stay well above any near-duplicate threshold.
		if mean < 20 {
			t.Errorf("%s: mean distance %.2f between unrelated documents, want >= 20", name, mean)
		}
	}
}
