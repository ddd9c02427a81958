package keptmem

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/hugepage"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
)

// Set is a set of kept documents that new documents are matched against
// under a rule.Rule, in the order they were added, which is their priority
// under the keep-first rule. Incremental runs of dedup.Run keep one beside
// their index snapshot (Files, FORMAT.md); the online service keeps one in
// memory in front of its store. A new document matched against a Set gets
// the verdict dedup.Run would give it after the same documents in one run.
//
// Candidates. A match must find every kept document the rule accepts, and
// checking few others is what makes it fast:
//
//   - rule.MethodMinHash: the LSH bands are the candidate test, so the candidates
//     are the documents that share a band key with the new one (one table for
//     all bands), plus exact copies.
//   - rule.MethodSimHash with Jaccard verification: a duplicate must pass
//     verification, J(A, B) >= t. Then |A ∩ B| >= t·|A|, so with every set in
//     one global order (hash value order: the sets are sorted hash values)
//     the first |A| - ⌈t·|A|⌉ + 1 hashes of A and of B share at least one
//     value (the prefix filter of Chaudhuri, Ganti and Kaushik, "A Primitive
//     Operator for Similarity Joins", 2006; Bayardo et al., "Scaling Up All
//     Pairs Similarity Search", 2007). Every kept set is indexed by the hashes
//     of its prefix, and a new document probes with its own: a superset of
//     the documents that can pass verification, which rule.Rule.Duplicates then
//     filters exactly (fingerprint distance, then Jaccard). At k = 12-16 this
//     replaces a Hamming query that returns thousands of fingerprints at 1M
//     documents by a few dozen short lists.
//   - Otherwise (no verification, or a shingle set sampled at a modulus
//     because the batch that kept it ran out of memory budget, on either
//     side): the Hamming index at rule.Rule.QueryK.
//
// The Hamming index holds every fingerprint whatever finds the candidates (a
// rule.MethodMinHash document has one when its Extractor computed it, as
// rule.NewExtractor's do): it answers fingerprint queries (Index).
//
// Fingerprint-only documents (AddFingerprints;
// rule.Features.FingerprintOnly) have no shingle set and no token-sequence
// hash, so they are in neither the prefix tables nor the exact table: they
// are "wide" documents, found only through the Hamming index at
// rule.Rule.QueryK and accepted within rule.Rule.PairK (see package rule's
// notes on the decision). Their matches are unverified
// (rule.KeptMatch.Unverified). rule.MethodMinHash, whose rule does not
// read fingerprints, refuses them.
//
// Documents live in a slice in the order they were added (a slot is never
// reused, so slot order is priority order), and the tables hold slots, not
// pointers, which keeps the garbage collector's work small at millions of
// documents.
//
// Set is safe for concurrent use: matches share a read lock, Add and Remove
// take the write lock, and AddIfNew takes one then the other.
type Set struct {
	rule    *rule.Rule
	x       *index.Index // every fingerprint
	minhash bool         // the rule's method is rule.MethodMinHash: candidates by band
	nbands  int          // rule.MethodMinHash: the rule's bands
	prefix  bool         // candidates of exact shingle sets by the prefix filter

	mu     sync.RWMutex      // guards the fields below, and orders x's writes with them
	ids    map[string]uint32 // slot by id
	docs   slots             // by slot, in priority order, removed ones too
	resets int               // times docs was emptied and its slots started again
	exact  postings          // key: the token-sequence hash
	sets   postings          // prefix: the hashes of each set's prefix
	bands  postings          // rule.MethodMinHash: band keys, mixed with their band's number
	counts
}

// counts are the tallies of a set's live documents.
type counts struct {
	live   int
	wide   int   // documents found only through x (not in sets)
	fpOnly int   // fingerprint-only documents (counted in wide too)
	bytes  int64 // sketch bytes held
}

// plus adds o's tallies.
func (c *counts) plus(o counts) {
	c.live += o.live
	c.wide += o.wide
	c.fpOnly += o.fpOnly
	c.bytes += o.bytes
}

// add counts f in (by = 1) or out (by = -1).
func (c *counts) add(k *Set, f *rule.Features, by int) {
	c.live += by
	if f.FingerprintOnly {
		c.fpOnly += by
	}
	if k.wideDoc(f) {
		c.wide += by
	}
	c.bytes += int64(by * 4 * len(f.Sketch.Hashes()))
}

