package features

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestChineseWordsTokenize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // tokens as text/POS, space separated
	}{
		{"seed 004 sentence", "我喜欢看电视，不喜欢看电影。", "我/r 喜欢/v 看电视/v 不/d 喜欢/v 看/v 电影/n"},
		{"english and numbers survive", "hello world 2023年gpt-4模型发布了", "hello/eng world/eng 2023/m 年/m gpt/eng 4/m 模型/n 发布/v 了/ul"},
		{"mixed", "北京大学的学生在图书馆学习machine learning。", "北京大学/nt 的/uj 学生/n 在/p 图书馆/n 学习/v machine/eng learning/eng"},
		{"law", "第一条　为了规范口岸开放，提高口岸通关效率，制定本条例。", "第一条/m 为了/p 规范/n 口岸/s 开放/v 提高/v 口岸/s 通关/vn 效率/n 制定/v 本/r 条例/n"},
		{"upper-case latin keeps its text", "iPhone15很好用", "iPhone15/eng 很/zg 好/a 用/p"},
		{"punctuation only", "，。！?", ""},
		{"empty", "", ""},
		{"invalid utf-8 is a symbol", "法律\xff法规", "法律/n 法规/n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tokenString(ChineseWords{}.Tokenize(nil, tt.in)); got != tt.want {
				t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestChineseWordsKeepPunct(t *testing.T) {
	got := tokenString(ChineseWords{KeepPunct: true}.Tokenize(nil, "电视，电影"))
	if want := "电视/n ，/w 电影/n"; got != want {
		t.Errorf("KeepPunct: got %q, want %q", got, want)
	}
}

func tokenString(toks []Token) string {
	parts := make([]string, len(toks))
	for i, tok := range toks {
		parts[i] = tok.Text + "/" + tok.POS
	}
	return strings.Join(parts, " ")
}

// TestChineseSegmentMatchesGse checks that the buffered re-implementation of
// gse's shortest-path segmentation gives gse's own words on real text.
func TestChineseSegmentMatchesGse(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the run without it asserts this")
	}
	seg := chineseSegmenter()
	docs := []zhDoc{
		{ID: "mixed", Text: "Hello World 2023年GPT-4模型发布了！我们的iPhone15很好用。4S店和AA制，α粒子与Ωmega"},
		{ID: "latin", Text: "naïve café résumé 中文 straße ЖЖЖ 12.5% ＡＢＣ"},
		{ID: "symbols", Text: "①②③ ℃ ㈱ …… —— 「引号」『双引号』 \x00\x01 \xff"},
	}
	for _, d := range append(docs, zhSample(t, 40)...) {
		text := Clean(d.Text, CleanOptions{})
		var want []Token
		for _, s := range seg.Segment([]byte(text)) {
			w := text[s.Start():s.End()]
			if pos := zhTag(w, s.Token().Pos()); pos != "w" {
				want = append(want, Token{Text: w, POS: pos})
			}
		}
		got := ChineseWords{}.Tokenize(nil, text)
		if !slices.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: %d tokens, gse %d; first difference at %d", d.ID, len(got), len(want), i)
		}
	}
}

func TestChinesePOSWeight(t *testing.T) {
	tests := []struct {
		pos  string
		want float64
	}{
		{"n", 2}, {"nr", 2}, {"ns", 2}, {"nt", 2}, {"nz", 2}, {"vn", 2}, {"i", 2}, {"l", 2}, {"j", 2},
		{"v", 1.5}, {"vd", 1.5}, {"eng", 1.5},
		{"a", 1}, {"d", 1}, {"t", 1}, {"s", 1}, {"f", 1}, {"x", 1}, {"zg", 1}, {"", 1}, {"g", 1},
		{"m", 0.5}, {"mq", 0.5}, {"q", 0.5},
		{"r", 0}, {"p", 0}, {"c", 0}, {"u", 0}, {"uj", 0}, {"ul", 0}, {"y", 0}, {"e", 0}, {"o", 0}, {"w", 0},
	}
	for _, tt := range tests {
		if got := ChinesePOSWeight(tt.pos); got != tt.want {
			t.Errorf("ChinesePOSWeight(%q) = %v, want %v", tt.pos, got, tt.want)
		}
	}
}

