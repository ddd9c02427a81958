package keptset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/rule"
)

// Records reads what verification needs of the stored documents: the store
// that holds them (the service adapts its store engine to it). It is the
// source of truth; a Set holds only what finds candidates.
type Records interface {
	// Record returns the id and features of the live document seq; ok is
	// false when no live document has that seq (it was deleted).
	Record(ctx context.Context, seq uint64) (id string, f rule.Features, ok bool, err error)
	// LoadFrom calls fn for every live document with a seq >= from, in
	// ascending seq order.
	LoadFrom(ctx context.Context, from uint64, fn func(seq uint64, id string, f *rule.Features) error) error
}

// Options configures a Set. The zero value means the defaults.
type Options struct {
	// Dir holds the part files and the manifest; "" keeps the parts in
	// memory (rebuilt from Records at every Open).
	Dir string
	// Settings names the decision settings the keys are made with; parts
	// made with others are rebuilt. Under MethodSimHash the parts record
	// the key scheme and threshold beside it (recordedSettings).
	Settings string
	// FingerprintOnly are documents known by their fingerprints alone,
	// ahead of every stored document in priority, in the order given (an
	// index snapshot's): found by fingerprint distance and decided by the
	// rule on their fingerprints (rule.Features.FingerprintOnly), their
	// matches unverified. They are held in memory, not in the parts: the
	// caller gives them at every Open. MethodSimHash only.
	FingerprintOnly FingerprintDocs
	// DeltaSpan is the number of seqs the mutable delta covers before it is
	// written as a part (default DefaultDeltaSpan).
	DeltaSpan int
	// PartSpan is the most seqs a part made by a rebuild or an import
	// covers (default DefaultPartSpan, at most 1<<24).
	PartSpan int
	// Logger receives what Open rebuilt and why; nil logs nothing.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultDeltaSpan = 1 << 18
	DefaultPartSpan  = 1 << 24
)

