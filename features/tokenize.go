package features

import (
	"unicode"
	"unicode/utf8"
)

// Token is one unit of text from a tokenizer.
type Token struct {
	Text string // a substring of the cleaned text for the built-in tokenizers
	POS  string // part-of-speech tag; "" when the tokenizer does not tag
}

// Tokenizer splits cleaned text into tokens. Tokenize appends the tokens of
// text to dst and returns the extended slice. Implementations must be safe for
// concurrent use.
type Tokenizer interface {
	Tokenize(dst []Token, text string) []Token
}

// TokenizerFunc adapts a function to the Tokenizer interface.
type TokenizerFunc func(dst []Token, text string) []Token

// Tokenize calls f(dst, text).
func (f TokenizerFunc) Tokenize(dst []Token, text string) []Token { return f(dst, text) }

var (
	_ Tokenizer = Words{}
	_ Tokenizer = NGrams{}
	_ Tokenizer = TokenizerFunc(nil)
)

// Words splits text into Unicode words: maximal runs of letters, combining
// marks and digits (categories L, M, N). An apostrophe between two word
// characters stays inside the word; everything else, the underscore included,
// separates words. Han, Hiragana and Katakana characters are one token each,
// since those scripts do not put spaces between words. The tokens are
// substrings of text.
type Words struct{}

// asciiWord[c] is 1 for ASCII letters and digits.
var asciiWord = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	return t
}()

// Tokenize appends the words of text to dst.
func (Words) Tokenize(dst []Token, text string) []Token {
	start := -1 // start of the current word, -1 outside a word
	i := 0
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if asciiWord[c] {
				if start < 0 {
					start = i
				}
				i++
				continue
			}
			if c == '\'' && start >= 0 && i+1 < len(text) && isWordStart(text[i+1:]) {
				i++
				continue
			}
			if start >= 0 {
				dst = append(dst, Token{Text: text[start:i]})
				start = -1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isIdeograph(r):
			if start >= 0 {
				dst = append(dst, Token{Text: text[start:i]})
				start = -1
			}
			dst = append(dst, Token{Text: text[i : i+size]})
		case isWordRune(r):
			if start < 0 {
				if unicode.IsMark(r) {
					// A mark with no base letter starts no word.
					break
				}
				start = i
			}
		default:
			if start >= 0 {
				dst = append(dst, Token{Text: text[start:i]})
				start = -1
			}
		}
		i += size
	}
	if start >= 0 {
		dst = append(dst, Token{Text: text[start:]})
	}
	return dst
}

// isWordStart reports whether s starts with a word character that continues
// a word (not an ideograph).
func isWordStart(s string) bool {
	c := s[0]
	if c < utf8.RuneSelf {
		return asciiWord[c]
	}
	r, _ := utf8.DecodeRuneInString(s)
	return isWordRune(r) && !isIdeograph(r)
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// isIdeograph reports whether r belongs to a script written without spaces
// between words, whose characters Words makes one token each.
func isIdeograph(r rune) bool {
	if r < 0x3040 {
		return false
	}
	if r >= 0x4e00 && r <= 0x9fff {
		return true // CJK Unified Ideographs, the common case
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

// NGrams splits text into overlapping character n-grams of N runes (N <= 0
// means 4), spaces included: with N=2, "the cat" gives "th", "he", "e ", " c",
// "ca", "at" (the example of seeds 001 and 003). A text shorter than N runes is
// one token. The tokens are substrings of text.
type NGrams struct {
	N int // runes per gram; 0 means 4
}

// Tokenize appends the n-grams of text to dst.
func (g NGrams) Tokenize(dst []Token, text string) []Token {
	n := g.N
	if n <= 0 {
		n = 4
	}
	if text == "" {
		return dst
	}
	if asciiOnly(text) {
		// One byte per rune: the grams are plain slices.
		if len(text) < n {
			return append(dst, Token{Text: text})
		}
		for i := 0; i+n <= len(text); i++ {
			dst = append(dst, Token{Text: text[i : i+n]})
		}
		return dst
	}
	// starts is a ring of the byte offsets of the last n rune starts; the
	// gram ending at the current rune starts at the oldest of them.
	var ringBuf [16]int
	starts := ringBuf[:]
	if n > len(starts) {
		starts = make([]int, n)
	}
	starts = starts[:n]
	k, head := 0, 0 // runes seen; ring slot of the oldest start
	for i := 0; i < len(text); {
		size := 1
		if text[i] >= utf8.RuneSelf {
			_, size = utf8.DecodeRuneInString(text[i:])
		}
		if k < n {
			starts[k] = i
		} else {
			starts[head] = i
			if head++; head == n {
				head = 0
			}
		}
		i += size
		k++
		if k >= n {
			dst = append(dst, Token{Text: text[starts[head]:i]})
		}
	}
	if k < n {
		dst = append(dst, Token{Text: text})
	}
	return dst
}
