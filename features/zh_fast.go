package features

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/neardup/neardup/simhash"
	"golang.org/x/text/unicode/norm"
)

// The zh-ngrams fingerprint fast path. The staged pipeline cleans the whole
// text (NFKC rewrites every full-width comma of a Chinese text, so it copies
// the text), folds it (a second copy) and then tokenizes it. fastHanBigrams
// fuses the three for text that needs nothing beyond what it can do on the fly:
// ASCII lower-casing, full-width ASCII letters and digits, separators whose
// NFKC form is still a separator, and Traditional characters (the text is then
// folded once and rescanned), after stripping markup as Clean does. Anything
// else (other letters or marks, format characters, compatibility ideographs)
// sends the text down the staged path. Both give the same tokens, and
// zhCounter the same weights as the shared counting stages
// (TestHanBigramsFastMatchesStaged and FuzzChinese check it).

// hanBigramsPipeline is the customPipeline of zh-ngrams: the staged pipeline,
// with fastHanBigrams in front of it on the fingerprint path.
type hanBigramsPipeline struct{}

var _ customPipeline = hanBigramsPipeline{}

// staged returns p without the custom pipeline: the Config stages alone.
func (hanBigramsPipeline) staged(p *Profile) *Profile {
	q := *p
	q.custom = nil
	return &q
}

func (c hanBigramsPipeline) tokens(p *Profile, text string) []Token {
	return c.staged(p).Tokens(text)
}

func (c hanBigramsPipeline) features(p *Profile, text string) []Feature {
	return c.staged(p).Features(text)
}

func (hanBigramsPipeline) clean(text string) string {
	return Clean(text, CleanOptions{Fold: FoldTraditionalBytes})
}

// zhFastScratch holds the buffers fast tokens may point into.
type zhFastScratch struct {
	count zhCounter
	html  []byte // the text without markup, when it had '<' or '&'
	fold  []byte // the folded text, when it had Traditional characters
	lower []byte // lower-cased words; pre-grown, never reallocated during a text
}

var zhFastPool = sync.Pool{New: func() any { return new(zhFastScratch) }}

// release returns z to the pool, dropping buffers over maxPooled so that one
// huge text does not pin its memory.
func (z *zhFastScratch) release() {
	if cap(z.html) > maxPooled || cap(z.fold) > maxPooled || cap(z.lower) > maxPooled ||
		(cap(z.count.slots)+cap(z.count.spare))*16 > maxPooled || cap(z.count.order)*8 > maxPooled {
		*z = zhFastScratch{}
	}
	zhFastPool.Put(z)
}

func (hanBigramsPipeline) fingerprint(p *Profile, text string) Result {
	s := scratchPool.Get().(*scratch)
	defer s.release()
	if len(text) > chunkBytes {
		// The staged stages, a piece at a time (pipeline.go), bound memory.
		p.collect(s, text)
		return p.sum(s)
	}
	z := zhFastPool.Get().(*zhFastScratch)
	defer z.release()
	orig := text
	if strings.ContainsAny(text, "<&") {
		// Markup first, as Clean does; what is left of '<' and '&' is text.
		z.html = stripHTML(z.html[:0], text)
		text = unsafe.String(unsafe.SliceData(z.html), len(z.html))
	}
	toks, verdict := fastHanBigrams(s.toks[:0], z, text)
	if verdict == fastFold {
		z.fold = AppendFoldTraditional(z.fold[:0], text)
		folded := unsafe.String(unsafe.SliceData(z.fold), len(z.fold))
		toks, verdict = fastHanBigrams(toks[:0], z, folded)
	}
	s.toks = toks
	if verdict != fastOK {
		s.buf = s.cl.clean(s.buf[:0], orig, p.cfg.Clean)
		cleaned := unsafe.String(unsafe.SliceData(s.buf), len(s.buf))
		s.toks = p.cfg.Tokenizer.Tokenize(s.toks[:0], cleaned)
	}
	if plainTF(&p.cfg) {
		return z.count.sum(p, s)
	}
	s.tab.reset(len(s.toks))
	p.addTerms(s, false)
	p.weigh(s)
	return p.sum(s)
}

// plainTF reports whether cfg weighs features by their capped count (times
// the IDF, if any) alone, so that zhCounter can stand in for the general
// collect-weigh-sum stages.
func plainTF(cfg *Config) bool {
	return cfg.TF == TFRaw && cfg.TopN == 0 && cfg.Shingle < 2 && cfg.POSWeight == nil &&
		cfg.Stopwords == nil && cfg.MinRunes <= 1
}

