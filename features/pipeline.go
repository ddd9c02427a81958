package features

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/neardup/neardup/simhash"
)

// Feature is one weighted feature of a text.
type Feature struct {
	Text   string  // the term, or a shingle's words joined by spaces; may be "" on fast paths
	Hash   uint64  // the 64-bit feature hash fed to the builder
	Weight float64 // the weight after TF, cap, part-of-speech, IDF
}

// scratch is the per-goroutine state of the fast path, kept in a sync.Pool so
// that fingerprinting allocates nothing per token once warm.
type scratch struct {
	cl     cleaner
	buf    []byte   // cleaned text
	toks   []Token  // tokens: substrings of buf
	hashes []uint64 // kept token hashes (shingle profiles)
	idfs   []float64
	first  []int32 // first kept-token index of each shingle entry
	tab    table
	order  []int32 // entry indices for top-N selection
	b      simhash.Builder
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooled bounds the buffers a pooled scratch keeps, so that one huge
// document does not pin its memory for the life of the process.
const maxPooled = 64 << 20

// release drops s's references to the text just fingerprinted (tokens and
// entries point into it) and oversized buffers, then returns s to the pool.
func (s *scratch) release() {
	clear(s.toks)
	clear(s.tab.entries)
	if cap(s.buf) > maxPooled {
		s.buf = nil
	}
	if cap(s.cl.html) > maxPooled || cap(s.cl.nfkc) > maxPooled || cap(s.cl.fold) > maxPooled {
		s.cl = cleaner{}
	}
	if cap(s.toks)*int(unsafe.Sizeof(Token{})) > maxPooled {
		s.toks = nil
	}
	if cap(s.tab.entries)*int(unsafe.Sizeof(entry{})) > maxPooled || cap(s.tab.slots)*int(unsafe.Sizeof(slot{})) > maxPooled {
		s.tab = table{}
	}
	if cap(s.hashes)*8 > maxPooled {
		s.hashes, s.idfs, s.order = nil, nil, nil
	}
	scratchPool.Put(s)
}

// entry is one distinct feature of a document.
type entry struct {
	h     uint64
	text  string  // first occurrence (a substring of the cleaned text); "" for shingles
	count int32   // occurrences counted (at most MaxRepeat)
	keep  bool    // passes the stopword and length filters
	first int32   // first kept-token index (shingles)
	posw  float64 // sum of the part-of-speech weights of the counted occurrences
	idf   float64
	w     float64 // final weight
}

// table is an open-addressing hash table (linear probing) from feature hash to
// entry, sized per document so that it never grows and clearing costs little.
// A slot holds the hash next to the entry index, so a probe touches one cache
// line.
type table struct {
	slots   []slot
	mask    uint64
	entries []entry // in first-occurrence order, which makes sums deterministic
}

type slot struct {
	h   uint64
	idx int32 // entry index+1, 0 empty
}

// reset empties the table for a document of n tokens. The table starts at
// a quarter of n (documents repeat words) and grows, so that it stays small
// enough for the caches.
func (t *table) reset(n int) {
	size := 64
	for size < n/2 {
		size <<= 1
	}
	t.resize(size)
	t.entries = t.entries[:0]
}

func (t *table) resize(size int) {
	if cap(t.slots) < size {
		t.slots = make([]slot, size)
	} else {
		t.slots = t.slots[:size]
		clear(t.slots)
	}
	t.mask = uint64(size - 1)
}

// find returns the entry for h, adding a zero one (reporting true) if absent.
func (t *table) find(h uint64) (*entry, bool) {
	// xxh3 and Mix64 outputs are well mixed: their low bits index directly.
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.idx == 0 {
			if 2*len(t.entries) >= len(t.slots) {
				t.grow()
				return t.find(h)
			}
			t.entries = append(t.entries, entry{h: h})
			s.h, s.idx = h, int32(len(t.entries))
			return &t.entries[len(t.entries)-1], true
		}
		if s.h == h {
			return &t.entries[s.idx-1], false
		}
	}
}

// grow doubles the slots and re-inserts the entries (keeping load <= 1/2).
func (t *table) grow() {
	t.resize(2 * len(t.slots))
	for k := range t.entries {
		h := t.entries[k].h
		i := h & t.mask
		for t.slots[i].idx != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = slot{h: h, idx: int32(k + 1)}
	}
}

