package dedup

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/measure"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/rule"
)

// Summary reports a run.
type Summary struct {
	Docs  int   `json:"docs"`  // documents read
	Bytes int64 `json:"bytes"` // text bytes read (decoded, uncompressed)
	Kept  int   `json:"kept"`
	// Removed = ExactDuplicates + NearDuplicates + IndexDuplicates.
	Removed         int `json:"removed"`
	ExactDuplicates int `json:"exact_duplicates"` // removed with the same word sequence as their kept document
	NearDuplicates  int `json:"near_duplicates"`
	IndexDuplicates int `json:"index_duplicates"` // duplicates of a document kept by an earlier run (Options.Index)
	Clusters        int `json:"clusters"`         // kept documents that others duplicate (components of two or more under ClusterComponents)
	Empty           int `json:"empty"`            // documents without words or features
	BadInputs       int `json:"bad_inputs"`       // skipped lines and files
	// SkippedRecords are the WARC records that are not pages (requests,
	// metadata, images, redirects, warcinfo): counted, not read as text.
	SkippedRecords int64 `json:"skipped_records,omitempty"`

	// Candidates are the candidate pairs of the SimHash stage; with
	// rule.MethodMinHash under keep-first, the pairs of a document and a kept
	// member of one of its band buckets (bands.go): pairs with removed
	// documents are never formed.
	Candidates int64 `json:"candidates"`
	Skipped    int64 `json:"skipped"`  // candidates not verified: already decided (greedy: a removed partner, or the document matched already; components: already in one cluster)
	Verified   int64 `json:"verified"` // candidates that passed verification
	Rejected   int64 `json:"rejected"` // candidates that failed it: the exact check, after reading the verification data
	// BandBuckets are the band keys three or more documents share (under
	// rule.MethodMinHash and keep-first), BandMemberships their members summed,
	// and BandPairs the distinct pairs of documents that share a key held by
	// those two only (and pairs of exact copies): what the candidate stage
	// holds in memory (bands.go).
	BandBuckets     int64 `json:"band_buckets,omitempty"`
	BandMemberships int64 `json:"band_memberships,omitempty"`
	BandPairs       int64 `json:"band_pairs,omitempty"`
	// Prefiltered are candidates the prefilter rejected (rule/prefilter.go)
	// without reading their verification data: not verified, not rejected.
	Prefiltered int64 `json:"prefiltered"`

	// SketchModulus is 1: the sets are exact (older versions sampled them
	// past the budget, MOD_m; kept-set files may still hold such sets).
	SketchModulus int `json:"sketch_modulus"`
	// SketchDiskBytes are the bytes of shingle sets that went to the
	// temporary file past Options.SketchBudget (at most, of the first pass's
	// and of the members' sets read again).
	SketchDiskBytes int64 `json:"sketch_disk_bytes,omitempty"`
	// Reread is the documents whose shingle sets were read again from the
	// input after the candidate stage, the first pass's having passed
	// Options.SketchDisk (members.go); 0 when the first pass's served.
	Reread    int64 `json:"reread,omitempty"`
	IndexSize int   `json:"index_size,omitempty"`

	ReadSeconds      float64  `json:"read_seconds"`
	CandidateSeconds float64  `json:"candidate_seconds"`
	OutputSeconds    float64  `json:"output_seconds"`
	Seconds          float64  `json:"seconds"`
	MBPerSecond      float64  `json:"mb_per_second"` // Bytes / Seconds, in 10^6 bytes
	Settings         Settings `json:"settings"`
}

// Settings are the options that shaped the result, after defaults.
type Settings struct {
	Method    string  `json:"method"`
	Profile   string  `json:"profile,omitempty"`
	K         int     `json:"k,omitempty"`
	KShort    int     `json:"k_short,omitempty"`
	Short     int     `json:"short_tokens,omitempty"`
	Verify    string  `json:"verify"`
	Threshold float64 `json:"threshold"`
	Shingle   int     `json:"shingle"`
	Bands     int     `json:"bands,omitempty"`
	Rows      int     `json:"rows,omitempty"`
	Keep      string  `json:"keep"`
	KeepField string  `json:"keep_field,omitempty"`
	KeepOrder string  `json:"keep_order,omitempty"`
	Cluster   string  `json:"cluster"`
	Index     string  `json:"index,omitempty"`
	Workers   int     `json:"workers"`
}

