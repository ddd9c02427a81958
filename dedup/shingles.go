package dedup

import (
	"unicode"
	"unicode/utf8"

	"github.com/neardup/neardup/simhash"
)

// The verification stage compares documents by the Jaccard similarity of their
// sets of word w-shingles, tokenised exactly as the reference ground truth in
// ../shared/corpora/README.md (and package eval) does, so that a verification
// threshold of 0.8 means "J >= 0.8" in the same sense the accuracy targets use:
//
//   - every Han character is a token of its own;
//   - otherwise a token is a maximal run of Unicode letters (category L) and
//     decimal digits (Nd), each rune lower-cased;
//   - everything else separates tokens;
//   - a document with fewer than w tokens is one shingle of all its tokens.
//
// The tokenizer is deliberately not a features profile: profiles clean, fold and
// filter text for fingerprinting, and any difference from the reference
// tokenisation would move the verified threshold away from the one users ask for.

// shingler turns text into shingle hashes. It keeps its buffers between calls
// and is not safe for concurrent use: each worker owns one.
type shingler struct {
	w      int      // shingle width in tokens
	buf    []byte   // the current token, lower-cased UTF-8
	toks   []uint64 // token hashes of the current document
	hashes []uint32 // shingle hashes of the current document
}

// asciiClass marks ASCII letters and digits; asciiLower folds A-Z.
var asciiClass = func() (t [128]bool) {
	for c := 0; c < 128; c++ {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	return t
}()

// tokens fills s.toks with the hashes of text's tokens.
func (s *shingler) tokens(text string) {
	s.toks = s.toks[:0]
	s.buf = s.buf[:0]
	flush := func() {
		if len(s.buf) > 0 {
			s.toks = append(s.toks, simhash.Hash64(s.buf))
			s.buf = s.buf[:0]
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if asciiClass[c] {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				s.buf = append(s.buf, c)
			} else {
				flush()
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			flush()
		case unicode.Is(unicode.Han, r):
			flush()
			s.buf = utf8.AppendRune(s.buf, r)
			flush()
		case unicode.IsLetter(r) || unicode.Is(unicode.Nd, r):
			s.buf = utf8.AppendRune(s.buf, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
}

// shingle hashes text: it returns the 32-bit hashes of its w-shingles (not yet
// sorted or unique; the slice is reused by the next call) and the hash of its
// whole token sequence, which identifies documents that are the same text up to
// case, punctuation and spacing (the "exact duplicates").
func (s *shingler) shingle(text string) (hashes []uint32, exact uint64) {
	s.tokens(text)
	s.hashes = s.hashes[:0]
	n := len(s.toks)
	exact = uint64(n)
	for _, t := range s.toks {
		exact = simhash.Mix64(exact, t)
	}
	if n == 0 {
		return s.hashes, exact
	}
	w := min(s.w, n)
	for i := 0; i+w <= n; i++ {
		// Polynomial combination of the token hashes, finalised once: the
		// token hashes are already well mixed (xxh3), so one Mix64 per shingle
		// is enough to spread the combination over all bits.
		var x uint64
		for _, t := range s.toks[i : i+w] {
			x = x*0x100000001b3 + t
		}
		h := simhash.Mix64(x, uint64(w))
		s.hashes = append(s.hashes, uint32(h>>32))
	}
	return s.hashes, exact
}
