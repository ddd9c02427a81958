package corpus

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
)

// tokenizerHTMLText is the extraction as it was written on
// golang.org/x/net/html's Tokenizer, kept as the reference the scanner
// must agree with (HTMLText's text on any page).
func tokenizerHTMLText(page []byte, contentType string) string {
	if e, name, _ := charset.DetermineEncoding(page, contentType); name != "utf-8" && e != encoding.Nop {
		page = decodeWith(e, page)
	} else if bytes.HasPrefix(page, []byte("\xef\xbb\xbf")) {
		page = page[3:]
	}
	blockElements := map[atom.Atom]bool{
		atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true, atom.Body: true,
		atom.Br: true, atom.Caption: true, atom.Dd: true, atom.Details: true, atom.Dialog: true, atom.Div: true,
		atom.Dl: true, atom.Dt: true, atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true,
		atom.Footer: true, atom.Form: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
		atom.H5: true, atom.H6: true, atom.Header: true, atom.Hr: true, atom.Li: true, atom.Main: true,
		atom.Nav: true, atom.Ol: true, atom.P: true, atom.Pre: true, atom.Section: true, atom.Summary: true,
		atom.Table: true, atom.Td: true, atom.Th: true, atom.Tr: true, atom.Ul: true, atom.Html: true,
	}
	skipElements := map[atom.Atom]bool{
		atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Title: true,
		atom.Svg: true, atom.Math: true, atom.Iframe: true, atom.Object: true, atom.Textarea: true,
		atom.Select: true, atom.Head: false,
	}
	var t refTextBuilder
	z := html.NewTokenizer(bytes.NewReader(page))
	var skip atom.Atom
	for {
		switch z.Next() {
		case html.ErrorToken:
			return string(t.out[:len(bytes.TrimRight(t.out, "\n"))])
		case html.TextToken:
			if skip == 0 {
				t.text(z.Text())
			}
		case html.StartTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skip == 0 && skipElements[a] {
				skip = a
			} else if skip == 0 && blockElements[a] {
				t.newline()
			}
		case html.SelfClosingTagToken:
			name, _ := z.TagName()
			if a := atom.Lookup(name); skip == 0 && blockElements[a] {
				t.newline()
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skip != 0 {
				if a == skip {
					skip = 0
				}
			} else if blockElements[a] {
				t.newline()
			}
		}
	}
}

// isSpaceByte marks ASCII white space (and the other control characters):
// what refTextBuilder collapses.
var isSpaceByte = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c <= ' ' || c == 0x7f
	}
	return t
}()

// refTextBuilder is textBuilder as it was written with the tokenizer: a
// word at a time.
type refTextBuilder struct {
	out   []byte
	space bool
}

func (t *refTextBuilder) text(b []byte) {
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf && !isSpaceByte[c] {
			i := 1
			for i < len(b) && b[i] < utf8.RuneSelf && !isSpaceByte[b[i]] {
				i++
			}
			t.word(b[:i])
			b = b[i:]
			continue
		}
		if c < utf8.RuneSelf {
			t.space = true
			b = b[1:]
			continue
		}
		r, n := utf8.DecodeRune(b)
		if r == '\u00a0' || unicode.IsSpace(r) {
			t.space = true
		} else {
			t.word(b[:n])
		}
		b = b[n:]
	}
}

func (t *refTextBuilder) word(w []byte) {
	if t.space && len(t.out) > 0 && t.out[len(t.out)-1] != '\n' {
		t.out = append(t.out, ' ')
	}
	t.space = false
	t.out = append(t.out, w...)
}

func (t *refTextBuilder) newline() {
	t.space = false
	if len(t.out) > 0 && t.out[len(t.out)-1] != '\n' {
		t.out = append(t.out, '\n')
	}
}

// htmlCases are pages where the tokenizer's rules change the text:
// raw text, the script escapes, comments, self-closing tags, attributes
// that hide a '>', character references, NUL, a tag cut by the end.
var htmlCases = []string{
	"<p>a  b</p><p>c</p>",
	"<ul><li>one<li>two</ul>",
	"x<script>var s = '<p>no</p>'</script>y",
	"<span>in</span><span>line</span> <b>bold</b>",
	"<title>T</title><body>body</body>",
	"a&lt;b &#x263a; &amp &ampx &notit; &not; &#128; &#x110000; &#0; &#; &#x; &; &#39;&#34; &nbsp;x &NotANamedOne; &Afr; &acE;",
	"<script>a<!--b<script>c</script>d-->e</script>f</script>g",
	"<script>a<!--b</script>c",
	"<script>x</SCRIPT >y",
	"<script>x</scripty>z</script/>w",
	"<script/>shown</script>after",
	"<style/>shown</style>after<title/>a&amp;b</title>",
	"<p a=/>x", "<script a=/>hidden</script>shown", "<script a=/ a=/>shown</script>z", "<script A=1 a=/>hidden</script>z",
	"<script a='/'/>shown</script>z", "<script a/>shown</script>z", "<script =a/>shown</script>z",
	"<div title='a>b'>c</div>d", `<div title="a>b" x=y>c</div>`, "<div x = y >c</div>", "<div x=>y</div>",
	"a<!-- c -->b<!-->c<!--->d<!-- x --!>e<!-- y --!-->f<!-- z --", "<!DOCTYPE html>x<!doctype>y<!DOC>z<!>w<!-x>v",
	"<?xml version='1.0'?>x</ z>y</>z</", "a<b", "a<", "a< b", "a<1b", "<p", "<p class='x", "</p", "</p x",
	"a\x00b<xmp>c\x00d&amp;</xmp><plaintext>e\x00</plaintext>&amp;",
	"<noembed><p>x</p></noembed>y<noframes>a</noframes>", "<textarea>a</textarea>b<iframe><p>x</iframe>y",
	"<svg><style></svg></style></svg>after", "<object><title></object></title></object>ok",
	"<P>Upper<BR>case</P><H1>h</H1>", "caf\xe9 \xff\xfe", "<p>\u00a0\u2003x\u3000y</p>", "\r\na\rb\r\nc",
	"<tEmPlAtE><p>no</p></template>yes", "<select><option>no</select>yes", "<noscript>no</noscript>yes",
	"<h1\x00>x</h1\x00>y", "<scr\x00ipt>x</scr\x00ipt>", "<script>\x00</script><xmp>\x00</xmp>",
	"<div\ta\nb\fc\r>x</div >", "<a href=x/>y", "<br/>x<br />y", "<p/>x", "<html><head><meta charset=\"windows-1252\"></head><p>caf\xe9</p>",
}

