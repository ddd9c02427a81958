package webgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/measure"
)

// Kinds of planted copy.
const (
	KindNear    = "near"    // near-copy, Jaccard in [NearMin, NearMax]
	KindControl = "control" // near-copy below the usual threshold, Jaccard in [ControlMin, ControlMax)
	KindExact   = "exact"   // identical text
)

// Jaccard ranges of the planted copies: near-copies lie in [NearMin,
// NearMax], a third of them in [0.80, 0.85]; controls in [ControlMin,
// ControlMax), which a dedup at threshold 0.8 must keep.
const (
	NearMin, NearMax       = 0.80, 0.95
	ControlMin, ControlMax = 0.50, 0.80
)

// Options configure a Generator. The zero value is the default corpus: 10% of
// documents near-copies (a tenth of them controls), 2% exact copies, 30% with
// one of 2,000 shared boilerplate paragraphs, no hot paragraph, no sites and
// no short bodies. Options whose zero value means "none" leave the corpus of
// every seed byte for byte as it was before they existed (TestGolden).
type Options struct {
	Seed        uint64  // the corpus; any value
	MeanBytes   int     // mean body size; 0: 1000 (bodies uniform in 300 .. 2*MeanBytes-300 bytes, shared paragraphs added)
	Near        float64 // fraction of documents that are near-copies or controls; 0: 0.10; negative: none
	Control     float64 // share of those planted as controls; 0: 0.1; negative: none
	Exact       float64 // fraction of exact copies; 0: 0.02; negative: none
	Boilerplate float64 // fraction of documents with a shared paragraph (short ones excepted); 0: 0.3; negative: none
	Paragraphs  int     // number of shared paragraphs; 0: 2000
	Hot         float64 // fraction of documents carrying the one hot paragraph; 0: none

	// Sites is the number of web sites whose pages wrap their body in the
	// site's template (site.go); 0: none. It does not grow with the corpus,
	// so pages per site do. At most MaxSites.
	Sites int
	// SiteShare is the fraction of documents that are pages of a site;
	// 0: 0.8 when Sites > 0; negative: none.
	SiteShare float64
	// ShortShare is the fraction of documents whose body is short: one to
	// three pool sentences, ShortMin to ShortMax bytes, no shared paragraph;
	// 0: none.
	ShortShare float64
}

// MaxSites bounds Options.Sites: New builds every site's template (about
// 1.5 KB) and holds them all.
const MaxSites = 100_000

// Short bodies aim at ShortMin to ShortMax bytes (news blurbs, forum
// replies, product cards); see appendShortBody.
const ShortMin, ShortMax = 80, 400

// profiles are the named option sets of Profile.
var profiles = map[string]Options{
	"default": {},
	// A crawl: 80% of documents are pages of 2,000 sites, so pages per site
	// grow with the corpus, and with them the dedup's candidates per
	// document: 0.20, 1.3 and 13 at 100K, 1M and 10M, as on the corpus of
	// issue 32 (0.25, 1.55, 14).
	"crawl": {Sites: 2000, SiteShare: 0.8},
	// The same with 30% short bodies, whose pages are mostly template: two
	// short pages of one site are at J 0.43 at the median, 0.58 at the 90th
	// percentile, so the pairs between 0.5 and the threshold, which the
	// exact check must see, grow with the corpus too.
	"crawl-short": {Sites: 2000, SiteShare: 0.8, ShortShare: 0.3},
}

// Profile returns the named option set, for short benchmark commands
// (neardup-gen -profile): "default" (the zero Options), "crawl" (Sites
// 2000, SiteShare 0.8) or "crawl-short" (the same and ShortShare 0.3). The
// seed is left at 0.
func Profile(name string) (Options, error) {
	o, ok := profiles[name]
	if !ok {
		return o, fmt.Errorf("%w: no profile %q (want default, crawl or crawl-short)", ErrOptions, name)
	}
	return o, nil
}

// EnsureDefaults replaces zero fields by their defaults and negative
// fractions by zero.
func (o *Options) EnsureDefaults() {
	def := func(f *float64, d float64) {
		switch {
		case *f == 0:
			*f = d
		case *f < 0:
			*f = 0
		}
	}
	if o.MeanBytes == 0 {
		o.MeanBytes = 1000
	}
	def(&o.Near, 0.10)
	def(&o.Control, 0.1)
	def(&o.Exact, 0.02)
	def(&o.Boilerplate, 0.3)
	if o.Paragraphs == 0 {
		o.Paragraphs = 2000
	}
	if o.Hot < 0 {
		o.Hot = 0
	}
	if o.Sites > 0 {
		def(&o.SiteShare, 0.8)
	} else if o.SiteShare < 0 {
		o.SiteShare = 0
	}
	if o.ShortShare < 0 {
		o.ShortShare = 0
	}
}

