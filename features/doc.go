// Package features turns text into the weighted features a SimHash fingerprint is
// built from, and builds the fingerprint.
//
//	p, err := features.Lookup("default")
//	if err != nil { ... }
//	r := p.Fingerprint(text) // r.Fingerprint is a simhash.Fingerprint
//	if r.Empty { ... }       // no features: the fingerprint is 0
//
// The pipeline is a chain of small stages, each usable alone:
//
//	Clean      NFKC (full-width folding), lower case, HTML tags/comments/script/style
//	           removed, entities decoded, whitespace and control characters
//	           collapsed, invalid UTF-8 replaced by U+FFFD
//	Tokenizer  Words (Unicode words), NGrams (character n-grams), or a segmenter
//	           (the zh profiles use gse and tag parts of speech)
//	filters    stopwords, minimum length, part-of-speech weights (0 drops a token)
//	weights    term frequency (raw, logarithmic or binary), a cap on repeats of
//	           one feature (seed 000 caps at 5), TF-IDF with an IDF table
//	           (unknown terms get the table's average IDF, as in seed 004), and
//	           optionally only the top N features by weight (as yanyiwu/simhash
//	           keeps cppjieba's top keywords)
//	builder    simhash.Builder: Charikar's weighted bit sums
//
// # Profiles
//
// A Profile bundles these choices under a name. Lookup finds one by name and
// Names lists them. Fingerprints of a named profile are pinned by golden vectors
// in the tests: a release must not change them silently.
//
//	name       what it is for
//	default    any text: Han-heavy text (at least 20% of its letters are Han
//	           characters) goes through zh-words (zh-ngrams if zh-words is not
//	           linked in), everything else through en-words
//	en-words   space-separated scripts: Unicode words, English stopwords removed,
//	           term frequency capped at 5 repeats; Han/kana characters are one
//	           token each
//	shingles   word 3-shingles (hashes of three consecutive words), term
//	           frequency; sensitive to word order, good for boilerplate-heavy text
//	ngrams     character 5-grams of the cleaned text (spaces included), each
//	           distinct gram weighted 1; needs no word boundaries, robust to typos
//	zh-words   Chinese: gse segmentation with part-of-speech weights, Chinese
//	           stopwords, TF-IDF with the IDF table shipped with gse (see zh*.go)
//	zh-ngrams  Chinese without a dictionary: Han character bigrams (see zh*.go)
//	leonsim    bit-for-bit the Python simhash package (1e0ng/leonsim) with its
//	           defaults, to keep fingerprints already stored by it
//
// Profile.WithBits picks 32, 64 or 128 bits; Profile.WithIDF weights by TF-IDF
// with a table learned from the user's corpus by IDFBuilder.
//
// # Tokens
//
// Words are maximal runs of letters, combining marks and digits (Unicode
// categories L, M, N). An apostrophe between two letters stays inside the word
// ("don't" is one token; Clean folds U+2019 to '). The underscore separates
// words, so snake_case identifiers give their parts. Han, Hiragana and Katakana
// characters are one token each, since those scripts do not separate words
// with spaces; the zh profiles segment Chinese properly.
//
// # Fast path
//
// Profile.Fingerprint allocates nothing per token: a per-goroutine scratch
// (sync.Pool) holds the cleaned text, the tokens (substrings of it) and an
// open-addressing table of feature hashes and counts; only distinct features are
// fed to the builder, in first-occurrence order (so float sums, and with them
// the fingerprints, are deterministic). For the Words tokenizer with the default
// cleanup, text that needs nothing beyond ASCII and Latin-1 lower-casing (no
// markup, no letters NFKC would change) is tokenized straight from the input
// in one pass (fastwords.go); a fuzz test checks it gives the tokens of the
// staged path. Profile.Features is the slow, explaining path with the feature
// texts; both give the same fingerprint.
//
// # IDF
//
// NewIDF wraps a term table; ReadIDF and IDF.WriteTo use a text format with a
// "neardup-idf 1 docs=N" header and one "term<TAB>idf" line per term.
// IDFBuilder learns a table from a corpus with the smoothed
// idf = ln((1+N)/(1+df)) + 1. Terms a table does not hold get its average IDF
// (seed 004).
//
// # Compatibility
//
// The leonsim profile reproduces the Python simhash package
// (github.com/1e0ng/simhash) bit for bit; testdata/leonsim_ref.py is the
// reference the golden vectors come from. LeonsimFingerprint builds from a
// feature list as its Simhash(features) does.
//
// Profiles are immutable and safe for concurrent use.
package features