// Tokens returns the tokens of text after cleanup, the tokenizer and the
// filters (stopwords, minimum length, part-of-speech weight 0), in order. For
// the shingles profile these are the words the shingles are made of.
func (p *Profile) Tokens(text string) []Token {
	if p.route != nil {
		return p.route(text).Tokens(text)
	}
	if p.custom != nil {
		return p.custom.tokens(p, text)
	}
	return p.appendTokens(nil, text)
}

// appendTokens appends the filtered tokens of text to dst. The tokens point
// into a fresh string, not a reused buffer.
func (p *Profile) appendTokens(dst []Token, text string) []Token {
	if p.route != nil {
		return p.route(text).appendTokens(dst, text)
	}
	if p.custom != nil {
		return append(dst, p.custom.tokens(p, text)...)
	}
	cleaned := Clean(text, p.cfg.Clean)
	start := len(dst)
	dst = p.tokenizer().Tokenize(dst, cleaned)
	out := dst[:start]
	for _, tok := range dst[start:] {
		if p.cfg.POSWeight != nil && p.cfg.POSWeight(tok.POS) == 0 {
			continue
		}
		if !p.keepTerm(tok.Text, simhash.HashString64(tok.Text)) {
			continue
		}
		out = append(out, tok)
	}
	return out
}

// keepTerm applies the stopword and minimum-length filters to a term with
// hash h.
func (p *Profile) keepTerm(text string, h uint64) bool {
	if p.cfg.MinRunes > 1 && len(text) < 4*p.cfg.MinRunes && utf8.RuneCountInString(text) < p.cfg.MinRunes {
		return false
	}
	return !p.cfg.Stopwords.containsHash(h)
}

// Features returns the weighted features of text with their texts, sorted by
// weight, highest first (ties by text). It is the explaining path: the
// fingerprint of these features is Fingerprint(text).
func (p *Profile) Features(text string) []Feature {
	if p.route != nil {
		return p.route(text).Features(text)
	}
	if p.custom != nil {
		return p.custom.features(p, text)
	}
	s := scratchPool.Get().(*scratch)
	defer s.release()
	p.collect(s, text)
	out := make([]Feature, 0, len(s.tab.entries))
	w := p.cfg.Shingle
	for i := range s.tab.entries {
		e := &s.tab.entries[i]
		if !e.keep || e.w == 0 {
			continue
		}
		f := Feature{Text: strings.Clone(e.text), Hash: e.h, Weight: e.w}
		if w >= 2 {
			end := min(int(e.first)+w, len(s.toks))
			parts := make([]string, 0, w)
			for _, t := range s.toks[e.first:end] {
				parts = append(parts, t.Text)
			}
			f.Text = strings.Join(parts, " ")
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Feature) int {
		switch {
		case a.Weight > b.Weight:
			return -1
		case a.Weight < b.Weight:
			return 1
		}
		return strings.Compare(a.Text, b.Text)
	})
	return out
}

// Fingerprint returns the fingerprint of text. It is safe for concurrent use
// and allocates nothing per token.
func (p *Profile) Fingerprint(text string) Result {
	if p.route != nil {
		return p.route(text).Fingerprint(text)
	}
	if p.custom != nil {
		return p.custom.fingerprint(p, text)
	}
	s := scratchPool.Get().(*scratch)
	p.collect(s, text)
	r := p.sum(s)
	s.release()
	return r
}

// collect runs the pipeline up to the weights: it fills s.tab.entries with the
// distinct features of text, keep set on those that count and w holding their
// final weights (0 for those cut by TopN). For shingle profiles s.toks holds
// the kept tokens afterwards.
func (p *Profile) collect(s *scratch, text string) {
	switch {
	case p.cfg.Shingle >= 2:
		p.tokenize(s, text)
		p.collectShingles(s)
	case len(text) > chunkBytes:
		p.collectChunked(s, text)
	default:
		p.tokenize(s, text)
		s.tab.reset(len(s.toks))
		p.addTerms(s, false)
	}
	p.weigh(s)
}

// tokenize cleans text into s.buf and splits it into s.toks.
func (p *Profile) tokenize(s *scratch, text string) {
	ok := false
	if p.fusedWords() {
		s.toks, s.buf, ok = fastWords(s.toks[:0], s.buf, text)
	}
	if !ok {
		s.buf = s.cl.clean(s.buf[:0], text, p.cfg.Clean)
		cleaned := unsafe.String(unsafe.SliceData(s.buf), len(s.buf))
		s.toks = p.tokenizer().Tokenize(s.toks[:0], cleaned)
	}
}