// runner is one Run's state.
type runner struct {
	opt   Options
	d     *docs
	stats readStats
	start time.Time
	stage time.Time

	lastProgress time.Time       // when Progress was last called
	onlyFiles    bool            // every document is a whole file (Text format): its id is its path
	firstLine    string          // where the first JSONL (or Lines) document was read, "" before one
	firstFile    string          // the first whole-file (Text) document, "" before one
	firstRow     string          // where the first Parquet row was read, "" before one
	schema       *parquet.Schema // Output from Parquet: the first file's schema, which every other must have
	schemaFirst  string          // the file it came from
	schemaOf     string          // the last Parquet file whose schema was checked

	seen       hashSet            // hashes of the ids, for the duplicate-id check
	pos        positions          // where each document was read, for the duplicate-id error
	exactFirst docTable           // token sequence hash -> first document
	exactMore  map[uint64][]int32 // later twins with the same tokens and another fingerprint
	exactPairs []uint64           // candidate pairs between such twins (rule.PackPair)
	df         map[uint32]int32   // cosine: document frequency of token hashes

	bands *bandCollector // rule.MethodMinHash under ClusterGreedy: the band keys of the leads
	sets  *sketchStore   // rule.VerifyJaccard: every document's shingle set; nil once past SketchDisk (rereadOK)

	// The documents the candidate stage verifies (members.go): their
	// prefilters and, when the first pass's sets were dropped, their sets
	// read again from the input.
	inputs     []string
	copt       corpus.Options
	rereadOK   bool // the first pass's sets may be dropped past SketchDisk
	keepFP     bool // the fingerprint column is kept (not all zeros)
	keepLength bool // the length column is kept
	members    *memberIndex
	memberPre  []rule.Prefilter // by member rank
	memberSets *sketchStore
	leadOf     []int32      // under a keep policy: the lead in priority order of each group of exact copies
	keys       *sketchStore // rule.MethodMinHash with an index: every document's band keys, two words each
	keyBuf     []uint32
	setMu      sync.Mutex // guards setErr
	setErr     error      // the first error reading a set back (feat)
	uf         *index.UnionFind
	cand       rule.Counts
	vectors    []measure.Vector

	rule *rule.Rule

	// Decisions.
	keeper   []int32          // keeper[i]: i when kept, the kept document i duplicates, -1 for a stored one
	kept     rule.KeptSet     // incremental mode: the documents kept by earlier runs
	stored   []rule.KeptMatch // incremental mode: the stored document i duplicates, when storedOK[i]
	storedOK []bool
	scores   []float64 // Annotate: the Jaccard of each removed document with its kept one; NaN for none
	sum      Summary
}

func (r *runner) log() *slog.Logger {
	if r.opt.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.opt.Logger
}

func (r *runner) progress(p Progress) {
	if r.opt.Progress == nil {
		return
	}
	now := time.Now()
	if !p.Done && now.Sub(r.lastProgress) < r.opt.ProgressInterval {
		return
	}
	r.lastProgress = now
	p.Elapsed = now.Sub(r.stage)
	r.opt.Progress(p)
}

