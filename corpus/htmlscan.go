package corpus

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// The HTML scanner: HTMLText's text is what the tokenizer of
// golang.org/x/net/html (v0.62.0, token.go: Next, readTag, readComment,
// readRawOrRCDATA, readScript; the HTML standard's tokenization, section
// 13.2.5, as far as that tokenizer follows it) finds in the page, but
// found in the page's bytes in place: tags are passed over without
// building their names or attributes, text runs are found with
// bytes.IndexByte, and only a run with an '&' is copied, to decode its
// character references. With the tokenizer's reader, buffer, attribute
// map and per-token copies, a page of the WARC benchmark took 6x as long
// (BenchmarkHTMLText; BENCHMARKS.md, "WARC"). Where the tokenizer has a
// rule that changes the text, the scanner has the same rule, named after
// the tokenizer's function; FuzzHTMLText holds the two to the same text
// on any input.

// tagKind is what the extraction does with an element.
type tagKind uint8

const (
	tagBlock tagKind = 1 << iota // its start and end tags end a line
	tagSkip                      // its content is not text (until its end tag)
	tagRaw                       // its content is raw text to the tokenizer (no tags inside)
)

// tagInfo classifies a tag name as written (any case): the elements the
// extraction knows, and those whose content the tokenizer reads raw. name
// is the element's lower-case name, for the end tag that closes a skipped
// element and the one that ends raw text; "" for any other tag.
func tagInfo(raw []byte) (name string, kind tagKind) {
	const longest = len("blockquote") // and figcaption
	if len(raw) > longest {
		return "", 0
	}
	var b [longest]byte
	for i, c := range raw {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	switch s := b[:len(raw)]; string(s) {
	// Block elements (they end a line of text).
	case "address":
		return "address", tagBlock
	case "article":
		return "article", tagBlock
	case "aside":
		return "aside", tagBlock
	case "blockquote":
		return "blockquote", tagBlock
	case "body":
		return "body", tagBlock
	case "br":
		return "br", tagBlock
	case "caption":
		return "caption", tagBlock
	case "dd":
		return "dd", tagBlock
	case "details":
		return "details", tagBlock
	case "dialog":
		return "dialog", tagBlock
	case "div":
		return "div", tagBlock
	case "dl":
		return "dl", tagBlock
	case "dt":
		return "dt", tagBlock
	case "fieldset":
		return "fieldset", tagBlock
	case "figcaption":
		return "figcaption", tagBlock
	case "figure":
		return "figure", tagBlock
	case "footer":
		return "footer", tagBlock
	case "form":
		return "form", tagBlock
	case "h1":
		return "h1", tagBlock
	case "h2":
		return "h2", tagBlock
	case "h3":
		return "h3", tagBlock
	case "h4":
		return "h4", tagBlock
	case "h5":
		return "h5", tagBlock
	case "h6":
		return "h6", tagBlock
	case "header":
		return "header", tagBlock
	case "hr":
		return "hr", tagBlock
	case "li":
		return "li", tagBlock
	case "main":
		return "main", tagBlock
	case "nav":
		return "nav", tagBlock
	case "ol":
		return "ol", tagBlock
	case "p":
		return "p", tagBlock
	case "pre":
		return "pre", tagBlock
	case "section":
		return "section", tagBlock
	case "summary":
		return "summary", tagBlock
	case "table":
		return "table", tagBlock
	case "td":
		return "td", tagBlock
	case "th":
		return "th", tagBlock
	case "tr":
		return "tr", tagBlock
	case "ul":
		return "ul", tagBlock
	case "html":
		return "html", tagBlock
	// Elements without readable text.
	case "script":
		return "script", tagSkip | tagRaw
	case "style":
		return "style", tagSkip | tagRaw
	case "noscript":
		return "noscript", tagSkip | tagRaw
	case "title":
		return "title", tagSkip | tagRaw
	case "iframe":
		return "iframe", tagSkip | tagRaw
	case "textarea":
		return "textarea", tagSkip | tagRaw
	case "template":
		return "template", tagSkip
	case "svg":
		return "svg", tagSkip
	case "math":
		return "math", tagSkip
	case "object":
		return "object", tagSkip
	case "select":
		return "select", tagSkip
	// Raw text that is read as text.
	case "noembed":
		return "noembed", tagRaw
	case "noframes":
		return "noframes", tagRaw
	case "plaintext":
		return "plaintext", tagRaw
	case "xmp":
		return "xmp", tagRaw
	}
	return "", 0
}

// isHTMLSpace is the tokenizer's white space between a tag's parts.
func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f'
}

func isASCIILetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// htmlScanner extracts the text of one page.
type htmlScanner struct {
	p       []byte
	t       textBuilder
	scratch []byte // a text run with its character references decoded
}

// extract appends the page's text to t: Tokenizer.Next's loop, with the
// extraction's rules for each token.
func (z *htmlScanner) extract() {
	p := z.p
	n := len(p)
	skip := ""   // the element being skipped, "" when none
	rawTag := "" // the element whose raw text comes next (Tokenizer.rawTag)
	i := 0
	for i < n {
		if rawTag != "" {
			var end int
			switch rawTag {
			case "plaintext":
				end = n
			case "script":
				end = scriptEnd(p, i)
			default:
				end = rawTextEnd(p, i, rawTag)
			}
			if end > i && skip == "" {
				// Raw text: NUL becomes U+FFFD; a title's or textarea's
				// (RCDATA) has its character references decoded.
				z.text(p[i:end], true, rawTag == "title" || rawTag == "textarea")
			}
			rawTag = ""
			i = end
			continue
		}
		// Text up to a '<' that starts a tag, an end tag, a comment or a
		// declaration; any other '<' is text.
		j := i
		for {
			k := bytes.IndexByte(p[j:], '<')
			if k < 0 || j+k+1 >= n {
				j = n
				break
			}
			j += k
			if c := p[j+1]; isASCIILetter(c) || c == '/' || c == '!' || c == '?' {
				break
			}
			j++
		}
		if j > i && skip == "" {
			z.text(p[i:j], false, true)
		}
		if j >= n {
			return
		}
		i = j
		switch c := p[i+1]; {
		case isASCIILetter(c): // a start tag
			end, nameEnd, ok := scanTag(p, i+1, nil)
			if !ok {
				return // the tag runs to the end: the tokenizer's ErrorToken
			}
			name, kind := tagInfo(p[i+1 : nameEnd])
			if kind&tagRaw != 0 {
				rawTag = name
			}
			switch {
			case skip != "":
			case kind&tagSkip != 0:
				if !selfClosing(p, i+1, end) {
					skip = name
				}
			case kind&tagBlock != 0:
				z.t.newline()
			}
			i = end
		case c == '/':
			if i+2 >= n { // "</" at the end is text
				if skip == "" {
					z.text(p[i:], false, true)
				}
				return
			}
			switch c := p[i+2]; {
			case c == '>': // "</>" is nothing
				i += 3
			case isASCIILetter(c): // an end tag
				end, nameEnd, ok := scanTag(p, i+2, nil)
				if !ok {
					return
				}
				name, kind := tagInfo(p[i+2 : nameEnd])
				if skip != "" {
					if name == skip {
						skip = ""
					}
				} else if kind&tagBlock != 0 {
					z.t.newline()
				}
				i = end
			default: // a bogus comment, to the next '>'
				i = closeAngle(p, i+2)
			}
		case c == '!':
			// readMarkupDeclaration: a comment, or a doctype or bogus
			// comment up to the next '>'.
			if i+3 < n && p[i+2] == '-' && p[i+3] == '-' {
				i = commentEnd(p, i+4)
			} else {
				i = closeAngle(p, i+2)
			}
		default: // '?': a bogus comment
			i = closeAngle(p, i+1)
		}
	}
}

// closeAngle returns the position after the first '>' at or after j, or
// the end (readUntilCloseAngle).
func closeAngle(p []byte, j int) int {
	if k := bytes.IndexByte(p[j:], '>'); k >= 0 {
		return j + k + 1
	}
	return len(p)
}