// TestHTMLScannerMatchesTokenizer: the scanner's text is the tokenizer's
// on the pages where their rules are subtle.
func TestHTMLScannerMatchesTokenizer(t *testing.T) {
	for _, in := range htmlCases {
		for _, ctype := range []string{"", "text/html; charset=utf-8", "text/html; charset=iso-8859-1"} {
			if got, want := HTMLText([]byte(in), ctype), tokenizerHTMLText([]byte(in), ctype); got != want {
				t.Errorf("HTMLText(%q, %q) = %q, the tokenizer's text is %q", in, ctype, got, want)
			}
		}
	}
}

// FuzzHTMLText: on any page the scanner gives the tokenizer's text.
func FuzzHTMLText(f *testing.F) {
	for _, in := range htmlCases {
		f.Add([]byte(in))
	}
	f.Add([]byte(`<!DOCTYPE html><html><head><title>Page A</title>
<style>p { color: red }</style><script>if (a < b) { document.write("no") }</script></head>
<body><h1>The river</h1><p>The quick brown fox jumps over the lazy dog near the river bank.</p>
<div>Second&nbsp;block &amp; more<br>after a break</div><noscript>enable scripts</noscript></body></html>`))
	f.Fuzz(func(t *testing.T, page []byte) {
		for _, ctype := range []string{"text/html; charset=utf-8", ""} {
			got, want := HTMLText(bytes.Clone(page), ctype), tokenizerHTMLText(bytes.Clone(page), ctype)
			if got != want {
				t.Fatalf("HTMLText(%q, %q) = %q, the tokenizer's text is %q", page, ctype, got, want)
			}
			if strings.HasPrefix(got, "\n") || strings.HasSuffix(got, "\n") || strings.Contains(got, "\n\n") {
				t.Fatalf("HTMLText(%q) = %q: an empty line", page, got)
			}
		}
	})
}

// FuzzTextBuilder: text given in two pieces, with a line break between or
// not, comes out as the word-at-a-time builder made it.
func FuzzTextBuilder(f *testing.F) {
	f.Add([]byte("  two  words\there\u00a0\u2003and\xff more \x7f\x00end "), 5, false)
	f.Add([]byte("a b"), 1, true)
	f.Fuzz(func(t *testing.T, b []byte, cut int, newline bool) {
		cut = min(max(cut, 0), len(b))
		var got textBuilder
		var want refTextBuilder
		got.text(b[:cut])
		want.text(b[:cut])
		if newline {
			got.newline()
			want.newline()
		}
		got.text(b[cut:])
		want.text(b[cut:])
		if string(got.out) != string(want.out) || got.space != want.space {
			t.Fatalf("text(%q) in two at %d: %q (space due %v), want %q (%v)", b, cut, got.out, got.space, want.out, want.space)
		}
	})
}

// BenchmarkHTMLText extracts the text of a page as the WARC benchmark
// serves it, with the scanner and with the tokenizer it replaced.
func BenchmarkHTMLText(b *testing.B) {
	var page bytes.Buffer
	page.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>d0000000001</title>\n" +
		"<style>p{margin:1em}</style>\n<script>var x = 1 < 2;</script></head>\n<body>\n")
	for range 4 {
		page.WriteString("<p>" + html.EscapeString("The river's bank, they said, was \"near\" & the town's mill: "+
			strings.Repeat("a few more words of prose to read, ", 8)) + "</p>\n")
	}
	page.WriteString("</body></html>\n")
	for _, impl := range []struct {
		name string
		fn   func([]byte, string) string
	}{{"scanner", HTMLText}, {"tokenizer", tokenizerHTMLText}} {
		b.Run(impl.name, func(b *testing.B) {
			b.SetBytes(int64(page.Len()))
			b.ReportAllocs()
			for b.Loop() {
				impl.fn(page.Bytes(), "text/html; charset=utf-8")
			}
		})
	}
}
