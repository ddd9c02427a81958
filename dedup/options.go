package dedup

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/rule"
)

// Errors returned by this package. Errors from reading input name the file and
// line; errors from the other packages are wrapped.
var (
	// ErrOptions is wrapped by Validate's errors: an option is out of range or
	// options contradict each other. An invalid option of the rule's
	// (rule.Options) wraps rule.ErrOptions too.
	ErrOptions = errors.New("dedup: invalid options")
	// ErrDuplicateID is returned when two documents share an id and
	// Options.AllowDuplicateIDs is false.
	ErrDuplicateID = errors.New("dedup: duplicate document id")
	// ErrInputChanged is returned when the output pass, which reads the input a
	// second time to copy kept documents, finds different documents than the
	// first pass did.
	ErrInputChanged = errors.New("dedup: input changed between passes")
	// ErrNoDocuments is returned when the inputs given yield no document
	// (every file skipped, or only empty files and directories); an empty
	// standard input alone is an empty batch, not an error.
	ErrNoDocuments = errors.New("dedup: no documents read")
	// ErrMixedFormats is returned when Output is asked for and the inputs
	// mix JSONL lines with whole text files (Auto format over both kinds of
	// file): the kept file would hold lines and paths at once.
	ErrMixedFormats = errors.New("dedup: inputs mix JSONL and text files")
)

// Report formats.
const (
	ReportJSONL   = "jsonl"
	ReportParquet = "parquet"
)

// Cluster rules: which documents a verified pair removes.
const (
	// ClusterGreedy is the keep-first rule (the default): documents are taken
	// in keep-policy order and one is removed only when it is a verified
	// near-duplicate of a document already kept, which its report names. No
	// removed document is left without a kept near-duplicate.
	ClusterGreedy = "greedy"
	// ClusterComponents removes all but one document of every connected
	// component of verified pairs: a chain A~B~C loses B and C even when C is
	// not a near-duplicate of A.
	ClusterComponents = "components"
)

// Keep policies: the priority order of the keep-first rule, and under
// ClusterComponents which document of a component is kept.
const (
	KeepFirst   = "first"   // the first one read (the default)
	KeepLongest = "longest" // the longest text in bytes; ties go to the first
	KeepField   = "field"   // by the JSON field Options.KeepField, Options.KeepOrder deciding; ties and missing fields go to the first
)

// Defaults of the batch runner's options (the rule's are rule.Default*).
const (
	DefaultSketchBudget = 256 << 20
	DefaultSketchDisk   = 16 << 30
	DefaultInterval     = time.Second
)

