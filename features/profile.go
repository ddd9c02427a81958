package features

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/neardup/neardup/simhash"
)

// Sentinel errors of package features.
var (
	// ErrUnknownProfile is returned (wrapped, with the valid names) by Lookup
	// for a name no profile is registered under.
	ErrUnknownProfile = errors.New("features: unknown profile")
	// ErrBits is returned for a fingerprint width other than 32, 64 or 128.
	ErrBits = errors.New("features: fingerprint width must be 32, 64 or 128")
	// ErrIDFFormat is returned by ReadIDF for input that is not an IDF table.
	ErrIDFFormat = errors.New("features: malformed IDF table")
)

// TFMode says how the count of a feature in a document becomes its weight.
type TFMode int

const (
	// TFRaw weighs a feature by its count (after the MaxRepeat cap).
	TFRaw TFMode = iota
	// TFLog weighs a feature by 1+ln(count), damping frequent features.
	TFLog
	// TFBinary weighs every distinct feature 1.
	TFBinary
)

// Config is the set of choices a Profile bundles. The zero value is a usable
// configuration: 64 bits, full cleanup, Unicode words, raw term frequency, no
// stopwords, no cap, no IDF.
type Config struct {
	Bits      int          // fingerprint width: 32, 64 or 128; 0 means 64
	Clean     CleanOptions // the cleanup stage; the zero value cleans fully
	Tokenizer Tokenizer    // nil means Words{}
	// Shingle, when 2 or more, makes the features word Shingle-shingles: the
	// Mix64 combination of that many consecutive token hashes. 0 or 1: the
	// tokens themselves are the features.
	Shingle int
	// MinRunes drops tokens shorter than this many runes; 0 keeps all.
	MinRunes int
	// Stopwords drops the tokens it contains; nil drops none.
	Stopwords *StopSet
	// POSWeight, when not nil, multiplies the weight of a token by the weight
	// of its part-of-speech tag (Token.POS); a weight of 0 drops the token (the
	// punctuation tag "w" of seed 000, for example).
	POSWeight func(pos string) float64
	TF        TFMode // how counts become weights; zero means TFRaw
	// MaxRepeat caps how many occurrences of one feature count (seed 000
	// uses 5); 0 means no cap.
	MaxRepeat int
	// IDF, when not nil, multiplies weights by the inverse document frequency
	// of the feature's term (TF-IDF). Shingle features get the mean IDF of
	// their tokens.
	IDF *IDF
	// TopN, when positive, keeps only the N features of highest weight (ties
	// broken by hash), as yanyiwu/simhash keeps cppjieba's top keywords.
	TopN int
}

// EnsureDefaults fills the zero fields of c with their defaults.
func (c *Config) EnsureDefaults() {
	if c.Bits == 0 {
		c.Bits = 64
	}
	if c.Tokenizer == nil {
		c.Tokenizer = Words{}
	}
}

// Validate reports whether c is a valid configuration (after EnsureDefaults).
func (c *Config) Validate() error {
	switch c.Bits {
	case 32, 64, 128:
	default:
		return fmt.Errorf("%w: got %d", ErrBits, c.Bits)
	}
	if c.Shingle < 0 || c.MinRunes < 0 || c.MaxRepeat < 0 || c.TopN < 0 {
		return errors.New("features: negative Shingle, MinRunes, MaxRepeat or TopN")
	}
	if c.TF < TFRaw || c.TF > TFBinary {
		return fmt.Errorf("features: unknown TF mode %d", c.TF)
	}
	return nil
}

// Profile is a named feature pipeline: cleanup, tokenizer, filters, weights
// and fingerprint width. Profiles are immutable and safe for concurrent use;
// WithBits and WithIDF return modified copies. Get one from Lookup or New; the
// zero Profile is New with the zero Config.
type Profile struct {
	name string
	doc  string
	cfg  Config

	// route, when not nil, picks the profile that handles a text (the
	// default profile's auto-detection); the profile's own pipeline is then
	// unused.
	route func(text string) *Profile
	// custom, when not nil, replaces the pipeline entirely (leonsim).
	custom customPipeline
}

// customPipeline is a profile that is not built from Config stages.
type customPipeline interface {
	tokens(p *Profile, text string) []Token
	features(p *Profile, text string) []Feature
	fingerprint(p *Profile, text string) Result
	clean(text string) string
}

// New returns a profile with the given name, description and configuration.
// It is how custom pipelines are built; named profiles come from Lookup.
func New(name, doc string, cfg Config) (*Profile, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Profile{name: name, doc: doc, cfg: cfg}, nil
}

