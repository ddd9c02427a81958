package rule

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/neardup/neardup/simhash"
)

// The verification stage compares documents by the Jaccard similarity of their
// sets of word w-shingles, tokenised exactly as the reference ground truth in
// testdata/corpora/README.md (and package eval) does, so that a verification
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
	common []bool   // common[i]: toks[i] is a common word (commonWords)
	hashes []uint32 // shingle hashes of the current document
}

// Shingle hashes carry a rarity class in their top three bits: the number of
// common words among the shingle's tokens (capped at 7), above 29 bits of the
// hash of the tokens. Sorted, a document's set then lists its rarest shingles
// first (those made of content words alone, "suspension bridge cable
// inspection report", before "one of the most the"), which is the global
// order the prefix filter (Kept) needs: the shortest prefix that any set
// within the Jaccard threshold must share holds shingles few other documents
// have, so each lookup reads a short list. Jaccard is unaffected (the class
// is a function of the shingle), and 29 bits within a class leave collisions
// as rare as before in practice.
//
// commonWords is part of the stored format (it decides every hash): the
// English stopwords of features.EnglishStopwords without contractions (the
// tokenizer splits at the apostrophe, which gives "don" and "t", both here)
// and the single-character Chinese function words of
// features.ChineseStopwords. Changing it means a new Settings name.
const commonWords = `
i me my myself we our ours ourselves you your yours yourself yourselves
he him his himself she her hers herself it its itself they them their theirs
themselves what which who whom this that these those am is are was were be
been being have has had having do does did doing a an the and but if or
because as until while of at by for with about against between into through
during before after above below to from up down in out on off over under
again further then once here there when where why how all any both each few
more most other some such no nor not only own same so than too very s t can
will just don should now cannot
的 地 得 之 了 着 过 是 有 在 和 与 及 或 等 也 都 就 而 并 但 其 所 以 于 为
对 将 把 被 由 从 向 给 让 这 那 此 彼 该 各 每 个 些 不 没 无 非 又 还 再
已 曾 很 更 最 太 即 则 乃 且 若 如 因 虽 哪 谁 我 你 您 他 她 它
啊 吧 呢 吗 嘛 哦 呀 哈 哎 唉 么 嗯 呵 哟 喂
`

// commonSet holds the FNV-1a 64 hashes of commonWords (the tokenizer's token
// hashes) in an open-addressing table; 0 marks an empty cell.
var commonSet = func() []uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	words := strings.Fields(commonWords)
	t := make([]uint64, 1024)
	for _, w := range words {
		h := uint64(offset)
		for i := 0; i < len(w); i++ {
			h = (h ^ uint64(w[i])) * prime
		}
		i := h & uint64(len(t)-1)
		for t[i] != 0 && t[i] != h {
			i = (i + 1) & uint64(len(t)-1)
		}
		t[i] = h
	}
	return t
}()

// isCommon reports whether the token with hash h is one of commonWords.
func isCommon(h uint64) bool {
	mask := uint64(len(commonSet) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch commonSet[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// asciiFold maps each ASCII letter and digit to itself lower-cased, and
// every other byte below utf8.RuneSelf to 0 (a separator). Bytes from
// utf8.RuneSelf up start a multi-byte rune and map to 0 too: the loop that
// reads this table checks for them first.
var asciiFold = func() (t [256]byte) {
	for c := 0; c < utf8.RuneSelf; c++ {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			t[c] = byte(c)
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		}
	}
	return t
}()

// tokens fills s.toks with the hashes of text's tokens. Each token is hashed
// with FNV-1a 64 (Fowler, Noll, Vo) as its lower-cased bytes are scanned, so
// no token is copied; FNV's weak mixing does not matter because shingles mix
// their token hashes again (shingle). A run of ASCII letters and digits, most
// of a token in most texts, is hashed in a loop of its own: one table load, a
// xor and a multiply a byte.
func (s *shingler) tokens(text string) {
	const offset, prime = 14695981039346656037, 1099511628211
	h, in := uint64(offset), false
	flush := func() {
		if in {
			s.toks = append(s.toks, h)
			h, in = offset, false
		}
	}
	s.toks = s.toks[:0]
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			f := asciiFold[c]
			if f == 0 {
				flush()
				i++
				continue
			}
			for {
				h = (h ^ uint64(f)) * prime
				i++
				if i == len(text) {
					break
				}
				if f = asciiFold[text[i]]; f == 0 {
					break // a separator, or the first byte of a multi-byte rune
				}
			}
			in = true
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
	s.common = s.common[:0]
	for _, t := range s.toks {
		s.common = append(s.common, isCommon(t))
	}
	class := uint32(0) // common words in the current window
	for _, c := range s.common[:w-1] {
		if c {
			class++
		}
	}
	for i := 0; i+w <= n; i++ {
		if s.common[i+w-1] {
			class++
		}
		// Polynomial combination of the token hashes, finalised once: one
		// Mix64 per shingle spreads the combination over all bits (FNV-1a
		// token hashes are not well mixed on their own).
		var x uint64
		for _, t := range s.toks[i : i+w] {
			x = x*0x100000001b3 + t
		}
		h := simhash.Mix64(x, uint64(w))
		s.hashes = append(s.hashes, min(class, 7)<<29|uint32(h>>35))
		if s.common[i] {
			class--
		}
	}
	return s.hashes, exact
}