// scanTag reads a start or end tag whose name starts at p[k] (a letter)
// as readTag does: the name up to white space, '/' or '>', then
// attributes, each a key and, after '=', a value quoted or not, up to the
// '>' outside them. It returns the position after the '>' and the end of
// the name; ok is false when the tag runs to the end of p. With attrs it
// records the attributes the tokenizer keeps (a key not empty and not met
// before, in any case) for selfClosing.
func scanTag(p []byte, k int, attrs *[]tagAttr) (end, nameEnd int, ok bool) {
	n := len(p)
	j := k + 1
	for { // readTagName
		if j >= n {
			return 0, 0, false
		}
		c := p[j]
		if isHTMLSpace(c) {
			nameEnd = j
			j++
			break
		}
		if c == '/' || c == '>' {
			nameEnd = j
			break
		}
		j++
	}
	j = skipHTMLSpace(p, j)
	for {
		if j >= n {
			return 0, 0, false
		}
		if p[j] == '>' {
			return j + 1, nameEnd, true
		}
		// readTagAttrKey: an '=' first is part of the key.
		keyStart := j
		for {
			if j >= n {
				return 0, 0, false
			}
			c := p[j]
			j++
			if c == '=' && j == keyStart+1 {
				continue
			}
			if isHTMLSpace(c) || c == '/' || c == '>' || c == '=' {
				j--
				break
			}
		}
		keyEnd := j
		// readTagAttrVal.
		valEnd := j
		j = skipHTMLSpace(p, j)
		if j >= n {
			return 0, 0, false
		}
		switch c := p[j]; c {
		case '/': // consumed: the self-closing state
			j++
		case '=':
			j = skipHTMLSpace(p, j+1)
			if j >= n {
				return 0, 0, false
			}
			switch q := p[j]; q {
			case '>':
			case '\'', '"':
				e := bytes.IndexByte(p[j+1:], q)
				if e < 0 {
					return 0, 0, false
				}
				valEnd = j + 1 + e
				j = valEnd + 1
			default:
				j++
				for {
					if j >= n {
						return 0, 0, false
					}
					c := p[j]
					if isHTMLSpace(c) {
						valEnd = j
						j++
						break
					}
					if c == '>' {
						valEnd = j
						break
					}
					j++
				}
			}
		}
		if attrs != nil && keyEnd > keyStart {
			key := p[keyStart:keyEnd]
			seen := false
			for _, a := range *attrs {
				if equalFoldASCII(a.key, key) {
					seen = true
					break
				}
			}
			if !seen {
				*attrs = append(*attrs, tagAttr{key: key, valEnd: valEnd})
			}
		}
		j = skipHTMLSpace(p, j)
	}
}

// tagAttr is an attribute the tokenizer keeps: its key as written and
// where its value ends.
type tagAttr struct {
	key    []byte
	valEnd int
}

// equalFoldASCII reports whether a and b are equal once their ASCII upper
// case letters are made lower case (the tokenizer's lower), other bytes
// compared as they are.
func equalFoldASCII[A, B ~string | ~[]byte](a A, b B) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// selfClosing reports whether the start tag whose name starts at p[k] and
// that ends before end is self-closing as readStartTag decides it: a '/'
// just before its '>' that is not the last character of its last kept
// attribute's value (<p a=/> is not).
func selfClosing(p []byte, k, end int) bool {
	if p[end-2] != '/' {
		return false
	}
	var attrs []tagAttr
	scanTag(p, k, &attrs)
	return len(attrs) == 0 || end-2 != attrs[len(attrs)-1].valEnd-1
}

func skipHTMLSpace(p []byte, j int) int {
	for j < len(p) && isHTMLSpace(p[j]) {
		j++
	}
	return j
}

// commentEnd returns the position after the comment whose text starts at
// p[j] (after "<!--"), or the end (readComment: "-->", "--!>", and "<!-->"
// or "<!--->" close it).
func commentEnd(p []byte, j int) int {
	n := len(p)
	dashes := 0
	beginning := true
	for j < n {
		c := p[j]
		j++
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				return j
			}
		case '!':
			if dashes >= 2 {
				if j >= n {
					return n
				}
				c = p[j]
				j++
				if c == '>' {
					return j
				}
				if c == '-' {
					dashes = 1
					beginning = false
					continue
				}
			}
		}
		dashes = 0
		beginning = false
	}
	return n
}

// rawEndTag matches, at p[j] after "</", the name tag (any case) and a
// white space, '/' or '>' after it (readRawEndTag). It returns whether it
// matched and, if not, where to go on from; eof when p ended first.
func rawEndTag(p []byte, j int, tag string) (matched bool, next int, eof bool) {
	for i := 0; i < len(tag); i++ {
		if j >= len(p) {
			return false, len(p), true
		}
		if c := p[j]; c != tag[i] && c != tag[i]-('a'-'A') {
			return false, j, false
		}
		j++
	}
	if j >= len(p) {
		return false, len(p), true
	}
	if c := p[j]; isHTMLSpace(c) || c == '/' || c == '>' {
		return true, j, false
	}
	return false, j, false
}

