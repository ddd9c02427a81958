package webgen

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/neardup/neardup/corpus"
	"github.com/zeebo/xxh3"
)

// Pool is a set of distinct real sentences, held in one string (an arena with
// offsets, so the collector never walks them), and a vocabulary of the words
// they use, for edits. It is immutable and safe for concurrent use.
type Pool struct {
	arena string
	ends  []uint32 // sentence i is arena[ends[i-1]:ends[i]] (ends[-1] = 0)
	words []string // distinct lower-case words of letters, 3 to 12 bytes
}

// Len returns the number of sentences.
func (p *Pool) Len() int { return len(p.ends) }

// Sentence returns sentence i.
func (p *Pool) Sentence(i int) string {
	start := uint32(0)
	if i > 0 {
		start = p.ends[i-1]
	}
	return p.arena[start:p.ends[i]]
}

// Words returns the number of words in the edit vocabulary.
func (p *Pool) Words() int { return len(p.words) }

// PoolBuilder collects sentences into a Pool, dropping repeats. It is not safe
// for concurrent use.
type PoolBuilder struct {
	b     strings.Builder
	ends  []uint32
	seen  map[string]struct{}
	words []string
	seenW map[string]struct{}
	paras map[uint64]struct{} // hashes of the paragraphs already split
}

// NewPoolBuilder returns an empty PoolBuilder.
func NewPoolBuilder() *PoolBuilder {
	return &PoolBuilder{seen: map[string]struct{}{}, seenW: map[string]struct{}{}, paras: map[uint64]struct{}{}}
}

// AddText splits text into sentences (Sentences) and adds the new ones.
func (pb *PoolBuilder) AddText(text string) {
	sentences(text, pb.paras, pb.add)
}

func (pb *PoolBuilder) add(s string) {
	if _, ok := pb.seen[s]; ok {
		return
	}
	pb.seen[s] = struct{}{}
	pb.b.WriteString(s)
	pb.ends = append(pb.ends, uint32(pb.b.Len()))
	for w := range strings.FieldsSeq(s) {
		if len(w) < 3 || len(w) > 12 || !allLetters(w) {
			continue
		}
		w = strings.ToLower(w)
		if _, ok := pb.seenW[w]; !ok {
			pb.seenW[w] = struct{}{}
			pb.words = append(pb.words, w)
		}
	}
}

// Pool returns the sentences added so far, in the order first added.
func (pb *PoolBuilder) Pool() (*Pool, error) {
	if len(pb.ends) < 100 || len(pb.words) < 100 {
		return nil, fmt.Errorf("%w: %d sentences and %d words, want 100 of each", ErrSmallPool, len(pb.ends), len(pb.words))
	}
	if pb.b.Len() > 1<<32-1 {
		return nil, fmt.Errorf("%w: %d bytes of sentences", ErrLargePool, pb.b.Len())
	}
	return &Pool{arena: pb.b.String(), ends: pb.ends, words: pb.words}, nil
}

// LoadPool reads the corpora at paths (any format package corpus reads, such
// as the shared corpora's .jsonl.zst) in order and returns the pool of their
// sentences. The same files give the same pool.
func LoadPool(paths ...string) (*Pool, error) {
	pb := NewPoolBuilder()
	for _, p := range paths {
		r, err := corpus.Open([]string{p}, corpus.Options{})
		if err != nil {
			return nil, fmt.Errorf("webgen: %w", err)
		}
		for {
			d, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				r.Close()
				return nil, fmt.Errorf("webgen: %s: %w", p, err)
			}
			pb.AddText(d.Text)
		}
		r.Close()
	}
	return pb.Pool()
}

// Sentences calls emit with each sentence of text that reads as prose. Text
// is cut into paragraphs at blank lines, paragraphs into sentences after a
// word ending in '.', '!' or '?' (not an abbreviation such as "e.g." or
// "Mr.") that a capitalised word follows. Whitespace is collapsed to single
// spaces. A sentence is kept when it is 30 to 400 bytes of at least five
// words, starts with a capital letter, ends with its punctuation, is mostly
// letters and carries little markup: no URL, Markdown link, "::", angle or
// curly bracket (the git documentation is AsciiDoc; its emphasis marks and
// option names stay).
func Sentences(text string, emit func(string)) { sentences(text, nil, emit) }

// sentences is Sentences skipping paragraphs whose hash is in seen, and
// adding the others' (the git documentation holds every version of each
// file: most paragraphs recur many times).
func sentences(text string, seen map[uint64]struct{}, emit func(string)) {
	var words []string
	var b strings.Builder
	for para := range strings.SplitSeq(text, "\n\n") {
		if seen != nil {
			h := xxh3.HashString(para)
			if _, ok := seen[h]; ok {
				continue
			}
			seen[h] = struct{}{}
		}
		words = append(words[:0], strings.Fields(para)...)
		start := 0
		for i, w := range words {
			if !endsSentence(w) || i+1 < len(words) && !startsUpper(words[i+1]) {
				continue
			}
			b.Reset()
			for j, x := range words[start : i+1] {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(x)
			}
			if s := b.String(); prose(s, i+1-start) {
				emit(s)
			}
			start = i + 1
		}
	}
}

func endsSentence(w string) bool {
	w = strings.TrimRight(w, `"')`)
	if w == "" {
		return false
	}
	switch w[len(w)-1] {
	case '!', '?':
		return true
	case '.':
		body := w[:len(w)-1]
		// "e.g.", "i.e.", "U.S.", "Mr.", "Dr.", "St.", "etc." (the last
		// ends most of its sentences in the corpora anyway).
		return !strings.Contains(body, ".") && !(len(body) <= 3 && startsUpper(body))
	}
	return false
}

func startsUpper(w string) bool {
	w = strings.TrimLeft(w, `"'(`)
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

func prose(s string, nwords int) bool {
	if len(s) < 30 || len(s) > 400 || nwords < 5 || !utf8.ValidString(s) || !startsUpper(s) || s[0] == '\'' || s[0] == '(' {
		return false
	}
	for _, bad := range []string{"://", "](", "::", "<", ">", "{", "}", "|", "\\", "==", "$", "\t"} {
		if strings.Contains(s, bad) {
			return false
		}
	}
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) || r == ' ' {
			letters++
		}
	}
	return letters*10 >= len(s)*9
}

func allLetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
