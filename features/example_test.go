package features_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/neardup/neardup/features"
)

func ExampleLookup() {
	p, err := features.Lookup("en-words")
	if err != nil {
		panic(err)
	}
	a := p.Fingerprint("The quick brown fox jumps over the lazy dog near the river bank today")
	b := p.Fingerprint("The quick brown fox jumped over the lazy dog near the river bank today")
	fmt.Println(a.Fingerprint.Distance(b.Fingerprint) <= 16, a.Empty)
	_, err = features.Lookup("nope")
	fmt.Println(err != nil)
	// Output:
	// true false
	// true
}

func ExampleNames() {
	for _, n := range features.Names() {
		if n == "default" || n == "leonsim" {
			fmt.Println(n)
		}
	}
	// Output:
	// default
	// leonsim
}

func ExampleProfile_Fingerprint() {
	p, _ := features.Lookup("leonsim")
	r := p.Fingerprint("How are you? I am fine. Thanks.")
	fmt.Println(r.Fingerprint.Decimal(), r.Bits)
	// Output: 3419227768443824139 64
}

func ExampleProfile_Fingerprint_empty() {
	p, _ := features.Lookup("default")
	r := p.Fingerprint(" \n\t ")
	fmt.Println(r.Empty, r.Fingerprint)
	// Output: true 0000000000000000
}

func ExampleProfile_Features() {
	p, _ := features.Lookup("en-words")
	for _, f := range p.Features("<p>Rose is a rose is a ROSE &amp; a rose.</p>") {
		fmt.Println(f.Text, f.Weight)
	}
	// Output:
	// rose 4
}

func ExampleProfile_Tokens() {
	p, _ := features.Lookup("en-words")
	var words []string
	for _, t := range p.Tokens("Don’t PANIC: it's only ＦＵＬＬ-width!") {
		words = append(words, t.Text)
	}
	fmt.Println(strings.Join(words, "|"))
	// Output: panic|full|width
}

func ExampleProfile_Clean() {
	p, _ := features.Lookup("en-words")
	fmt.Printf("%+q\n", p.Clean("<b>Ｈｅｌｌｏ</b>&nbsp;&amp;\t<script>x()</script>WORLD\xff"))
	// Output: "hello & world\ufffd"
}

func ExampleProfile_WithBits() {
	p, _ := features.Lookup("en-words")
	p128, _ := p.WithBits(128)
	r := p128.Fingerprint("one hundred and twenty-eight bits")
	fmt.Println(r.Bits, len(r.Fingerprint128.String()))
	// Output: 128 32
}

func ExampleClean() {
	fmt.Println(features.Clean("  Ｆｕｌｌ  &lt;WIDTH&gt;  ", features.CleanOptions{}))
	// Output: full <width>
}

func ExampleNGrams() {
	// The two-character grams of seeds 001 and 003.
	for _, t := range (features.NGrams{N: 2}).Tokenize(nil, "the cat") {
		fmt.Printf("%q ", t.Text)
	}
	fmt.Println()
	// Output: "th" "he" "e " " c" "ca" "at"
}

func ExampleWords() {
	for _, t := range (features.Words{}).Tokenize(nil, "rock'n'roll snake_case 中文 x2") {
		fmt.Printf("%s ", t.Text)
	}
	fmt.Println()
	// Output: rock'n'roll snake case 中 文 x2
}

func ExampleShingleHashes() {
	toks := (features.Words{}).Tokenize(nil, "a rose is a rose")
	fmt.Println(len(features.ShingleHashes(nil, toks, 3)))
	// Output: 3
}

func ExampleLeonsimFingerprint() {
	// Simhash(['aaa', 'bbb']).value in the Python simhash package.
	fp := features.LeonsimFingerprint([]features.Feature{{Text: "aaa", Weight: 1}, {Text: "bbb", Weight: 1}})
	fmt.Println(fp.Decimal())
	// Output: 57087923692560392
}

func ExampleIDFBuilder() {
	p, _ := features.Lookup("en-words")
	b := features.NewIDFBuilder(p)
	b.Add("apple pear")
	b.Add("apple plum")
	t := b.IDF()
	t.WriteTo(os.Stdout)
	// Output:
	// neardup-idf 1 docs=2
	// apple	1
	// pear	1.4054651081081644
	// plum	1.4054651081081644
}

func ExampleNewIDF() {
	t := features.NewIDF(map[string]float64{"rare": 5, "common": 1})
	fmt.Println(t.Weight("rare"), t.Weight("unseen"))
	// Output: 5 3
}

func ExampleNew() {
	// A custom pipeline: words of at least 3 letters, English stopwords
	// removed, logarithmic term frequency, the 2 strongest features only.
	p, err := features.New("mine", "words, log TF, top 2", features.Config{
		MinRunes:  2,
		Stopwords: features.EnglishStopwords,
		TF:        features.TFLog,
		TopN:      2,
	})
	if err != nil {
		panic(err)
	}
	for _, f := range p.Features("go go go is a fun language, go fun") {
		fmt.Printf("%s %.3f\n", f.Text, f.Weight)
	}
	// Output:
	// go 2.386
	// fun 1.693
}

func ExampleTokenizerFunc() {
	// A tokenizer that tags parts of speech, with POS weights: nouns count
	// double and punctuation ("w", as in seed 000) is dropped.
	tagger := features.TokenizerFunc(func(dst []features.Token, text string) []features.Token {
		for _, w := range strings.Fields(text) {
			pos := "n"
			if w == "!" {
				pos = "w"
			}
			dst = append(dst, features.Token{Text: w, POS: pos})
		}
		return dst
	})
	p, _ := features.New("tagged", "", features.Config{
		Tokenizer: tagger,
		POSWeight: func(pos string) float64 { return map[string]float64{"n": 2}[pos] },
	})
	fmt.Println(p.Features("ufo ufo !")[0])
	// Output: {ufo 10821565457742822360 4}
}

func ExampleNewStopSet() {
	s := features.NewStopSet([]string{"foo", "bar"})
	fmt.Println(s.Contains("foo"), s.Contains("baz"), features.EnglishStopwords.Contains("the"))
	// Output: true false true
}

func ExampleReadIDF() {
	in := "neardup-idf 1 docs=10\nrare\t3.2\ncommon\t1.1\n"
	t, err := features.ReadIDF(strings.NewReader(in))
	if err != nil {
		panic(err)
	}
	fmt.Println(t.Len(), t.Docs(), t.Weight("rare"), t.Weight("never-seen"))
	// Output: 2 10 3.2 2.1500000000000004
}

func ExampleLeonsimHash() {
	fmt.Println(features.LeonsimHash("aaa"))
	// Output: 7483809945577191432
}