// TestZhWordsPOSWeights checks that zh-words weighs a noun above a verb and a
// numeral, and drops function words and stopwords.
func TestZhWordsPOSWeights(t *testing.T) {
	p, err := Lookup("zh-words")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range p.Features("我的电脑在这里运行了3次") {
		got[f.Text] = f.Weight
	}
	for _, dropped := range []string{"我", "的", "在", "这里", "了"} {
		if _, ok := got[dropped]; ok {
			t.Errorf("feature %q kept, want it dropped (function word)", dropped)
		}
	}
	idf := ChineseIDF()
	for term, pw := range map[string]float64{"电脑": 2, "运行": 1.5, "3": 0.5} {
		if want := pw * idf.Weight(term); math.Abs(got[term]-want) > 1e-9 {
			t.Errorf("weight of %q = %v, want %v (POS weight %v times IDF)", term, got[term], want, pw)
		}
	}
}

func TestZhWordsRepeatCap(t *testing.T) {
	p, err := Lookup("zh-words")
	if err != nil {
		t.Fatal(err)
	}
	idf := ChineseIDF().Weight("电脑")
	for _, n := range []int{1, 5, 9} {
		fs := p.Features(strings.Repeat("电脑，", n))
		want := float64(min(n, 5)) * 2 * idf
		if len(fs) != 1 || math.Abs(fs[0].Weight-want) > 1e-9 {
			t.Errorf("%d repeats: features %v, want one of weight %v", n, fs, want)
		}
	}
}

func TestChineseIDF(t *testing.T) {
	idf := ChineseIDF()
	if idf.Len() < 250000 {
		t.Errorf("Len = %d, want the ~270,000 words of gse's table", idf.Len())
	}
	tests := []struct {
		term string
		want float64
	}{
		{"的", 0.88474202619},
		{"中国", 3.02732068666},
		{"法律", 5.64355136598},
		{"不在表中的词xyz", idf.Average()},
	}
	for _, tt := range tests {
		if got := idf.Weight(tt.term); got != tt.want {
			t.Errorf("Weight(%q) = %v, want %v", tt.term, got, tt.want)
		}
	}
	if a := idf.Average(); a < 11 || a > 12.5 {
		t.Errorf("Average = %v, want about 11.7", a)
	}
	if ChineseIDF() != idf {
		t.Error("ChineseIDF built twice")
	}
}

func TestParseGseIDF(t *testing.T) {
	got := parseGseIDF("劳动防护 13.9\n\nbad\n的 0.88\nx notanumber\n 空格 1.5 \n")
	want := map[string]float64{"劳动防护": 13.9, "的": 0.88, "空格": 1.5}
	if len(got) != len(want) {
		t.Fatalf("parseGseIDF = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("parseGseIDF[%q] = %v, want %v", k, got[k], v)
		}
	}
}

func TestChineseStopwords(t *testing.T) {
	for _, w := range []string{"的", "了", "是", "我们", "the", "and"} {
		if !ChineseStopwords.Contains(w) {
			t.Errorf("Contains(%q) = false, want true", w)
		}
	}
	for _, w := range []string{"法律", "电脑", "china"} {
		if ChineseStopwords.Contains(w) {
			t.Errorf("Contains(%q) = true, want false", w)
		}
	}
}