// Options configures Run: the rule's options and the batch's. The zero
// value means the defaults; each default is written on its field.
// EnsureDefaults fills them in and Validate checks the result; Run calls
// both.
type Options struct {
	// Options are the rule's: the candidate method and verification, as
	// every runner of the rule takes them (rule.Options).
	rule.Options

	// SketchBudget bounds the bytes of shingle sets held in memory for
	// verification (default 256 MiB): past it they go to a temporary file in
	// TempDir, read back for verification; sets are never sampled.
	SketchBudget int64
	// SketchDisk bounds the bytes of shingle sets the first pass writes to
	// TempDir (default 16 GiB; -1: no bound): past it, under keep-first with
	// MinHash bands and from inputs that can be read again, the first
	// pass's sets are dropped and the sets of the documents the candidate
	// stage compares (about a quarter of them) are read again from the
	// input once the candidates are known. The verdicts are the same; at
	// 10^8 documents of 1.3 KB this keeps the temporary disk to the band
	// keys and those sets, where every set would take 80 GB. Below it (10^7
	// documents of 1.3 KB take 8 GB) the run reads no input twice before
	// its output: the second read costs about a fifth of the first.
	SketchDisk int64

	// Cluster is the rule that turns verified pairs into removals:
	// ClusterGreedy (default) or ClusterComponents.
	Cluster string

	// Keep is the keep policy: KeepFirst (default), KeepLongest or KeepField.
	// Under ClusterGreedy it orders the documents (input order, longest first,
	// or by field, ties in input order), and a document is removed only when
	// it duplicates a document before it in that order that was kept.
	// Setting KeepField implies Keep = KeepField.
	Keep string
	// KeepField is the JSON field (or Parquet column, a dotted path for a
	// nested one) compared by KeepField: numbers compare as numbers (a
	// Parquet timestamp as its integer), anything else as its JSON text.
	KeepField string
	// KeepOrder is "max" (default: keep the largest value) or "min".
	KeepOrder string

	// Input options: format, id and text fields, bad-line handling
	// (corpus.Options; OnBad is set by Run to count and log bad lines).
	Corpus corpus.Options
	// AllowDuplicateIDs lets two documents share an id; otherwise it is an
	// error (outputs name documents by id, so a shared id would be ambiguous).
	AllowDuplicateIDs bool
	// Stdin is read for the input "-" (default: no stdin, "-" is an error).
	Stdin io.Reader
	// TempDir holds the spooled copy of stdin when the output pass needs to
	// read it again (default os.TempDir()).
	TempDir string

	// bandSpill is the memory band keys may hold before they are spilled to
	// files in TempDir (rule.MethodMinHash; default defaultBandSpill). For tests.
	bandSpill int64
	// idSpill is the bytes of ids held in memory before they go to a
	// temporary file in TempDir (default idBudget). For tests.
	idSpill int

	// Output files; each is optional ("" = not written). A regular file (or a
	// new one) is written to a temporary file beside it and renamed into place
	// only when Run succeeds; anything else (a device such as /dev/null, a
	// FIFO, /dev/stdout) is written in place and never replaced. "-" writes
	// to Stdout; at most one output may be "-".
	Output      string // kept documents in the input's format: JSONL lines as read, Parquet rows under the input's schema, or paths/lines for text input
	Duplicates  string // one record per removed document
	Clusters    string // one record per cluster of two or more
	SummaryJSON string // the Summary as JSON
	// OutputDir writes the kept documents as one shard per input file, named
	// as the file is under the directory given as input (a file given by
	// itself keeps its base name), in its format and compression: JSONL
	// (.zst and .gz names compressed so), Lines, or Parquet with the file's
	// schema, codec and key-value metadata. The shards are written under a
	// hidden temporary directory inside OutputDir and renamed into place when
	// Run succeeds. Not with Output, nor for standard input or whole text
	// files.
	OutputDir string
	// Annotate keeps every document in Output or OutputDir and adds to each
	// the fields (JSONL) or nullable columns (Parquet) dup_of (the id of the
	// document kept in its place), jaccard (their similarity, when
	// verified by Jaccard) and cluster (the id of the kept document of its
	// cluster, the document itself when it leads one).
	Annotate bool
	// ReportFormat is the format of Duplicates and Clusters: ReportJSONL
	// (default, one JSON object per line) or ReportParquet (the same fields
	// as columns, zstd-compressed).
	ReportFormat string
	// Stdout receives the output named "-" (default os.Stdout).
	Stdout io.Writer

	// Index is an index snapshot to dedup against (incremental mode), with its
	// kept set beside it (keptfiles.Dir): a document that duplicates a
	// stored one under the rule (verified against the stored shingle sets)
	// is removed in its favour. UpdateIndex adds the kept documents and saves
	// both (atomically) in place; a missing snapshot then starts empty.
	// KeptFiles opens and saves them, and is required with Index: set it to
	// keptfiles.Files{} (this package declares what it needs, KeptFiles and
	// rule.KeptSet, and does not import keptfiles).
	Index       string
	UpdateIndex bool
	KeptFiles   KeptFiles

	// OnKept, when set, is called once the decisions are made with every
	// kept document, in priority order (input order under KeepFirst): its
	// id, its index among the documents read (from 0) and its features as the
	// rule sees them (shingle set and band keys included). An error stops
	// the run. A bulk import of the service ('neardup import') stores them.
	OnKept func(id string, doc int, f rule.Features) error

	// Workers is the number of fingerprinting and verification goroutines
	// (default GOMAXPROCS).
	Workers int
	// Logger receives progress and warnings; nil means none.
	Logger *slog.Logger
	// Progress is called from one goroutine about every ProgressInterval
	// (default 1 s) and once at the end of each stage; nil means none.
	Progress         func(Progress)
	ProgressInterval time.Duration
}