type keptDoc struct {
	live bool // false once removed (first: read with f's first fields)
	f    rule.Features
	id   string
}

// slots holds the documents by slot in chunks of a fixed size, so that
// adding one never copies the others: a slice that doubled would copy every
// document (hundreds of MB at millions) while holding the write lock.
type slots struct {
	chunks [][]keptDoc
	n      int
}

const slotChunkBits = 15 // 32,768 documents per chunk: 5 MB, advised for huge pages

func (s *slots) at(i uint32) *keptDoc {
	return &s.chunks[i>>slotChunkBits][i&(1<<slotChunkBits-1)]
}

// add appends d and returns its slot. The first chunk grows by appending
// up to its full size, so a small set stays small; the others are
// allocated at full size (growing them by appends copied each several
// times, most of a bulk load's time in this function).
func (s *slots) add(d keptDoc) uint32 {
	i := uint32(s.n)
	c := int(i >> slotChunkBits)
	if c == len(s.chunks) {
		var chunk []keptDoc
		if c > 0 {
			chunk = make([]keptDoc, 0, 1<<slotChunkBits)
			hugepage.Advise(chunk)
		}
		s.chunks = append(s.chunks, chunk)
	}
	s.chunks[c] = append(s.chunks[c], d)
	s.n++
	return i
}

// reset empties s, keeping its first chunk's memory.
func (s *slots) reset() {
	if len(s.chunks) > 0 {
		clear(s.chunks[0])
		s.chunks = append(s.chunks[:0], s.chunks[0][:0])
	}
	s.n = 0
}

// errFingerprintOnly is the error of adding a fingerprint-only document under
// rule.MethodMinHash.
var errFingerprintOnly = fmt.Errorf("%w: fingerprint-only documents need method %s (%s has no fingerprints)",
	rule.ErrOptions, rule.MethodSimHash, rule.MethodMinHash)

// New returns an empty set for documents judged by the rule rl, expecting
// about n of them (the tables are sized for that many; they grow beyond).
func New(rl *rule.Rule, n int) (*Set, error) {
	n = max(n, 1)
	k := &Set{rule: rl, ids: map[string]uint32{}, minhash: rl.Method() == rule.MethodMinHash, nbands: rl.Bands(),
		prefix: rl.Method() == rule.MethodSimHash && rl.Verification() == rule.VerifyJaccard}
	k.exact.init(n)
	switch {
	case k.minhash:
		k.bands.init(n * k.nbands)
	case k.prefix:
		k.sets.init(n * 32)
	}
	// Every fingerprint, for fingerprint queries (and the candidates of
	// rule.MethodSimHash's wide documents). Under rule.MethodMinHash
	// documents carry a fingerprint when their extractor computed one
	// (rule.NewExtractor does).
	x, err := index.New(index.Options{K: max(rl.QueryK(), 1), ExpectedN: n})
	if err != nil {
		return nil, fmt.Errorf("keptmem: kept set index: %w", err)
	}
	k.x = x
	return k, nil
}

// Len returns the number of documents in the set.
func (k *Set) Len() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.live
}

// SketchBytes returns the bytes of verification data the set holds.
func (k *Set) SketchBytes() int64 {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.bytes
}

// FingerprintOnlyLen returns the number of fingerprint-only documents in the
// set.
func (k *Set) FingerprintOnlyLen() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.fpOnly
}

// Contains reports whether id is in the set.
func (k *Set) Contains(id string) bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	_, ok := k.ids[id]
	return ok
}

// Get returns the features of id.
func (k *Set) Get(id string) (rule.Features, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	s, ok := k.ids[id]
	if !ok {
		return rule.Features{}, false
	}
	return k.docs.at(s).f, true
}

// Add adds id, last in priority. An id already present is an error wrapping
// index.ErrDuplicateID.
func (k *Set) Add(id string, f rule.Features) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.addLocked(id, f)
}

func (k *Set) addLocked(id string, f rule.Features) error {
	if _, ok := k.ids[id]; ok {
		return fmt.Errorf("%w %q", index.ErrDuplicateID, id)
	}
	if k.docs.n >= math.MaxUint32 {
		return fmt.Errorf("keptmem: kept set is full (%d documents added)", k.docs.n)
	}
	if f.FingerprintOnly && k.minhash {
		return errFingerprintOnly
	}
	if err := k.x.Add(id, f.FP); err != nil {
		return err
	}
	k.insertLocked(id, f)
	return nil
}

