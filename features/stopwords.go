package features

import (
	"strings"

	"github.com/neardup/neardup/simhash"
)

// StopSet is a set of stopwords, looked up by the XXH3 hash of the word so the
// fingerprint fast path never builds a string. It is safe for concurrent use
// once built.
type StopSet struct {
	words []string
	// hashes is an open-addressing set of the words' hashes (linear
	// probing, 0 marks an empty slot; a word hashing to 0 is kept in zero).
	hashes []uint64
	zero   bool
}

// NewStopSet returns the set of the given words (as they appear after Clean:
// lower case).
func NewStopSet(words []string) *StopSet {
	size := 16
	for size < 4*len(words) {
		size <<= 1
	}
	s := &StopSet{hashes: make([]uint64, size)}
	for _, w := range words {
		h := simhash.HashString64(w)
		if s.containsHash(h) {
			continue
		}
		s.words = append(s.words, w)
		if h == 0 {
			s.zero = true
			continue
		}
		mask := uint64(len(s.hashes) - 1)
		i := h & mask
		for s.hashes[i] != 0 {
			i = (i + 1) & mask
		}
		s.hashes[i] = h
	}
	return s
}

// Contains reports whether w is in the set.
func (s *StopSet) Contains(w string) bool {
	if s == nil {
		return false
	}
	return s.containsHash(simhash.HashString64(w))
}

func (s *StopSet) containsHash(h uint64) bool {
	if s == nil {
		return false
	}
	if h == 0 {
		return s.zero
	}
	mask := uint64(len(s.hashes) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.hashes[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// Words returns the words of the set in the order given to NewStopSet.
func (s *StopSet) Words() []string { return append([]string(nil), s.words...) }

// Len returns the number of words in the set.
func (s *StopSet) Len() int { return len(s.words) }

// EnglishStopwords is a short standard English stopword list: the 127 words of
// NLTK's English list (from the Snowball stemmer project) without the
// contraction fragments, plus the contractions themselves as Words tokenizes
// them ("don't").
var EnglishStopwords = NewStopSet(strings.Fields(`
i me my myself we our ours ourselves you your yours yourself yourselves
he him his himself she her hers herself it its itself they them their theirs
themselves what which who whom this that these those am is are was were be
been being have has had having do does did doing a an the and but if or
because as until while of at by for with about against between into through
during before after above below to from up down in out on off over under
again further then once here there when where why how all any both each few
more most other some such no nor not only own same so than too very s t can
will just don should now
i'm you're he's she's it's we're they're i've you've we've they've i'd
you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll isn't
aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't
wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's who's
what's here's there's when's where's why's how's
`))
