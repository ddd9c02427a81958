package pipeline

import (
	"errors"
	"fmt"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/rule"
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
	DefaultSplitBytes   = 64 << 20 // bytes of an uncompressed JSONL or lines file per read range
	DefaultKeyPartBytes = 1 << 20  // bytes of input per partition of the candidate keys
	DefaultRounds       = 3        // large-star/small-star rounds before the residual union-find
	DefaultHoldBytes    = 64 << 20 // encoded features of a star's leaves held for the pairs among them
	DefaultMaxChecks    = 1 << 24  // leaf pairs a star tests before it keeps its leaves' links unfiltered or unverified
	DefaultMaxResidual  = 1 << 22  // label pairs the residual union-find takes on one worker
	DefaultMaxComponent = 1 << 18  // documents of one component decided on one worker
	// DefaultDirectComponent is the most documents of a candidate component
	// decided without verified stars.
	DefaultDirectComponent = 1 << 12
	// DefaultWaveBytes is the input per wave of the decision (Options.Waves).
	DefaultWaveBytes = 256 << 20
	// MaxWaves is the most waves of the decision by default.
	MaxWaves = 16
)

// Options configures Dedup. The zero value means the defaults, written on each
// field. The rule's options have the meaning of rule.Options' fields of the
// same name; the rest are the pipeline's own.
type Options struct {
	Inputs []string // files or globs the registered filesystems know (local paths, gs://...)

	Output     string // kept documents: the original JSONL lines, in input order
	Duplicates string // one dedup.Duplicate object per removed document
	Clusters   string // one dedup.Cluster object per kept document with duplicates

	Method      string  // rule.MethodMinHash (default, rule.DefaultMethod) or rule.MethodSimHash
	Profile     string  // features profile (default rule.DefaultProfile)
	K, KShort   int     // Hamming distances (defaults rule.DefaultK, rule.DefaultKShort; negative means 0)
	ShortTokens int     // default rule.DefaultShortTokens
	Threshold   float64 // Jaccard threshold (default rule.DefaultThreshold)
	Shingle     int     // shingle width in tokens (default rule.DefaultShingle)
	Perms       int     // MinHash permutations (default rule.DefaultPerms)
	Bands, Rows int     // LSH shape (default: rule.Options.LSHShape)

	IDField, TextField string // JSON fields (defaults "id", "text")
	Format             string // corpus format: auto (default), jsonl, text, lines, warc
	SkipBad            bool   // skip malformed lines (counted as bad_inputs) instead of failing

	// SplitBytes is the size of the byte ranges an uncompressed JSONL or
	// lines file, or a gzip'd WARC archive (cut at gzip member boundaries),
	// is read in, one range per worker (default DefaultSplitBytes); other
	// compressed files and whole text files are read whole.
	SplitBytes int64
	// KeyPartBytes is the input per partition of the candidate keys (default
	// DefaultKeyPartBytes): one worker sorts a partition's keys, about 25
	// entries of 16 bytes per document in KeyPartBytes of input.
	KeyPartBytes int64
	// HoldBytes bounds the encoded features of a star's leaves one worker
	// holds to verify the pairs among them (default DefaultHoldBytes); past
	// it, or past MaxChecks leaf pairs, the star's leaves are linked to its
	// centre unverified (see doc.go: the verdicts stay exact, the component
	// grows).
	HoldBytes int64
	// MaxChecks bounds the leaf pairs of one star (its failing leaves
	// times its leaves) tested with the prefilter at the centre's
	// partition, and then with the exact check at verification (default
	// DefaultMaxChecks): past it, the star keeps every leaf's link to its
	// centre, unfiltered or unverified (the verdicts stay exact, the
	// component grows).
	MaxChecks int64
	// Rounds is the number of large-star/small-star rounds (default
	// DefaultRounds); the labels they leave apart are joined by a union-find
	// of at most MaxResidual label pairs on one worker (default
	// DefaultMaxResidual), past which the run fails and asks for more
	// rounds.
	Rounds      int
	MaxResidual int
	// MaxComponent is the most documents of one component of verified pairs
	// decided on one worker (default DefaultMaxComponent); a larger
	// component fails the run, naming it.
	MaxComponent int
	// DirectComponent is the most documents of a component of the candidate
	// graph (MethodMinHash) decided as a whole, its documents' features
	// sent to it once, without verifying its stars (default
	// DefaultDirectComponent; 1 verifies every star). The documents of a
	// larger one go through verified stars (see direct.go).
	DirectComponent int
	// Waves is the number of parts the components are decided in, one
	// after the other, each grouping the data of its components only
	// once the wave before it is decided (see Decide): the same verdicts,
	// and on a runner that holds a shuffle in memory (prism) a fraction of
	// the largest shuffle in flight at once. Default: one wave per
	// DefaultWaveBytes of input, at most MaxWaves.
	Waves int
	// Parts leaves each output as one file per read range (PATH-00000-of-00012,
	// in input order) instead of concatenating them into PATH on one worker.
	Parts bool
	// CountShuffle counts the encoded bytes of every element entering a
	// GroupByKey or CoGroupByKey in the metrics shuffle_bytes and
	// shuffle_bytes_STAGE (it encodes every element once more).
	CountShuffle bool
}

