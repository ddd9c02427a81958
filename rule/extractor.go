package rule

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