func (o *Options) ensureDefaults() {
	if o.DeltaSpan <= 0 {
		o.DeltaSpan = DefaultDeltaSpan
	}
	o.DeltaSpan = min(o.DeltaSpan, maxSpan)
	if o.PartSpan <= 0 {
		o.PartSpan = DefaultPartSpan
	}
	o.PartSpan = min(o.PartSpan, maxSpan)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// A Set is the online kept set at scale, under either method: the
// candidate keys of every kept document (MethodMinHash: its LSH band keys,
// or its token-sequence hash when it has none; MethodSimHash: its
// token-sequence hash and its shingle set's prefix) and its fingerprint,
// in pointer-free tables, and nothing else; the few documents no key can
// find, and the fingerprint-only ones, in an index of fingerprints. A match
// looks the new document's keys up, and reads the few candidates' records
// (Records) to apply the rule: see the package notes.
//
// Documents are identified by seq, their priority; Add takes them in
// ascending seq order. It is safe for concurrent use; the caller orders
// writes (the service decides and adds one document at a time).
type Set struct {
	rule *rule.Rule
	nb   int
	rec  Records
	opt  Options
	// MethodSimHash (keys.go): simhash is set, prefix too under Jaccard
	// verification, and queryK is the rule's largest fingerprint distance.
	simhash, prefix bool
	queryK          int
	// wide finds by fingerprint distance (at queryK) the stored documents
	// no key finds (wideDoc) and the fingerprint-only ones (fpo), by ids
	// of keys.go (storedWideID, fpOnlyWideID); nil under MethodMinHash.
	wide *index.Index
	fpo  fpOnly // the fingerprint-only documents (mu)

	mu      sync.RWMutex
	parts   []*part  // ascending base
	frozen  []*delta // deltas being written as parts, queried meanwhile
	delta   *delta   // documents since the last part
	pending map[uint64]pendingDoc
	pendIDs map[string]int // ids of pending documents, with their counts
	live    int
	next    uint64 // the lowest seq Add accepts
	closed  bool

	bg    sync.WaitGroup // part writers and merges
	bgErr error          // the first part write's error (mu)
	dels  *deleteLog

	// Merges (merge.go); all but stopMerge are guarded by mu.
	merging   bool        // a merge runs
	closing   bool        // Close has begun: no merge starts
	merges    int         // merges done since Open
	mergeErr  error       // a merge failed: none starts again
	stopMerge atomic.Bool // Close asks the running merge to stop

	// Matches since Open, the candidates they read (Stats), and those the
	// prefilter or the fingerprint check dropped before a read.
	matches, examined, prefiltered, fpFiltered atomic.Uint64
}

// newSet returns a set's fields that the rule and the options make.
func newSet(rl *rule.Rule, rec Records, opt Options) *Set {
	opt.Settings = recordedSettings(rl, opt.Settings)
	return &Set{rule: rl, nb: rl.Bands(), rec: rec, opt: opt, simhash: rl.Method() == rule.MethodSimHash,
		prefix: rl.Method() == rule.MethodSimHash && rl.Verification() == rule.VerifyJaccard, queryK: rl.QueryK(),
		pending: map[uint64]pendingDoc{}, pendIDs: map[string]int{}}
}

// pendingDoc is a document added whose store write may not have landed:
// its record is read from here, not Records, until Written or Remove.
type pendingDoc struct {
	id string
	f  rule.Features
}

// ErrClosed is returned after Close.
var ErrClosed = errors.New("keptset: closed")

// Open returns the set of the documents in rec: the parts in opt.Dir
// that are sound and made with opt.Settings, then the documents after
// them read from rec (the tail). A damaged or missing part is rebuilt from
// rec, with a log line saying so.
func Open(ctx context.Context, rl *rule.Rule, rec Records, opt Options) (*Set, error) {
	opt.ensureDefaults()
	if len(opt.FingerprintOnly.IDs) > 0 && rl.Method() != rule.MethodSimHash {
		return nil, errFingerprintOnly
	}
	s := newSet(rl, rec, opt)
	var err error
	if s.fpo, err = newFPOnly(opt.FingerprintOnly); err != nil {
		return nil, err
	}
	s.opt.FingerprintOnly = FingerprintDocs{} // the set keeps its own columns
	from := uint64(0)
	if opt.Dir != "" {
		if from, err = s.loadParts(); err != nil {
			return nil, err
		}
	}
	b := newBuilder(from)
	var keys []uint64
	err = rec.LoadFrom(ctx, from, func(seq uint64, id string, f *rule.Features) error {
		if seq < from {
			return fmt.Errorf("keptset: records out of order (seq %d after %d)", seq, from)
		}
		for seq-b.base >= uint64(opt.PartSpan) {
			end := b.base + uint64(opt.PartSpan)
			if b.docs > 0 {
				if err := s.installBuilt(b, nil); err != nil {
					return err
				}
				end = b.base + uint64(b.span())
			}
			b = newBuilder(end)
		}
		keys = s.rule.CandidateKeys(keys[:0], f)
		pre := prefilterOf(f)
		b.add(seq, id, keys, f.FP, &pre, s.wideDoc(f))
		s.next = seq + 1
		return nil
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	// The tail: a part when large, the delta otherwise.
	if int(b.span()) >= opt.DeltaSpan {
		if err := s.installBuilt(b, nil); err != nil {
			s.Close()
			return nil, err
		}
		b = newBuilder(b.base + uint64(b.span()))
	}
	s.next = max(s.next, from)
	d := newDelta(b.base)
	for i := range b.keys {
		d.builder.keys = append(d.builder.keys, b.keys[i])
		d.builder.slots = append(d.builder.slots, b.slots[i])
	}
	d.builder.fps, d.builder.pre, d.builder.present, d.builder.wide, d.builder.docs = b.fps, b.pre, b.present, b.wide, b.docs
	d.builder.ids, d.builder.idEnd = b.ids, b.idEnd
	for sl, fp := range b.fps {
		if b.has(uint32(sl)) {
			d.indexFP(uint32(sl), fp)
		}
	}
	d.rehash(max(1<<12, 1<<bits.Len(uint(2*len(b.keys)))))
	s.delta = d
	s.live += int(d.docs) + s.fpo.live
	if err := s.indexWide(); err != nil {
		s.Close()
		return nil, err
	}
	if opt.Dir != "" {
		if err := s.writeManifest(); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.mu.Lock()
	s.maybeMergeLocked()
	s.mu.Unlock()
	return s, nil
}

// installBuilt makes b a part: written to the directory (if any) and
// mapped back, or kept in memory. Open and rebuilds call it.
func (s *Set) installBuilt(b *builder, dead func(uint32) bool) error {
	p := b.build(dead)
	if s.opt.Dir != "" {
		var err error
		if p, err = s.writeAndMap(p); err != nil {
			return err
		}
	}
	s.parts = append(s.parts, p)
	s.live += int(p.docs)
	return nil
}

// Len is the number of documents in the set.
func (s *Set) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.live
}

// Next is the lowest seq Add accepts: one past the last document added.
func (s *Set) Next() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.next
}

// Add adds the document seq (>= Next) with id and features f. Until
// Written(seq), its record is read from the set, not from Records.
func (s *Set) Add(seq uint64, id string, f rule.Features) error {
	if f.FingerprintOnly {
		return fmt.Errorf("keptset: document %q: a stored document must have its features (fingerprint-only documents are given to Open)", id)
	}
	var buf [64]uint64
	keys := s.rule.CandidateKeys(buf[:0], &f)
	wide := s.wideDoc(&f)
	f.Sig = nil
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if seq < s.next {
		return fmt.Errorf("keptset: seq %d added after %d", seq, s.next-1)
	}
	if seq-s.delta.base >= maxSpan {
		if err := s.freezeLocked(seq); err != nil {
			return err
		}
	}
	if wide {
		if err := s.wide.Add(storedWideID(seq), f.FP); err != nil {
			return err
		}
	}
	pre := prefilterOf(&f)
	s.delta.add(seq, id, keys, f.FP, &pre, wide)
	s.pending[seq] = pendingDoc{id: id, f: f}
	s.pendIDs[id]++
	s.next = seq + 1
	s.live++
	if int(s.delta.span()) >= s.opt.DeltaSpan {
		return s.freezeLocked(s.next)
	}
	return nil
}

// Written says that the store holds document seq: its record is read from
// Records from now on.
func (s *Set) Written(seq uint64) {
	s.mu.Lock()
	s.unpend(seq)
	s.mu.Unlock()
}

// unpend forgets the pending record of seq (mu held).
func (s *Set) unpend(seq uint64) {
	p, ok := s.pending[seq]
	if !ok {
		return
	}
	delete(s.pending, seq)
	if s.pendIDs[p.id]--; s.pendIDs[p.id] == 0 {
		delete(s.pendIDs, p.id)
	}
}

// Remove removes document seq, reporting whether it was in the set.
func (s *Set) Remove(seq uint64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, ErrClosed
	}
	s.unpend(seq)
	if d := s.deltaOf(seq); d != nil {
		sl := uint32(seq - d.base)
		if !d.has(sl) || d.isDead(sl) {
			return false, nil
		}
		d.kill(sl)
		s.live--
		if d.isWide(sl) {
			return true, s.wide.Remove(storedWideID(seq))
		}
		return true, nil
	}
	p := s.partOf(seq)
	if p == nil {
		return false, nil
	}
	sl := uint32(seq - p.base)
	if !p.has(sl) {
		return false, nil
	}
	p.kill(sl)
	s.live--
	var err error
	if p.isWide(sl) {
		err = s.wide.Remove(storedWideID(seq))
	}
	if s.dels != nil {
		err = errors.Join(err, s.dels.append(seq))
	}
	return true, err
}

func (p *part) kill(s uint32) {
	if p.dead == nil {
		p.dead = make([]uint64, len(p.live))
	}
	p.dead[s/64] |= 1 << (s % 64)
}

// deltaOf returns the delta or frozen delta holding seq's slot.
func (s *Set) deltaOf(seq uint64) *delta {
	if seq >= s.delta.base {
		return s.delta
	}
	for _, d := range s.frozen {
		if seq >= d.base && seq-d.base < uint64(d.span()) {
			return d
		}
	}
	return nil
}

// prefilterOf returns f's prefilter: the extractor's, or, for features
// read back from a record (which does not keep it), one computed from the
// shingle set.
func prefilterOf(f *rule.Features) rule.Prefilter {
	if f.Pre.Known() {
		return f.Pre
	}
	return f.Prefilter()
}

// prefilterLocked returns the prefilter of document seq (into dst when it
// is read from a part's file), nil when its part keeps none (mu held).
func (s *Set) prefilterLocked(seq uint64, dst *rule.Prefilter) (*rule.Prefilter, error) {
	if d := s.deltaOf(seq); d != nil {
		return prefilterAt(d.pre, uint32(seq-d.base)), nil
	}
	if p := s.partOf(seq); p != nil {
		return p.prefilter(uint32(seq-p.base), dst)
	}
	return nil, nil
}

// partOf returns the part holding seq's slot, or nil.
func (s *Set) partOf(seq uint64) *part {
	i, found := slices.BinarySearchFunc(s.parts, seq, func(p *part, seq uint64) int { return cmp.Compare(p.base, seq) })
	if !found {
		i--
	}
	if i < 0 {
		return nil
	}
	if p := s.parts[i]; seq-p.base < uint64(p.span) {
		return p
	}
	return nil
}

// candidates returns dst (empty) with the live seqs of from and above that
// share a key with keys, ascending and each once; parts and deltas wholly
// below from are not looked in.
func (s *Set) candidates(dst []uint64, keys []uint64, from uint64) []uint64 {
	var buf [64]uint32
	for _, p := range s.parts {
		if p.base+uint64(p.span) <= from {
			continue // every document of p is below from
		}
		for _, sl := range p.keys.findAll(buf[:0], keys) {
			if p.has(sl) {
				dst = append(dst, p.base+uint64(sl))
			}
		}
	}
	for _, d := range append(s.frozen[:len(s.frozen):len(s.frozen)], s.delta) {
		if d.base+uint64(d.span()) <= from {
			continue
		}
		for _, k := range keys {
			for _, sl := range d.find(buf[:0], k) {
				if !d.isDead(sl) {
					dst = append(dst, d.base+uint64(sl))
				}
			}
		}
	}
	slices.Sort(dst)
	lo, _ := slices.BinarySearch(dst, from) // a straddling part's or delta's lower seqs
	return slices.Compact(dst[lo:])
}

// Match returns the first document of the set, in priority order, that f
// duplicates under the rule.
func (s *Set) Match(ctx context.Context, f *rule.Features) (rule.KeptMatch, bool, error) {
	m, dup, _, err := s.MatchFrom(ctx, f, 0)
	return m, dup, err
}

// MatchFrom is Match over the documents of seq from and above, and next is
// the lowest seq the set had not been given when it looked up the
// candidates: every document below next that the set then held was
// considered. A writer that adds under its own lock can so match outside
// it, and under it only from next: the verdict is the one a match under the
// lock gives (the keep-first priority is the seq order, so a match below
// next is the first one there is), and the lock is held for the documents
// added meanwhile only, not for the candidates' record reads.
// The fingerprint-only documents, which come before every stored one and
// are never added after Open, are considered when from is 0 only.
func (s *Set) MatchFrom(ctx context.Context, f *rule.Features, from uint64) (m rule.KeptMatch, dup bool, next uint64, err error) {
	ms, next, err := s.matchAll(ctx, f, 1, from)
	if err != nil || len(ms) == 0 {
		return rule.KeptMatch{}, false, next, err
	}
	return ms[0], true, next, nil
}

// MatchAll returns the documents of the set that f duplicates, in priority
// order, at most limit of them when limit > 0. Candidates are read from
// Records in priority order, so a limit of 1 reads only until the first
// match.
func (s *Set) MatchAll(ctx context.Context, f *rule.Features, limit int) ([]rule.KeptMatch, error) {
	ms, _, err := s.matchAll(ctx, f, limit, 0)
	return ms, err
}

// matchAll is MatchAll over the documents of seq from and above (and the
// fingerprint-only documents when from is 0); next is MatchFrom's.
func (s *Set) matchAll(ctx context.Context, f *rule.Features, limit int, from uint64) (_ []rule.KeptMatch, next uint64, _ error) {
	var kb [64]uint64
	keys := s.rule.CandidateKeys(kb[:0], f)
	var cb [64]uint64
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, 0, ErrClosed
	}
	next = s.next
	var (
		cands []uint64
		fpc   []fpoCand
	)
	if s.simhash {
		var err error
		if cands, fpc, err = s.simCandidatesLocked(cb[:0], keys, f, from); err != nil {
			s.mu.RUnlock()
			return nil, next, err
		}
	} else {
		cands = s.candidates(cb[:0], keys, from)
	}
	// The prefilter, before any record is read: candidates whose sets are
	// far below the threshold are dropped here (rule/prefilter.go).
	if f.Pre.Known() {
		kept := cands[:0]
		var buf rule.Prefilter
		for _, seq := range cands {
			pre, err := s.prefilterLocked(seq, &buf)
			if err != nil {
				s.mu.RUnlock()
				return nil, next, err
			}
			if pre != nil && s.rule.PrefilterRejects(pre, &f.Pre) {
				continue
			}
			kept = append(kept, seq)
		}
		s.prefiltered.Add(uint64(len(cands) - len(kept)))
		cands = kept
	}
	// Pending documents' records are copied out under the lock.
	var pend map[uint64]pendingDoc
	for _, seq := range cands {
		if p, ok := s.pending[seq]; ok {
			if pend == nil {
				pend = map[uint64]pendingDoc{}
			}
			pend[seq] = p
		}
	}
	s.mu.RUnlock()
	s.matches.Add(1)
	var ms []rule.KeptMatch
	// The fingerprint-only documents come first in priority, and the rule
	// needs nothing of them but their fingerprints.
	for _, c := range fpc {
		g := rule.Features{FP: c.fp, FingerprintOnly: true}
		if !s.rule.Duplicates(&g, f) {
			continue
		}
		ms = append(ms, s.rule.KeptMatch(c.id, uint64(c.pos), &g, f))
		if limit > 0 && len(ms) >= limit {
			return ms, next, nil
		}
	}
	examined := 0
	defer func() { s.examined.Add(uint64(examined)) }()
	for _, seq := range cands {
		examined++
		var (
			id string
			g  rule.Features
		)
		if p, ok := pend[seq]; ok {
			id, g = p.id, p.f
		} else {
			var ok bool
			var err error
			id, g, ok, err = s.rec.Record(ctx, seq)
			if err != nil {
				return nil, next, fmt.Errorf("keptset: reading candidate %d: %w", seq, err)
			}
			if !ok {
				continue // deleted since the lookup, or before a restart
			}
		}
		if !s.rule.Duplicates(&g, f) {
			continue
		}
		ms = append(ms, s.rule.KeptMatch(id, seq, &g, f))
		if limit > 0 && len(ms) >= limit {
			break
		}
	}
	return ms, next, nil
}

