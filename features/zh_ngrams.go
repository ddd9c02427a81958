package features

import (
	"unicode"
	"unicode/utf8"
)

// HanBigrams is a Tokenizer for Chinese that needs no dictionary: each run of
// consecutive Han characters gives its overlapping character bigrams (中华人民
// gives 中华, 华人, 人民), a run of a single Han character gives that character,
// and maximal runs of other letters and digits are words, as Words makes them
// (so English words and numbers in Chinese text survive). Everything else
// separates runs; bigrams never span punctuation or spaces. Overlapping
// bigrams are the standard dictionary-free indexing unit for Chinese
// (Lucene's CJKAnalyzer, and the n-gram baselines of Chinese IR evaluations
// such as Kwok, "Comparing representations in Chinese information retrieval",
// SIGIR 1997). The tokens are substrings of text; Tokenize allocates nothing
// beyond growing dst. Safe for concurrent use.
type HanBigrams struct{}

var _ Tokenizer = HanBigrams{}

// Tokenize appends the tokens of text to dst.
func (HanBigrams) Tokenize(dst []Token, text string) []Token {
	word := -1  // start of the current non-Han word, -1 outside one
	prev := -1  // start of the previous Han character of the current run, -1 outside a run
	runLen := 0 // Han characters in the current run
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if runLen == 1 {
				dst = append(dst, Token{Text: text[prev:i]})
			}
			runLen = 0
			if asciiWord[c] {
				if word < 0 {
					word = i
				}
			} else if word >= 0 {
				dst = append(dst, Token{Text: text[word:i]})
				word = -1
			}
			i++
			continue
		}
		r, size := rune(0), 0
		if c >= 0xE0 && c < 0xF0 && i+2 < len(text) {
			// Three-byte sequence (all of the BMP Han blocks), decoded
			// inline: the hot path for Chinese text.
			c1, c2 := text[i+1], text[i+2]
			if c1&0xC0 == 0x80 && c2&0xC0 == 0x80 {
				r = rune(c&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(c2&0x3F)
				size = 3
				if r < 0x800 || r >= 0xD800 && r <= 0xDFFF {
					r, size = utf8.RuneError, 1
				}
			}
		}
		if size == 0 {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		if isHan(r) {
			if word >= 0 {
				dst = append(dst, Token{Text: text[word:i]})
				word = -1
			}
			if runLen > 0 {
				dst = append(dst, Token{Text: text[prev : i+size]})
			}
			prev = i
			runLen++
			i += size
			continue
		}
		if runLen == 1 {
			dst = append(dst, Token{Text: text[prev:i]})
		}
		runLen = 0
		if unicode.IsLetter(r) || unicode.IsNumber(r) || (word >= 0 && unicode.IsMark(r)) {
			if word < 0 {
				word = i
			}
		} else if word >= 0 {
			dst = append(dst, Token{Text: text[word:i]})
			word = -1
		}
		i += size
	}
	if runLen == 1 {
		dst = append(dst, Token{Text: text[prev:]})
	}
	if word >= 0 {
		dst = append(dst, Token{Text: text[word:]})
	}
	return dst
}
