package features_test

import (
	"fmt"

	"github.com/neardup/neardup/features"
)

func ExampleFoldTraditional() {
	fmt.Println(features.FoldTraditional("繁體中文與簡體中文"))
	// Output: 繁体中文与简体中文
}

func ExampleHanBigrams() {
	for _, tok := range (features.HanBigrams{}).Tokenize(nil, "中华人民共和国 iphone15") {
		fmt.Print(tok.Text, " ")
	}
	fmt.Println()
	// Output: 中华 华人 人民 民共 共和 和国 iphone15
}

func ExampleChineseWords() {
	for _, tok := range (features.ChineseWords{}).Tokenize(nil, "北京大学的学生在图书馆学习machine learning。") {
		fmt.Printf("%s/%s weight %v\n", tok.Text, tok.POS, features.ChinesePOSWeight(tok.POS))
	}
	// Output:
	// 北京大学/nt weight 2
	// 的/uj weight 0
	// 学生/n weight 2
	// 在/p weight 0
	// 图书馆/n weight 2
	// 学习/v weight 1.5
	// machine/eng weight 1.5
	// learning/eng weight 1.5
}

func ExampleChineseIDF() {
	idf := features.ChineseIDF()
	fmt.Printf("的 %.2f, 法律 %.2f, unknown %.2f\n", idf.Weight("的"), idf.Weight("法律"), idf.Weight("没有这个词"))
	// Output: 的 0.88, 法律 5.64, unknown 11.68
}

// The zh-words profile gives a text and its Traditional-script version the
// same fingerprint, and an edited version a nearby one (on a text this short,
// one dropped word of fifteen moves several bits).
func Example_zhWords() {
	p, err := features.Lookup("zh-words")
	if err != nil {
		panic(err)
	}
	a := p.Fingerprint("为了规范口岸开放，提高口岸通关效率，保障口岸安全畅通，促进对外开放和经济社会发展，制定本条例。")
	b := p.Fingerprint("為了規範口岸開放，提高口岸通關效率，保障口岸安全暢通，促進對外開放和經濟社會發展，制定本條例。")
	c := p.Fingerprint("为了规范口岸开放，提高口岸通关效率，保障口岸安全畅通，促进对外开放和经济发展，制定本条例。")
	fmt.Println(a.Fingerprint, a.Fingerprint.Distance(b.Fingerprint), a.Fingerprint.Distance(c.Fingerprint))
	// Output: 1e160cd79eb68bcb 0 9
}