// simCandidatesLocked returns the candidates of f under MethodSimHash (mu
// held): the live seqs of from and above, ascending and each once, and the
// fingerprint-only documents (when from is 0), in priority order. keys are
// f's (rule.Rule.CandidateKeys): its exact key, then its prefix's.
//
//   - The documents that share f's exact key: its exact copies, which the
//     rule accepts whatever their fingerprints.
//   - Those that share a prefix key, less those whose fingerprint is
//     farther from f's than the rule's largest distance (QueryK): every
//     pair the rule accepts but exact copies is within PairK <= QueryK
//     (rule.Rule.Near), so this check, on the fingerprints in memory,
//     never drops one the rule would accept. It is made before the
//     prefilter's read and the record's: the keys of a paragraph that
//     many documents share find many.
//   - The wide documents (wideDoc) within QueryK of f's fingerprint,
//     through the wide index; and when f itself has no prefix (nor is
//     exact-only), every stored document within QueryK, by a scan of the
//     fingerprints (what keys cannot find: a sampled or empty shingle set
//     under Jaccard; under no verification every document is wide).
func (s *Set) simCandidatesLocked(dst []uint64, keys []uint64, f *rule.Features, from uint64) ([]uint64, []fpoCand, error) {
	if len(keys) == 0 {
		return dst, nil, nil
	}
	cands := s.candidates(dst, keys[:1], from)
	n := len(cands)
	if len(keys) > 1 {
		var buf [64]uint64
		dropped := 0
		for _, seq := range s.candidates(buf[:0], keys[1:], from) {
			if _, exact := slices.BinarySearch(cands[:n], seq); exact {
				continue
			}
			if bits.OnesCount64(s.fpLocked(seq)^f.FP) > s.queryK {
				dropped++
				continue
			}
			cands = append(cands, seq)
		}
		s.fpFiltered.Add(uint64(dropped))
	}
	exactOnly := s.rule.ExactOnly(f)
	all := !s.rule.KeyedByPrefix(f) && !exactOnly // every stored document by distance
	if all {
		s.fingerprintLocked(f.FP, s.queryK, func(seq, _ uint64, _ int) {
			if seq >= from {
				cands = append(cands, seq)
			}
		})
	}
	var fpc []fpoCand
	if !exactOnly && s.wide.Len() > 0 {
		hits, err := s.wide.Query(f.FP, s.queryK, 0)
		if err != nil {
			return nil, nil, err
		}
		for _, h := range hits {
			switch kind, x := parseWideID(h.ID); kind {
			case wideStored:
				if !all && x >= from {
					cands = append(cands, x)
				}
			case wideFPOnly:
				if from == 0 && s.fpo.has(uint32(x)) {
					fpc = append(fpc, fpoCand{pos: uint32(x), fp: h.Fingerprint, id: s.fpo.id(uint32(x))})
				}
			}
		}
		slices.SortFunc(fpc, func(a, b fpoCand) int { return cmp.Compare(a.pos, b.pos) })
	}
	if len(cands) > n {
		slices.Sort(cands)
		cands = slices.Compact(cands)
	}
	return cands, fpc, nil
}