// chunkBytes is the size above which a document is cleaned and tokenized in
// pieces. The cleaned text and its tokens cost about 16 bytes per input byte,
// so a 1 GB document done in one piece would need about 16 GB; in pieces the
// scratch stays near 16 x chunkBytes plus one entry per distinct feature.
const chunkBytes = 4 << 20

// collectChunked counts the terms of a long text a piece at a time into one
// table. Pieces end at white space, so for word profiles the features are
// those of the whole text unless markup or an entity spans a cut; n-grams
// that would span a cut are lost. Either way the result is deterministic.
func (p *Profile) collectChunked(s *scratch, text string) {
	s.tab.reset(1 << 16) // grows with the vocabulary, not the text
	for len(text) > 0 {
		n := cutPoint(text, chunkBytes)
		p.tokenize(s, text[:n])
		p.addTerms(s, true)
		text = text[n:]
	}
}

// cutPoint returns the length of the first piece of text, at most about max
// bytes: just after the last ASCII white space in the final quarter of the
// window, else at a UTF-8 character boundary.
func cutPoint(text string, max int) int {
	if len(text) <= max {
		return len(text)
	}
	for i := max; i > max-max/4; i-- {
		switch text[i-1] {
		case ' ', '\n', '\t', '\r':
			return i
		}
	}
	i := max
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	if i == 0 {
		return max
	}
	return i
}

// addTerms counts s.toks into s.tab, which must have been reset. With
// owned, entries copy their text, since s.buf is about to be reused.
func (p *Profile) addTerms(s *scratch, owned bool) {
	cfg := &p.cfg
	maxRep := int32(cfg.MaxRepeat)
	for _, tok := range s.toks {
		pw := 1.0
		if cfg.POSWeight != nil {
			if pw = cfg.POSWeight(tok.POS); pw == 0 {
				continue
			}
		}
		h := simhash.HashString64(tok.Text)
		e, added := s.tab.find(h)
		if added {
			e.text = tok.Text
			if owned {
				e.text = strings.Clone(tok.Text)
			}
			e.keep = p.keepTerm(tok.Text, h)
			if e.keep && cfg.IDF != nil {
				e.idf = cfg.IDF.weightHash(h)
			}
		}
		if !e.keep || maxRep > 0 && e.count >= maxRep {
			continue
		}
		e.count++
		e.posw += pw
	}
}

func (p *Profile) collectShingles(s *scratch) {
	cfg := &p.cfg
	// Filter the tokens in place and hash them.
	s.hashes = s.hashes[:0]
	s.idfs = s.idfs[:0]
	kept := s.toks[:0]
	filter := cfg.POSWeight != nil || cfg.Stopwords != nil || cfg.MinRunes > 1
	for _, tok := range s.toks {
		h := simhash.HashString64(tok.Text)
		if filter && (cfg.POSWeight != nil && cfg.POSWeight(tok.POS) == 0 || !p.keepTerm(tok.Text, h)) {
			continue
		}
		kept = append(kept, tok)
		s.hashes = append(s.hashes, h)
		if cfg.IDF != nil {
			s.idfs = append(s.idfs, cfg.IDF.weightHash(h))
		}
	}
	s.toks = kept
	w := cfg.Shingle
	n := len(s.hashes) - w + 1
	if len(s.hashes) > 0 && n < 1 {
		n, w = 1, len(s.hashes)
	}
	s.tab.reset(max(n, 0))
	maxRep := int32(cfg.MaxRepeat)
	for i := 0; i < n; i++ {
		h := shingleHash(s.hashes[i : i+w])
		e, added := s.tab.find(h)
		if added {
			e.keep = true
			e.first = int32(i)
			if cfg.IDF != nil {
				sum := 0.0
				for _, v := range s.idfs[i : i+w] {
					sum += v
				}
				e.idf = sum / float64(w)
			}
		}
		if maxRep > 0 && e.count >= maxRep {
			continue
		}
		e.count++
		e.posw++
	}
}

