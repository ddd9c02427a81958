package features

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-ego/gse"
)

// Chinese profiles.
//
// zh-words follows the Chinese systems of the seeds: seed 000 segments with
// HanLP, weighs by part of speech, drops punctuation (tag "w") and caps the
// repeats of one word at 5; seed 004 (Sohu's production system) removes
// stopwords and weighs by TF-IDF, giving words missing from the IDF table the
// average IDF. Here the segmenter is gse (a Go port of the sego/jieba
// dictionaries, embedded in the binary), the IDF table is the jieba one gse
// ships (ChineseIDF), and Traditional characters are folded to Simplified
// first (FoldTraditionalBytes), so that the same text in either script gets the
// same fingerprint and only gse's Simplified dictionary needs loading.
//
// zh-ngrams needs no dictionary: the features are bigrams of consecutive Han
// characters (HanBigrams), the classic dictionary-free indexing unit for
// Chinese, weighted by term frequency; it folds Traditional to Simplified too.

const (
	zhWordsDoc = "Chinese text: gse dictionary segmentation (embedded dictionary, " +
		"Traditional folded to Simplified), part-of-speech weights (nouns and verbs " +
		"weigh more, particles and punctuation are dropped), Chinese stopwords " +
		"removed, at most 5 repeats of a word, TF-IDF with the jieba IDF table " +
		"shipped with gse (unknown words get the average IDF, as in seed 004). " +
		"The most accurate Chinese profile; loading the dictionary takes about " +
		"two seconds once per process."
	zhNGramsDoc = "Chinese text without a dictionary: bigrams of consecutive Han " +
		"characters after Traditional-to-Simplified folding (a lone Han character " +
		"is a feature of its own), other letters " +
		"and digits as words, term frequency with at most 5 repeats. Fast and " +
		"free of segmentation errors; less selective than zh-words."
)

func init() {
	register("zh-words", zhWordsDoc, func() (*Profile, error) {
		return New("zh-words", zhWordsDoc, Config{
			Clean:     CleanOptions{Fold: FoldTraditionalBytes},
			Tokenizer: ChineseWords{},
			Stopwords: ChineseStopwords,
			POSWeight: ChinesePOSWeight,
			MaxRepeat: 5,
			IDF:       ChineseIDF(),
		})
	})
	register("zh-ngrams", zhNGramsDoc, func() (*Profile, error) {
		p, err := New("zh-ngrams", zhNGramsDoc, Config{
			Clean:     CleanOptions{Fold: FoldTraditionalBytes},
			Tokenizer: HanBigrams{},
			MaxRepeat: 5,
		})
		if err != nil {
			return nil, err
		}
		p.custom = hanBigramsPipeline{} // the fused fast path of zh_fast.go
		return p, nil
	})
}

// ChineseWords is a Tokenizer that segments Chinese (and mixed
// Chinese/English) text into words with gse and tags each word with its part
// of speech (Token.POS, the jieba/ICTCLAS tag set that ChinesePOSWeight
// documents). Latin words and numbers survive as tokens tagged "eng" and "m";
// characters the dictionary lacks become one-character tokens tagged "x".
// Whitespace and punctuation are dropped unless KeepPunct is set (they are
// then tagged "w", which ChinesePOSWeight weighs 0).
//
// The segmentation is gse's shortest-path (maximum probability) segmentation
// over its embedded Simplified Chinese dictionary (Segmenter.Segment, the
// algorithm of sego), without gse's HMM for unknown words: it is several
// times faster than gse's jieba-style Cut with the HMM and its output is
// stable across texts. It runs on reusable buffers (zh_segment.go) and gives
// the same words as gse's Segment. Text is expected cleaned (lower case) and
// in Simplified characters, as the zh-words cleanup stage leaves it
// (FoldTraditionalBytes): the dictionary is the Simplified one, so Traditional
// text would mostly fall apart into single characters. The tokens are
// substrings of text.
//
// The dictionary is loaded on first use (about 1.6 s and 150 MB, once per
// process). ChineseWords is safe for concurrent use: after loading, the
// dictionary is only read (gse's trie lookups do not write), and each call
// takes its own buffers from a pool.
type ChineseWords struct {
	KeepPunct bool // keep punctuation and symbol tokens, tagged "w"
}