// rawTextEnd returns where the raw text of element tag that starts at
// p[j] ends: at its end tag's '<', or the end (readRawOrRCDATA).
func rawTextEnd(p []byte, j int, tag string) int {
	n := len(p)
	for {
		k := bytes.IndexByte(p[j:], '<')
		if k < 0 {
			return n
		}
		j += k + 1
		if j >= n {
			return n
		}
		if p[j] != '/' {
			continue
		}
		matched, next, eof := rawEndTag(p, j+1, tag)
		if eof {
			return n
		}
		if matched {
			return next - len("</") - len(tag)
		}
		j = next
	}
}

// scriptEnd returns where a script's text that starts at p[j] ends: at
// "</script" (any case, then white space, '/' or '>') outside the
// "<!--" escapes of the HTML standard's script data states, or the end.
// It is readScript, state for state.
func scriptEnd(p []byte, j int) int {
	n := len(p)
	var c byte
	const tag = "script"
	// next reads a byte; false at the end.
	next := func() bool {
		if j >= n {
			return false
		}
		c = p[j]
		j++
		return true
	}
	// endTag tries "</script" after "</": found, or where to go on.
	endTag := func() (found bool, end bool) {
		matched, at, eof := rawEndTag(p, j, tag)
		if eof {
			j = n
			return false, true
		}
		if matched {
			j = at - len("</") - len(tag)
			return true, true
		}
		j = at
		return false, false
	}

scriptData:
	if k := bytes.IndexByte(p[j:], '<'); k >= 0 {
		j += k + 1
	} else {
		return n
	}
	goto scriptDataLessThanSign

scriptDataLessThanSign:
	if !next() {
		return n
	}
	switch c {
	case '/':
		if _, end := endTag(); end {
			return j
		}
		goto scriptData
	case '!':
		goto scriptDataEscapeStart
	}
	j--
	goto scriptData

scriptDataEscapeStart:
	if !next() {
		return n
	}
	if c == '-' {
		goto scriptDataEscapeStartDash
	}
	j--
	goto scriptData

scriptDataEscapeStartDash:
	if !next() {
		return n
	}
	if c == '-' {
		goto scriptDataEscapedDashDash
	}
	j--
	goto scriptData

scriptDataEscaped:
	if !next() {
		return n
	}
	switch c {
	case '-':
		goto scriptDataEscapedDash
	case '<':
		goto scriptDataEscapedLessThanSign
	}
	goto scriptDataEscaped

scriptDataEscapedDash:
	if !next() {
		return n
	}
	switch c {
	case '-':
		goto scriptDataEscapedDashDash
	case '<':
		goto scriptDataEscapedLessThanSign
	}
	goto scriptDataEscaped

scriptDataEscapedDashDash:
	if !next() {
		return n
	}
	switch c {
	case '-':
		goto scriptDataEscapedDashDash
	case '<':
		goto scriptDataEscapedLessThanSign
	case '>':
		goto scriptData
	}
	goto scriptDataEscaped

scriptDataEscapedLessThanSign:
	if !next() {
		return n
	}
	if c == '/' {
		if _, end := endTag(); end {
			return j
		}
		goto scriptDataEscaped
	}
	if isASCIILetter(c) {
		j--
		for i := 0; i < len(tag); i++ {
			if !next() {
				return n
			}
			if c != tag[i] && c != tag[i]-('a'-'A') {
				j--
				goto scriptDataEscaped
			}
		}
		if !next() {
			return n
		}
		if isHTMLSpace(c) || c == '/' || c == '>' {
			goto scriptDataDoubleEscaped
		}
		j--
		goto scriptDataEscaped
	}
	j--
	goto scriptData

scriptDataDoubleEscaped:
	if !next() {
		return n
	}
	switch c {
	case '-':
		goto scriptDataDoubleEscapedDash
	case '<':
		goto scriptDataDoubleEscapedLessThanSign
	}
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapedDash:
	if !next() {
		return n
	}
	switch c {
	case '-':
		goto scriptDataDoubleEscapedDashDash
	case '<':
		goto scriptDataDoubleEscapedLessThanSign
	}
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapedDashDash:
	if !next() {
		return n
	}
	switch c {
	case '-':
		goto scriptDataDoubleEscapedDashDash
	case '<':
		goto scriptDataDoubleEscapedLessThanSign
	case '>':
		goto scriptData
	}
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapedLessThanSign:
	if !next() {
		return n
	}
	if c == '/' {
		// scriptDataDoubleEscapeEnd: "</script" leaves the double
		// escape, and is passed over.
		matched, at, eof := rawEndTag(p, j, tag)
		if matched {
			j = at + 1
			goto scriptDataEscaped
		}
		if eof {
			return n
		}
		j = at
		goto scriptDataDoubleEscaped
	}
	j--
	goto scriptDataDoubleEscaped
}