// Validate reports options out of range.
func (o *Options) Validate() error {
	switch {
	case o.MeanBytes < 300 || o.MeanBytes > 1<<20:
		return fmt.Errorf("%w: MeanBytes %d, want 300 to 1 MiB", ErrOptions, o.MeanBytes)
	case o.Near+o.Exact > 0.9 || o.Near > 1 || o.Exact > 1:
		return fmt.Errorf("%w: Near %v + Exact %v, want at most 0.9", ErrOptions, o.Near, o.Exact)
	case o.Control > 1 || o.Boilerplate > 1 || o.Hot > 1:
		return fmt.Errorf("%w: Control, Boilerplate and Hot are fractions, at most 1", ErrOptions)
	case o.Paragraphs < 1:
		return fmt.Errorf("%w: Paragraphs %d, want at least 1", ErrOptions, o.Paragraphs)
	case o.Sites < 0 || o.Sites > MaxSites:
		return fmt.Errorf("%w: Sites %d, want 0 to %d", ErrOptions, o.Sites, MaxSites)
	case o.Sites == 0 && o.SiteShare > 0:
		return fmt.Errorf("%w: SiteShare %v without Sites", ErrOptions, o.SiteShare)
	case o.SiteShare > 1 || o.ShortShare > 1:
		return fmt.Errorf("%w: SiteShare and ShortShare are fractions, at most 1", ErrOptions)
	}
	return nil
}

// Generator makes the documents of a corpus. Document i is a pure function of
// the pool, the options and i, so documents can be made in any order, in
// parallel, and a copy can regenerate its original however far back it lies.
// A Generator is immutable and safe for concurrent use; the Scratch each call
// takes is not.
type Generator struct {
	opt   Options
	pool  *Pool
	paras []string // shared boilerplate paragraphs
	hot   string
	sites []site // templates, Options.Sites of them
}

// New returns a Generator over pool.
func New(pool *Pool, opt Options) (*Generator, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	g := &Generator{opt: opt, pool: pool}
	s := NewScratch()
	// Boilerplate: 200 to 600 bytes of pool sentences, a function of (seed,
	// paragraph number).
	for k := range opt.Paragraphs {
		s.seed(opt.Seed, uint64(k), tagPara)
		g.paras = append(g.paras, string(g.sentences(nil, s.r, 200+s.r.IntN(400), 1, 600)))
	}
	s.seed(opt.Seed, 0, tagHot)
	g.hot = string(g.sentences(nil, s.r, 200, 1, 300))
	g.sites = make([]site, opt.Sites)
	for k := range g.sites {
		s.seed(opt.Seed, uint64(k), tagSite)
		g.sites[k] = g.newSite(s.r)
	}
	return g, nil
}

// Planted is the truth about a copy: the document copied and the exact
// Jaccard similarity (eval's ground truth: word 5-shingles) of the two texts.
type Planted struct {
	Of      string  `json:"of"`
	Kind    string  `json:"kind"`
	Jaccard float64 `json:"jaccard"`
}

// Doc is one generated document.
type Doc struct {
	ID      string   `json:"id"`
	Text    string   `json:"text"`
	Planted *Planted `json:"planted,omitempty"` // nil for an original
}

// ID returns the id of document i: "d" and ten digits.
func ID(i int64) string { return string(appendID(nil, i)) }