// fpLocked returns the fingerprint of the document seq (mu held).
func (s *Set) fpLocked(seq uint64) uint64 {
	if d := s.deltaOf(seq); d != nil {
		if sl := seq - d.base; sl < uint64(len(d.fps)) {
			return d.fps[sl]
		}
		return 0
	}
	if p := s.partOf(seq); p != nil {
		return p.fps[seq-p.base]
	}
	return 0
}

// fingerprintLocked calls fn with the live stored documents whose
// fingerprints are within k bits of fp (mu held): through the block tables
// for k <= 3, by a scan beyond.
func (s *Set) fingerprintLocked(fp uint64, k int, fn func(seq, fp uint64, d int)) {
	for _, p := range s.parts {
		p.fingerprint(fp, k, func(sl uint32, d int) { fn(p.base+uint64(sl), p.fps[sl], d) })
	}
	for _, d := range append(s.frozen[:len(s.frozen):len(s.frozen)], s.delta) {
		d.fingerprint(fp, k, func(sl uint32, dist int) { fn(d.base+uint64(sl), d.fps[sl], dist) })
	}
}

// indexWide puts the wide documents of the parts and the delta, and the
// fingerprint-only documents, in the wide index (Open; under MethodSimHash
// only).
func (s *Set) indexWide() error {
	if !s.simhash {
		return nil
	}
	var (
		ids []string
		fps []uint64
	)
	for pos, fp := range s.fpo.fps {
		if s.fpo.has(uint32(pos)) {
			ids, fps = append(ids, fpOnlyWideID(uint32(pos))), append(fps, fp)
		}
	}
	for _, p := range s.parts {
		for w, bm := range p.wide {
			for ; bm != 0; bm &= bm - 1 {
				if sl := uint32(w*64 + bits.TrailingZeros64(bm)); p.has(sl) {
					ids, fps = append(ids, storedWideID(p.base+uint64(sl))), append(fps, p.fps[sl])
				}
			}
		}
	}
	d := s.delta
	for w, bm := range d.wide {
		for ; bm != 0; bm &= bm - 1 {
			if sl := uint32(w*64 + bits.TrailingZeros64(bm)); d.has(sl) && !d.isDead(sl) {
				ids, fps = append(ids, storedWideID(d.base+uint64(sl))), append(fps, d.fps[sl])
			}
		}
	}
	// The index is planned for the documents it holds, and at least for
	// 2^20 without verification, where every document is wide and the set
	// grows into it (2^16 otherwise: a few documents).
	expected := max(len(ids), 1<<16)
	if !s.prefix {
		expected = max(expected, 1<<20)
	}
	x, err := index.New(index.Options{K: max(s.queryK, 1), ExpectedN: expected})
	if err != nil {
		return fmt.Errorf("keptset: the index of fingerprints: %w", err)
	}
	if err := x.AddBulk(ids, fps); err != nil {
		return fmt.Errorf("keptset: the index of fingerprints: %w", err)
	}
	s.wide = x
	return nil
}