// Run deduplicates the documents of inputs (files, directories, "-" for
// Options.Stdin) and writes the outputs the options ask for. It returns the
// summary of the run. On error, including ctx being cancelled, no output file
// is left in place (earlier versions of the files are untouched); an output
// that is a device, a FIFO or standard output may have received part of the
// run's output.
func Run(ctx context.Context, inputs []string, opt Options) (Summary, error) {
	opt.EnsureDefaults()
	if opt.Workers == 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if err := opt.Validate(); err != nil {
		return Summary{}, err
	}
	if len(inputs) == 0 {
		return Summary{}, fmt.Errorf("%w: no input", ErrOptions)
	}
	if opt.idSpill == 0 {
		opt.idSpill = idBudget
	}
	r := &runner{opt: opt, d: &docs{ids: newIDStore(opt.TempDir, opt.idSpill)}, start: time.Now(), onlyFiles: true}
	defer func() { r.d.ids.close() }()
	if opt.Verify == rule.VerifyCosine {
		r.df = map[uint32]int32{}
	}
	if opt.Method == rule.MethodMinHash {
		r.opt.Bands, r.opt.Rows = r.opt.LSHShape()
	}
	rl, err := rule.NewRule(r.opt.Options)
	if err != nil {
		return Summary{}, err // validated above: not reached
	}
	r.rule = rl
	var lsh *minhash.LSH
	if opt.Method == rule.MethodMinHash {
		if opt.Cluster == ClusterGreedy {
			// Buckets of band keys (bands.go), linear in the keys.
			r.bands = newBandCollector(opt.TempDir, opt.bandSpill)
			defer r.bands.close()
		} else {
			lsh = minhash.NewLSH(r.opt.Bands, r.opt.Rows)
		}
	}

	if opt.Verify == rule.VerifyJaccard {
		r.sets = newSketchStore(opt.TempDir, opt.SketchBudget)
		defer func() { r.sets.close() }()
	}
	if opt.Method == rule.MethodMinHash && (opt.Index != "" || opt.OnKept != nil) {
		// Matching the kept set of earlier runs and adding to it (or
		// handing the kept documents on) need each document's band keys,
		// which the rule's candidates do not keep.
		r.keys = newSketchStore(opt.TempDir, defaultBandSpill)
		defer func() { r.keys.close() }()
	}

	// The kept set of earlier runs is loaded before the input is read: a bad
	// index fails fast, and its sketches count against the budget.
	if opt.Index != "" {
		if err := r.loadKept(); err != nil {
			return Summary{}, err
		}
		defer func() {
			// After a Save this only lets go of the set; without one it
			// leaves the set on disk as it was loaded.
			if err := opt.KeptFiles.Close(r.kept); err != nil {
				r.log().Warn("closing the index", "path", opt.Index, "err", err)
			}
		}()
	}

	// Outputs are created first so that a bad path fails before the work.
	outs, err := r.createOutputs()
	if err != nil {
		return Summary{}, err
	}
	defer outs.abort()

	// Pass 1: fingerprints. Standard input is spooled when the output pass
	// must read it again.
	copt := opt.Corpus
	if opt.Keep == KeepField {
		copt.Columns = []string{opt.KeepField} // Parquet: read the column too
	}
	var bad atomic.Int64
	var skipped skips
	userBad := copt.OnBad
	copt.OnBad = func(err error) {
		bad.Add(1)
		skipped.add(err)
		r.log().Warn("skipped bad input", "err", err)
		if userBad != nil {
			userBad(err)
		}
	}
	copt.Stdin = opt.Stdin
	if copt.Stdin == nil {
		copt.Stdin = eofReader{}
	}
	var spool *os.File
	if opt.OutputDir != "" && usesStdin(inputs) {
		return Summary{}, fmt.Errorf("%w: an output directory holds a shard per input file: standard input has no name", ErrOptions)
	}
	if opt.Output != "" && usesStdin(inputs) {
		spool, err = os.CreateTemp(opt.TempDir, "neardup-stdin-*")
		if err != nil {
			return Summary{}, fmt.Errorf("dedup: spooling stdin: %w", err)
		}
		defer func() { spool.Close(); os.Remove(spool.Name()) }()
		copt.Stdin = io.TeeReader(copt.Stdin, spool)
	}
	rd, err := corpus.Open(inputs, copt)
	if err != nil {
		return Summary{}, err
	}
	r.inputs, r.copt = inputs, copt
	r.rereadOK = r.canReread(inputs)
	// What the rule, the keep policy and a kept set need of every document;
	// the rest is not kept (at 10^8 documents 8 bytes a document is 800 MB).
	r.keepFP = opt.Method == rule.MethodSimHash || opt.Index != "" || opt.OnKept != nil
	r.keepLength = opt.Keep == KeepLongest || opt.Index != "" || opt.OnKept != nil
	r.stage = time.Now()
	err = r.fingerprintPass(ctx, rd, lsh)
	rd.Close()
	r.sum.SkippedRecords = rd.SkippedRecords()
	if err != nil {
		return Summary{}, err
	}
	r.sum.ReadSeconds = time.Since(r.stage).Seconds()
	r.sum.BadInputs = int(bad.Load())
	if r.d.len() == 0 {
		// Empty outputs and success would hide that nothing was read; an
		// empty standard input alone is an empty batch.
		if why := skipped.reason(); why != "" {
			return Summary{}, fmt.Errorf("%w: %s", ErrNoDocuments, why)
		}
		if named := slices.DeleteFunc(slices.Clone(inputs), func(p string) bool { return p == "-" }); len(named) > 0 {
			return Summary{}, fmt.Errorf("%w: no document in %s (empty files, or directories without files)",
				ErrNoDocuments, strings.Join(named, ", "))
		}
	}
	r.seen.release()
	r.exactFirst.release()
	r.pos, r.exactMore = positions{}, nil // no longer needed
	r.log().Info("read", "docs", r.d.len(), "bytes", r.stats.bytes, "seconds", r.sum.ReadSeconds)

	// Candidates, verification and clusters.
	r.stage = time.Now()
	if err := r.candidates(ctx, lsh); err != nil {
		return Summary{}, err
	}
	if err := r.decide(ctx); err != nil {
		return Summary{}, err
	}
	r.sum.CandidateSeconds = time.Since(r.stage).Seconds()

	// Outputs.
	r.stage = time.Now()
	if err := r.writeReports(outs); err != nil {
		return Summary{}, err
	}
	if r.kept != nil {
		r.sum.IndexSize = r.kept.Len() + r.sum.Kept - r.countKeptInIndex()
	}
	if opt.UpdateIndex {
		// Into the in-memory set now, while the shingle sets are here; the
		// files are saved after the outputs.
		if err := r.addKept(); err != nil {
			return Summary{}, err
		}
	}
	if opt.OnKept != nil {
		if err := r.eachKept(opt.OnKept); err != nil {
			return Summary{}, err
		}
	}
	if opt.Annotate {
		r.annotateScores() // while the shingle sets are here
	}
	// The shingle sets were for verification, the reports and the kept set;
	// the output pass needs only the decisions.
	if err := r.setError(); err != nil {
		return Summary{}, err
	}
	if r.sets != nil {
		r.sum.SketchDiskBytes = r.sets.onDisk()
		r.sets.close()
	}
	if r.memberSets != nil {
		r.sum.SketchDiskBytes = max(r.sum.SketchDiskBytes, r.memberSets.onDisk())
		r.memberSets.close()
	}
	if r.keys != nil {
		r.keys.close()
	}
	r.vectors = nil
	if opt.Output != "" && r.onlyFiles && !usesStdin(inputs) && !opt.Annotate {
		// Whole files: the output is their paths, which are their ids; no
		// need to read them again.
		if err := r.writeKeptIDs(outs.output); err != nil {
			return Summary{}, err
		}
	} else if opt.Output != "" || opt.OutputDir != "" {
		copt.OnBad = nil
		copt.Stdin = opt.Stdin
		if spool != nil {
			if _, err := spool.Seek(0, io.SeekStart); err != nil {
				return Summary{}, err
			}
			copt.Stdin = spool
		}
		if err := r.outputPass(ctx, inputs, copt, outs); err != nil {
			return Summary{}, err
		}
	}
	r.sum.OutputSeconds = time.Since(r.stage).Seconds()
	r.finishSummary()
	if err := outs.writeSummary(r.sum); err != nil {
		return Summary{}, err
	}
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	if err := outs.commit(); err != nil {
		return Summary{}, err
	}
	// The index is saved last, after the outputs are in place: a failure here
	// leaves the old snapshot, and rerunning the batch gives the same result.
	if opt.UpdateIndex {
		if err := r.saveKept(); err != nil {
			return r.sum, err
		}
	}
	return r.sum, nil
}