// Name returns the profile's name.
func (p *Profile) Name() string { return p.name }

// Doc returns a one-paragraph description of what the profile is for.
func (p *Profile) Doc() string { return p.doc }

// Bits returns the fingerprint width, 32, 64 or 128.
func (p *Profile) Bits() int {
	if p.cfg.Bits == 0 {
		return 64 // a zero Profile
	}
	return p.cfg.Bits
}

// Config returns a copy of the profile's configuration. For the default
// profile it is the configuration of its non-Han route.
func (p *Profile) Config() Config {
	if p.route != nil {
		return p.route("").cfg
	}
	return p.cfg
}

// WithBits returns a copy of p building fingerprints of n bits: 32, 64 or 128.
func (p *Profile) WithBits(n int) (*Profile, error) {
	switch n {
	case 32, 64, 128:
	default:
		return nil, fmt.Errorf("%w: got %d", ErrBits, n)
	}
	q := *p
	q.cfg.Bits = n
	if p.route != nil {
		q.route = derivedRoute(p.route, func(r *Profile) *Profile {
			d, _ := r.WithBits(n)
			return d
		})
	}
	return &q, nil
}

// WithIDF returns a copy of p weighting features by TF-IDF with table t (nil
// removes IDF weighting). For the default profile the table applies to both
// routes. The leonsim profile ignores it (the Python package has no IDF).
func (p *Profile) WithIDF(t *IDF) *Profile {
	q := *p
	q.cfg.IDF = t
	if p.route != nil {
		q.route = derivedRoute(p.route, func(r *Profile) *Profile { return r.WithIDF(t) })
	}
	return &q
}

// derivedRoute returns a route that sends a text to derive(route(text)),
// deriving each sub-profile once: the route picks among a few profiles.
func derivedRoute(route func(string) *Profile, derive func(*Profile) *Profile) func(string) *Profile {
	var cache sync.Map // *Profile -> its derived *Profile
	return func(text string) *Profile {
		r := route(text)
		if d, ok := cache.Load(r); ok {
			return d.(*Profile)
		}
		d, _ := cache.LoadOrStore(r, derive(r))
		return d.(*Profile)
	}
}

// Clean returns text after the profile's cleanup stage alone.
func (p *Profile) Clean(text string) string {
	if p.route != nil {
		return p.route(text).Clean(text)
	}
	if p.custom != nil {
		return p.custom.clean(text)
	}
	return Clean(text, p.cfg.Clean)
}

// registry holds the named profiles. Profiles are built lazily on first
// Lookup, so that registering one costs nothing (the zh profiles load a
// dictionary).
var registry = struct {
	sync.Mutex
	entries map[string]*regEntry // guarded by Mutex
}{entries: map[string]*regEntry{}}

type regEntry struct {
	doc   string
	build func() (*Profile, error)
	once  sync.Once
	p     *Profile
	err   error
}

// register makes a profile available to Lookup under name. It is called from
// the init functions of the files that define profiles; it panics on a
// duplicate name, a programming error.
func register(name, doc string, build func() (*Profile, error)) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.entries[name]; dup {
		panic("features: profile " + name + " registered twice")
	}
	registry.entries[name] = &regEntry{doc: doc, build: build}
}

// Lookup returns the profile registered under name. An unknown name gives an
// error wrapping ErrUnknownProfile that lists the valid names.
func Lookup(name string) (*Profile, error) {
	registry.Lock()
	e, ok := registry.entries[name]
	registry.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w %q (valid: %s)", ErrUnknownProfile, name, strings.Join(Names(), ", "))
	}
	e.once.Do(func() {
		e.p, e.err = e.build()
		if e.err == nil {
			e.p.name = name
			if e.p.doc == "" {
				e.p.doc = e.doc
			}
		}
	})
	if e.err != nil {
		return nil, fmt.Errorf("features: profile %s: %w", name, e.err)
	}
	return e.p, nil
}

// Names returns the registered profile names, sorted.
func Names() []string {
	registry.Lock()
	defer registry.Unlock()
	names := make([]string, 0, len(registry.entries))
	for n := range registry.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Result is the fingerprint of one text.
type Result struct {
	// Fingerprint is the 64-bit fingerprint; for 128 bits its low 64 bits, for
	// 32 bits the value fits in the low 32 bits.
	Fingerprint simhash.Fingerprint
	// Fingerprint128 is set when Bits is 128.
	Fingerprint128 simhash.Fingerprint128
	Bits           int  // 32, 64 or 128
	Features       int  // number of distinct features used
	Empty          bool // no features: the fingerprint is 0 and callers should warn
}