// byPrefix reports whether f's candidates are found by the prefix filter:
// an exact shingle set under a rule that verifies with Jaccard.
func (k *Set) byPrefix(f *rule.Features) bool {
	return k.prefix && !f.Sketch.Sampled() && len(f.Sketch.Hashes()) > 0
}

// prefixLen is the length of the prefix of an exact set of n hashes at
// threshold t: n - ⌈t·n⌉ + 1, rounded up (a longer prefix only adds
// candidates) so that floating point cannot shorten it below the bound.
func prefixLen(n int, t float64) int {
	return min(n, max(1, n-int(math.Ceil(t*float64(n)-1e-6))+1))
}

// insertLocked puts id in the tables, last in priority.
func (k *Set) insertLocked(id string, f rule.Features) {
	// The signature made the band keys; the rule needs only those (and the
	// signature is Perms·8 bytes, 1 KiB by default, per document).
	f.Sig = nil
	s := k.docs.add(keptDoc{id: id, f: f, live: true})
	k.ids[id] = s
	k.counts.add(k, &f, 1)
	k.entries(&f, func(t *postings, key uint64) { t.add(key, s) })
}

// entries calls fn with each table entry of f: its token-sequence hash
// (unless fingerprint-only), then its band keys (rule.MethodMinHash) or the
// hashes of its set's prefix (an exact set under Jaccard). Adding, removing
// and sizing a bulk load all go through appendEntries, so they agree on the
// entries.
func (k *Set) entries(f *rule.Features, fn func(t *postings, key uint64)) {
	var buf [64]tableKey
	tabs := k.tables()
	for _, e := range k.appendEntries(buf[:0], f) {
		fn(tabs[e.t], e.key)
	}
}

// A tableKey is a table entry's table (its index in Set.tables) and key.
type tableKey struct {
	t   uint8
	key uint64
}

// appendEntries appends the table entries of f (see entries) to dst.
func (k *Set) appendEntries(dst []tableKey, f *rule.Features) []tableKey {
	if !f.FingerprintOnly {
		dst = append(dst, tableKey{0, f.Exact})
	}
	switch {
	case k.minhash:
		if len(f.Bands) == k.nbands {
			for i, key := range f.Bands {
				dst = append(dst, tableKey{2, rule.BandKey(i, key)})
			}
		}
	case k.byPrefix(f):
		for _, h := range f.Sketch.Hashes()[:prefixLen(len(f.Sketch.Hashes()), k.rule.Threshold())] {
			dst = append(dst, tableKey{1, uint64(h)})
		}
	}
	return dst
}

// wideDoc reports whether the document is found through the Hamming index
// only: rule.MethodSimHash, not in the prefix tables, and not exact-only
// (rule.Rule.ExactOnly: such a document matches exact copies only).
func (k *Set) wideDoc(f *rule.Features) bool {
	return !k.minhash && !k.byPrefix(f) && !k.rule.ExactOnly(f)
}

// AddBulk adds the documents ids[i] with features fs[i], in that order, last
// in priority, through a Loader: the index sorts them at once and the tables
// are rebuilt in one array each, which is what start-up wants (Add merges as
// it goes); give it everything at once rather than in slices. An id already
// present, or twice in ids, is an error wrapping index.ErrDuplicateID, and
// then nothing is added.
func (k *Set) AddBulk(ids []string, fs []rule.Features) error {
	if len(ids) != len(fs) {
		return fmt.Errorf("keptmem: AddBulk: %d ids, %d features", len(ids), len(fs))
	}
	l := k.NewLoader()
	for i, id := range ids {
		if err := l.Add(id, fs[i]); err != nil {
			return err
		}
	}
	return l.Finish()
}

// AddFingerprints adds the fingerprint-only documents ids[i] with
// fingerprints fps[i], in that order, last in priority, as AddBulk does: only
// their fingerprints are known (the ids and fingerprints of an index
// snapshot, say), so they match on fingerprint distance alone and their
// matches are unverified (see Set and rule.Rule). Under rule.MethodMinHash
// it is an error wrapping rule.ErrOptions.
func (k *Set) AddFingerprints(ids []string, fps []uint64) error {
	if len(ids) != len(fps) {
		return fmt.Errorf("keptmem: AddFingerprints: %d ids, %d fingerprints", len(ids), len(fps))
	}
	if k.minhash {
		return errFingerprintOnly
	}
	fs := make([]rule.Features, len(fps))
	for i, fp := range fps {
		fs[i] = rule.Features{FP: fp, FingerprintOnly: true}
	}
	return k.AddBulk(ids, fs)
}