// zhCounter counts the feature hashes of one text for plainTF profiles:
// open addressing with the count in the slot, so a token costs one probe
// rather than a probe and an entry update. It gives what addTerms,
// weigh and sum give (TestHanBigramsFastMatchesStaged).
type zhCounter struct {
	slots []zhSlot
	spare []zhSlot // the slots before the last grow, reused by the next
	mask  uint64
	order []uint64 // distinct hashes in first-occurrence order, the order sums are made in
}

type zhSlot struct {
	h     uint64
	count int32
	first int32 // index+1 of the token of the first occurrence; 0: empty slot
}

func (c *zhCounter) reset(n int) {
	size := 64
	for size < n {
		size <<= 1
	}
	c.resize(size)
	c.order = c.order[:0]
}

func (c *zhCounter) resize(size int) {
	if cap(c.slots) < size {
		c.slots = make([]zhSlot, size)
	} else {
		c.slots = c.slots[:size]
		clear(c.slots)
	}
	c.mask = uint64(size - 1)
}

// slot returns the slot of h, claimed for token index tok if h is new.
func (c *zhCounter) slot(h uint64, tok int) *zhSlot {
	for i := h & c.mask; ; i = (i + 1) & c.mask {
		sl := &c.slots[i]
		if sl.first == 0 {
			if 2*len(c.order) >= len(c.slots) {
				c.grow()
				return c.slot(h, tok)
			}
			sl.h, sl.first = h, int32(tok+1)
			c.order = append(c.order, h)
			return sl
		}
		if sl.h == h {
			return sl
		}
	}
}

// grow doubles the slots, keeping the load at most 1/2. The old slots are
// kept as the spare for the next grow, so a warm counter does not allocate.
func (c *zhCounter) grow() {
	old := c.slots
	c.slots = c.spare
	c.resize(2 * len(old))
	c.spare = old
	for _, sl := range old {
		if sl.first == 0 {
			continue
		}
		i := sl.h & c.mask
		for c.slots[i].first != 0 {
			i = (i + 1) & c.mask
		}
		c.slots[i] = sl
	}
}

// sum counts the tokens of s.toks (capped at MaxRepeat), weighs them (times
// the IDF when there is one) and builds the fingerprint, as addTerms,
// weigh and sum do for a plainTF profile.
func (c *zhCounter) sum(p *Profile, s *scratch) Result {
	cfg := &p.cfg
	c.reset(len(s.toks))
	maxRep := int32(cfg.MaxRepeat)
	for k, tok := range s.toks {
		sl := c.slot(simhash.HashString64(tok.Text), k)
		if maxRep == 0 || sl.count < maxRep {
			sl.count++
		}
	}
	bits := p.Bits()
	b := &s.b
	if b.Width() != bits {
		nb, _ := simhash.NewBuilder(bits)
		*b = *nb
	} else {
		b.Reset()
	}
	n := 0
	for _, h := range c.order {
		sl := c.slot(h, 0)
		w := float64(sl.count)
		if cfg.IDF != nil {
			w *= cfg.IDF.weightHash(h)
		}
		if w == 0 {
			continue
		}
		n++
		if bits == 128 {
			hi, lo := simhash.HashString128(s.toks[sl.first-1].Text)
			b.Add128(hi, lo, w)
		} else {
			b.Add(h, w)
		}
	}
	return result(b, bits, n)
}

type fastVerdict int

const (
	fastOK     fastVerdict = iota // dst holds the tokens
	fastFold                      // text has Traditional characters: fold it and retry
	fastStaged                    // text needs the staged pipeline
)