func TestHanBigrams(t *testing.T) {
	tests := []struct {
		in   string
		want string // tokens separated by |
	}{
		{"中华人民", "中华|华人|人民"},
		{"中", "中"},
		{"中，华", "中|华"},
		{"你好world世界", "你好|world|世界"},
		{"iphone15很好用", "iphone15|很好|好用"},
		{"年2023年", "年|2023|年"},
		{"hello, world", "hello|world"},
		{"café和naïve", "café|和|naïve"},
		{"第一条　规定", "第一|一条|规定"},
		{"𠀀𠀁", "𠀀𠀁"}, // Extension B characters are Han
		{"", ""},
		{"，。", ""},
		{"中\xff文", "中|文"},
	}
	for _, tt := range tests {
		var parts []string
		for _, tok := range (HanBigrams{}).Tokenize(nil, tt.in) {
			parts = append(parts, tok.Text)
		}
		if got := strings.Join(parts, "|"); got != tt.want {
			t.Errorf("HanBigrams(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFoldTraditional(t *testing.T) {
	tests := []struct{ in, want string }{
		{"簡體", "简体"},
		{"繁體中文", "繁体中文"},
		{"電腦與網絡", "电脑与网络"},
		{"臺灣的國語", "台湾的国语"},
		{"中華人民共和國憲法", "中华人民共和国宪法"},
		{"髮型與發展", "发型与发展"},
		{"简体字不变", "简体字不变"},
		{"ascii text", "ascii text"},
		{"mixed 漢字 and 汉字", "mixed 汉字 and 汉字"},
		{"bad \xff 體", "bad \xff 体"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := FoldTraditional(tt.in); got != tt.want {
			t.Errorf("FoldTraditional(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := string(FoldTraditionalBytes(nil, []byte(tt.in))); got != tt.want {
			t.Errorf("FoldTraditionalBytes(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got, want := HasTraditional(tt.in), tt.in != tt.want; got != want {
			t.Errorf("HasTraditional(%q) = %v, want %v", tt.in, got, want)
		}
	}
}

func TestFoldTraditionalTable(t *testing.T) {
	from, to := []rune(t2sFrom), []rune(t2sTo)
	if len(from) != len(to) || len(from) < 4000 {
		t.Fatalf("table: %d keys, %d values", len(from), len(to))
	}
	for i, r := range from {
		if got := SimplifiedRune(r); got != to[i] {
			t.Errorf("SimplifiedRune(%c) = %c, want %c", r, got, to[i])
		}
		if got := SimplifiedRune(to[i]); got != to[i] {
			t.Errorf("folding %c is not idempotent: %c -> %c -> %c", r, r, to[i], got)
		}
	}
	if got := SimplifiedRune('𧶄'); got != '𧶄' && got == 0 {
		t.Errorf("SimplifiedRune(U+27D84) = %U", got)
	}
}

func TestFoldTraditionalNoAlloc(t *testing.T) {
	s := strings.Repeat("中华人民共和国宪法 abc ", 50)
	if n := testing.AllocsPerRun(10, func() { _ = FoldTraditional(s) }); n != 0 {
		t.Errorf("FoldTraditional of Simplified text allocated %v times, want 0", n)
	}
}

// TestZhGolden pins fingerprints of the zh profiles: a release must not change
// them silently.
func TestZhGolden(t *testing.T) {
	tests := []struct {
		profile, text, want string
	}{
		{"zh-words", "美国“51区”雇员称内部有9架飞碟，曾看见灰色外星人", "9f956e2e48720391"},
		{"zh-words", "美國「51區」僱員稱內部有9架飛碟，曾看見灰色外星人", "9f956e2e48720391"},
		{"zh-words", "中华人民共和国宪法", "77f13ae783e1a18e"},
		{"zh-words", "Hello World 2023年GPT-4模型发布了！我们的iPhone15很好用。", "9657ce650714e9bf"},
		{"zh-ngrams", "美国“51区”雇员称内部有9架飞碟，曾看见灰色外星人", "e2982d0408728784"},
		{"zh-ngrams", "美國「51區」僱員稱內部有9架飛碟，曾看見灰色外星人", "e2982d0408728784"},
		{"zh-ngrams", "中华人民共和国宪法", "c451a0a515046245"},
		{"default", "中华人民共和国宪法", "77f13ae783e1a18e"},
	}
	for _, tt := range tests {
		p, err := Lookup(tt.profile)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Fingerprint(tt.text).Fingerprint.String(); got != tt.want {
			t.Errorf("%s(%q) = %s, want %s", tt.profile, tt.text, got, tt.want)
		}
	}
}

// TestZhLawsProperties checks the near-duplicate properties on real Chinese
// laws: identical text at distance 0, a small edit of a long law within 3
// bits, different laws far apart.
func TestZhLawsProperties(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the run without it asserts this")
	}
	docs := zhSample(t, 60)
	for _, name := range []string{"zh-words", "zh-ngrams"} {
		t.Run(name, func(t *testing.T) {
			p, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			fps := make([]uint64, len(docs))
			rng := rand.New(rand.NewPCG(1, 2))
			for i, d := range docs {
				fp := p.Fingerprint(d.Text).Fingerprint
				fps[i] = uint64(fp)
				if again := p.Fingerprint(strings.Clone(d.Text)).Fingerprint; again != fp {
					t.Errorf("%s: identical text at distance %d", d.ID, fp.Distance(again))
				}
				if len(d.Text) < 8000 {
					continue
				}
				edited := editOneWord(d.Text, rng)
				if dist := fp.Distance(p.Fingerprint(edited).Fingerprint); dist > 3 {
					t.Errorf("%s (%d bytes): one-word edit at distance %d, want <= 3", d.ID, len(d.Text), dist)
				}
			}
			near, pairs, sum := 0, 0, 0
			for i := range docs {
				for j := i + 1; j < len(docs); j++ {
					if docs[i].Group == docs[j].Group || docs[i].Text == docs[j].Text {
						continue
					}
					d := hamming(fps[i], fps[j])
					pairs++
					sum += d
					if d <= 3 {
						near++
					}
				}
			}
			mean := float64(sum) / float64(pairs)
			t.Logf("%d pairs of different laws: mean distance %.1f, %d within 3 bits", pairs, mean, near)
			if mean < 16 || near > pairs/100 {
				t.Errorf("different laws: mean distance %.1f (want >= 16), %d of %d pairs within 3 bits", mean, near, pairs)
			}
		})
	}
}

// editOneWord replaces two adjacent Han characters in the middle of s with
// other Han characters, a one-word edit.
func editOneWord(s string, rng *rand.Rand) string {
	at := len(s)/4 + rng.IntN(len(s)/2)
	for at < len(s) && !utf8.RuneStart(s[at]) {
		at++
	}
	for at+6 <= len(s) {
		r1, n1 := utf8.DecodeRuneInString(s[at:])
		r2, n2 := utf8.DecodeRuneInString(s[at+n1:])
		if isHan(r1) && isHan(r2) {
			return s[:at] + "改动" + s[at+n1+n2:]
		}
		at += n1
	}
	return s + "改动"
}

func hamming(a, b uint64) int {
	d := 0
	for x := a ^ b; x != 0; x &= x - 1 {
		d++
	}
	return d
}

func FuzzChinese(f *testing.F) {
	for _, s := range []string{
		"", "中华人民共和国宪法", "美國「51區」僱員", "hello 世界 123", "，。！", "\xff\xfe中", "<b>法律</b>&amp;法规",
		"第一条　为了规范口岸开放，提高口岸通关效率。", "𠀀𠀁𠀂", "ｆｕｌｌ　ｗｉｄｔｈ　１２３",
		"&amp;lt;b&amp;gt;中文①", "臺灣<!-- x -->國語​文字",
	} {
		f.Add(s)
	}
	words, _ := Lookup("zh-words")
	ngrams, _ := Lookup("zh-ngrams")
	// Load the dictionary before fuzzing: the fuzzer reports an input that
	// takes over 10 s as a hang, and loading takes seconds on a busy machine.
	words.Fingerprint("中文")
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []*Profile{words, ngrams} {
			a, b := p.Fingerprint(s), p.Fingerprint(s)
			if a != b {
				t.Fatalf("%s: not deterministic: %v vs %v", p.Name(), a, b)
			}
			if a.Empty != (a.Features == 0) {
				t.Fatalf("%s: Empty %v with %d features", p.Name(), a.Empty, a.Features)
			}
			_ = p.Features(s)
		}
		for _, tok := range (ChineseWords{KeepPunct: true}).Tokenize(nil, s) {
			if !strings.Contains(s, tok.Text) || tok.Text == "" {
				t.Fatalf("ChineseWords token %q is not a substring of the input", tok.Text)
			}
		}
		for _, tok := range (HanBigrams{}).Tokenize(nil, s) {
			if !strings.Contains(s, tok.Text) || tok.Text == "" {
				t.Fatalf("HanBigrams token %q is not a substring of the input", tok.Text)
			}
		}
		if fast, staged := ngrams.Fingerprint(s), (hanBigramsPipeline{}).staged(ngrams).Fingerprint(s); fast != staged {
			t.Fatalf("zh-ngrams fast path %v, staged %v", fast, staged)
		}
		folded := FoldTraditional(s)
		if FoldTraditional(folded) != folded {
			t.Fatalf("FoldTraditional not idempotent on %q", s)
		}
		if utf8.ValidString(s) && utf8.RuneCountInString(folded) != utf8.RuneCountInString(s) {
			t.Fatalf("FoldTraditional changed the rune count of %q", s)
		}
	})
}

// TestHanBigramsFastMatchesStaged checks that the fused fast path of zh-ngrams
// gives the tokens of the staged pipeline.
func TestHanBigramsFastMatchesStaged(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the run without it asserts this")
	}
	texts := []string{
		"中华人民共和国宪法", "美國「51區」僱員稱內部有9架飛碟", "ＡＢＣ１２３和abc", "Hello，世界！ＧＰＴ－４",
		"第一条　为了规范口岸开放。", "二〇一〇年々", "温度℃和①号", "中\u200b文", "<b>法律</b>", "中\xff文", "〸十",
		"Ｉｐｈｏｎｅ１５很好用", "𠀀𠀁", "苧麻", "café和", "",
		"&amp;lt;b&amp;gt;中文①", "<p>法律&amp;lt;法规</p>é", // markup and a staged-path character
	}
	for _, d := range zhSample(t, 30) {
		texts = append(texts, d.Text)
	}
	staged := 0
	for _, text := range texts {
		want := (HanBigrams{}).Tokenize(nil, Clean(text, CleanOptions{Fold: FoldTraditionalBytes}))
		z := new(zhFastScratch)
		if strings.ContainsAny(text, "<&") {
			text = string(stripHTML(nil, text))
		}
		got, verdict := fastHanBigrams(nil, z, text)
		if verdict == fastFold {
			folded := FoldTraditional(text)
			got, verdict = fastHanBigrams(nil, z, folded)
		}
		if verdict != fastOK {
			staged++
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("fast path on %.40q: %d tokens %v, staged %d tokens %v", text, len(got), got[:min(len(got), 8)], len(want), want[:min(len(want), 8)])
		}
	}
	t.Logf("%d of %d texts took the staged path", staged, len(texts))
	p, err := Lookup("zh-ngrams")
	if err != nil {
		t.Fatal(err)
	}
	for _, bits := range []int{32, 64, 128, -64} {
		p, err := p.WithBits(max(bits, -bits))
		if err != nil {
			t.Fatal(err)
		}
		if bits < 0 { // TF-IDF, with zh-words' IDF table
			p = p.WithIDF(ChineseIDF())
		}
		for _, text := range texts {
			if fast, staged := p.Fingerprint(text), (hanBigramsPipeline{}).staged(p).Fingerprint(text); fast != staged {
				t.Errorf("zh-ngrams/%d on %.40q: fast path %v, staged %v", bits, text, fast, staged)
			}
		}
	}
}

// TestFastHanIsNFKCStable checks the premise of the fast path: the Han
// characters it passes through, and their Simplified forms, are NFKC-stable
// Han characters, and its separators are separators.
func TestFastHanIsNFKCStable(t *testing.T) {
	for r := rune(0x2E80); r < 0x32000; r++ {
		if r >= 0xA000 && r < 0xF900 || r >= 0xFB00 && r < 0x20000 {
			continue
		}
		if !isFastHan(r) {
			continue
		}
		s := string(r)
		if !isHan(r) || norm.NFKC.String(s) != s {
			t.Errorf("isFastHan(%U) but NFKC gives %q (isHan %v)", r, norm.NFKC.String(s), isHan(r))
		}
		if f := SimplifiedRune(r); !isFastHan(f) {
			t.Errorf("%U folds to %U, not a fast Han character", r, f)
		}
	}
	for _, r := range []rune{'，', '。', '、', '“', '”', '《', '》', '（', '）', '　', '：', '；'} {
		if !zhSafeSeparator(r) {
			t.Errorf("zhSafeSeparator(%q) = false, want true", r)
		}
	}
	for _, r := range []rune{'℃', '①', '\u200b', 'é', '〸'} {
		if zhSafeSeparator(r) {
			t.Errorf("zhSafeSeparator(%q) = true, want false", r)
		}
	}
}

// TestZhConcurrent fingerprints from several goroutines at once; run with
// -race it checks that the shared dictionary and pools are safe.
func TestZhConcurrent(t *testing.T) {
	docs := zhSample(t, 8)
	for _, name := range []string{"zh-words", "zh-ngrams"} {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]Result, len(docs))
		for i, d := range docs {
			want[i] = p.Fingerprint(d.Text)
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Go(func() {
				for i := range docs {
					k := (i + g) % len(docs)
					if got := p.Fingerprint(docs[k].Text); got != want[k] {
						t.Errorf("%s: concurrent fingerprint of %s = %v, want %v", name, docs[k].ID, got, want[k])
					}
				}
			})
		}
		wg.Wait()
	}
}