// Remove removes id and reports whether it was there.
func (k *Set) Remove(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.removeLocked(id)
}

func (k *Set) removeLocked(id string) bool {
	s, ok := k.ids[id]
	if !ok {
		return false
	}
	d := k.docs.at(s)
	f := &d.f
	delete(k.ids, id)
	k.counts.add(k, f, -1)
	k.entries(f, func(t *postings, key uint64) { t.remove(key, s) })
	k.x.Remove(id)
	*d = keptDoc{} // the slot stays, empty, so that slots keep their order
	if k.live == 0 {
		// Every table is empty: start the slots again, so that a set used
		// for a while and emptied (a batch's scratch set) does not grow.
		k.docs.reset()
		k.resets++
	}
	return true
}

// Match returns the first document of the set, in priority order, that f
// duplicates under the rule.
func (k *Set) Match(f *rule.Features) (rule.KeptMatch, bool, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	ms, err := k.matchLocked(f, 1)
	if err != nil || len(ms) == 0 {
		return rule.KeptMatch{}, false, err
	}
	return ms[0], true, nil
}

// MatchAll returns the documents of the set that f duplicates, in priority
// order, at most limit of them when limit > 0.
func (k *Set) MatchAll(f *rule.Features, limit int) ([]rule.KeptMatch, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.matchLocked(f, limit)
}

