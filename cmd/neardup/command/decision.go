package command

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/rule"
)

// decisionFlags are the flags that shape the near-duplicate decision, shared
// by the commands that take it (dedup, serve): registered in one place, so
// that the service decides as 'neardup dedup' does with the same flags.
type decisionFlags struct {
	k, kShort int
}

func (f *decisionFlags) register(fs *pflag.FlagSet, o *rule.Options) {
	fs.StringVar(&o.Method, "method", rule.DefaultMethod, "candidate stage: minhash (a shared LSH band: a fixed number of keys per document whatever the corpus size; for serve, one hash lookup per band) or simhash (fingerprints within --k bits)")
	fs.StringVarP(&o.Profile, "profile", "p", rule.DefaultProfile, "feature profile for SimHash fingerprints ("+strings.Join(features.Names(), ", ")+")")
	fs.IntVarP(&f.k, "k", "k", rule.DefaultK, "SimHash candidate distance in bits (--method simhash)")
	fs.IntVar(&f.kShort, "k-short", rule.DefaultKShort, "SimHash candidate distance for documents under --short-tokens tokens")
	fs.IntVar(&o.ShortTokens, "short-tokens", rule.DefaultShortTokens, "token count under which a document is short")
	fs.Float64VarP(&o.Threshold, "threshold", "t", 0, "verification threshold (0: 0.8 for jaccard, 0.9 for cosine); also sets MinHash bands and rows")
	fs.IntVar(&o.Shingle, "shingle", rule.DefaultShingle, "shingle width in words for jaccard and minhash")
}

// apply puts the distances into o. Zero means "default" in the library; on
// the command line 0 means 0.
func (f *decisionFlags) apply(o *rule.Options) {
	o.K, o.KShort = f.k, f.kShort
	if o.K == 0 {
		o.K = -1
	}
	if o.KShort == 0 {
		o.KShort = -1
	}
}
