package dedup

// NewRuleExtractor returns an Extractor computing only what the Rule of opt
// needs: unlike NewExtractor it computes no SimHash fingerprint under
// MethodMinHash (as dedup.Run, which computes one there only for an index).
// Callers that only decide, such as the Beam pipeline, save the profile's
// pass over every text.
func NewRuleExtractor(opt Options) (*Extractor, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt.lshBands()
	return opt.extractor(nil, false)
}
