package features

import (
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/go-ego/gse"
)

// This file is gse's shortest-path segmentation (Segmenter.Segment, from
// Hui Chen's sego: the maximum-probability path through the word lattice,
// each word costing log2(total frequency / word frequency), unknown
// characters costing 32) re-run over gse's own dictionary with reusable
// buffers. gse's Segment allocates its lattice, a slice header per character
// and a token per unknown character on every call; with its 150 MB dictionary
// on the heap, that garbage makes the collector the bottleneck. The result is
// the same segmentation (TestChineseSegmentMatchesGse checks it on the laws
// corpus), at several times the speed and without allocation once warm.

// zhDict is the dictionary view used by segment, built once from the loaded
// gse segmenter.
type zhDict struct {
	dict   *gse.Dictionary
	tokens []gse.Token // dict.Tokens: the values of the trie
	dist   []float32   // dist[i]: path cost of tokens[i], as gse's CalcToken computes it
	units  []uint8     // units[i]: length of tokens[i] in segmentation units
	maxLen int         // longest word, in units
}

var zhDictOnce struct {
	once sync.Once
	d    *zhDict
}

func chineseDict() *zhDict {
	zhDictOnce.once.Do(func() {
		seg := chineseSegmenter()
		d := &zhDict{dict: seg.Dict, tokens: seg.Dict.Tokens, maxLen: seg.Dict.MaxTokenLen()}
		d.dist = make([]float32, len(d.tokens))
		d.units = make([]uint8, len(d.tokens))
		logTotal := float32(math.Log2(seg.Dict.TotalFreq()))
		var us []int32
		for i := range d.tokens {
			t := &d.tokens[i]
			d.dist[i] = logTotal - float32(math.Log2(t.Freq()))
			us = appendUnits(us[:0], t.Text())
			d.units[i] = uint8(min(len(us)/2, 255))
		}
		zhDictOnce.d = d
	})
	return zhDictOnce.d
}

// index returns the index in d.tokens of t, a pointer gse's LookupTokens
// returned into that slice, or -1.
func (d *zhDict) index(t *gse.Token) int {
	if len(d.tokens) == 0 {
		return -1
	}
	off := uintptr(unsafe.Pointer(t)) - uintptr(unsafe.Pointer(&d.tokens[0]))
	i := int(off / unsafe.Sizeof(d.tokens[0]))
	if off%unsafe.Sizeof(d.tokens[0]) != 0 || i < 0 || i >= len(d.tokens) || &d.tokens[i] != t {
		return -1
	}
	return i
}

