package features

import (
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// fastWords is the fused cleanup and Words tokenizer of the fingerprint fast
// path for text that needs no cleanup beyond ASCII lower-casing: it appends
// to dst exactly the tokens Words{}.Tokenize(Clean(text, CleanOptions{}))
// would give, or reports false when text has anything it does not handle
// (markup, non-ASCII letters, marks, format characters), and the caller takes
// the staged path. Tokens are substrings of text, or of buf (pre-grown, never
// reallocated) for words that had to be lower-cased or had a curly
// apostrophe. It saves the separate pass and copy of Clean on typical English.
func fastWords(dst []Token, buf []byte, text string) ([]Token, []byte, bool) {
	if cap(buf) < len(text) {
		buf = make([]byte, 0, len(text))
	}
	buf = buf[:0]
	for i := 0; i < len(text); {
		c := text[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(text[i:])
			if !fastSeparator(r) {
				return dst, buf, false
			}
			i += size
			continue
		}
		if !asciiWord[c] {
			if c == '<' || c == '&' {
				return dst, buf, false
			}
			i++
			continue
		}
		start := i
		copyWord := false // the token differs from the raw bytes
		for i < len(text) {
			c = text[i]
			if c < utf8.RuneSelf {
				if asciiWord[c] {
					copyWord = copyWord || c <= 'Z' && c >= 'A'
					i++
					continue
				}
				if c == '\'' && i+1 < len(text) {
					if n := text[i+1]; n >= utf8.RuneSelf {
						return dst, buf, false
					} else if asciiWord[n] {
						i++
						continue
					}
				}
				if c == '<' || c == '&' {
					return dst, buf, false
				}
				break
			}
			r, size := utf8.DecodeRuneInString(text[i:])
			if r == '\u2019' || r == '\u2018' || r == '\u02bc' {
				// An apostrophe inside the word if a word byte follows.
				if i+size < len(text) {
					n := text[i+size]
					if n >= utf8.RuneSelf {
						return dst, buf, false
					}
					if asciiWord[n] {
						copyWord = true
						i += size
						continue
					}
				}
				break
			}
			if !fastSeparator(r) {
				return dst, buf, false
			}
			break
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
					// A curly apostrophe (3 bytes) becomes '.
					_, size := utf8.DecodeRuneInString(word[j:])
					j += size - 1
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
