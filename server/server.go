package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/keptset"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// Defaults of Options.
const (
	DefaultMaxBodyBytes  = 4 << 20
	DefaultMaxBatch      = 1000
	DefaultMaxDuplicates = 100
	DefaultSearchLimit   = 10
)

// Options configures a Server. The zero value means the defaults, written on
// each field; EnsureDefaults fills them in and Validate checks them.
type Options struct {
	// Dedup are the decision's options (package rule), as for 'neardup
	// dedup' (zero value: its defaults), applied by the keep-first rule in
	// arrival order. Jaccard (or no) verification applies online, not
	// cosine.
	Dedup rule.Options
	// MaxBodyBytes bounds a request body (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxBatch bounds the documents of one batch request (default DefaultMaxBatch).
	MaxBatch int
	// MaxDuplicates bounds the duplicates reported for one added document
	// (default DefaultMaxDuplicates).
	MaxDuplicates int
	// Token, when set, is the bearer token that writes and deletes need
	// (and reads too with TokenReads).
	Token      string
	TokenReads bool
	// Snapshot, when set, is the path of an index snapshot ('neardup index
	// build --out') whose ids and fingerprints Load gives the kept set, ahead
	// of the store's documents in priority, as fingerprint-only documents
	// (keptset.Options.FingerprintOnly): they have no verification data, so a document
	// matches one when the fingerprints are within the rule's k and the
	// match is reported unverified. The snapshot is only read: it is loaded
	// again at every start. A delete of one of its documents is recorded in
	// the store (SnapshotDeletes) and skipped at the next start while the
	// snapshot gives that id the same fingerprint. An id both in the
	// snapshot and in the store stops Load with an error wrapping ErrExists.
	// Not with MethodMinHash (no fingerprints) nor over a SharedStore.
	Snapshot string
	// KeptDir holds the kept set's parts (package keptset) for an embedded
	// store, beside the store ('neardup serve' uses DATA/keptset); "" keeps
	// them in memory, rebuilt from the store at every start.
	KeptDir string
	// Logger receives request and start-up logs; nil means none.
	Logger *slog.Logger
	// Registry receives the service's metrics and is served at /metrics;
	// nil means no metrics.
	Registry *prometheus.Registry
}

// EnsureDefaults replaces zero fields by their defaults.
func (o *Options) EnsureDefaults() {
	if o.Snapshot != "" && o.Dedup.Method == "" {
		// A snapshot holds SimHash fingerprints: its documents match on them
		// under the simhash method only (another is refused by Validate).
		o.Dedup.Method = rule.MethodSimHash
	}
	o.Dedup.EnsureDefaults()
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxDuplicates == 0 {
		o.MaxDuplicates = DefaultMaxDuplicates
	}
}

// Validate reports the first invalid option.
func (o *Options) Validate() error {
	if err := o.Dedup.Validate(); err != nil {
		return err
	}
	if o.Dedup.Verify == rule.VerifyCosine {
		return fmt.Errorf("%w: the service verifies with jaccard or none (cosine learns its IDF from a whole corpus)", rule.ErrOptions)
	}
	if o.Snapshot != "" && o.Dedup.Method == rule.MethodMinHash {
		return fmt.Errorf("%w: a snapshot holds SimHash fingerprints, which method %s does not use", rule.ErrOptions, rule.MethodMinHash)
	}
	if o.MaxBodyBytes < 1 || o.MaxBatch < 1 || o.MaxDuplicates < 1 {
		return fmt.Errorf("%w: body, batch and duplicate limits must be positive", rule.ErrOptions)
	}
	return nil
}

// Settings names the decision settings stored features depend on: a store
// made under other settings must not be loaded (BoltOptions.Settings).
func Settings(o rule.Options) string {
	o.EnsureDefaults()
	if o.Method == rule.MethodMinHash {
		return fmt.Sprintf("method=minhash perms=%d bands=%d rows=%d threshold=%g verify=%s shingle=%d sketch=%d minhash=%d", o.Perms, o.Bands, o.Rows, o.Threshold, o.Verify, o.Shingle, rule.SketchVersion, rule.MinHashVersion)
	}
	return fmt.Sprintf("profile=%s verify=%s shingle=%d sketch=%d", o.Profile, o.Verify, o.Shingle, rule.SketchVersion)
}