// fastHanBigrams appends to dst the tokens HanBigrams would give for
// Clean(text, CleanOptions{Fold: FoldTraditionalBytes}), as substrings of text
// or of z.lower, or reports why it cannot. Markup must be stripped already
// (stripHTML): '<' and '&' are separators here.
func fastHanBigrams(dst []Token, z *zhFastScratch, text string) ([]Token, fastVerdict) {
	if cap(z.lower) < len(text) {
		z.lower = make([]byte, 0, len(text))
	}
	z.lower = z.lower[:0]
	prev := -1  // start of the previous Han character of the current run
	runLen := 0 // Han characters in the current run
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf && !asciiWord[c] {
			if runLen == 1 {
				dst = append(dst, Token{Text: text[prev:i]})
			}
			runLen = 0
			i++
			continue
		}
		var r rune
		size := 1
		if c >= utf8.RuneSelf {
			r, size = decodeRune3(text, i)
			if isFastHan(r) {
				if SimplifiedRune(r) != r {
					return dst, fastFold
				}
				if runLen > 0 {
					dst = append(dst, Token{Text: text[prev : i+size]})
				}
				prev = i
				runLen++
				i += size
				continue
			}
		}
		if runLen == 1 {
			dst = append(dst, Token{Text: text[prev:i]})
		}
		runLen = 0
		if c >= utf8.RuneSelf && fullwidthWord(r) == 0 {
			if r == utf8.RuneError && size == 1 || zhSafeSeparator(r) {
				i += size
				continue
			}
			return dst, fastStaged
		}
		// A word of ASCII and full-width letters and digits.
		start, copyWord := i, false
		for i < len(text) {
			c = text[i]
			if c < utf8.RuneSelf {
				if !asciiWord[c] {
					break
				}
				copyWord = copyWord || c >= 'A' && c <= 'Z'
				i++
				continue
			}
			r, size = decodeRune3(text, i)
			if fullwidthWord(r) == 0 {
				break
			}
			copyWord = true
			i += size
		}
		if !copyWord {
			dst = append(dst, Token{Text: text[start:i]})
			continue
		}
		from := len(z.lower)
		for j := start; j < i; {
			c = text[j]
			if c < utf8.RuneSelf {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				z.lower = append(z.lower, c)
				j++
				continue
			}
			r, size = decodeRune3(text, j)
			z.lower = append(z.lower, fullwidthWord(r))
			j += size
		}
		w := z.lower[from:]
		dst = append(dst, Token{Text: unsafe.String(unsafe.SliceData(w), len(w))})
	}
	if runLen == 1 {
		dst = append(dst, Token{Text: text[prev:]})
	}
	return dst, fastOK
}

// decodeRune3 decodes the rune at text[i], inline for three-byte sequences
// (the BMP Han blocks and CJK punctuation).
func decodeRune3(text string, i int) (rune, int) {
	if c := text[i]; c >= 0xE0 && c < 0xF0 && i+2 < len(text) {
		c1, c2 := text[i+1], text[i+2]
		if c1&0xC0 == 0x80 && c2&0xC0 == 0x80 {
			r := rune(c&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(c2&0x3F)
			if r >= 0x800 && (r < 0xD800 || r > 0xDFFF) {
				return r, 3
			}
		}
	}
	return utf8.DecodeRuneInString(text[i:])
}

// isFastHan reports whether r is a Han character (isHan) that NFKC leaves
// alone: not a radical (U+2E80-U+2FDF), a CJK symbol other than 々 and 〇
// (U+3000-U+303F: 〸 is 十 under NFKC), or a compatibility ideograph.
func isFastHan(r rune) bool {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF:
		return true
	case r < 0x3005, r >= 0xF900 && r <= 0xFAFF, r >= 0x2F800 && r <= 0x2FA1F:
		return false
	case r < 0x3040:
		return r == 0x3005 || r == 0x3007
	}
	return isHan(r)
}

// fullwidthWord returns the lower-case ASCII letter or digit that NFKC and
// lower-casing make of the full-width form r, or 0.
func fullwidthWord(r rune) byte {
	switch {
	case r >= 0xFF10 && r <= 0xFF19:
		return byte(r - 0xFF10 + '0')
	case r >= 0xFF21 && r <= 0xFF3A:
		return byte(r - 0xFF21 + 'a')
	case r >= 0xFF41 && r <= 0xFF5A:
		return byte(r - 0xFF41 + 'a')
	}
	return 0
}

// zhSeparators is a bitmap of the BMP runes above ASCII that separate
// HanBigrams tokens both before and after cleanup: neither letters, digits,
// marks nor format characters, and with an NFKC form of the same kind (the
// full-width comma is a comma; ℃ is not safe, its NFKC form holds a c).
var zhSeparators struct {
	once sync.Once
	bits [0x10000 / 64]uint64
}

func zhSafeSeparator(r rune) bool {
	if r >= 0x10000 {
		return false
	}
	zhSeparators.once.Do(func() {
		for r := rune(0x80); r < 0x10000; r++ {
			if zhSeparatorRune(r) && (norm.NFKC.IsNormalString(string(r)) || zhSeparatorString(norm.NFKC.String(string(r)))) {
				zhSeparators.bits[r/64] |= 1 << (r % 64)
			}
		}
	})
	return zhSeparators.bits[r/64]&(1<<(r%64)) != 0
}

// zhSeparatorRune reports whether r separates tokens in HanBigrams and
// survives cleanup as a separator (not a format character, which cleanup
// removes, joining its neighbours).
func zhSeparatorRune(r rune) bool {
	if r < utf8.RuneSelf {
		return !asciiWord[r]
	}
	if r >= 0xD800 && r <= 0xDFFF || isHan(r) {
		return false
	}
	return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r) && !unicode.Is(unicode.Cf, r)
}

func zhSeparatorString(s string) bool {
	for _, r := range s {
		if !zhSeparatorRune(r) {
			return false
		}
	}
	return true
}