var _ Tokenizer = ChineseWords{}

// zhSeg is the gse segmenter shared by every ChineseWords, loaded once.
var zhSeg struct {
	once sync.Once
	seg  gse.Segmenter
}

// chineseSegmenter returns the shared gse segmenter, loading its embedded
// Simplified Chinese dictionary on first use.
func chineseSegmenter() *gse.Segmenter {
	zhSeg.once.Do(func() {
		// The embedded Simplified dictionary, loaded from memory (it cannot
		// fail: LoadDictStr returns nil), without gse's HMM model, which
		// the shortest-path segmentation does not use.
		zhSeg.seg.NotLoadHMM = true
		zhSeg.seg.SkipLog = true
		_ = zhSeg.seg.LoadDictEmbed("zh_s")
	})
	return &zhSeg.seg
}

// Tokenize appends the words of text to dst.
func (z ChineseWords) Tokenize(dst []Token, text string) []Token {
	if text == "" {
		return dst
	}
	return chineseDict().segment(dst, text, z.KeepPunct)
}

// zhTag returns the tag of word w given gse's tag: "w" for whitespace,
// punctuation and symbols, and for words gse tags "x" (not a dictionary word,
// or a dictionary symbol) "eng" for Latin words, "m" for numbers and "x" for
// unknown Han characters.
func zhTag(w, pos string) string {
	letter, digit, han := false, false, false
	for i := 0; i < len(w); {
		c := w[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				letter = true
			case c >= '0' && c <= '9':
				digit = true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(w[i:])
		i += size
		switch {
		case isHan(r):
			han = true
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsNumber(r):
			digit = true
		}
	}
	switch {
	case !letter && !digit && !han:
		return "w"
	case pos != "x" && pos != "":
		return pos
	case han:
		return "x"
	case letter:
		return "eng"
	default:
		return "m"
	}
}

// isHan reports whether r is a Han (CJK ideograph) character. The common
// blocks are checked by range; the rest by the Unicode Han script table.
func isHan(r rune) bool {
	switch {
	case r < 0x2E80:
		return false
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF:
		return true
	}
	return unicode.Is(unicode.Han, r)
}

// ChinesePOSWeight is the part-of-speech weight of the zh-words profile, for
// the tags of ChineseWords (jieba's ICTCLAS-style tag set). As in seed 000,
// punctuation ("w") is dropped; following its idea that content words carry
// the meaning of a text, the weights are:
//
//	2    nouns n nr ns nt nz ng nrt nrfg, verbal nouns vn, idioms i,
//	     fixed expressions l, abbreviations j
//	1.5  verbs v vd vg vi vq, Latin words eng
//	1    adjectives a ad ag an, adverbs d, distinguishing words b, state
//	     words z, place s, time t, direction f, unknown characters x, and any
//	     other tag
//	0.5  numerals m mq, classifiers q (article numbers such as 第一条 are
//	     numerals: structure rather than content)
//	0    function words: pronouns r, prepositions p, conjunctions c,
//	     particles u uj ul uz ug uv ud, modal particles y, interjections e,
//	     onomatopoeia o, prefixes h, suffixes k; punctuation w
//
// A weight of 0 drops the token.
func ChinesePOSWeight(pos string) float64 {
	if pos == "" {
		return 1
	}
	switch pos {
	case "vn", "i", "l", "j":
		return 2
	case "eng":
		return 1.5
	case "mq", "q":
		return 0.5
	}
	switch pos[0] {
	case 'n':
		return 2
	case 'v':
		return 1.5
	case 'm':
		return 0.5
	case 'r', 'p', 'c', 'u', 'y', 'e', 'o', 'h', 'k', 'w':
		return 0
	}
	return 1
}