// Server is the online near-duplicate service: a kept set (keptset.Set) in
// front of an embedded Store, or a SharedStore. Every decision is the batch
// dedup's (the same rule.Rule), taking documents in the order the service
// accepts them. It is safe for concurrent use.
//
// Order: the write lock wmu is held while a document is added to the kept
// set and given its sequence number, and while its store write is queued,
// so the store receives writes in sequence order; the wait for the commit
// happens outside the lock, letting concurrent writes share a commit.
type Server struct {
	opt     Options
	rule    *rule.Rule
	big     *keptset.Set // the kept set over an embedded store (scaled.go); nil over a SharedStore
	set     Set          // scaledSet{big}, or the SharedStore
	shared  SharedStore  // nil over an unshared Store
	profile *features.Profile
	store   store.Store
	log     *slog.Logger
	met     *metrics
	pool    sync.Pool // *extractor
	start   time.Time
	ready   atomic.Bool

	wmu sync.Mutex // serialises writes: kept set changes, seq, store queueing
	seq uint64     // the next document's sequence number; guarded by wmu
}

// New returns a service over st. It is not ready until Load has returned.
func New(st store.Store, opt Options) (*Server, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	rl, err := rule.NewRule(opt.Dedup)
	if err != nil {
		return nil, err
	}
	var (
		set    Set // the kept set's, once Load has opened it
		shared SharedStore
	)
	if sh, ok := st.(SharedStore); ok {
		if opt.Snapshot != "" {
			return nil, fmt.Errorf("%w: a snapshot is loaded into the server's own index, which a shared store replaces", rule.ErrOptions)
		}
		shared, set = sh, sh
	}
	prof, err := features.Lookup(opt.Dedup.Profile)
	if err != nil {
		return nil, err
	}
	if _, err := rule.NewExtractor(opt.Dedup); err != nil {
		return nil, err
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opt: opt, rule: rl, set: set, shared: shared, profile: prof, store: st, log: log,
		start: time.Now()}
	s.pool.New = func() any {
		e, _ := rule.NewExtractor(opt.Dedup) // checked above
		return &extractor{e: e}
	}
	s.met = newMetrics(opt.Registry, s)
	if o, ok := st.(commitObserver); ok {
		o.ObserveCommits(s.observeCommit)
	}
	return s, nil
}

