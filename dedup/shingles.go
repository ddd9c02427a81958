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

// tokens fills s.toks with the hashes of text's tokens. Each token is hashed
// with FNV-1a 64 (Fowler, Noll, Vo) as its lower-cased bytes are scanned, so
// no token is copied; FNV's weak mixing does not matter because shingles mix
// their token hashes again (shingle).
func (s *shingler) tokens(text string) {
	const offset, prime = 14695981039346656037, 1099511628211
	s.toks = s.toks[:0]
	h, in := uint64(offset), false
	flush := func() {
		if in {
			s.toks = append(s.toks, h)
			h, in = offset, false
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if asciiClass[c] {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				h = (h ^ uint64(c)) * prime
				in = true
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
			h, in = hashRune(h, r), true
			flush()
		case unicode.IsLetter(r) || unicode.Is(unicode.Nd, r):
			h, in = hashRune(h, unicode.ToLower(r)), true
		default:
			flush()
		}
	}
	flush()
}

// hashRune continues the FNV-1a hash h with the UTF-8 bytes of r.
func hashRune(h uint64, r rune) uint64 {
	var b [utf8.UTFMax]byte
	n := utf8.EncodeRune(b[:], r)
	for _, c := range b[:n] {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
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
