package features

import (
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// fastWords is the fused cleanup and Words tokenizer of the fingerprint fast
// path for text that needs no cleanup beyond ASCII lower-casing: it appends
// to dst exactly the tokens Words{}.Tokenize(Clean(text, CleanOptions{}))
// would give, or reports false when text has anything it does not handle
// (tags, character references, letters beyond Latin Extended-A, marks, format characters), and the caller takes
// the staged path. Tokens are substrings of text, or of buf (pre-grown, never
// reallocated) for words that had to be lower-cased or had a curly
// apostrophe. It saves the separate pass and copy of Clean on typical English.
func fastWords(dst []Token, buf []byte, text string) ([]Token, []byte, bool) {
	if cap(buf) < len(text) {
		buf = make([]byte, 0, len(text))
	}
	buf = buf[:0]
	i := 0
	for i < len(text) {
		// Skip separators.
		k := fwClass[text[i]]
		switch k {
		case fwSep:
			i++
			continue
		case fwMarkup:
			if !plainAmp(text, i) {
				return dst, buf, false
			}
			i++ // a '&' that starts no character reference is a separator
			continue
		case fwHigh:
			r, size := utf8.DecodeRuneInString(text[i:])
			if fastLatin(r) {
				break // a word starts
			}
			if !fastSeparator(r) {
				return dst, buf, false
			}
			i += size
			continue
		case fwApos:
			i++ // an apostrophe outside a word separates
			continue
		}
		start := i
		copyWord := false // the token differs from the raw bytes
	word:
		for i < len(text) {
			switch fwClass[text[i]] {
			case fwLower:
				i++
			case fwUpper:
				copyWord = true
				i++
			case fwApos:
				// Inside the word if a word byte follows.
				if i+1 < len(text) {
					if n := fwClass[text[i+1]]; n == fwLower || n == fwUpper {
						i++
						continue
					} else if n == fwHigh && !highSeparator(text[i+1:]) {
						return dst, buf, false
					}
				}
				break word
			case fwHigh:
				r, size := utf8.DecodeRuneInString(text[i:])
				if r == '\u2019' || r == '\u2018' || r == '\u02bc' {
					// An apostrophe inside the word if a word byte follows.
					if i+size < len(text) {
						n := fwClass[text[i+size]]
						if n == fwHigh && !highSeparator(text[i+size:]) {
							return dst, buf, false
						}
						if n == fwLower || n == fwUpper {
							copyWord = true
							i += size
							continue
						}
					}
					break word
				}
				if fastLatin(r) {
					copyWord = copyWord || unicode.ToLower(r) != r
					i += size
					continue
				}
				if !fastSeparator(r) {
					return dst, buf, false
				}
				break word
			case fwMarkup:
				if !plainAmp(text, i) {
					return dst, buf, false
				}
				break word
			default:
				break word
			}
		}
		word := text[start:i]
		if copyWord {
			off := len(buf)
			for j := 0; j < len(word); j++ {
				b := word[j]
				switch {
				case b >= 'A' && b <= 'Z':
					b += 'a' - 'A'
				case b >= utf8.RuneSelf:
					// A curly apostrophe (3 bytes) becomes ', a Latin
					// letter its lower case (never longer).
					r, size := utf8.DecodeRuneInString(word[j:])
					j += size - 1
					if fastLatin(r) {
						buf = utf8.AppendRune(buf, unicode.ToLower(r))
						continue
					}
					b = '\''
				}
				buf = append(buf, b)
			}
			word = unsafe.String(unsafe.SliceData(buf[off:]), len(buf)-off)
		}
		dst = append(dst, Token{Text: word})
	}
	return dst, buf, true
}

// plainAmp reports whether text[i] is a '&' that Clean keeps as it is: one
// that starts no character reference (refLen), as in "R&D" or "AT&T". Such a
// '&' separates words. A '<' is never plain: the text may hold tags.
func plainAmp(text string, i int) bool {
	return text[i] == '&' && refLen(text[i:]) == 0
}

// highSeparator reports whether s starts with a rune that separates words
// both in the raw text and after Clean (fastSeparator), such as the dash in
// "hell'—what": an apostrophe before it ends the word as before a space.
func highSeparator(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return fastSeparator(r)
}

// Byte classes of fastWords.
const (
	fwSep    = iota // ASCII separator (punctuation, space, control)
	fwLower         // lower-case letter or digit
	fwUpper         // upper-case letter
	fwApos          // '
	fwMarkup        // '<' or '&': the text may be HTML
	fwHigh          // a byte of a multi-byte UTF-8 sequence (or invalid)
)

var fwClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = fwHigh
		case c >= 'A' && c <= 'Z':
			t[c] = fwUpper
		case asciiWord[c]:
			t[c] = fwLower
		case c == '\'':
			t[c] = fwApos
		case c == '<' || c == '&':
			t[c] = fwMarkup
		}
	}
	return t
}()

// fastLatinTable marks the letters of Latin-1 Supplement and Latin
// Extended-A (U+00C0..U+017F) that NFKC leaves alone and whose lower case is
// no longer in UTF-8: fastWords handles them (é, æ, ß), and takes the staged
// path for the others (ĳ, ŀ, ŉ, ſ, which NFKC decomposes).
var fastLatinTable = func() (t [0x180 - 0xC0]bool) {
	for r := rune(0xC0); r < 0x180; r++ {
		lr := unicode.ToLower(r)
		t[r-0xC0] = unicode.IsLetter(r) && norm.NFKC.IsNormalString(string(r)) &&
			norm.NFKC.IsNormalString(string(lr)) && utf8.RuneLen(lr) <= utf8.RuneLen(r)
	}
	return t
}()

func fastLatin(r rune) bool { return r >= 0xC0 && r < 0x180 && fastLatinTable[r-0xC0] }

// fastSeparator reports whether r separates words both in the raw text and
// after Clean (so fastWords may skip it): whitespace, which Clean turns into a
// space, and common punctuation that NFKC leaves alone.
func fastSeparator(r rune) bool {
	switch r {
	case '\u2010', '\u2012', '\u2013', '\u2014', '\u2015', // dashes (not U+2011, which NFKC maps)
		'\u201c', '\u201d', '\u201e', '\u00ab', '\u00bb', // quotation marks
		'\u2018', '\u2019', '\u02bc', // apostrophes outside a word
		'\u2022', '\u00b7', '\u00a7', '\u00b6', '\u00b0', '\u00d7', '\u00a9', '\u00ae', '\u2020', '\u2021':
		return true
	}
	return r != utf8.RuneError && unicode.IsSpace(r)
}