func TestZhCut(t *testing.T) {
	tests := []struct {
		text  string
		limit int
		want  int
	}{
		{"aaaa\nbbbbbb", 8, 5},
		{"a\naaaaaaaaaa", 8, 8}, // newline in the first half: hard cut
		{"中文中文。中文中文", 15, 15},   // after 。
		{"中文中文中文中文", 10, 9},     // rune boundary
		{"aaaa bbbbbbb", 8, 5},
	}
	for _, tt := range tests {
		if got := zhCut(tt.text, tt.limit); got != tt.want {
			t.Errorf("zhCut(%q, %d) = %d, want %d", tt.text, tt.limit, got, tt.want)
		}
	}
}

// TestChineseWordsChunked checks that segmenting a long text in chunks cut at
// newlines gives the words of segmenting it whole.
func TestChineseWordsChunked(t *testing.T) {
	var b strings.Builder
	for _, d := range zhSample(t, 6) {
		b.WriteString(Clean(d.Text, CleanOptions{}))
		b.WriteString("\n")
	}
	text := b.String()
	whole := ChineseWords{}.Tokenize(nil, text)
	defer func(old int) { zhChunk = old }(zhChunk)
	zhChunk = 4 << 10
	chunked := ChineseWords{}.Tokenize(nil, text)
	if !slices.Equal(whole, chunked) {
		i := 0
		for i < min(len(whole), len(chunked)) && whole[i] == chunked[i] {
			i++
		}
		t.Errorf("%d bytes: %d tokens whole, %d in chunks; first difference at token %d", len(text), len(whole), len(chunked), i)
	}
}