func appendID(dst []byte, i int64) []byte {
	dst = append(dst, 'd')
	var d [20]byte
	s := strconv.AppendInt(d[:0], i, 10)
	for range 10 - len(s) {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// Scratch holds one goroutine's buffers and random source.
type Scratch struct {
	pcg     *rand.PCG
	r       *rand.Rand
	text    []byte
	orig    []byte
	spans   [][2]int32
	ops     []edit
	applied []edit
	toks    []string
}

// NewScratch returns buffers for Generator calls.
func NewScratch() *Scratch {
	p := rand.NewPCG(0, 0)
	return &Scratch{pcg: p, r: rand.New(p)}
}

// Stream tags: each random decision about document i draws from its own
// stream, so changing how text is made does not move which documents are
// copies.
const (
	tagPlan = iota + 1
	tagText
	tagEdit
	tagPara
	tagHot
	tagSite // a site's template, by site number
	tagPage // a document's page: short or not, which site, the template's variations
)

// seed points s's random source at stream (seed, i, tag). The two PCG words
// are SplitMix64 finalisations (Steele, Lea, Flood 2014) of the triple:
// neighbouring documents get unrelated streams.
func (s *Scratch) seed(seed, i uint64, tag uint64) {
	s.pcg.Seed(mix(seed^mix(i)^tag<<56), mix(i+tag*0x9e3779b97f4a7c15^mix(seed)))
}

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

type kind uint8

const (
	original kind = iota
	near
	control
	exact
)

// plan decides what document i is: an original, or a copy of original of.
func (g *Generator) plan(i int64, s *Scratch) (k kind, of int64) {
	s.seed(g.opt.Seed, uint64(i), tagPlan)
	u := s.r.Float64()
	switch {
	case u < g.opt.Near:
		k = near
		if s.r.Float64() < g.opt.Control {
			k = control
		}
	case u < g.opt.Near+g.opt.Exact:
		k = exact
	default:
		return original, -1
	}
	if i == 0 {
		return original, -1
	}
	// Uniform among the earlier originals: draw earlier documents until one
	// is an original (most are). The candidates' own plans need only their
	// first draw.
	var cands [8]int64
	for t := range cands {
		cands[t] = s.r.Int64N(i)
	}
	for _, j := range cands {
		if g.isOriginal(j, s) {
			return k, j
		}
	}
	return original, -1
}

func (g *Generator) isOriginal(j int64, s *Scratch) bool {
	s.seed(g.opt.Seed, uint64(j), tagPlan)
	return s.r.Float64() >= g.opt.Near+g.opt.Exact || j == 0
}

// sentences appends pool sentences drawn with r to dst until it holds at
// least min bytes and count sentences, leaving out those that would take it
// past max (when max > 0) unless it is still empty.
func (g *Generator) sentences(dst []byte, r *rand.Rand, min, count, max int) []byte {
	start := len(dst)
	for tries := 0; (len(dst)-start < min || count > 0) && tries < 1000; tries++ {
		sent := g.pool.Sentence(r.IntN(g.pool.Len()))
		n := len(dst) - start
		if max > 0 && n > 0 && n+1+len(sent) > max {
			continue
		}
		if n > 0 {
			sep := byte(' ')
			if r.IntN(5) == 0 {
				dst = append(dst, '\n') // a paragraph break now and then
				sep = '\n'
			}
			dst = append(dst, sep)
		}
		dst = append(dst, sent...)
		count--
	}
	return dst
}

// minSentences is the fewest sentences in a body. With 85K sentences in the
// pool, single-sentence bodies would repeat by chance in a large corpus, and
// two short bodies sharing a sentence and a paragraph would be near
// duplicates nobody planted; with three, two unrelated documents that share
// the hot paragraph (200-300 bytes) and two of their three sentences stay
// below J 0.75.
const minSentences = 3

// appendOriginal appends the text of original document i.
func (g *Generator) appendOriginal(dst []byte, i int64, s *Scratch) []byte {
	// The page's decisions come first, from their own stream, so that with
	// neither sites nor short bodies no draw moves and the text stream of
	// every document is what it always was.
	pg := page{site: -1}
	if g.opt.Sites > 0 || g.opt.ShortShare > 0 {
		s.seed(g.opt.Seed, uint64(i), tagPage)
		pg = g.planPage(s.r)
		if pg.site >= 0 {
			dst = g.appendHead(dst, &pg, s.r)
		}
	}
	s.seed(g.opt.Seed, uint64(i), tagText)
	r := s.r
	lo := 300
	body := lo + r.IntN(2*(g.opt.MeanBytes-lo)+1)
	var head, tail []string
	if r.Float64() < g.opt.Hot {
		if r.IntN(2) == 0 {
			head = append(head, g.hot)
		} else {
			tail = append(tail, g.hot)
		}
	}
	if !pg.short && r.Float64() < g.opt.Boilerplate {
		p := g.paras[r.IntN(len(g.paras))]
		if r.IntN(2) == 0 {
			head = append(head, p)
		} else {
			tail = append(tail, p)
		}
	}
	for _, p := range head {
		dst = append(dst, p...)
		dst = append(dst, "\n\n"...)
	}
	if pg.short {
		dst = g.appendShortBody(dst, r)
	} else {
		dst = g.sentences(dst, r, body, minSentences, 0)
	}
	for _, p := range tail {
		dst = append(dst, "\n\n"...)
		dst = append(dst, p...)
	}
	if pg.site >= 0 {
		dst = g.appendFoot(dst, &pg)
	}
	return dst
}

// appendShortBody appends a short body: one to three pool sentences (30 to
// 400 bytes each) up to a target drawn in [ShortMin, ShortMax] bytes, each
// taken only if the body stays within 40 bytes past the target and within
// ShortMax, so that the bodies spread over the range rather than bunch past
// its middle. With so few sentences such bodies repeat by chance where
// minSentences keeps longer ones apart: a corpus of m one-sentence bodies
// drawn from the pool's 85K sentences holds about m²/170,000 pairs of equal
// bodies (6,000 at m = 30,000), and two pages of one site with equal or
// overlapping short bodies are near-duplicates nobody planted. Check counts
// them among the unplanted removals at J >= threshold, which are
// legitimate.
func (g *Generator) appendShortBody(dst []byte, r *rand.Rand) []byte {
	start := len(dst)
	target := ShortMin + r.IntN(ShortMax-ShortMin+1)
	limit := min(target+40, ShortMax)
	n := 0
	for tries := 0; n < 3 && len(dst)-start < target && tries < 20; tries++ {
		sent := g.pool.Sentence(r.IntN(g.pool.Len()))
		if len(dst)-start+min(n, 1)+len(sent) > limit {
			continue
		}
		if n > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, sent...)
		n++
	}
	if n == 0 { // 20 sentences too long for the target: take one
		dst = append(dst, g.pool.Sentence(r.IntN(g.pool.Len()))...)
	}
	return dst
}

// Doc returns document i (i >= 0).
func (g *Generator) Doc(i int64, s *Scratch) Doc {
	text, p := g.text(i, s)
	d := Doc{ID: ID(i), Text: string(text)}
	if p.kind != original {
		d.Planted = &Planted{Of: ID(p.of), Kind: p.kind.String(), Jaccard: p.jaccard}
	}
	return d
}

// AppendJSON appends document i as one JSON line (with its newline) to dst:
// {"id":...,"text":...} and, for a copy, "planted":{"of","kind","jaccard"}.
func (g *Generator) AppendJSON(dst []byte, i int64, s *Scratch) []byte {
	text, p := g.text(i, s)
	dst = append(dst, `{"id":"`...)
	dst = appendID(dst, i)
	dst = append(dst, `","text":`...)
	dst = appendJSONString(dst, text)
	if p.kind != original {
		dst = append(dst, `,"planted":{"of":"`...)
		dst = appendID(dst, p.of)
		dst = append(dst, `","kind":"`...)
		dst = append(dst, p.kind.String()...)
		dst = append(dst, `","jaccard":`...)
		dst = strconv.AppendFloat(dst, p.jaccard, 'g', -1, 64)
		dst = append(dst, '}')
	}
	return append(dst, "}\n"...)
}

func (k kind) String() string {
	return [...]string{"original", KindNear, KindControl, KindExact}[k]
}

type planted struct {
	kind    kind
	of      int64
	jaccard float64
}

// text returns document i's text (in s's buffer, valid until the next call)
// and what was planted.
func (g *Generator) text(i int64, s *Scratch) ([]byte, planted) {
	k, of := g.plan(i, s)
	switch k {
	case original:
		s.text = g.appendOriginal(s.text[:0], i, s)
		return s.text, planted{kind: original}
	case exact:
		s.text = g.appendOriginal(s.text[:0], of, s)
		return s.text, planted{kind: exact, of: of, jaccard: 1}
	}
	s.orig = g.appendOriginal(s.orig[:0], of, s)
	lo, hi := NearMin, NearMax
	if k == control {
		lo, hi = ControlMin, ControlMax
	}
	s.seed(g.opt.Seed, uint64(i), tagEdit)
	if j, ok := g.edit(s, lo, hi, k == control); ok {
		return s.text, planted{kind: k, of: of, jaccard: j}
	}
	// No edit count lands in the range (a text too short for it): the
	// document becomes an original.
	s.text = g.appendOriginal(s.text[:0], i, s)
	return s.text, planted{kind: original}
}

// An edit of the word at index word: replace it, insert w before it, or
// delete it.
type edit struct {
	word int32
	op   uint8 // 0 replace, 1 insert, 2 delete
	w    string
}

// edit writes into s.text a copy of s.orig with random word edits whose exact
// Jaccard to s.orig lies in [lo, hi] (hi excluded when open). A target is
// drawn uniformly in the range; each interior edit changes about five of the
// S shingles, so k = S(1-t)/(5(1+t)) edits give about t, and k moves one at a
// time until the measured Jaccard is in range.
func (g *Generator) edit(s *Scratch, lo, hi float64, open bool) (float64, bool) {
	r := s.r
	in := func(j float64) bool { return j >= lo && (j < hi || !open && j == hi) }
	// Word spans (runs of non-space bytes).
	s.spans = s.spans[:0]
	for i := 0; i < len(s.orig); {
		for i < len(s.orig) && isSpace(s.orig[i]) {
			i++
		}
		j := i
		for j < len(s.orig) && !isSpace(s.orig[j]) {
			j++
		}
		if j > i {
			s.spans = append(s.spans, [2]int32{int32(i), int32(j)})
		}
		i = j
	}
	nw := len(s.spans)
	if nw < 10 {
		return 0, false
	}
	s.toks = eval.Tokens(s.toks[:0], string(s.orig))
	a := eval.Shingles(s.toks)
	S := float64(len(a))
	t := lo + r.Float64()*(hi-lo)
	k := max(1, int(math.Round(S*(1-t)/(5*(1+t)))))
	// The edits, in the order they are taken: distinct words.
	m := min(nw, 2*k+16)
	s.ops = s.ops[:0]
	for _, w := range r.Perm(nw)[:m] {
		e := edit{word: int32(w), op: uint8(r.IntN(3))}
		if e.op != 2 {
			for {
				e.w = g.pool.words[r.IntN(len(g.pool.words))]
				sp := s.spans[w]
				if e.op == 1 || e.w != string(s.orig[sp[0]:sp[1]]) {
					break
				}
			}
		}
		s.ops = append(s.ops, e)
	}
	seen := 0 // bit 0: a count gave too high a Jaccard; bit 1: too low
	for range 64 {
		k = min(max(k, 1), m)
		j := g.apply(s, k, a)
		switch {
		case in(j):
			return j, true
		case j >= hi:
			seen |= 1
			if k == m {
				return 0, false
			}
			k++
		default:
			seen |= 2
			if k == 1 {
				return 0, false
			}
			k--
		}
		if seen == 3 {
			return 0, false // one edit steps over the range
		}
	}
	return 0, false
}

// apply writes s.orig with the first k of s.ops into s.text and returns its
// exact Jaccard to the shingles a of s.orig.
func (g *Generator) apply(s *Scratch, k int, a measure.Set) float64 {
	s.applied = append(s.applied[:0], s.ops[:k]...)
	slices.SortFunc(s.applied, func(x, y edit) int { return int(x.word - y.word) })
	s.text = s.text[:0]
	prev := int32(0)
	for _, e := range s.applied {
		sp := s.spans[e.word]
		switch e.op {
		case 0:
			s.text = append(s.text, s.orig[prev:sp[0]]...)
			s.text = append(s.text, e.w...)
			prev = sp[1]
		case 1:
			s.text = append(s.text, s.orig[prev:sp[0]]...)
			s.text = append(s.text, e.w...)
			s.text = append(s.text, ' ')
			prev = sp[0]
		case 2:
			s.text = append(s.text, s.orig[prev:sp[0]]...)
			prev = sp[1]
			// Drop the space after it too, unless it ends a paragraph.
			if int(prev) < len(s.orig) && s.orig[prev] == ' ' {
				prev++
			}
		}
	}
	s.text = append(s.text, s.orig[prev:]...)
	s.toks = eval.Tokens(s.toks[:0], string(s.text))
	return Jaccard(a, eval.Shingles(s.toks))
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// Jaccard is eval's ground-truth Jaccard of two shingle sets: empty sets are
// similar to nothing.
func Jaccard(a, b measure.Set) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	return measure.Jaccard(a, b)
}

// TextJaccard returns the exact Jaccard similarity of the word 5-shingle sets
// of two texts, tokenised as eval's ground truth and dedup's verification.
func TextJaccard(a, b string) float64 {
	return Jaccard(eval.Shingles(eval.Tokens(nil, a)), eval.Shingles(eval.Tokens(nil, b)))
}

// appendJSONString appends s as a JSON string literal. The pool's sentences
// are valid UTF-8, which passes through; control characters are escaped.
func appendJSONString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
