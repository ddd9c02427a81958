package webgen

import "errors"

// Errors returned by the package.
var (
	// ErrSmallPool: the corpora gave too few sentences or words to generate from.
	ErrSmallPool = errors.New("webgen: sentence pool too small")
	// ErrLargePool: the sentences exceed the 4 GiB the pool's offsets address.
	ErrLargePool = errors.New("webgen: sentence pool too large")
	// ErrOptions: an option is out of range.
	ErrOptions = errors.New("webgen: invalid options")
	// ErrDuplicates: a line of the duplicates file could not be read.
	ErrDuplicates = errors.New("webgen: malformed duplicates file")
	// ErrCorpus: a line of the generated corpus could not be read.
	ErrCorpus = errors.New("webgen: malformed corpus")
)