// Load opens the kept set over the store (its parts, then the documents
// stored after them), with the snapshot's documents (Options.Snapshot) ahead
// of the store's, and makes the service ready. It logs how long it took.
// Over a SharedStore it calls Sync (redisstore.Store checks the index's
// format and loads nothing).
func (s *Server) Load(ctx context.Context) error {
	t0 := time.Now()
	if s.shared != nil {
		if err := s.shared.Sync(ctx); err != nil {
			return err
		}
		s.ready.Store(true)
		n, _ := s.shared.Len(ctx)
		s.log.Info("shared store ready", "documents", n, "seconds", time.Since(t0).Seconds())
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	snap, err := s.readSnapshot(ctx)
	if err != nil {
		return err
	}
	return s.loadScaled(ctx, snap)
}

// readSnapshot returns the snapshot's documents (Options.Snapshot; none
// without one) but those deleted while it was loaded (SnapshotDeletes), in
// the snapshot's order (ascending fingerprints). An id the store holds too
// is an error naming it.
func (s *Server) readSnapshot(ctx context.Context) (keptset.FingerprintDocs, error) {
	if s.opt.Snapshot == "" {
		return keptset.FingerprintDocs{}, nil
	}
	t0 := time.Now()
	ids, fps, err := index.ReadItemsFile(s.opt.Snapshot)
	if err != nil {
		return keptset.FingerprintDocs{}, fmt.Errorf("server: snapshot: %w", err)
	}
	skipped := 0
	if sd, ok := s.store.(store.SnapshotDeletes); ok {
		deleted := map[string]uint64{}
		err := sd.LoadSnapshotDeletes(ctx, func(id string, fp uint64) error {
			deleted[id] = fp
			return nil
		})
		if err != nil {
			return keptset.FingerprintDocs{}, fmt.Errorf("server: loading the snapshot's deletes: %w", err)
		}
		if len(deleted) > 0 {
			j := 0
			for i, id := range ids {
				if fp, ok := deleted[id]; ok && fp == fps[i] {
					continue
				}
				ids[j], fps[j] = id, fps[i]
				j++
			}
			skipped = len(ids) - j
			ids, fps = ids[:j], fps[:j]
		}
	}
	for _, id := range ids {
		held, err := s.storeHas(ctx, id)
		if err != nil {
			return keptset.FingerprintDocs{}, fmt.Errorf("server: snapshot: %w", err)
		}
		if held {
			return keptset.FingerprintDocs{}, fmt.Errorf("%w: id %q is both in the snapshot %s and in the store: rebuild the snapshot without it, or start without --snapshot and delete it from the store",
				store.ErrExists, id, s.opt.Snapshot)
		}
	}
	s.log.Info("snapshot read", "path", s.opt.Snapshot, "documents", len(ids), "deleted", skipped,
		"seconds", time.Since(t0).Seconds())
	return keptset.FingerprintDocs{IDs: ids, FPs: fps}, nil
}

// Ready reports whether Load has completed.
func (s *Server) Ready() bool { return s.ready.Load() }

// CheckReady reports why the service cannot serve: not loaded yet, its
// shared store does not answer, or its store cannot take writes.
func (s *Server) CheckReady(ctx context.Context) error {
	if !s.Ready() {
		return ErrNotReady
	}
	if s.shared != nil {
		return s.shared.Ping(ctx)
	}
	if h, ok := s.store.(storeHealth); ok {
		return h.Healthy()
	}
	return nil
}

// storeHealth is a store that can be unable to take writes for a while (a
// PebbleStore after a failed WAL sync, until it has reopened): the service
// is then not ready, and leaves the load balancer.
type storeHealth interface {
	Healthy() error
}

// commitObserver is a store that reports each commit (each WAL fsync of a
// PebbleStore, each group commit of a BoltStore) for the metrics.
type commitObserver interface {
	ObserveCommits(f func(ops int, err error))
}

// Len returns the number of stored documents (ErrNotReady before Load has
// opened the kept set of an embedded store).
func (s *Server) Len(ctx context.Context) (int, error) {
	if s.shared == nil && !s.Ready() {
		return 0, ErrNotReady
	}
	return s.set.Len(ctx)
}

// Close closes the kept set and the store. Call it after the HTTP server
// has shut down.
func (s *Server) Close() error {
	s.ready.Store(false)
	var err error
	if s.big != nil {
		// The delta is written as a part: the next start replays nothing.
		err = s.big.Close()
	}
	return errors.Join(err, s.store.Close())
}

// extractor is an Extractor with a Features to extract into whose slices
// (about 2.5 KB: signature, band keys, shingle set) it reuses from one
// search to the next.
type extractor struct {
	e *rule.Extractor
	f rule.Features
}

// extract returns text's features, in slices of their own.
func (s *Server) extract(text string) rule.Features {
	x := s.pool.Get().(*extractor)
	f := x.e.Extract(text)
	s.pool.Put(x)
	return f
}

// Modes of Add.
const (
	ModeAdd      = "add"        // store, and report the near-duplicates stored before
	ModeCheck    = "check"      // report only
	ModeAddIfNew = "add_if_new" // store only when no near-duplicate is stored
)

// Doc is a document submitted to Add.
type Doc struct {
	ID   string
	Text string
	Meta json.RawMessage
	Mode string
}

// Result is the verdict on one submitted document.
type Result struct {
	ID     string
	FP     uint64
	Stored bool
	// ExactOnly is set for a text without features (rule.Rule.ExactOnly):
	// it matches exact copies only.
	ExactOnly  bool
	Duplicates []rule.KeptMatch
}

// Add decides on d under its mode and, when the mode says so, stores it
// durably before returning. On a store failure d is taken out of the index
// again and the error wraps ErrStore.
func (s *Server) Add(ctx context.Context, d Doc) (Result, error) {
	res, wait, err := s.begin(ctx, d)
	if err != nil {
		return res, err
	}
	return s.finish(d.ID, res, wait)
}

// AddBatch decides on docs in order, as Add would one at a time, but queues
// all their writes before waiting, so that they share group commits.
func (s *Server) AddBatch(ctx context.Context, docs []Doc) ([]Result, []error) {
	res := make([]Result, len(docs))
	errs := make([]error, len(docs))
	waits := make([]func() error, len(docs))
	if b, ok := s.shared.(batchAdder); ok && s.Ready() {
		// Runs of add_if_new go to the shared store together, in order.
		for i := 0; i < len(docs); {
			j := i
			for j < len(docs) && docs[j].Mode == ModeAddIfNew {
				j++
			}
			if j > i {
				s.addIfNewBatch(ctx, b, docs[i:j], res[i:j], errs[i:j])
				i = j
				continue
			}
			res[i], waits[i], errs[i] = s.begin(ctx, docs[i])
			i++
		}
	} else {
		for i, d := range docs {
			res[i], waits[i], errs[i] = s.begin(ctx, d)
		}
	}
	for i, d := range docs {
		if errs[i] == nil {
			res[i], errs[i] = s.finish(d.ID, res[i], waits[i])
		}
	}
	return res, errs
}

// begin makes the decision on d and, when d is to be stored, adds it to the
// kept set and queues its write; wait (nil when nothing is written)
// returns the write's outcome.
func (s *Server) begin(ctx context.Context, d Doc) (res Result, wait func() error, err error) {
	if !s.Ready() {
		return Result{}, nil, ErrNotReady
	}
	f := s.extract(d.Text)
	res = Result{ID: d.ID, FP: f.FP, ExactOnly: s.rule.ExactOnly(&f)}
	if d.Mode == ModeCheck {
		res.Duplicates, err = s.set.MatchAll(ctx, &f, s.opt.MaxDuplicates)
		return res, nil, err
	}
	if s.shared != nil {
		res, err = s.addShared(ctx, d, f, res)
		return res, nil, err
	}
	return s.beginScaled(ctx, d, f, res)
}

// addShared decides on d and stores it in the shared store, which settles
// concurrent additions across servers (redisstore: store/redisstore/REDIS.md)
// and makes them durable before returning. Mode add reports the documents stored
// before its match: one stored by another server between the match and the
// write may be missing from the report (it is stored either way).
func (s *Server) addShared(ctx context.Context, d Doc, f rule.Features, res Result) (Result, error) {
	rec := store.Record{ID: d.ID, Features: f, Meta: d.Meta}
	if d.Mode == ModeAddIfNew {
		m, dup, err := s.shared.AddIfNew(ctx, rec)
		if err != nil {
			return res, s.sharedError(d.ID, err)
		}
		if dup {
			res.Duplicates = []rule.KeptMatch{m}
			return res, nil
		}
	} else {
		ms, err := s.shared.MatchAll(ctx, &f, s.opt.MaxDuplicates)
		if err == nil {
			err = s.shared.Add(ctx, rec)
		}
		if err != nil {
			return res, s.sharedError(d.ID, err)
		}
		res.Duplicates = ms
	}
	res.Stored = true
	return res, nil
}

// batchAdder is a SharedStore that decides several add_if_new documents
// in order, as one at a time, sharing round trips (redisstore.Store).
type batchAdder interface {
	AddIfNewBatch(ctx context.Context, rs []store.Record) ([]rule.KeptMatch, []bool, []error)
}

// addIfNewBatch decides on docs (all add_if_new) through b.
func (s *Server) addIfNewBatch(ctx context.Context, b batchAdder, docs []Doc, res []Result, errs []error) {
	recs := make([]store.Record, len(docs))
	for i, d := range docs {
		f := s.extract(d.Text)
		recs[i] = store.Record{ID: d.ID, Features: f, Meta: d.Meta}
		res[i] = Result{ID: d.ID, FP: f.FP, ExactOnly: s.rule.ExactOnly(&f)}
	}
	ms, dups, es := b.AddIfNewBatch(ctx, recs)
	for i := range docs {
		switch {
		case es[i] != nil:
			errs[i] = s.sharedError(docs[i].ID, es[i])
		case dups[i]:
			res[i].Duplicates = []rule.KeptMatch{ms[i]}
		default:
			res[i].Stored = true
		}
	}
}

func (s *Server) sharedError(id string, err error) error {
	if errors.Is(err, store.ErrUnavailable) {
		s.met.storeErrors.Inc()
		s.log.Error("shared store failed", "id", id, "err", err)
	}
	return err
}

// finish waits for the write begin queued (whose wait takes the document
// out of the set again on failure).
func (s *Server) finish(id string, res Result, wait func() error) (Result, error) {
	if wait == nil {
		return res, nil
	}
	if err := wait(); err != nil {
		s.met.storeErrors.Inc()
		s.log.Error("store write failed", "id", id, "err", err)
		if !errors.Is(err, store.ErrStore) && !errors.Is(err, store.ErrClosed) {
			err = fmt.Errorf("%w: %w", store.ErrStore, err)
		}
		return res, err
	}
	res.Stored = true
	return res, nil
}

// queuePut hands rec to the store in sequence order (called with wmu held)
// and returns the wait for its result. A store without a queue of its own is
// called synchronously, under the lock.
func (s *Server) queuePut(ctx context.Context, rec store.Record) func() error {
	if q, ok := s.store.(queuer); ok {
		return q.Queue(ctx, store.Op{Put: &rec})
	}
	err := s.store.Put(ctx, rec)
	return func() error { return err }
}

// queueDelete hands the delete of id to the store (wmu held), as queuePut.
func (s *Server) queueDelete(ctx context.Context, id string) func() error {
	if q, ok := s.store.(queuer); ok {
		return q.Queue(ctx, store.Op{Delete: id})
	}
	err := s.store.Delete(ctx, id)
	return func() error { return err }
}

// queuer is a store that can queue a write and be waited on later.
type queuer interface {
	Queue(ctx context.Context, op store.Op) func() error
}

// Get returns the stored record of id.
func (s *Server) Get(ctx context.Context, id string) (store.Record, error) {
	if !s.Ready() {
		return store.Record{}, ErrNotReady
	}
	if s.shared != nil {
		return s.shared.Get(ctx, id)
	}
	if fp, ok := s.big.FingerprintOnly(id); ok {
		// A snapshot document: the store knows nothing of it.
		return store.Record{ID: id, Features: rule.Features{FP: fp, FingerprintOnly: true}}, nil
	}
	return s.store.Get(ctx, id)
}

// FingerprintOnly returns the number of fingerprint-only documents (those of
// the snapshot) in the index.
func (s *Server) FingerprintOnly() int {
	if !s.Ready() || s.big == nil { // s.big is set before ready
		return 0
	}
	return s.big.FingerprintOnlyLen()
}

// Delete removes id from the store, then from the index.
func (s *Server) Delete(ctx context.Context, id string) error {
	if !s.Ready() {
		return ErrNotReady
	}
	if s.shared != nil {
		ok, err := s.shared.Remove(ctx, id)
		if err == nil && !ok {
			err = fmt.Errorf("%w: %q", store.ErrNotFound, id)
		}
		return s.sharedError(id, err)
	}
	if fp, ok := s.big.FingerprintOnly(id); ok {
		return s.deleteSnapshotDoc(ctx, id, fp)
	}
	return s.deleteScaled(ctx, id)
}

// deleteSnapshotDoc records in the store that the snapshot document id is
// deleted, so that the next start skips it, then removes it from the kept
// set. A store that cannot record it (not a SnapshotDeletes) only
// loses it until the next start, which the log says.
func (s *Server) deleteSnapshotDoc(ctx context.Context, id string, fp uint64) error {
	sd, ok := s.store.(store.SnapshotDeletes)
	if !ok {
		s.log.Warn("snapshot document deleted until the next start: the store cannot record it", "id", id)
	} else {
		s.wmu.Lock()
		var wait func() error
		if q, ok := s.store.(queuer); ok {
			wait = q.Queue(ctx, store.Op{SnapshotDelete: &store.SnapshotDelete{ID: id, FP: fp}})
		} else {
			err := sd.PutSnapshotDelete(ctx, id, fp)
			wait = func() error { return err }
		}
		s.wmu.Unlock()
		if err := wait(); err != nil {
			s.met.storeErrors.Inc()
			return err
		}
	}
	ok, err := s.big.RemoveFingerprintOnly(id)
	if err == nil && !ok {
		err = fmt.Errorf("%w: %q", store.ErrNotFound, id) // deleted meanwhile
	}
	return err
}

// Search returns the stored documents that text duplicates under the rule,
// in priority order (Result.Duplicates; nothing is stored).
func (s *Server) Search(ctx context.Context, text string, limit int) (Result, error) {
	if !s.Ready() {
		return Result{}, ErrNotReady
	}
	// The features live only as long as the match: extract them into the
	// pooled extractor's buffers.
	x := s.pool.Get().(*extractor)
	x.e.ExtractInto(&x.f, text)
	ms, err := s.set.MatchAll(ctx, &x.f, limit)
	r := Result{FP: x.f.FP, ExactOnly: s.rule.ExactOnly(&x.f), Duplicates: ms}
	if x.f.Tokens <= maxPooledTokens { // else let a huge text's buffers go
		s.pool.Put(x)
	}
	return r, err
}

// maxPooledTokens is the largest text, in tokens, whose grown buffers an
// extractor keeps in the pool: 64K tokens are about 400 KB of text and 256 KB
// of shingle set.
const maxPooledTokens = 1 << 16

// SearchFingerprint returns the stored fingerprints within k bits of fp,
// nearest first: no text, so nothing is verified.
func (s *Server) SearchFingerprint(ctx context.Context, fp uint64, k, limit int) ([]index.Match, error) {
	if !s.Ready() {
		return nil, ErrNotReady
	}
	if s.shared != nil {
		return s.shared.QueryFingerprint(ctx, fp, k, limit)
	}
	return s.searchFingerprintScaled(ctx, fp, k, limit)
}