// idBudget is the bytes of ids held in memory before they go to a
// temporary file (ids.go).
const idBudget = 64 << 20

// id returns document i's id; an error reading it back is recorded as a
// set's is (failSet), and Run reports it.
func (r *runner) id(i int) string { return r.d.ids.must(i, r.failSet) }

// failSet records the first error reading a shingle set (or an id) back.
func (r *runner) failSet(err error) {
	r.setMu.Lock()
	defer r.setMu.Unlock()
	if r.setErr == nil {
		r.setErr = err
	}
}

// setError returns the first error reading a shingle set back.
func (r *runner) setError() error {
	r.setMu.Lock()
	defer r.setMu.Unlock()
	return r.setErr
}

func usesStdin(inputs []string) bool {
	for _, p := range inputs {
		if p == "-" {
			return true
		}
	}
	return false
}

// eofReader is an empty standard input.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

func (r *runner) finishSummary() {
	s := &r.sum
	o := r.opt
	s.Docs = r.d.len()
	s.Bytes = r.stats.bytes
	s.Empty = r.d.empty
	s.Candidates = r.cand.Candidates.Load()
	s.Skipped = r.cand.Skipped.Load()
	s.Verified = r.cand.Verified.Load()
	s.Rejected = r.cand.Rejected.Load()
	s.Prefiltered = r.cand.Prefiltered.Load()
	s.SketchModulus = 1
	s.Seconds = time.Since(r.start).Seconds()
	if s.Seconds > 0 {
		s.MBPerSecond = float64(s.Bytes) / 1e6 / s.Seconds
	}
	long, short := r.rule.K()
	st := Settings{Method: o.Method, Verify: o.Verify, Threshold: o.Threshold, Shingle: o.Shingle,
		Keep: o.Keep, KeepField: o.KeepField, Workers: o.Workers, Index: o.Index, Cluster: o.Cluster}
	if o.Keep == KeepField {
		st.KeepOrder = o.KeepOrder
	}
	if o.Method == rule.MethodSimHash {
		st.Profile, st.K, st.KShort, st.Short = o.Profile, long, short, o.ShortTokens
	} else {
		st.Bands, st.Rows = r.opt.Bands, r.opt.Rows
	}
	s.Settings = st
}

// countKeptInIndex counts kept documents whose id the index already holds
// (they replace their stored fingerprint rather than add one).
func (r *runner) countKeptInIndex() int {
	n := 0
	for i := range r.d.len() {
		if !r.removed(i) && r.kept.Contains(r.id(i)) {
			n++
		}
	}
	return n
}