// text appends a text token's text: raw text has NUL made U+FFFD
// (Tokenizer.convertNUL), and character references are decoded unless
// the text is raw (Tokenizer.textIsRaw).
func (z *htmlScanner) text(s []byte, raw, decode bool) {
	if raw && bytes.IndexByte(s, 0) >= 0 {
		s = bytes.ReplaceAll(s, []byte{0}, []byte("\ufffd"))
	}
	if decode && bytes.IndexByte(s, '&') >= 0 {
		z.scratch = appendUnescaped(z.scratch[:0], s)
		s = z.scratch
	}
	z.t.text(s)
}

// appendUnescaped appends s with its character references decoded as
// golang.org/x/net/html's unescape does in text (not attributes): numeric
// references here, the few named ones pages use most here, and any other
// name by html.UnescapeString on the name alone, which decodes it as it
// would in place (a name is letters and digits, and its decoding depends
// on nothing after it).
func appendUnescaped(dst, s []byte) []byte {
	for {
		k := bytes.IndexByte(s, '&')
		if k < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:k]...)
		s = s[k:]
		if len(s) > 1 && s[1] == '#' {
			r, size := numericReference(s)
			if size == 1 {
				dst = append(dst, '&')
			} else {
				dst = utf8.AppendRune(dst, r)
			}
			s = s[size:]
			continue
		}
		i := 1
		for i < len(s) && (isASCIILetter(s[i]) || '0' <= s[i] && s[i] <= '9') {
			i++
		}
		if i < len(s) && s[i] == ';' {
			i++
		}
		switch string(s[1:i]) {
		case "":
			dst = append(dst, '&')
			s = s[1:]
			continue
		case "amp;":
			dst = append(dst, '&')
		case "lt;":
			dst = append(dst, '<')
		case "gt;":
			dst = append(dst, '>')
		case "quot;":
			dst = append(dst, '"')
		case "apos;":
			dst = append(dst, '\'')
		case "nbsp;":
			dst = append(dst, "\u00a0"...)
		default:
			dst = append(dst, html.UnescapeString(string(s[:i]))...)
		}
		s = s[i:]
	}
}

// numericReference decodes "&#...;" at the start of s as unescapeEntity
// does: decimal or hex digits, an optional ';', C1 controls as
// windows-1252, NUL, surrogates and values past U+10FFFF as U+FFFD. size
// 1 means no reference ('&' is text).
func numericReference(s []byte) (r rune, size int) {
	if len(s) <= 2 {
		return '&', 1
	}
	i := 2
	hex := false
	if c := s[i]; c == 'x' || c == 'X' {
		hex = true
		i++
	}
	i0 := i
	x := rune(0)
	for i < len(s) {
		c := s[i]
		var d rune
		switch {
		case '0' <= c && c <= '9':
			d = rune(c) - '0'
		case hex && 'a' <= c && c <= 'f':
			d = rune(c) - 'a' + 10
		case hex && 'A' <= c && c <= 'F':
			d = rune(c) - 'A' + 10
		default:
			goto done
		}
		if x <= 0x10FFFF {
			if hex {
				x = 16*x + d
			} else {
				x = 10*x + d
			}
		}
		i++
	}
done:
	if i == i0 {
		return '&', 1
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	switch {
	case 0x80 <= x && x <= 0x9f:
		x = windows1252C1[x-0x80]
	case x == 0 || 0xd800 <= x && x <= 0xdfff || x > 0x10ffff:
		x = utf8.RuneError
	}
	return x, i
}

// windows1252C1 is what a numeric reference to 0x80-0x9F means (the HTML
// standard's table, as golang.org/x/net/html's replacementTable).
var windows1252C1 = [32]rune{
	'\u20AC', '\u0081', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
	'\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008D', '\u017D', '\u008F',
	'\u0090', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
	'\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '\u009D', '\u017E', '\u0178',
}