// A Hit is a stored fingerprint within a query's distance.
type Hit struct {
	Seq      uint64 // the position in Options.FingerprintOnly for a fingerprint-only document
	FP       uint64
	Distance int
	Pending  bool // added, not yet Written
	// FingerprintOnly marks a document of Options.FingerprintOnly, whose
	// id is ID (the set keeps no other).
	FingerprintOnly bool
	ID              string
}

// QueryFingerprint returns the live documents whose fingerprints are within
// k bits of fp, nearest first (then in priority order: the fingerprint-only
// documents first), at most limit when limit > 0: through the block tables
// for k <= 3, by a scan beyond (the fingerprint-only documents through the
// wide index up to QueryK).
func (s *Set) QueryFingerprint(fp uint64, k, limit int) ([]Hit, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	var hits []Hit
	if s.fpo.live > 0 {
		if k <= s.wide.K() {
			ms, err := s.wide.Query(fp, k, 0)
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				if kind, x := parseWideID(m.ID); kind == wideFPOnly && s.fpo.has(uint32(x)) {
					hits = append(hits, Hit{Seq: x, FP: m.Fingerprint, Distance: m.Distance, FingerprintOnly: true, ID: s.fpo.id(uint32(x))})
				}
			}
		} else {
			for pos, g := range s.fpo.fps {
				if d := bits.OnesCount64(g ^ fp); d <= k && s.fpo.has(uint32(pos)) {
					hits = append(hits, Hit{Seq: uint64(pos), FP: g, Distance: d, FingerprintOnly: true, ID: s.fpo.id(uint32(pos))})
				}
			}
		}
	}
	s.fingerprintLocked(fp, k, func(seq, g uint64, d int) { hits = append(hits, Hit{Seq: seq, FP: g, Distance: d}) })
	stored := func(h Hit) int { // the fingerprint-only documents come first in priority
		if h.FingerprintOnly {
			return 0
		}
		return 1
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(stored(a), stored(b)), cmp.Compare(a.Seq, b.Seq))
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	if len(s.pending) > 0 {
		for i := range hits {
			if !hits[i].FingerprintOnly {
				_, hits[i].Pending = s.pending[hits[i].Seq]
			}
		}
	}
	return hits, nil
}

