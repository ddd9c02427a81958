package index

import "errors"

// Errors returned, usually wrapped with context, by the Index, the planner and
// the snapshot decoder. Test them with errors.Is.
var (
	// ErrDuplicateID is returned by Add and AddBulk when an id is already in
	// the index (use Update to replace a fingerprint) or repeats in a batch.
	ErrDuplicateID = errors.New("index: duplicate id")
	// ErrNotFound is returned by Remove for an id that is not in the index.
	ErrNotFound = errors.New("index: id not found")
	// ErrBadID is returned for an empty id or one longer than MaxIDBytes.
	ErrBadID = errors.New("index: bad id")
	// ErrDistance is returned by Query for a negative k or a k larger than
	// the plan's K (the tables cannot answer it exactly).
	ErrDistance = errors.New("index: distance out of range for the plan")
	// ErrFull is returned when an index would hold more than MaxItems ids
	// (internal ids are 32 bits).
	ErrFull = errors.New("index: too many items")
	// ErrLayout is returned by ParseLayout for an unknown layout name.
	ErrLayout = errors.New("index: unknown layout")
	// ErrOptions is returned by Options.Validate.
	ErrOptions = errors.New("index: invalid options")
	// ErrFormat is returned when a snapshot is not an index snapshot, is
	// truncated, fails a checksum or is otherwise malformed.
	ErrFormat = errors.New("index: malformed snapshot")
	// ErrVersion is returned for a snapshot written by a newer format version.
	ErrVersion = errors.New("index: unsupported snapshot version")
)