// AddIfNew adds id unless f duplicates a document of the set, atomically:
// of two near-identical documents added at once, exactly one is added. It
// returns the match that kept id out.
//
// The match runs under the read lock, beside other matches: a match found
// then is the answer (the set held it; nothing is added). Otherwise, under
// the write lock, only the documents added since can match (a removal
// cannot make one), and they are the slots from the one the match saw
// first: they are tested one by one, a few dozen under concurrent adds,
// instead of matching the whole set again with every writer waiting.
func (k *Set) AddIfNew(id string, f rule.Features) (rule.KeptMatch, bool, error) {
	k.mu.RLock()
	n0, resets0 := k.docs.n, k.resets
	ms, err := k.matchLocked(&f, 1)
	k.mu.RUnlock()
	if err != nil {
		return rule.KeptMatch{}, false, err
	}
	if len(ms) > 0 {
		return ms[0], true, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.resets != resets0 || k.docs.n-n0 > maxRecheck || k.minhash {
		// Emptied and refilled, many added, or candidates that are not a
		// superset of the rule's matches (LSH bands): match again.
		ms, err = k.matchLocked(&f, 1)
	} else {
		ms = k.matchSinceLocked(&f, uint32(n0))
	}
	if err != nil {
		return rule.KeptMatch{}, false, err
	}
	if len(ms) > 0 {
		return ms[0], true, nil
	}
	return rule.KeptMatch{}, false, k.addLocked(id, f)
}

// maxRecheck is the most documents added during an AddIfNew's match that
// it tests one by one; beyond, it matches the set again.
const maxRecheck = 1024

// matchSinceLocked returns the first live document from slot "from" on that f
// duplicates, testing each with rule.Rule.Duplicates. Under
// rule.MethodSimHash that is the first that matchLocked would return among
// them: its candidates are a superset of what the rule accepts (see Set),
// which Duplicates then filters.
func (k *Set) matchSinceLocked(f *rule.Features, from uint32) []rule.KeptMatch {
	for s := from; s < uint32(k.docs.n); s++ {
		if d := k.docs.at(s); d.live && k.rule.Duplicates(&d.f, f) {
			return []rule.KeptMatch{k.keptMatch(s, f)}
		}
	}
	return nil
}

// keptMatch describes the match of f with the document in slot s.
func (k *Set) keptMatch(s uint32, f *rule.Features) rule.KeptMatch {
	d := k.docs.at(s)
	verified := k.rule.Verified(&d.f, f)
	return rule.KeptMatch{ID: d.id, Seq: uint64(s), Distance: simhash.Distance(d.f.FP, f.FP),
		Score: k.rule.Score(&d.f, f), Exact: verified && d.f.Exact == f.Exact, Unverified: !verified}
}

// matchScratch is a match's working memory, reused between matches.
type matchScratch struct {
	cands []uint32 // candidate slots, with repeats
	seen  []uint32 // open-addressing set of slot+1
	uniq  []uint32 // distinct candidates
	out   []uint32 // distinct candidates that the rule accepts
}

var scratchPool = sync.Pool{New: func() any { return new(matchScratch) }}

// matchLocked gathers the candidates (see Set), keeps the distinct ones
// that rule.Rule.Duplicates accepts and returns them in priority order.
func (k *Set) matchLocked(f *rule.Features, limit int) ([]rule.KeptMatch, error) {
	sc := scratchPool.Get().(*matchScratch)
	defer scratchPool.Put(sc)
	cands, err := k.candidatesLocked(sc.cands[:0], f)
	if err != nil {
		return nil, err
	}
	sc.cands = cands
	// A document is often a candidate through several prefix hashes or
	// bands: test each once (a hash set of the slots), then order the few
	// that pass.
	size := 16
	for size < 2*len(cands) {
		size *= 2
	}
	if cap(sc.seen) < size {
		sc.seen = make([]uint32, size)
	}
	seen := sc.seen[:size]
	clear(seen)
	uniq := sc.uniq[:0]
	for _, s := range cands {
		i := uint32(simhash.Mix64(uint64(s), 0)) & uint32(size-1)
		for seen[i] != 0 && seen[i] != s+1 {
			i = (i + 1) & uint32(size-1)
		}
		if seen[i] == 0 {
			seen[i] = s + 1
			uniq = append(uniq, s)
		}
	}
	sc.uniq = uniq
	// Most candidates fail the fingerprint test, whose fields share a cache
	// line with live: test them all in a short loop, whose misses overlap,
	// and verify the few that pass.
	near := uniq[:0]
	for _, s := range uniq {
		if d := k.docs.at(s); d.live && k.rule.Near(&d.f, f) {
			near = append(near, s)
		}
	}
	out := sc.out[:0]
	for _, s := range near {
		if k.rule.Verify(&k.docs.at(s).f, f) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	sc.out = out
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	var ms []rule.KeptMatch
	if len(out) > 0 {
		ms = make([]rule.KeptMatch, 0, len(out))
	}
	for _, s := range out {
		ms = append(ms, k.keptMatch(s, f))
	}
	return ms, nil
}

// candidatesLocked appends to cands the slots of the documents f may
// duplicate (a slot may come more than once): its exact copies, then the
// documents sharing a prefix hash or a band, or within the rule's k through
// the Hamming index.
func (k *Set) candidatesLocked(cands []uint32, f *rule.Features) ([]uint32, error) {
	cands = k.exact.find(cands, f.Exact)
	switch {
	case k.minhash:
		if len(f.Bands) == k.nbands {
			for b, key := range f.Bands {
				n := len(cands)
				cands = k.bands.find(cands, rule.BandKey(b, key))
				// The table keeps part of the key: keep only real collisions.
				cands = append(cands[:n], slices.DeleteFunc(cands[n:], func(s uint32) bool {
					ks := k.docs.at(s).f.Bands
					return len(ks) != len(f.Bands) || ks[b] != key
				})...)
			}
		}
	case k.byPrefix(f):
		cands = k.sets.findEach(cands, f.Sketch.Hashes()[:prefixLen(len(f.Sketch.Hashes()), k.rule.Threshold())])
		if k.wide > 0 {
			var err error
			if cands, err = k.queryIndex(cands, f, true); err != nil {
				return nil, err
			}
		}
	case !k.rule.ExactOnly(f):
		var err error
		if cands, err = k.queryIndex(cands, f, false); err != nil {
			return nil, err
		}
	}
	return cands, nil
}

// queryIndex appends the slots of the fingerprints within QueryK of f's,
// only those of wide documents when onlyWide is set.
func (k *Set) queryIndex(cands []uint32, f *rule.Features, onlyWide bool) ([]uint32, error) {
	hits, err := k.x.Query(f.FP, k.rule.QueryK(), 0)
	if err != nil {
		return nil, err
	}
	for _, h := range hits {
		if s, ok := k.ids[h.ID]; ok && (!onlyWide || k.wideDoc(&k.docs.at(s).f)) {
			cands = append(cands, s)
		}
	}
	return cands, nil
}

// Index returns the set's fingerprint index (for saving it as a snapshot that
// 'neardup index query' can read). It must not be written to.
func (k *Set) Index() *index.Index { return k.x }