// ID returns the id of document seq when the set keeps it: known is false
// when the set does not (seq is in a part of format 1, or no live
// document of the set has it), and the caller asks the store. Parts keep
// their ids in their files, not in memory: a fingerprint search names its
// few hits with a read of the page cache each (two preads), where the
// store's read of the record costs a block of its tables.
func (s *Set) ID(seq uint64) (id string, known bool, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return "", false, ErrClosed
	}
	if d := s.deltaOf(seq); d != nil {
		sl := uint32(seq - d.base)
		if !d.has(sl) || d.isDead(sl) {
			return "", false, nil
		}
		return d.id(sl), true, nil
	}
	p := s.partOf(seq)
	if p == nil || !p.has(uint32(seq-p.base)) {
		return "", false, nil
	}
	id, err = p.id(uint32(seq - p.base))
	if errors.Is(err, errNoIDs) {
		return "", false, nil
	}
	return id, err == nil, err
}

// Stats describes a set's memory.
type Stats struct {
	Docs       int
	Parts      int
	PartBytes  int64 // the parts' tables and columns (mapped)
	DeltaDocs  int
	DeltaBytes int64
	Pending    int
	Merges     int // merges of parts since Open
	// Matches is the matches (Match, MatchFrom, MatchAll) since Open, and
	// Examined the candidates they read and tested against the rule: what
	// a match costs beyond its key lookups, a record read each (LSH
	// buckets that many documents share, such as a boilerplate paragraph's,
	// raise it). Prefiltered is the candidates the prefilter dropped
	// without reading their records (not counted in Examined).
	// FPFiltered is the candidates of prefix keys (MethodSimHash) whose
	// fingerprints were too far for the rule, dropped before the prefilter.
	Matches, Examined, Prefiltered, FPFiltered uint64
	// FingerprintOnly is the fingerprint-only documents (in Docs too), and
	// Wide the documents of the index of fingerprints (the stored ones no
	// key finds, and the fingerprint-only ones; MethodSimHash).
	FingerprintOnly, Wide int
}