// appendUnits appends the segmentation units of s as pairs of byte offsets
// (start, end), exactly as gse's SplitTextToWords cuts text (with AlphaNum
// off): a maximal run of letters and digits of at most two bytes each (ASCII,
// Latin, Greek, Cyrillic ...) is one unit, every other rune is a unit alone.
func appendUnits(dst []int32, s string) []int32 {
	alnum := -1 // start of the current alphanumeric run
	for i := 0; i < len(s); {
		c := s[i]
		size := 1
		isAlnum := false
		if c < utf8.RuneSelf {
			isAlnum = asciiWord[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			isAlnum = size <= 2 && (unicode.IsLetter(r) || unicode.IsNumber(r))
		}
		if isAlnum {
			if alnum < 0 {
				alnum = i
			}
		} else {
			if alnum >= 0 {
				dst = append(dst, int32(alnum), int32(i))
				alnum = -1
			}
			dst = append(dst, int32(i), int32(i+size))
		}
		i += size
	}
	if alnum >= 0 {
		dst = append(dst, int32(alnum), int32(len(s)))
	}
	return dst
}

// zhJumper is a lattice cell: the cheapest path ending at this unit and its
// last word.
type zhJumper struct {
	dist  float32
	tok   int32 // index in zhDict.tokens; -1 for an unknown unit
	units int32 // length of the last word in units
}

// zhScratch holds segment's buffers, reused through a pool.
type zhScratch struct {
	buf     []byte     // lower-cased copy of the text, what the dictionary is keyed by
	units   []int32    // unit byte offsets, pairs
	words   []gse.Text // units as byte slices of buf, for LookupTokens
	jumpers []zhJumper
	found   []*gse.Token
	path    []int32 // unit index where each word of the best path starts, reversed
	toks    []int32 // token index of each word of path
}

var zhScratchPool = sync.Pool{New: func() any { return new(zhScratch) }}

// zhChunk bounds the bytes segmented at once, so that the lattice of a huge
// text (a 1 GB line) takes bounded memory: about 15 bytes per byte of chunk.
var zhChunk = 256 << 10

// segment appends to dst the words of text found by gse's shortest-path
// segmentation, as substrings of text with their part-of-speech tags as zhTag
// gives them; words tagged "w" (spaces, punctuation) are left out unless
// keepPunct. Texts longer than zhChunk are segmented a chunk at a time, cut
// after a newline, else after a sentence or clause mark or a space, where no
// dictionary word reaches across (a hard cut inside a word only on text with
// none of those for half a chunk).
func (d *zhDict) segment(dst []Token, text string, keepPunct bool) []Token {
	for len(text) > zhChunk {
		cut := zhCut(text, zhChunk)
		dst = d.segmentChunk(dst, text[:cut], keepPunct)
		text = text[cut:]
	}
	return d.segmentChunk(dst, text, keepPunct)
}

// zhCut returns where to end the first chunk of text, longer than limit:
// after the last newline of text[:limit], else its last 。！？；，or space,
// provided that is in the second half; else at the last rune boundary at or
// before limit.
func zhCut(text string, limit int) int {
	s := text[:limit]
	half := limit / 2
	if i := strings.LastIndexByte(s, '\n'); i >= half {
		return i + 1
	}
	best := -1
	for _, mark := range []string{"。", "！", "？", "；", "，", " "} {
		if i := strings.LastIndex(s, mark); i >= half && i+len(mark) > best {
			best = i + len(mark)
		}
	}
	if best > 0 {
		return best
	}
	for i := limit; i > 0; i-- {
		if utf8.RuneStart(text[i]) {
			return i
		}
	}
	return limit
}

// segmentChunk is segment on a text of at most about zhChunk bytes.
func (d *zhDict) segmentChunk(dst []Token, text string, keepPunct bool) []Token {
	s := zhScratchPool.Get().(*zhScratch)
	defer zhScratchPool.Put(s)

	// gse lower-cases ASCII letters of alphanumeric runs; lower-casing all
	// ASCII keeps byte offsets and matches it.
	s.buf = s.buf[:0]
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		s.buf = append(s.buf, c)
	}
	s.units = appendUnits(s.units[:0], text)
	n := len(s.units) / 2
	if n == 0 {
		return dst
	}
	s.words = s.words[:0]
	for i := 0; i < n; i++ {
		s.words = append(s.words, gse.Text(s.buf[s.units[2*i]:s.units[2*i+1]]))
	}
	if cap(s.jumpers) < n {
		s.jumpers = make([]zhJumper, n)
	}
	jumpers := s.jumpers[:n]
	clear(jumpers)
	if len(s.found) < d.maxLen {
		s.found = make([]*gse.Token, d.maxLen)
	}

	for cur := 0; cur < n; cur++ {
		var base float32
		if cur > 0 {
			base = jumpers[cur-1].dist
		}
		num := d.dict.LookupTokens(s.words[cur:min(cur+d.maxLen, n)], s.found)
		single := false
		for _, t := range s.found[:num] {
			i := d.index(t)
			if i < 0 {
				continue
			}
			k := int(d.units[i])
			if k == 1 {
				single = true
			}
			if cur+k > n || k == 0 {
				continue
			}
			updateJumper(&jumpers[cur+k-1], base+d.dist[i], int32(i), int32(k))
		}
		if !single {
			// gse adds a pseudo-word for a unit that is not a word alone.
			updateJumper(&jumpers[cur], base+32, -1, 1)
		}
	}

	// Walk the best path back, then emit it forwards.
	s.path, s.toks = s.path[:0], s.toks[:0]
	for end := n - 1; end >= 0; {
		j := jumpers[end]
		start := end - int(j.units) + 1
		s.path = append(s.path, int32(start))
		s.toks = append(s.toks, j.tok)
		end = start - 1
	}
	for k := len(s.path) - 1; k >= 0; k-- {
		start := int(s.path[k])
		end := n - 1
		if k > 0 {
			end = int(s.path[k-1]) - 1
		}
		w := text[s.units[2*start]:s.units[2*end+1]]
		pos := "x"
		if ti := s.toks[k]; ti >= 0 {
			pos = d.tokens[ti].Pos()
		}
		pos = zhTag(w, pos)
		if pos == "w" && !keepPunct {
			continue
		}
		dst = append(dst, Token{Text: w, POS: pos})
	}
	return dst
}

// updateJumper keeps the cheaper path, the first one on ties, as gse does.
func updateJumper(j *zhJumper, dist float32, tok, units int32) {
	if j.dist == 0 || j.dist > dist {
		j.dist, j.tok, j.units = dist, tok, units
	}
}
