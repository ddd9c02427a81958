package features

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// CleanOptions selects the cleanup steps. The zero value cleans fully: HTML
// removed and entities decoded, NFKC, lower case, whitespace and control
// characters collapsed.
type CleanOptions struct {
	KeepHTML bool // leave tags and entities alone (the text is not HTML)
	NoNFKC   bool // skip Unicode NFKC normalisation (and so full-width folding)
	KeepCase bool // do not lower-case
	// Fold, when not nil, is a final character folding applied to the
	// cleaned text, such as Traditional-to-Simplified Chinese (the zh files
	// provide one). It appends the folded form of src to dst and returns it.
	Fold func(dst, src []byte) []byte
}

// Clean returns text after the cleanup stage:
//
//  1. HTML: comments, <script> and <style> elements and tags are removed (a
//     tag becomes a space, except inline tags such as <b> and <a>, which join
//     their neighbours), and character references are decoded (all HTML5
//     named ones, &nbsp; &amp; &lt; &gt; &quot; included, and numeric &#..;
//     &#x..;). A '<' that does not start a tag is text, and so is a reference
//     without its ';' or with an unknown name ("AT&T", "&bogus;").
//  2. Each run of invalid UTF-8 bytes becomes one U+FFFD.
//  3. Unicode NFKC, which also folds full-width forms to ASCII and &nbsp; to a
//     space.
//  4. Lower case; U+2018, U+2019 and U+02BC become the ASCII apostrophe.
//  5. Runs of whitespace and control characters become one space, format
//     characters (Cf: zero-width space, soft hyphen, BOM) are removed, and
//     leading and trailing space is trimmed.
//  6. opt.Fold, if set.
//
// Pure ASCII text without '<' or '&' takes a fast path of one table lookup per
// byte.
func Clean(text string, opt CleanOptions) string {
	var c cleaner
	return string(c.clean(nil, text, opt))
}

// cleaner holds the scratch buffers of the cleanup stage, reused between
// documents on the fingerprint fast path.
type cleaner struct {
	html []byte
	nfkc []byte
	fold []byte
}

// clean appends the cleaned text to dst.
func (c *cleaner) clean(dst []byte, text string, opt CleanOptions) []byte {
	if !opt.KeepHTML && strings.ContainsAny(text, "<&") {
		c.html = stripHTML(c.html[:0], text)
		text = unsafe.String(unsafe.SliceData(c.html), len(c.html))
	}
	if !asciiOnly(text) {
		if !utf8.ValidString(text) {
			text = strings.ToValidUTF8(text, "\uFFFD")
		}
		if !opt.NoNFKC {
			// QuickSpanString finds the normal prefix without allocating
			// (IsNormalString allocates); Append normalises the rest,
			// handling the seam.
			if n := norm.NFKC.QuickSpanString(text); n < len(text) {
				c.nfkc = norm.NFKC.AppendString(append(c.nfkc[:0], text[:n]...), text[n:])
				text = unsafe.String(unsafe.SliceData(c.nfkc), len(c.nfkc))
			}
		}
	}
	start := len(dst)
	dst = appendFolded(dst, text, !opt.KeepCase)
	if opt.Fold != nil {
		c.fold = opt.Fold(c.fold[:0], dst[start:])
		dst = append(dst[:start], c.fold...)
	}
	return dst
}