// Stats returns the set's figures.
func (s *Set) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{Docs: s.live, Parts: len(s.parts), Pending: len(s.pending), DeltaDocs: int(s.delta.docs),
		DeltaBytes: s.delta.bytes(), Merges: s.merges, Matches: s.matches.Load(), Examined: s.examined.Load(),
		Prefiltered: s.prefiltered.Load(), FPFiltered: s.fpFiltered.Load(), FingerprintOnly: s.fpo.live}
	if s.wide != nil {
		st.Wide = s.wide.Len()
	}
	for _, p := range s.parts {
		st.PartBytes += p.bytes()
	}
	for _, d := range s.frozen {
		st.DeltaDocs += int(d.docs)
		st.DeltaBytes += d.bytes()
	}
	return st
}

// Close writes the delta as a part (so that the next Open replays nothing)
// and releases the parts.
func (s *Set) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	s.stopMerge.Store(true)
	var err error
	if s.delta != nil && s.delta.docs > 0 && s.opt.Dir != "" && len(s.pending) == 0 {
		err = s.freezeLocked(s.next)
	}
	s.mu.Unlock()
	s.bg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	err = errors.Join(err, s.bgErr)
	for _, p := range s.parts {
		err = errors.Join(err, p.close())
	}
	if s.dels != nil {
		err = errors.Join(err, s.dels.close())
	}
	if s.wide != nil {
		err = errors.Join(err, s.wide.Close())
	}
	return err
}

// PendingID reports whether a document added but not yet Written has id.
func (s *Set) PendingID(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.pendIDs[id] > 0
}

// WaitParts waits until the deltas handed to part writers are parts and
// the merges these start are done, and returns the first part write's
// error.
func (s *Set) WaitParts() error {
	s.bg.Wait()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bgErr
}
