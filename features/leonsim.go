package features

import (
	"crypto/md5"
	"encoding/binary"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/neardup/neardup/simhash"
)

const docLeonsim = "Compatibility: bit-for-bit the fingerprints of the Python simhash package " +
	"(1e0ng/leonsim) with its defaults, Simhash(text).value, so fingerprints already stored by it " +
	"stay comparable. The text is lower-cased (Python's str.lower, final sigma included), the matches of " +
	"[\\w\\u4e00-\\u9fcc]+ are joined, every window of 4 characters is a feature weighted by its count, " +
	"hashed by MD5 (last 8 bytes, big-endian). Slower than the other profiles and weaker: use it only " +
	"for compatibility. As in Python, a text with no word characters is the single empty window, so " +
	"its fingerprint is not 0 (Result.Empty is still set)."

func init() {
	register("leonsim", docLeonsim, func() (*Profile, error) {
		return &Profile{name: "leonsim", doc: docLeonsim, cfg: Config{Bits: 64, Tokenizer: NGrams{N: leonsimWidth}}, custom: leonsim{}}, nil
	})
}

// leonsimWidth is the window of the Python package's _slide (width=4).
const leonsimWidth = 4

// leonsim is the pipeline of the Python simhash package (simhash/__init__.py):
//
//	def _tokenize(self, content):
//	    content = content.lower()
//	    content = ''.join(re.findall(self.reg, content))   # reg = r'[\w\u4e00-\u9fcc]+'
//	    return self._slide(content)   # [content[i:i+4] for i in range(max(len(content)-4+1, 1))]
//
// then build_by_text counts equal windows and build_by_features adds each
// distinct window with its count as weight, hashed by md5(window.encode()).
type leonsim struct{}

// clean returns the joined word characters of the lower-cased text.
func (leonsim) clean(text string) string { return string(leonsimContent(nil, text)) }

// leonsimContent appends to dst the lower-cased text's characters that
// Python's Unicode \w matches: those for which str.isalnum() is true (letters,
// categories L*, and characters with a numeric value: N*) and '_'. The class
// \u4e00-\u9fcc adds nothing: those are letters (Lo). Invalid UTF-8 decodes
// to U+FFFD, which is not a word character.
func leonsimContent(dst []byte, text string) []byte {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if asciiWord[c] || c == '_' {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch r {
		case 'Σ':
			r = 'σ'
			if finalSigma(text, i, i+size) {
				r = 'ς'
			}
		case 'İ':
			// Python lowers U+0130 to "i\u0307"; the combining dot is not \w.
			r = 'i'
		default:
			r = unicode.ToLower(r)
		}
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			dst = utf8.AppendRune(dst, r)
		}
		i += size
	}
	return dst
}

// finalSigma reports whether the capital sigma at text[i:j] is in the
// Final_Sigma context of Unicode's SpecialCasing, as CPython's
// handle_capital_sigma decides it: preceded by a cased letter and not
// followed by one, case-ignorable characters skipped on both sides.
func finalSigma(text string, i, j int) bool {
	var r rune
	for i > 0 {
		var size int
		r, size = utf8.DecodeLastRuneInString(text[:i])
		i -= size
		if !caseIgnorable(r) {
			break
		}
		r = -1
	}
	if r < 0 || !cased(r) {
		return false
	}
	for j < len(text) {
		r, size := utf8.DecodeRuneInString(text[j:])
		j += size
		if !caseIgnorable(r) {
			return !cased(r)
		}
	}
	return true
}

// cased is Unicode's Cased property: Lu, Ll, Lt, Other_Lowercase, Other_Uppercase.
func cased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: Mn, Me, Cf, Lm, Sk and
// the Word_Break classes MidLetter, MidNumLet and Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0x00B7, 0x0387, 0x055F, 0x05F4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// leonsimWindows appends the windows of content: every run of 4 runes, or
// the whole content (possibly empty) when shorter.
func leonsimWindows(dst []Token, content string) []Token {
	if utf8.RuneCountInString(content) < leonsimWidth {
		return append(dst, Token{Text: content})
	}
	return NGrams{N: leonsimWidth}.Tokenize(dst, content)
}

func (leonsim) tokens(p *Profile, text string) []Token {
	return leonsimWindows(nil, string(leonsimContent(nil, text)))
}

// leonsimHash128 returns the MD5 of s as two big-endian halves; the Python
// package's 64-bit hash is lo, its 128-bit hash (f=128) hi:lo, its 32-bit
// hash the low 32 bits of lo.
func leonsimHash128(s string) (hi, lo uint64) {
	sum := md5.Sum([]byte(s))
	return binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:])
}

// LeonsimHash returns the 64-bit feature hash of the Python simhash package:
// the last 8 bytes of the MD5 of the UTF-8 feature, big-endian.
func LeonsimHash(feature string) uint64 {
	_, lo := leonsimHash128(feature)
	return lo
}

func (l leonsim) features(p *Profile, text string) []Feature {
	counts := map[string]int{}
	var order []string
	for _, t := range l.tokens(p, text) {
		if counts[t.Text] == 0 {
			order = append(order, t.Text)
		}
		counts[t.Text]++
	}
	out := make([]Feature, 0, len(order))
	for _, w := range order {
		out = append(out, Feature{Text: w, Hash: LeonsimHash(w), Weight: float64(counts[w])})
	}
	slices.SortFunc(out, func(a, b Feature) int {
		if a.Weight != b.Weight {
			if a.Weight > b.Weight {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Text, b.Text)
	})
	return out
}

func (leonsim) fingerprint(p *Profile, text string) Result {
	s := scratchPool.Get().(*scratch)
	defer s.release()
	s.buf = leonsimContent(s.buf[:0], text)
	content := string(s.buf) // the windows' texts outlive no call, but keep it simple and safe
	s.toks = leonsimWindows(s.toks[:0], content)
	s.tab.reset(len(s.toks))
	for _, t := range s.toks {
		e, added := s.tab.find(simhash.HashString64(t.Text))
		if added {
			e.text = t.Text
		}
		e.count++
	}
	b, _ := simhash.NewBuilder(p.Bits())
	for i := range s.tab.entries {
		e := &s.tab.entries[i]
		hi, lo := leonsimHash128(e.text)
		b.Add128(hi, lo, float64(e.count))
	}
	r := result(b, p.Bits(), len(s.tab.entries))
	r.Empty = content == ""
	return r
}

// LeonsimFingerprint returns the fingerprint the Python simhash package gives
// for a list of weighted features, Simhash([(text, weight), ...]).value
// (build_by_features): each Feature's Text is hashed by LeonsimHash (its Hash
// field is ignored). Simhash(['aaa', 'bbb']) is LeonsimFingerprint with those
// two texts at weight 1.
func LeonsimFingerprint(feats []Feature) simhash.Fingerprint {
	var b simhash.Builder
	for _, f := range feats {
		b.Add(LeonsimHash(f.Text), f.Weight)
	}
	return b.Sum64()
}