// asciiOnly reports whether s has no byte >= 0x80, eight bytes at a time.
func asciiOnly(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		v := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if v&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Byte classes of the final pass.
const (
	clsCopy  = iota // append as is
	clsUpper        // ASCII upper case letter
	clsSpace        // whitespace or control character
)

var asciiClass = func() (t [128]uint8) {
	for c := 0; c < 128; c++ {
		switch {
		case c >= 'A' && c <= 'Z':
			t[c] = clsUpper
		case c <= ' ' || c == 0x7f:
			t[c] = clsSpace
		}
	}
	return t
}()

// appendFolded appends text to dst with case folded (if lower), whitespace
// and controls collapsed, format characters removed, and space trimmed. text
// must be valid UTF-8 (invalid bytes would become U+FFFD anyway).
func appendFolded(dst []byte, text string, lower bool) []byte {
	space := false // a space is pending before the next visible character
	start := len(dst)
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch asciiClass[c] {
			case clsCopy:
			case clsUpper:
				if lower {
					c += 'a' - 'A'
				}
			default:
				space = true
				i++
				continue
			}
			if space {
				if len(dst) > start {
					dst = append(dst, ' ')
				}
				space = false
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r >= 0x3400 && r <= 0x9fff {
			// CJK ideographs: no case, no spaces, no controls.
			if space {
				if len(dst) > start {
					dst = append(dst, ' ')
				}
				space = false
			}
			dst = append(dst, text[i:i+size]...)
			i += size
			continue
		}
		i += size
		switch {
		case r == '\u2018' || r == '\u2019' || r == '\u02bc':
			r = '\''
		case unicode.IsSpace(r) || unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r):
			space = true
			continue
		case unicode.Is(unicode.Cf, r):
			continue
		case lower:
			r = unicode.ToLower(r)
		}
		if space {
			if len(dst) > start {
				dst = append(dst, ' ')
			}
			space = false
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// inlineTags are the HTML elements that do not separate words: removing
// <b>bold</b>er must give "bolder".
var inlineTags = map[string]bool{
	"a": true, "abbr": true, "b": true, "bdi": true, "bdo": true, "cite": true,
	"code": true, "data": true, "dfn": true, "em": true, "font": true, "i": true,
	"kbd": true, "mark": true, "q": true, "s": true, "samp": true, "small": true,
	"span": true, "strike": true, "strong": true, "sub": true, "sup": true,
	"time": true, "tt": true, "u": true, "var": true, "wbr": true,
}

// stripHTML appends s to dst with comments, tags, script and style elements
// removed and character references decoded. It never fails: malformed markup
// is kept as text; the opener of an unterminated comment, script or style is
// dropped and the text after it kept.
func stripHTML(dst []byte, s string) []byte {
	// Past the last '>' no tag can end, so the rest is text (or an
	// unterminated comment): checking this once keeps the scan linear
	// on text full of '<'.
	lastGT := strings.LastIndexByte(s, '>')
	for len(s) > 0 {
		if lastGT < 0 {
			// No tag can end here; an unterminated comment opener is
			// dropped alone (see tagLen).
			for k := strings.Index(s, "<!--"); k >= 0; k = strings.Index(s, "<!--") {
				dst = append(appendText(dst, s[:k]), ' ')
				s = s[k+4:]
			}
			return appendText(dst, s)
		}
		lt := strings.IndexByte(s[:lastGT], '<')
		if lt < 0 {
			lt = lastGT + 1
			dst = appendText(dst, s[:lt])
			s = s[lt:]
			lastGT = -1
			continue
		}
		dst = appendText(dst, s[:lt])
		s = s[lt:]
		lastGT -= lt
		n, sep := tagLen(s)
		if n == 0 {
			n = 1
			dst = append(dst, '<')
		} else if sep {
			dst = append(dst, ' ')
		}
		s = s[n:]
		lastGT -= n
	}
	return dst
}

// appendText appends an HTML text segment with its character references
// decoded. Each reference (&name; &#n; &#xh;) is decoded alone by the
// standard library's HTML5 entity table, so a long text with a few entities
// is not copied again; an unknown or unterminated reference stays as text.
func appendText(dst []byte, s string) []byte {
	for {
		amp := strings.IndexByte(s, '&')
		if amp < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:amp]...)
		s = s[amp:]
		n := refLen(s)
		if n == 0 {
			dst = append(dst, '&')
			s = s[1:]
			continue
		}
		dst = append(dst, html.UnescapeString(s[:n])...)
		s = s[n:]
	}
}

// refLen returns the length of the character reference "&[#]alnum+;" at the
// start of s (which starts with '&'), or 0. The longest HTML5 entity name has
// 32 characters.
func refLen(s string) int {
	for i := 1; i < len(s) && i <= 34; i++ {
		c := s[i]
		switch {
		case c == ';':
			if i == 1 {
				return 0
			}
			return i + 1
		case c == '#' && i == 1, asciiWord[c]:
		default:
			return 0
		}
	}
	return 0
}

// tagLen returns the length of the markup at the start of s (which starts with
// '<') and whether it separates words; 0 when s does not start with markup.
func tagLen(s string) (n int, sep bool) {
	if strings.HasPrefix(s, "<!--") {
		if end := strings.Index(s[4:], "-->"); end >= 0 {
			return 4 + end + 3, false
		}
		// Unterminated: drop only the opener. A browser would hide the rest
		// of the page, but in plain text (AsciiDoc, Markdown, mail) that
		// loses the document, and losing text hurts dedup more than a
		// stray "<!--" does.
		return 4, false
	}
	if len(s) < 2 {
		return 0, false
	}
	c := s[1]
	closing := false
	switch {
	case c == '!' || c == '?':
		if end := strings.IndexByte(s, '>'); end >= 0 {
			return end + 1, true
		}
		return 0, false
	case c == '/':
		closing = true
	case isASCIILetter(c):
	default:
		return 0, false
	}
	nameStart := 1
	if closing {
		nameStart = 2
	}
	j := nameStart
	for j < len(s) && (isASCIILetter(s[j]) || s[j] >= '0' && s[j] <= '9') {
		j++
	}
	if j == nameStart {
		return 0, false
	}
	name := strings.ToLower(s[nameStart:j])
	// Find the closing '>' outside quoted attribute values; a quote left
	// open for more than maxQuote bytes is taken as a stray quote.
	const maxQuote = 1024
	var quote byte
	qstart := 0
	end := -1
	for k := j; k < len(s) && end < 0; k++ {
		b := s[k]
		switch {
		case quote != 0:
			if b == quote {
				quote = 0
			} else if k-qstart > maxQuote {
				end = strings.IndexByte(s[j:], '>')
				if end >= 0 {
					end += j
				}
				k = len(s)
			}
		case b == '"' || b == '\'':
			quote, qstart = b, k
		case b == '>':
			end = k
		}
	}
	if end < 0 && quote != 0 {
		if end = strings.IndexByte(s[j:], '>'); end >= 0 {
			end += j
		}
	}
	if end < 0 {
		return 0, false
	}
	n = end + 1
	if !closing && (name == "script" || name == "style") && s[end-1] != '/' {
		// Raw text element: skip to its end tag.
		if k := indexFold(s[n:], "</"+name); k >= 0 {
			n += k
			if e := strings.IndexByte(s[n:], '>'); e >= 0 {
				return n + e + 1, true
			}
		}
		// No end tag: drop only the start tag. Text that merely mentions
		// "<style>" (AsciiDoc's "--thread[=<style>]") must not lose the
		// rest of the document.
		return end + 1, true
	}
	return n, !inlineTags[name]
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// indexFold is strings.Index ignoring ASCII case, for a lower-case ASCII sub.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && (s[i+j] == sub[j] || isASCIILetter(sub[j]) && s[i+j]|0x20 == sub[j]) {
			j++
		}
		if j == len(sub) {
			return i
		}
	}
	return -1
}
