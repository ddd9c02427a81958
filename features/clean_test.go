package features

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opt  CleanOptions
		want string
	}{
		{"empty", "", CleanOptions{}, ""},
		{"spaces only", " \t\r\n ", CleanOptions{}, ""},
		{"ascii lower and collapse", "  Hello,\t\tWORLD!\n", CleanOptions{}, "hello, world!"},
		{"controls", "a\x00b\x07c\x7fd", CleanOptions{}, "a b c d"},
		{"full width", "Ｈｅｌｌｏ　ＷＯＲＬＤ１２３", CleanOptions{}, "hello world123"},
		{"nfkc ligature", "ﬁne ½", CleanOptions{}, "fine 1⁄2"},
		{"nfkc composes", "e\u0301", CleanOptions{}, "é"},
		{"curly apostrophe", "Don’t", CleanOptions{}, "don't"},
		{"format chars removed", "zero\u200bwidth soft\u00adhyphen \ufeffbom", CleanOptions{}, "zerowidth softhyphen bom"},
		{"unicode spaces", "a\u00a0b\u2003c\u2028d\u3000e", CleanOptions{}, "a b c d e"},
		{"invalid utf8", "a\xffb\xc0", CleanOptions{}, "a\uFFFDb\uFFFD"},
		{"tags", "<p>Hello</p><p>World</p>", CleanOptions{}, "hello world"},
		{"inline tags join", "<b>bold</b>er and <a href=\"x>y\">link</a>", CleanOptions{}, "bolder and link"},
		{"comment", "a<!-- hidden <b> -->b", CleanOptions{}, "ab"},
		{"unterminated comment", "a<!-- hidden", CleanOptions{}, "a hidden"},
		{"script and style", "x<script type=\"t\">var a = '<p>';</script>y<STYLE>p{}</STYLE>z", CleanOptions{}, "x y z"},
		{"doctype", "<!DOCTYPE html><html><body>Hi</body></html>", CleanOptions{}, "hi"},
		{"not a tag", "a < b and c<3 >", CleanOptions{}, "a < b and c<3 >"},
		{"unterminated tag kept", "a <b c", CleanOptions{}, "a <b c"},
		{"entities", "&lt;a&gt; &amp; &quot;q&quot; &#65;&#x42;&nbsp;x &eacute; &bogus;", CleanOptions{}, "<a> & \"q\" ab x é &bogus;"},
		{"unterminated style keeps the text", "--thread[=<style>] shows the thread", CleanOptions{}, "--thread[= ] shows the thread"},
		{"unterminated script keeps the text", "a <script> b c", CleanOptions{}, "a b c"},
		{"unterminated comment keeps the text", "a <!-- b c", CleanOptions{}, "a b c"},
		{"entity to tag text stays", "&lt;script&gt;x", CleanOptions{}, "<script>x"},
		{"keep html", "<b>A</b> &amp;", CleanOptions{KeepHTML: true}, "<b>a</b> &amp;"},
		{"keep case", "ÀB c", CleanOptions{KeepCase: true}, "ÀB c"},
		{"no nfkc", "Ｈｉ", CleanOptions{NoNFKC: true}, "ｈｉ"},
		{"unicode lower", "ÀÉÎ ΣΑΣ Straße", CleanOptions{}, "àéî σασ straße"},
		{"fold hook", "abc", CleanOptions{Fold: func(dst, src []byte) []byte {
			return append(dst, strings.ToUpper(string(src))...)
		}}, "ABC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in, tt.opt); got != tt.want {
				t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCleanLarge(t *testing.T) {
	// Linear time on a large text full of markup-like bytes.
	in := strings.Repeat("<a <!-- &amp; x ", 100000)
	got := Clean(in, CleanOptions{})
	if !utf8.ValidString(got) {
		t.Fatal("invalid UTF-8 out")
	}
}

func TestAsciiOnly(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{{"", true}, {"abcdefghij", true}, {"abcdefgh\xe9", false}, {"é", false}, {"abcdéfgh", false}} {
		if got := asciiOnly(tt.in); got != tt.want {
			t.Errorf("asciiOnly(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestCleanNoQuadratic(t *testing.T) {
	// Each of these would be quadratic with a naive rescan for '>' or a
	// closing quote at every '<'; they must finish at once.
	for _, in := range []string{
		strings.Repeat("<a ", 200000),
		strings.Repeat("<a \"", 200000) + ">",
		strings.Repeat("<script", 100000),
		strings.Repeat("x<y ", 200000) + "<!-- ",
	} {
		if got := Clean(in, CleanOptions{}); !utf8.ValidString(got) {
			t.Fatal("invalid UTF-8 out")
		}
	}
}

// FuzzCleanNFKC checks the NFKC step, which normalises only past the quick
// check's normal prefix, against normalising the whole text.
func FuzzCleanNFKC(f *testing.F) {
	for _, s := range []string{"e\u0301", "ａ\u0301", "abc\u0301\u0327", "ﬁ½", "\u1100\u1161\u11a8", "x\u0345\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		opt := CleanOptions{KeepHTML: true}
		valid := strings.ToValidUTF8(s, "\uFFFD")
		want := string(appendFolded(nil, norm.NFKC.String(valid), true))
		if got := Clean(s, opt); got != want {
			t.Errorf("Clean(%+q) = %+q, want %+q", s, got, want)
		}
	})
}