// weigh turns counts into weights and applies TopN.
func (p *Profile) weigh(s *scratch) {
	cfg := &p.cfg
	for i := range s.tab.entries {
		e := &s.tab.entries[i]
		if !e.keep || e.count == 0 {
			e.w = 0
			continue
		}
		switch cfg.TF {
		case TFRaw:
			e.w = e.posw
		case TFLog:
			e.w = (1 + math.Log(float64(e.count))) * e.posw / float64(e.count)
		case TFBinary:
			e.w = e.posw / float64(e.count)
		}
		if cfg.IDF != nil {
			e.w *= e.idf
		}
	}
	if cfg.TopN <= 0 {
		return
	}
	s.order = s.order[:0]
	for i := range s.tab.entries {
		if s.tab.entries[i].w != 0 {
			s.order = append(s.order, int32(i))
		}
	}
	if len(s.order) <= cfg.TopN {
		return
	}
	ents := s.tab.entries
	slices.SortFunc(s.order, func(a, b int32) int {
		ea, eb := &ents[a], &ents[b]
		switch {
		case ea.w > eb.w:
			return -1
		case ea.w < eb.w:
			return 1
		case ea.h < eb.h:
			return -1
		case ea.h > eb.h:
			return 1
		}
		return 0
	})
	for _, i := range s.order[cfg.TopN:] {
		ents[i].w = 0
	}
}

// sum feeds the weighted entries to the builder.
func (p *Profile) sum(s *scratch) Result {
	bits := p.Bits()
	b := &s.b
	if b.Width() != bits {
		nb, _ := simhash.NewBuilder(bits)
		*b = *nb
	} else {
		b.Reset()
	}
	n := 0
	for i := range s.tab.entries {
		e := &s.tab.entries[i]
		if e.w == 0 {
			continue
		}
		n++
		if bits == 128 {
			hi, lo := p.hash128(e)
			b.Add128(hi, lo, e.w)
		} else {
			b.Add(e.h, e.w)
		}
	}
	return result(b, bits, n)
}

// hash128 returns the 128-bit hash of an entry: XXH3-128 of the term, or, for
// shingles (which have no text on the fast path), the 64-bit shingle hash
// extended by Mix64.
func (p *Profile) hash128(e *entry) (hi, lo uint64) {
	if p.cfg.Shingle >= 2 {
		return simhash.Mix64(e.h, 0x6a09e667f3bcc909), e.h
	}
	return simhash.HashString128(e.text)
}

func result(b *simhash.Builder, bits, n int) Result {
	r := Result{Bits: bits, Features: n, Empty: b.Empty()}
	switch bits {
	case 128:
		r.Fingerprint128 = b.Sum128()
		r.Fingerprint = simhash.Fingerprint(r.Fingerprint128.Lo)
	case 32:
		r.Fingerprint = simhash.Fingerprint(b.Sum32())
	default:
		r.Fingerprint = b.Sum64()
	}
	return r
}

// shingleHash combines token hashes into a shingle hash with simhash.Mix64,
// in order, so "a b c" and "c b a" differ.
func shingleHash(hs []uint64) uint64 {
	h := uint64(len(hs))
	for _, x := range hs {
		h = simhash.Mix64(h, x)
	}
	return h
}

// ShingleHashes appends to dst the hashes of the word w-shingles of toks (w
// consecutive tokens; one shingle of all tokens when there are fewer than w,
// none when toks is empty), in order, duplicates included, and returns dst.
// The hashes are those of the shingles profile: XXH3 of each token combined
// with simhash.Mix64. They are the sets for Jaccard similarity and MinHash.
// w < 1 means 1.
func ShingleHashes(dst []uint64, toks []Token, w int) []uint64 {
	if len(toks) == 0 {
		return dst
	}
	if w < 1 {
		w = 1
	}
	if w > len(toks) {
		w = len(toks)
	}
	var ring [8]uint64
	hs := ring[:0]
	if w > len(ring) {
		hs = make([]uint64, 0, w)
	}
	// Hash each token once; keep the last w hashes in a ring.
	hs = hs[:w]
	for i, t := range toks {
		hs[i%w] = simhash.HashString64(t.Text)
		if i+1 < w {
			continue
		}
		h := uint64(w)
		for j := i + 1 - w; j <= i; j++ {
			h = simhash.Mix64(h, hs[j%w])
		}
		dst = append(dst, h)
	}
	return dst
}

// fusedWords reports whether the profile may use fastWords: the Words
// tokenizer after the default cleanup.
func (p *Profile) fusedWords() bool {
	_, words := p.tokenizer().(Words)
	c := &p.cfg.Clean
	return words && !c.KeepHTML && !c.NoNFKC && !c.KeepCase && c.Fold == nil
}

// tokenizer returns the profile's tokenizer: Words when none is set (a zero
// Profile).
func (p *Profile) tokenizer() Tokenizer {
	if p.cfg.Tokenizer == nil {
		return Words{}
	}
	return p.cfg.Tokenizer
}