// EnsureDefaults fills in zero fields.
func (o *Options) EnsureDefaults() {
	d := o.ruleConfig().options()
	d.EnsureDefaults()
	o.Method, o.Profile, o.K, o.KShort, o.ShortTokens = d.Method, d.Profile, d.K, d.KShort, d.ShortTokens
	o.Threshold, o.Shingle, o.Perms = d.Threshold, d.Shingle, d.Perms
	if o.Method == rule.MethodMinHash {
		o.Bands, o.Rows = d.LSHShape()
	}
	if o.Format == "" {
		o.Format = "auto"
	}
	if o.SplitBytes == 0 {
		o.SplitBytes = DefaultSplitBytes
	}
	if o.KeyPartBytes == 0 {
		o.KeyPartBytes = DefaultKeyPartBytes
	}
	if o.Rounds == 0 {
		o.Rounds = DefaultRounds
	}
	if o.HoldBytes == 0 {
		o.HoldBytes = DefaultHoldBytes
	}
	if o.MaxChecks == 0 {
		o.MaxChecks = DefaultMaxChecks
	}
	if o.MaxResidual == 0 {
		o.MaxResidual = DefaultMaxResidual
	}
	if o.MaxComponent == 0 {
		o.MaxComponent = DefaultMaxComponent
	}
	if o.DirectComponent == 0 {
		o.DirectComponent = min(DefaultDirectComponent, o.MaxComponent)
	}
}

// Validate reports the first invalid option, wrapping ErrOptions (or
// rule.ErrOptions for the rule's).
func (o *Options) Validate() error {
	d := o.ruleConfig().options()
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
	case o.SplitBytes < 1 || o.KeyPartBytes < 1:
		return fmt.Errorf("%w: split bytes %d and key part bytes %d must be positive", ErrOptions, o.SplitBytes, o.KeyPartBytes)
	case o.Rounds < 0:
		return fmt.Errorf("%w: rounds %d < 0", ErrOptions, o.Rounds)
	case o.HoldBytes < 0 || o.MaxChecks < 0:
		return fmt.Errorf("%w: hold bytes %d and max checks %d must not be negative", ErrOptions, o.HoldBytes, o.MaxChecks)
	case o.MaxResidual < 1:
		return fmt.Errorf("%w: max residual %d < 1", ErrOptions, o.MaxResidual)
	case o.MaxComponent < 1:
		return fmt.Errorf("%w: max component %d < 1", ErrOptions, o.MaxComponent)
	case o.Waves < 0:
		return fmt.Errorf("%w: waves %d < 0", ErrOptions, o.Waves)
	case o.DirectComponent < 1 || o.DirectComponent > o.MaxComponent:
		return fmt.Errorf("%w: direct component %d must be in [1, max component %d]", ErrOptions, o.DirectComponent, o.MaxComponent)
	}
	return nil
}

// DedupOptions returns the dedup.Options that make dedup.Run decide as this
// pipeline does (outputs and input options left to the caller): a pipeline
// run and dedup.Run with these give the same verdicts.
func (o *Options) DedupOptions() dedup.Options {
	return dedup.Options{Options: o.ruleConfig().options()}
}

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

func (c ruleConfig) options() rule.Options {
	return rule.Options{Method: c.Method, Profile: c.Profile, K: c.K, KShort: c.KShort, ShortTokens: c.ShortTokens,
		Threshold: c.Threshold, Shingle: c.Shingle, Perms: c.Perms, Bands: c.Bands, Rows: c.Rows}
}

func (c ruleConfig) rule() (*rule.Rule, error) { return rule.NewRule(c.options()) }
