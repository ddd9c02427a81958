// Package textgen makes documents of about 1 KB of English-like text for the
// load generator and the benchmarks, from the words of a real text (the
// shared corpus en_prose):
//
//   - Markov: new text from the word pairs of the source (a bigram chain), so
//     word and phrase frequencies are the source's while documents are new;
//     one document in ten is an edited copy (one word in 100 replaced: Jaccard
//     about 0.9) of one of the last 10,000 made, the near-duplicates a service
//     exists to catch.
//   - Windows: windows of the source itself with one word in 20 replaced (at
//     1M documents of en_prose each word is in about 70 of them).
//
// Both are deterministic for a given random source.
package textgen

import (
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/neardup/neardup/corpus"
)

// ReadWords returns the words (strings.Fields) of every document of the
// corpus at path, in order.
func ReadWords(path string) ([]string, error) {
	r, err := corpus.Open([]string{path}, corpus.Options{})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var words []string
	for {
		d, err := r.Next()
		if err == io.EOF {
			return words, nil
		}
		if err != nil {
			return nil, err
		}
		words = append(words, strings.Fields(d.Text)...)
	}
}

// Windows returns a maker of about 1 KB: a window of words with one word in
// 20 replaced by a random one. words must hold more than 400 words.
func Windows(words []string) func(*rand.Rand) string {
	return func(r *rand.Rand) string {
		i := r.IntN(len(words) - 400)
		var b strings.Builder
		for j := i; b.Len() < 1024; j++ {
			w := words[j]
			if r.IntN(20) == 0 {
				w = words[r.IntN(len(words))]
			}
			b.WriteString(w)
			b.WriteByte(' ')
		}
		return b.String()
	}
}

// Markov makes new text from a bigram chain over a text's words. Doc is not
// safe for concurrent use: it remembers recent documents to copy.
type Markov struct {
	vocab  []string
	next   []int32 // successors of word w: next[start[w]:start[w+1]]
	start  []int32
	recent []string
	n      int
}

// NewMarkov builds the chain of words (at least two).
func NewMarkov(words []string) *Markov {
	id := map[string]int32{}
	var vocab []string
	seq := make([]int32, len(words))
	for i, w := range words {
		v, ok := id[w]
		if !ok {
			v = int32(len(vocab))
			id[w] = v
			vocab = append(vocab, w)
		}
		seq[i] = v
	}
	start := make([]int32, len(vocab)+1)
	for i := 0; i+1 < len(seq); i++ {
		start[seq[i]+1]++
	}
	for i := range vocab {
		start[i+1] += start[i]
	}
	next := make([]int32, len(seq))
	fill := slices.Clone(start)
	for i := 0; i+1 < len(seq); i++ {
		next[fill[seq[i]]] = seq[i+1]
		fill[seq[i]]++
	}
	return &Markov{vocab: vocab, next: next, start: start, recent: make([]string, 0, 10000)}
}

// Doc returns the next document: about 1 KB of new text, or, one time in
// ten once 100 have been made, an edited copy of a recent one.
func (m *Markov) Doc(r *rand.Rand) string {
	var b strings.Builder
	if len(m.recent) > 100 && r.IntN(10) == 0 {
		for _, w := range strings.Fields(m.recent[r.IntN(len(m.recent))]) {
			if r.IntN(100) == 0 {
				w = m.vocab[r.IntN(len(m.vocab))]
			}
			b.WriteString(w)
			b.WriteByte(' ')
		}
		return b.String()
	}
	w := int32(r.IntN(len(m.vocab)))
	for b.Len() < 1024 {
		b.WriteString(m.vocab[w])
		b.WriteByte(' ')
		if lo, hi := m.start[w], m.start[w+1]; hi > lo {
			w = m.next[lo+int32(r.IntN(int(hi-lo)))]
		} else {
			w = int32(r.IntN(len(m.vocab)))
		}
	}
	t := b.String()
	if len(m.recent) < cap(m.recent) {
		m.recent = append(m.recent, t)
	} else {
		m.recent[m.n%len(m.recent)] = t
	}
	m.n++
	return t
}
