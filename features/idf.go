package features

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/neardup/neardup/simhash"
)

// IDF is a table of inverse document frequencies. Terms not in the table get
// the table's average IDF, as seed 004 does. An IDF is immutable and safe for
// concurrent use.
//
// # Text format
//
// WriteTo and ReadIDF use a UTF-8 text format:
//
//	neardup-idf 1 docs=N
//	term<TAB>idf
//	...
//
// The first line is the magic "neardup-idf", the format version 1 and,
// optionally, the number of documents the table was learned from. Each
// following line is a term, a tab, and its IDF as a decimal float. In terms,
// backslash, tab, newline and carriage return are written \\ \t \n \r. Lines
// are sorted by term; blank lines and lines starting with '#' are ignored.
type IDF struct {
	terms  map[string]float64
	byHash map[uint64]float64 // XXH3 of the term -> idf, for the fast path
	avg    float64
	docs   int
}

// NewIDF returns a table of the given term IDFs.
func NewIDF(idf map[string]float64) *IDF {
	t := &IDF{terms: make(map[string]float64, len(idf)), byHash: make(map[uint64]float64, len(idf))}
	sum := 0.0
	for term, v := range idf {
		t.terms[term] = v
		t.byHash[simhash.HashString64(term)] = v
		sum += v
	}
	if len(idf) > 0 {
		t.avg = sum / float64(len(idf))
	}
	return t
}

// Weight returns the IDF of term, or the average IDF when the table does not
// hold it. A nil table weighs every term 1.
func (t *IDF) Weight(term string) float64 {
	if t == nil {
		return 1
	}
	if v, ok := t.terms[term]; ok {
		return v
	}
	return t.avg
}

// weightHash is Weight by the XXH3 hash of the term.
func (t *IDF) weightHash(h uint64) float64 {
	if t == nil {
		return 1
	}
	if v, ok := t.byHash[h]; ok {
		return v
	}
	return t.avg
}

// Lookup returns the IDF of term and whether the table holds it.
func (t *IDF) Lookup(term string) (float64, bool) {
	v, ok := t.terms[term]
	return v, ok
}

// Average returns the average IDF, the weight of unknown terms.
func (t *IDF) Average() float64 { return t.avg }

// Len returns the number of terms.
func (t *IDF) Len() int { return len(t.terms) }

// Docs returns the number of documents the table was learned from, 0 if
// unknown.
func (t *IDF) Docs() int { return t.docs }

const idfMagic = "neardup-idf"

var termEscaper = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)
var termUnescaper = strings.NewReplacer(`\\`, "\\", `\t`, "\t", `\n`, "\n", `\r`, "\r")

// WriteTo writes the table in the text format described on IDF.
func (t *IDF) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	var n int64
	k, err := fmt.Fprintf(bw, "%s 1 docs=%d\n", idfMagic, t.docs)
	n += int64(k)
	if err != nil {
		return n, err
	}
	terms := make([]string, 0, len(t.terms))
	for term := range t.terms {
		terms = append(terms, term)
	}
	sort.Strings(terms)
	var line []byte
	for _, term := range terms {
		line = append(line[:0], termEscaper.Replace(term)...)
		line = append(line, '\t')
		line = strconv.AppendFloat(line, t.terms[term], 'g', -1, 64)
		line = append(line, '\n')
		k, err := bw.Write(line)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// ReadIDF reads a table in the text format described on IDF. Errors wrap
// ErrIDFFormat and name the line.
func ReadIDF(r io.Reader) (*IDF, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: empty input", ErrIDFFormat)
	}
	head := strings.Fields(sc.Text())
	if len(head) < 2 || head[0] != idfMagic {
		return nil, fmt.Errorf("%w: line 1: want header %q", ErrIDFFormat, idfMagic+" 1")
	}
	if head[1] != "1" {
		return nil, fmt.Errorf("%w: line 1: unsupported version %q", ErrIDFFormat, head[1])
	}
	docs := 0
	for _, f := range head[2:] {
		if v, ok := strings.CutPrefix(f, "docs="); ok {
			d, err := strconv.Atoi(v)
			if err != nil || d < 0 {
				return nil, fmt.Errorf("%w: line 1: bad docs=%q", ErrIDFFormat, v)
			}
			docs = d
		}
	}
	m := map[string]float64{}
	for line := 2; sc.Scan(); line++ {
		s := sc.Text()
		if s == "" || s[0] == '#' {
			continue
		}
		term, val, ok := strings.Cut(s, "\t")
		if !ok {
			return nil, fmt.Errorf("%w: line %d: no tab", ErrIDFFormat, line)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: line %d: bad idf %q", ErrIDFFormat, line, val)
		}
		m[termUnescaper.Replace(term)] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	t := NewIDF(m)
	t.docs = docs
	return t, nil
}

// IDFBuilder learns an IDF table from a corpus: the document frequency df of
// each term (the profile's tokens, after its filters) over N documents gives
//
//	idf = ln((1+N) / (1+df)) + 1
//
// the smoothed form of scikit-learn's TfidfVectorizer (smooth_idf=True): as if
// one extra document held every term, so no IDF is infinite or zero. An
// IDFBuilder is not safe for concurrent use; build one per goroutine and Merge.
type IDFBuilder struct {
	p    *Profile
	df   map[string]*int // term -> document frequency; a pointer so that counting never rewrites the key
	docs int
	seen map[uint64]struct{} // hashes of the terms of the current document
	toks []Token
}

// NewIDFBuilder returns a builder counting the terms of profile p's tokens.
func NewIDFBuilder(p *Profile) *IDFBuilder {
	return &IDFBuilder{p: p, df: map[string]*int{}, seen: map[uint64]struct{}{}}
}

// Add counts the distinct terms of one document.
func (b *IDFBuilder) Add(text string) {
	b.docs++
	b.toks = b.p.appendTokens(b.toks[:0], text)
	clear(b.seen)
	for _, t := range b.toks {
		h := simhash.HashString64(t.Text)
		if _, ok := b.seen[h]; ok {
			continue
		}
		b.seen[h] = struct{}{}
		if n := b.df[t.Text]; n != nil {
			*n++
			continue
		}
		// Clone: the token points into the document's cleaned text.
		one := 1
		b.df[strings.Clone(t.Text)] = &one
	}
	clear(b.toks) // drop references to the document
}

// Merge adds the counts of o (built with the same profile) to b.
func (b *IDFBuilder) Merge(o *IDFBuilder) {
	b.docs += o.docs
	for t, n := range o.df {
		if m := b.df[t]; m != nil {
			*m += *n
		} else {
			c := *n
			b.df[t] = &c
		}
	}
}

// Docs returns the number of documents added.
func (b *IDFBuilder) Docs() int { return b.docs }

// IDF returns the table learned so far.
func (b *IDFBuilder) IDF() *IDF {
	m := make(map[string]float64, len(b.df))
	n := float64(b.docs)
	for term, df := range b.df {
		m[term] = math.Log((1+n)/(1+float64(*df))) + 1
	}
	t := NewIDF(m)
	t.docs = b.docs
	return t
}
