package features

import (
	"unicode"
	"unicode/utf8"
)

const (
	docDefault = "Any text. Han-heavy text (at least 20% of the letters in its first 64 KiB are Han " +
		"characters) goes through zh-words (zh-ngrams when zh-words is not linked in, en-words when " +
		"neither is); everything else through en-words. The profile to use when in doubt."
	docEnWords = "Space-separated scripts (English and other alphabets): Unicode words after full cleanup, " +
		"English stopwords removed, each word weighted by its count capped at 5 repeats (seed 000's cap). " +
		"Han and kana characters are one token each. Fast (over 100 MB/s per core on English) and robust to " +
		"small edits; word order does not matter."
	docShingles = "Word 3-shingles: every three consecutive words (stopwords kept) hashed together with " +
		"Mix64, weighted by count. Sensitive to word order, so texts sharing a vocabulary but not sentences " +
		"(boilerplate, templates, code) stay apart; a one-word edit touches three features."
	docNGrams = "Character 5-grams of the cleaned text, spaces included (the two-character grams of seeds " +
		"001 and 003 with n=5), each distinct gram weighted 1 (a set, as Jaccard sees it; counted grams " +
		"let ' the ' and 'the ' dominate every English text). Needs no word boundaries, so it suits any " +
		"script, short texts and typo-ridden text."
)

func init() {
	register("en-words", docEnWords, func() (*Profile, error) {
		return New("en-words", docEnWords, Config{
			Stopwords: EnglishStopwords,
			MaxRepeat: 5,
		})
	})
	register("shingles", docShingles, func() (*Profile, error) {
		return New("shingles", docShingles, Config{Shingle: 3})
	})
	register("ngrams", docNGrams, func() (*Profile, error) {
		return New("ngrams", docNGrams, Config{Tokenizer: NGrams{N: 5}, TF: TFBinary})
	})
	register("default", docDefault, newDefault)
}

// newDefault builds the auto-detecting profile. The zh profiles are looked up
// when the first Han-heavy text arrives, so that a program never pays for the
// Chinese dictionary unless it sees Chinese.
func newDefault() (*Profile, error) {
	en, err := Lookup("en-words")
	if err != nil {
		return nil, err
	}
	p := &Profile{name: "default", doc: docDefault, cfg: en.cfg}
	p.route = func(text string) *Profile {
		if hanHeavy(text) {
			if zh := zhProfile(); zh != nil {
				return zh
			}
		}
		return en
	}
	return p, nil
}

// zhProfile returns the profile Han-heavy text goes to: zh-words, else
// zh-ngrams, else nil. Profiles are built once (Lookup caches them).
func zhProfile() *Profile {
	for _, name := range []string{"zh-words", "zh-ngrams"} {
		if p, err := Lookup(name); err == nil {
			return p
		}
	}
	return nil
}

// hanScan bounds the prefix hanHeavy looks at, so that detection costs
// little on huge texts.
const hanScan = 64 << 10

// hanHeavy reports whether at least 20% of the letters in the first 64 KiB of
// text are Han characters. One Han character carries about as much as a word
// of five Latin letters, so 20% means roughly as many Chinese words as others.
func hanHeavy(text string) bool {
	if len(text) > hanScan {
		text = text[:hanScan]
	}
	if !hanCandidates(text) {
		return false
	}
	letters, han := 0, 0
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if isASCIILetter(c) {
				letters++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if unicode.Is(unicode.Han, r) {
			han++
			letters++
		} else if unicode.IsLetter(r) {
			letters++
		}
	}
	return han > 0 && 5*han >= letters
}

// hanCandidates reports whether text has a byte that can start the UTF-8 form
// of a Han character (U+3400..U+9FFF start with 0xE3..0xE9, the supplementary
// ideographs with 0xF0): English with curly quotes and dashes (0xE2) has none,
// so hanHeavy rejects it without decoding.
func hanCandidates(text string) bool {
	i := 0
	for i < len(text) {
		// Skip ASCII eight bytes at a time.
		for ; i+8 <= len(text); i += 8 {
			v := uint64(text[i]) | uint64(text[i+1])<<8 | uint64(text[i+2])<<16 | uint64(text[i+3])<<24 |
				uint64(text[i+4])<<32 | uint64(text[i+5])<<40 | uint64(text[i+6])<<48 | uint64(text[i+7])<<56
			if v&0x8080808080808080 != 0 {
				break
			}
		}
		end := min(i+8, len(text))
		for ; i < end; i++ {
			if c := text[i]; c >= 0xE3 && c <= 0xE9 || c == 0xF0 {
				return true
			}
		}
	}
	return false
}