// Progress reports how far a run has got.
type Progress struct {
	Stage     string // "read", "candidates" (Docs counts candidate pairs), "reread" (the members' sets read again: members.go), "output"
	Docs      int64  // documents done in this stage
	Bytes     int64  // text bytes done in this stage
	TotalDocs int64  // documents in this stage when known, else 0
	// Stored is how many stored (possibly compressed) input bytes have been
	// read, TotalStored the input's stored size (0 when unknown, as for
	// standard input): the pair that gives an ETA.
	Stored, TotalStored int64
	Elapsed             time.Duration
	Done                bool // the stage has finished
}

// EnsureDefaults replaces zero fields by their defaults.
func (o *Options) EnsureDefaults() {
	o.Options.EnsureDefaults()
	if o.SketchBudget == 0 {
		o.SketchBudget = DefaultSketchBudget
	}
	if o.SketchDisk == 0 {
		o.SketchDisk = DefaultSketchDisk
	}
	if o.Cluster == "" {
		o.Cluster = ClusterGreedy
	}
	if o.KeepField != "" && o.Keep == "" {
		o.Keep = KeepField
	}
	if o.Keep == "" {
		o.Keep = KeepFirst
	}
	if o.KeepOrder == "" {
		o.KeepOrder = "max"
	}
	if o.ReportFormat == "" {
		o.ReportFormat = ReportJSONL
	}
	if o.ProgressInterval == 0 {
		o.ProgressInterval = DefaultInterval
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
}

// ruleOptionsError is an invalid option of the rule's: it reads as the
// rule's error and wraps both ErrOptions and rule.ErrOptions.
type ruleOptionsError struct{ err error }

func (e ruleOptionsError) Error() string   { return e.err.Error() }
func (e ruleOptionsError) Unwrap() []error { return []error{ErrOptions, e.err} }

// Validate reports the first invalid option, wrapping ErrOptions (and
// rule.ErrOptions for the rule's).
func (o *Options) Validate() error {
	if err := o.Options.Validate(); err != nil {
		return ruleOptionsError{err}
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrOptions, fmt.Sprintf(format, args...))
	}
	if o.SketchBudget < 0 {
		return bad("sketch budget %d < 0", o.SketchBudget)
	}
	if o.SketchDisk < -1 {
		return bad("sketch disk %d < -1", o.SketchDisk)
	}
	switch o.Keep {
	case KeepFirst, KeepLongest:
		if o.KeepField != "" {
			return bad("keep %q with a keep field", o.Keep)
		}
	case KeepField:
		if o.KeepField == "" {
			return bad("keep field needs a field name")
		}
	default:
		return bad("keep %q (want %s, %s or %s)", o.Keep, KeepFirst, KeepLongest, KeepField)
	}
	if o.Cluster != ClusterGreedy && o.Cluster != ClusterComponents {
		return bad("cluster %q (want %s or %s)", o.Cluster, ClusterGreedy, ClusterComponents)
	}
	if o.KeepOrder != "max" && o.KeepOrder != "min" {
		return bad("keep order %q (want max or min)", o.KeepOrder)
	}
	stdouts := 0
	for _, p := range []string{o.Output, o.Duplicates, o.Clusters, o.SummaryJSON} {
		if p == "-" {
			stdouts++
		}
	}
	if stdouts > 1 {
		return bad("%d outputs are \"-\": at most one may go to standard output", stdouts)
	}
	if o.Output != "" && o.OutputDir != "" {
		return bad("output file and output directory: one or the other")
	}
	if o.Annotate && o.Output == "" && o.OutputDir == "" {
		return bad("annotate needs an output file or directory")
	}
	if o.ReportFormat != ReportJSONL && o.ReportFormat != ReportParquet {
		return bad("report format %q (want %s or %s)", o.ReportFormat, ReportJSONL, ReportParquet)
	}
	if o.UpdateIndex && o.Index == "" {
		return bad("update index without an index file")
	}
	if o.Index != "" && o.KeptFiles == nil {
		return bad("an index file needs KeptFiles to read its kept set (keptfiles.Files)")
	}
	if o.Index != "" && o.Verify == rule.VerifyCosine {
		return bad("an index keeps shingle sets: verify with jaccard or none, not cosine (its IDF is learned per run)")
	}
	if o.Workers < 0 {
		return bad("workers %d < 0", o.Workers)
	}
	return nil
}
