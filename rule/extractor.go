package rule

import (
	"fmt"

	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
)

// Extractor computes the Features of texts for the rule of its options. It
// keeps scratch buffers between calls and is not safe for concurrent use: use
// one per goroutine.
type Extractor struct {
	method, verify string
	lsh            *minhash.LSH // MethodMinHash: the band shape, for Features.Bands
	profile        *features.Profile
	hasher         *minhash.Hasher
	sh             shingler
	set64          []uint64
	tmp            []uint32 // radix sort scratch
	noPre          bool     // leave Features.Pre unknown (ExtractorOptions.NoPrefilter)
	tf             map[uint32]uint32
}

// NewExtractor returns an Extractor for opt (after defaults).
func NewExtractor(opt Options) (*Extractor, error) {
	return NewExtractorWith(opt, ExtractorOptions{Fingerprints: true})
}

// NewRuleExtractor returns an Extractor computing only what the Rule of opt
// needs: unlike NewExtractor it computes no SimHash fingerprint under
// MethodMinHash (as the batch, which computes one there only for an index).
// Callers that only decide, such as the Beam pipeline, save the profile's
// pass over every text.
func NewRuleExtractor(opt Options) (*Extractor, error) {
	return NewExtractorWith(opt, ExtractorOptions{})
}

// ExtractorOptions choose what an Extractor computes beside what the Rule
// needs. The zero value computes that and nothing more (NewRuleExtractor).
type ExtractorOptions struct {
	// Fingerprints computes SimHash fingerprints under MethodMinHash too,
	// where the rule does not need them but a fingerprint index and
	// searches do (NewExtractor sets it).
	Fingerprints bool
	// NoPrefilter leaves Features.Pre unknown, for a caller that computes
	// it later for the few documents that need it (the batch's first pass:
	// PrefilterOf of the documents that have candidates).
	NoPrefilter bool
	// SetOnly computes no MinHash signature and no band keys: the shingle
	// set and the prefilter only (the batch's second read of the documents
	// that have candidates).
	SetOnly bool
}

// NewExtractorWith returns an Extractor for opt (after defaults) computing
// what x asks.
func NewExtractorWith(opt Options, x ExtractorOptions) (*Extractor, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt.lshBands()
	return opt.extractor(x)
}

// extractor returns an Extractor of validated options computing what x
// asks.
func (o *Options) extractor(x ExtractorOptions) (*Extractor, error) {
	e := &Extractor{method: o.Method, verify: o.Verify, sh: shingler{w: o.Shingle}, tf: map[uint32]uint32{}, noPre: x.NoPrefilter}
	if o.Method == MethodMinHash && o.Bands > 0 && !x.SetOnly {
		e.lsh = minhash.NewLSH(o.Bands, o.Rows)
	}
	if o.Method == MethodSimHash || x.Fingerprints {
		p, err := features.Lookup(o.Profile)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
		e.profile = p
	}
	if o.Method == MethodMinHash && !x.SetOnly {
		e.hasher = o.hasher()
	}
	return e, nil
}

// Extract returns the features of text, with an exact shingle set. Cosine
// verification's Vector needs IDF weights learned from a whole corpus and is
// left empty; ExtractTerms returns the raw counts.
func (e *Extractor) Extract(text string) Features {
	var f Features
	e.extract(&f, text)
	return f
}

// ExtractInto sets *f to the features of text as Extract returns them,
// reusing the capacity of f's slices (Sketch, Sig, Bands): a caller that
// extracts text after text into the same Features, and lets none of them
// outlive the next call, allocates nothing once the buffers have grown.
func (e *Extractor) ExtractInto(f *Features, text string) {
	e.extract(f, text)
}

// ExtractTerms is ExtractInto that also returns, under VerifyCosine, the
// text's term counts (hash<<32 | count; nil under another measure), from
// which a caller that has read the whole corpus makes the TF-IDF Vector.
func (e *Extractor) ExtractTerms(f *Features, text string) []uint64 {
	return e.extract(f, text)
}

// extract sets *f to text's features, reusing the capacity of its slices,
// and returns for VerifyCosine the term counts (hash<<32 | count).
func (e *Extractor) extract(f *Features, text string) []uint64 {
	sketch, sig, bands := f.Sketch.h[:0], f.Sig[:0], f.Bands[:0]
	*f = Features{}
	f.Length = sat32(len(text))
	if e.profile != nil {
		res := e.profile.Fingerprint(text)
		f.FP = uint64(res.Fingerprint)
		if e.method == MethodSimHash {
			f.Empty = res.Empty // under MethodMinHash only the tokens count (below)
		}
	}
	hashes, exact := e.sh.shingle(text)
	f.Tokens = sat32(len(e.sh.toks))
	if f.Tokens == 0 {
		// No words at all (punctuation, symbols, nothing): only byte-identical
		// texts count as the same.
		exact = simhash.Mix64(simhash.HashString64(text), 0)
		f.Empty = true
	}
	f.Exact = exact
	var terms []uint64
	switch e.verify {
	case VerifyJaccard:
		f.Sketch, e.tmp = newSketch(sketch, hashes, e.tmp, 0)
		if !e.noPre {
			f.Pre = PrefilterOf(f.Sketch.h)
		}
	case VerifyCosine:
		clear(e.tf)
		for _, t := range e.sh.toks {
			e.tf[uint32(t>>32)]++
		}
		terms = make([]uint64, 0, len(e.tf))
		for k, c := range e.tf {
			terms = append(terms, uint64(k)<<32|uint64(c))
		}
	}
	if e.method == MethodMinHash && e.hasher != nil {
		e.set64 = e.set64[:0]
		for _, h := range hashes {
			e.set64 = append(e.set64, uint64(h))
		}
		f.Sig = e.hasher.Sign(sig, e.set64)
		if e.lsh != nil && f.Tokens > 0 {
			f.Bands, _ = e.lsh.BandKeys(bands, f.Sig) // Sign returns Perms >= bands·rows values
		}
	}
	return terms
}

// maxScratch is the most scratch entries an Extractor keeps after Shrink:
// a huge document (a 24 MB generated header) grows the buffers, and they
// should not stay that large for the rest of a run.
const maxScratch = 1 << 20

// Shrink drops the scratch buffers that a huge document grew: a caller
// that extracts many texts calls it now and then (the batch's workers,
// after each batch of documents).
func (e *Extractor) Shrink() {
	if cap(e.sh.toks) > maxScratch {
		e.sh.toks = nil
	}
	if cap(e.sh.hashes) > maxScratch {
		e.sh.hashes = nil
	}
	if cap(e.sh.common) > maxScratch {
		e.sh.common = nil
	}
	if cap(e.tmp) > maxScratch {
		e.tmp = nil
	}
	if cap(e.set64) > maxScratch {
		e.set64 = nil
	}
}

func sat32(n int) uint32 { return uint32(min(n, 1<<32-1)) }
