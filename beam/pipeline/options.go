package pipeline

import (
	"errors"
	"fmt"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
)

// Errors of Dedup, before the pipeline runs.
var (
	// ErrOptions is wrapped by the errors of Options.Validate.
	ErrOptions = errors.New("pipeline: invalid options")
	// ErrOutput is wrapped by the errors of an output path the pipeline
	// could not write at its end (a directory, under a file, not writable).
	ErrOutput = errors.New("pipeline: unusable output")
)

// Defaults.
const (
	DefaultMaxBucket = 10000 // entries of one key a worker pairs in one piece
	DefaultRounds    = 12    // large-star/small-star rounds
)

// Options configures Dedup. The zero value means the defaults, written on each
// field. The rule's options have the meaning of dedup.Options' fields of the
// same name; the rest are the pipeline's own.
type Options struct {
	Inputs []string // files or globs the registered filesystems know (local paths, gs://...)

	Output     string // kept documents: the original JSONL lines, in input order
	Duplicates string // one dedup.Duplicate object per removed document
	Clusters   string // one dedup.Cluster object per kept document with duplicates

	Method      string  // dedup.MethodMinHash (default, dedup.DefaultMethod) or dedup.MethodSimHash
	Profile     string  // features profile (default dedup.DefaultProfile)
	K, KShort   int     // Hamming distances (defaults dedup.DefaultK, dedup.DefaultKShort; negative means 0)
	ShortTokens int     // default dedup.DefaultShortTokens
	Threshold   float64 // Jaccard threshold (default dedup.DefaultThreshold)
	Shingle     int     // shingle width in tokens (default dedup.DefaultShingle)
	Perms       int     // MinHash permutations (default dedup.DefaultPerms)
	Bands, Rows int     // LSH shape (default: dedup.Options.LSHShape)

	IDField, TextField string // JSON fields (defaults "id", "text")
	Format             string // corpus format: auto (default), jsonl, text, lines
	SkipBad            bool   // skip malformed lines (counted as bad_inputs) instead of failing

	// MaxBucket is the most entries of one candidate key paired on one worker
	// in one piece (default DefaultMaxBucket); larger keys are split.
	MaxBucket int
	// Rounds is the number of large-star/small-star rounds (default
	// DefaultRounds); a graph that needs more fails the final check.
	Rounds int
}

// EnsureDefaults fills in zero fields.
func (o *Options) EnsureDefaults() {
	d := o.dedupOptions()
	d.EnsureDefaults()
	o.Method, o.Profile, o.K, o.KShort, o.ShortTokens = d.Method, d.Profile, d.K, d.KShort, d.ShortTokens
	o.Threshold, o.Shingle, o.Perms = d.Threshold, d.Shingle, d.Perms
	if o.Method == dedup.MethodMinHash {
		o.Bands, o.Rows = d.LSHShape()
	}
	if o.Format == "" {
		o.Format = "auto"
	}
	if o.MaxBucket == 0 {
		o.MaxBucket = DefaultMaxBucket
	}
	if o.Rounds == 0 {
		o.Rounds = DefaultRounds
	}
}

// Validate reports the first invalid option, wrapping ErrOptions (or
// dedup.ErrOptions for the rule's).
func (o *Options) Validate() error {
	d := o.dedupOptions()
	d.EnsureDefaults()
	if err := d.Validate(); err != nil {
		return err
	}
	if _, err := corpus.ParseFormat(o.Format); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	switch {
	case len(o.Inputs) == 0:
		return fmt.Errorf("%w: no input", ErrOptions)
	case o.MaxBucket < 2:
		return fmt.Errorf("%w: max bucket %d < 2", ErrOptions, o.MaxBucket)
	case o.Rounds < 1:
		return fmt.Errorf("%w: rounds %d < 1", ErrOptions, o.Rounds)
	}
	return nil
}

// dedupOptions are the batch options with the same meaning: a pipeline run
// and dedup.Run with these give the same verdicts.
func (o *Options) dedupOptions() dedup.Options {
	return dedup.Options{
		Method: o.Method, Profile: o.Profile, K: o.K, KShort: o.KShort, ShortTokens: o.ShortTokens,
		Threshold: o.Threshold, Shingle: o.Shingle, Perms: o.Perms, Bands: o.Bands, Rows: o.Rows,
	}
}

// DedupOptions returns the dedup.Options that make dedup.Run decide as this
// pipeline does (outputs and input options left to the caller).
func (o *Options) DedupOptions() dedup.Options { return o.dedupOptions() }

// ruleConfig is what the workers need to rebuild the rule: plain fields, so
// that Beam can serialise the DoFns that hold it.
type ruleConfig struct {
	Method, Profile             string
	K, KShort, ShortTokens      int
	Threshold                   float64
	Shingle, Perms, Bands, Rows int
}

func (o *Options) ruleConfig() ruleConfig {
	return ruleConfig{Method: o.Method, Profile: o.Profile, K: o.K, KShort: o.KShort, ShortTokens: o.ShortTokens,
		Threshold: o.Threshold, Shingle: o.Shingle, Perms: o.Perms, Bands: o.Bands, Rows: o.Rows}
}

func (c ruleConfig) options() dedup.Options {
	return dedup.Options{Method: c.Method, Profile: c.Profile, K: c.K, KShort: c.KShort, ShortTokens: c.ShortTokens,
		Threshold: c.Threshold, Shingle: c.Shingle, Perms: c.Perms, Bands: c.Bands, Rows: c.Rows}
}

func (c ruleConfig) rule() (*dedup.Rule, error) { return dedup.NewRule(c.options()) }
