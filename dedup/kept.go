package dedup

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	mathbits "math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/hugepage"
	"github.com/neardup/neardup/simhash"
)

// ErrKeptFormat is wrapped by the errors of ReadKept for a file that is not a
// kept set, is damaged, or was made with other settings.
var ErrKeptFormat = errors.New("dedup: bad kept-set file")

// Kept is a set of kept documents that new documents are matched against
// under a Rule, in the order they were added, which is their priority under
// the keep-first rule. Incremental runs of Run keep one beside their index
// snapshot (FORMAT.md); the online service keeps one in memory in front of
// its store. A new document matched against a Kept gets the verdict Run
// would give it after the same documents in one run.
//
// Candidates. A match must find every kept document the rule accepts, and
// checking few others is what makes it fast:
//
//   - MethodMinHash: the LSH bands are the candidate test, so the candidates
//     are the documents that share a band key with the new one (one table for
//     all bands), plus exact copies.
//   - MethodSimHash with Jaccard verification: a duplicate must pass
//     verification, J(A, B) >= t. Then |A ∩ B| >= t·|A|, so with every set in
//     one global order (hash value order: the sets are sorted hash values)
//     the first |A| - ⌈t·|A|⌉ + 1 hashes of A and of B share at least one
//     value (the prefix filter of Chaudhuri, Ganti and Kaushik, "A Primitive
//     Operator for Similarity Joins", 2006; Bayardo et al., "Scaling Up All
//     Pairs Similarity Search", 2007). Every kept set is indexed by the hashes
//     of its prefix, and a new document probes with its own: a superset of
//     the documents that can pass verification, which Rule.Duplicates then
//     filters exactly (fingerprint distance, then Jaccard). At k = 12 this
//     replaces a Hamming query that returns thousands of fingerprints at 1M
//     documents by a few dozen short lists.
//   - Otherwise (no verification, or a shingle set sampled at a modulus
//     because the batch that kept it ran out of memory budget, on either
//     side): the Hamming index at Rule.QueryK.
//
// The Hamming index holds every fingerprint whatever finds the candidates (a
// MethodMinHash document has one when its Extractor computed it, as
// NewExtractor's do): it answers fingerprint queries (Index).
//
// Fingerprint-only documents (AddFingerprints; Features.FingerprintOnly) have
// no shingle set and no token-sequence hash, so they are in neither the
// prefix tables nor the exact table: they are "wide" documents, found only
// through the Hamming index at Rule.QueryK and accepted within Rule.PairK
// (see the rule's notes in rule.go). Their matches are unverified
// (KeptMatch.Unverified). MethodMinHash, whose rule does not read
// fingerprints, refuses them.
//
// Documents live in a slice in the order they were added (a slot is never
// reused, so slot order is priority order), and the tables hold slots, not
// pointers, which keeps the garbage collector's work small at millions of
// documents.
//
// Kept is safe for concurrent use: matches share a read lock, Add and Remove
// take the write lock, and AddIfNew takes one then the other.
type Kept struct {
	rule   *Rule
	x      *index.Index // MethodSimHash: every fingerprint
	prefix bool         // candidates of exact shingle sets by the prefix filter

	mu     sync.RWMutex      // guards the fields below, and orders x's writes with them
	ids    map[string]uint32 // slot by id
	docs   slots             // by slot, in priority order, removed ones too
	resets int               // times docs was emptied and its slots started again
	exact  postings          // key: the token-sequence hash
	sets   postings          // prefix: the hashes of each set's prefix
	bands  postings          // MethodMinHash: band keys, mixed with their band's number
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
func (c *counts) add(k *Kept, f *Features, by int) {
	c.live += by
	if f.FingerprintOnly {
		c.fpOnly += by
	}
	if k.wideDoc(f) {
		c.wide += by
	}
	c.bytes += int64(by * 4 * len(f.Sketch.h))
}

type keptDoc struct {
	live bool // false once removed (first: read with f's first fields)
	f    Features
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

// KeptMatch is a kept document that a new document duplicates.
type KeptMatch struct {
	ID       string
	Seq      uint64  // its position in the order of addition
	Distance int     // Hamming distance of the fingerprints
	Score    float64 // the verification measure (Jaccard), NaN without verification or when Unverified
	Exact    bool    // same token sequence
	// Unverified is set when either document is fingerprint-only: the match
	// rests on the fingerprint distance alone (Rule.Verified).
	Unverified bool
}

// errFingerprintOnly is the error of adding a fingerprint-only document under
// MethodMinHash.
var errFingerprintOnly = fmt.Errorf("%w: fingerprint-only documents need method %s (%s has no fingerprints)",
	ErrOptions, MethodSimHash, MethodMinHash)

// NewKept returns an empty set for documents judged by rule, expecting about
// n of them (the tables are sized for that many; they grow beyond).
func NewKept(rule *Rule, n int) (*Kept, error) {
	n = max(n, 1)
	k := &Kept{rule: rule, ids: map[string]uint32{}, prefix: rule.method == MethodSimHash && rule.verify == VerifyJaccard}
	k.exact.init(n)
	switch {
	case rule.method == MethodMinHash:
		k.bands.init(n * rule.bands)
	case k.prefix:
		k.sets.init(n * 32)
	}
	// Every fingerprint, for fingerprint queries (and the candidates of
	// MethodSimHash's wide documents). Under MethodMinHash documents carry a
	// fingerprint when their extractor computed one (NewExtractor does).
	x, err := index.New(index.Options{K: max(rule.QueryK(), 1), ExpectedN: n})
	if err != nil {
		return nil, fmt.Errorf("dedup: kept set index: %w", err)
	}
	k.x = x
	return k, nil
}

// Len returns the number of documents in the set.
func (k *Kept) Len() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.live
}

// SketchBytes returns the bytes of verification data the set holds.
func (k *Kept) SketchBytes() int64 {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.bytes
}

// FingerprintOnlyLen returns the number of fingerprint-only documents in the
// set.
func (k *Kept) FingerprintOnlyLen() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.fpOnly
}

// Contains reports whether id is in the set.
func (k *Kept) Contains(id string) bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	_, ok := k.ids[id]
	return ok
}

// Get returns the features of id.
func (k *Kept) Get(id string) (Features, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	s, ok := k.ids[id]
	if !ok {
		return Features{}, false
	}
	return k.docs.at(s).f, true
}

// Add adds id, last in priority. An id already present is an error wrapping
// index.ErrDuplicateID.
func (k *Kept) Add(id string, f Features) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.addLocked(id, f)
}

func (k *Kept) addLocked(id string, f Features) error {
	if _, ok := k.ids[id]; ok {
		return fmt.Errorf("%w %q", index.ErrDuplicateID, id)
	}
	if k.docs.n >= math.MaxUint32 {
		return fmt.Errorf("dedup: kept set is full (%d documents added)", k.docs.n)
	}
	if f.FingerprintOnly && k.rule.method == MethodMinHash {
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
func (k *Kept) byPrefix(f *Features) bool {
	return k.prefix && f.Sketch.shift == 0 && len(f.Sketch.h) > 0
}

// prefixLen is the length of the prefix of an exact set of n hashes at
// threshold t: n - ⌈t·n⌉ + 1, rounded up (a longer prefix only adds
// candidates) so that floating point cannot shorten it below the bound.
func prefixLen(n int, t float64) int {
	return min(n, max(1, n-int(math.Ceil(t*float64(n)-1e-6))+1))
}

// insertLocked puts id in the tables, last in priority.
func (k *Kept) insertLocked(id string, f Features) {
	// The signature made the band keys; the rule needs only those (and the
	// signature is Perms·8 bytes, 1 KiB by default, per document).
	f.Sig = nil
	s := k.docs.add(keptDoc{id: id, f: f, live: true})
	k.ids[id] = s
	k.counts.add(k, &f, 1)
	k.entries(&f, func(t *postings, key uint64) { t.add(key, s) })
}

// entries calls fn with each table entry of f: its token-sequence hash
// (unless fingerprint-only), then its band keys (MethodMinHash) or the
// hashes of its set's prefix (an exact set under Jaccard). Adding, removing
// and sizing a bulk load all go through appendEntries, so they agree on the
// entries.
func (k *Kept) entries(f *Features, fn func(t *postings, key uint64)) {
	var buf [64]tableKey
	tabs := k.tables()
	for _, e := range k.appendEntries(buf[:0], f) {
		fn(tabs[e.t], e.key)
	}
}

// A tableKey is a table entry's table (its index in Kept.tables) and key.
type tableKey struct {
	t   uint8
	key uint64
}

// appendEntries appends the table entries of f (see entries) to dst.
func (k *Kept) appendEntries(dst []tableKey, f *Features) []tableKey {
	if !f.FingerprintOnly {
		dst = append(dst, tableKey{0, f.Exact})
	}
	switch {
	case k.rule.method == MethodMinHash:
		if len(f.Bands) == k.rule.bands {
			for i, key := range f.Bands {
				dst = append(dst, tableKey{2, bandKey(i, key)})
			}
		}
	case k.byPrefix(f):
		for _, h := range f.Sketch.h[:prefixLen(len(f.Sketch.h), k.rule.threshold)] {
			dst = append(dst, tableKey{1, uint64(h)})
		}
	}
	return dst
}

// wideDoc reports whether the document is found through the Hamming index
// only: MethodSimHash, not in the prefix tables, and not exact-only
// (Rule.ExactOnly: such a document matches exact copies only).
func (k *Kept) wideDoc(f *Features) bool {
	return k.rule.method != MethodMinHash && !k.byPrefix(f) && !k.rule.ExactOnly(f)
}

// bandKey is the table key of band b's key.
func bandKey(b int, key uint64) uint64 { return simhash.Mix64(key, uint64(b)) }

// AddBulk adds the documents ids[i] with features fs[i], in that order, last
// in priority, through a Loader: the index sorts them at once and the tables
// are rebuilt in one array each, which is what start-up wants (Add merges as
// it goes); give it everything at once rather than in slices. An id already
// present, or twice in ids, is an error wrapping index.ErrDuplicateID, and
// then nothing is added.
func (k *Kept) AddBulk(ids []string, fs []Features) error {
	if len(ids) != len(fs) {
		return fmt.Errorf("dedup: AddBulk: %d ids, %d features", len(ids), len(fs))
	}
	l := k.NewLoader()
	for i, id := range ids {
		if err := l.Add(id, fs[i]); err != nil {
			return err
		}
	}
	return l.Finish()
}

// A Loader adds documents to a Kept in bulk, one at a time as they are read
// (a store's records at start-up, say), and builds the tables when it is
// finished: Add only collects, without the set's lock, so reading and
// decoding the next documents go on meanwhile, and Finish sorts the index
// and rebuilds each table in one array (see Loader.sortTables), on every
// core. The set does not hold the documents until Finish, which adds all
// of them or, on an error, none. Nothing else may be added to the set
// between NewLoader and Finish (Finish fails then). A Loader is not safe
// for concurrent use.
type Loader struct {
	k      *Kept
	base   int      // k.docs.n at NewLoader: the first document's slot
	order  []string // the ids in order: their map is built by Finish
	fps    []uint64 // the fingerprints in order
	docs   slots
	counts counts
}

// NewLoader returns a Loader for k.
func (k *Kept) NewLoader() *Loader {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return &Loader{k: k, base: k.docs.n}
}

// Add collects id with features f, last in priority. Ids are not checked
// until Finish: one that the loader or the set holds already fails Finish.
func (l *Loader) Add(id string, f Features) error {
	k := l.k
	if k == nil {
		return errors.New("dedup: Loader used after Finish")
	}
	if id == "" || len(id) > index.MaxIDBytes {
		return fmt.Errorf("%w: length %d not in 1..%d", index.ErrBadID, len(id), index.MaxIDBytes)
	}
	if l.base+l.docs.n >= math.MaxUint32 {
		return fmt.Errorf("dedup: kept set is full (%d documents added)", l.base+l.docs.n)
	}
	if f.FingerprintOnly && k.rule.method == MethodMinHash {
		return errFingerprintOnly
	}
	f.Sig = nil // as insertLocked
	l.docs.add(keptDoc{id: id, f: f, live: true})
	l.order = append(l.order, id)
	l.fps = append(l.fps, f.FP)
	l.counts.add(k, &f, 1)
	return nil
}

// Finish adds the collected documents to the set, or none of them when one
// of their ids is in the set already or twice among them (an error wrapping
// index.ErrDuplicateID) or the set changed since NewLoader.
//
// The map of ids is built here, at its final size, beside the sort of the
// tables: at start-up, one insert per Add into a growing map was the
// largest cost of the goroutine that adds (every id hashed again at each
// doubling), and the tables' sort left a core idle.
func (l *Loader) Finish() error {
	if l.k == nil {
		return errors.New("dedup: Loader used after Finish")
	}
	k, ld := l.k, *l
	*l = Loader{} // the set takes its chunks
	l = &ld
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.docs.n != l.base {
		return fmt.Errorf("dedup: the kept set changed while a Loader filled it (%d documents, %d before)", k.docs.n, l.base)
	}
	// Nothing in the set changes until the ids are known to be new: the
	// sorts below only read the tables (and finish a doubling in progress,
	// which moves no entry out of reach).
	var ids map[string]uint32
	var idsErr error
	var wg sync.WaitGroup
	wg.Go(func() { ids, idsErr = l.idMap() })
	sorted := l.sortTables()
	wg.Wait()
	if idsErr != nil {
		return idsErr
	}
	if err := k.x.AddBulk(l.order, l.fps); err != nil {
		return fmt.Errorf("dedup: kept set index: %w", err)
	}
	if len(k.ids) == 0 {
		k.ids = ids
	} else {
		maps.Copy(k.ids, ids)
	}
	if k.docs.n == 0 {
		k.docs = l.docs
	} else {
		for i := range l.docs.n {
			k.docs.add(*l.docs.at(uint32(i)))
		}
	}
	k.counts.plus(l.counts)
	tabs := k.tables()
	for t, p := range tabs {
		if sorted[t].all != nil {
			p.installBulk(sorted[t])
		}
	}
	if sorted[0].oneByOne || sorted[1].oneByOne || sorted[2].oneByOne {
		var buf []tableKey
		for i := range l.docs.n {
			buf = k.appendEntries(buf[:0], &l.docs.at(uint32(i)).f)
			for _, e := range buf {
				if sorted[e.t].oneByOne {
					tabs[e.t].add(e.key, uint32(l.base+i))
				}
			}
		}
	}
	return nil
}

// tables are the set's tables, in the order of tableKey.t.
func (k *Kept) tables() [3]*postings { return [3]*postings{&k.exact, &k.sets, &k.bands} }

// sortTables sorts the entries of each table (when it is rebuilt) with
// those of the loader's documents, for installBulk, which rebuilds the
// table in one array sorted by bucket, each bucket a full slice of it: no
// bucket grows one append at a time, and a later add to a bucket copies
// only that bucket out. A table that holds more than twice the entries it
// gains is not rebuilt: its entries are added one at a time (oneByOne).
// Nothing in the tables changes but finishing a doubling in progress.
//
// The entries are made from the documents' features (the table keys are in
// them) rather than collected as the documents came: the collected entries
// and their sorted copy were 5.6 GB at 10M documents, and collecting them
// took a quarter of the CPU of the goroutine that reads the store. Each core
// counts the entries of its share of the documents by their group, the top
// 8 bits of their key (the first digit of the sort); the counts place every
// group, and every core's part of it, in the sorted array; each core then
// writes its entries there, in order, and the groups are sorted on their own
// by the bits below, the groups shared among the cores, in
// least-significant-digit passes that stay in the cache (a group is a few MB
// at most). Under 8 bits of bucket, a group is already in bucket order. A
// bucket keeps its entries in the order they were added: the table's first,
// then the documents' in slot order. A sort by all the bits in passes over
// the whole array (11 bits a pass) took three times as long at 184M
// entries: every pass went to memory and back.
func (l *Loader) sortTables() [3]sortedPostings {
	tabs := l.k.tables()
	nw := max(1, min(runtime.GOMAXPROCS(0), l.docs.n/1024))
	// counts[w][t][g]: the entries of share w for group g of table t;
	// then where the next of them goes in the table's sorted array.
	counts := make([][3][256]int, nw)
	var wg sync.WaitGroup
	// The two passes below make each document's entries and loop over
	// them inline: a call per entry was half their time at 10M documents.
	share := func(w int) (int, int) { return l.docs.n * w / nw, l.docs.n * (w + 1) / nw }
	for w := range nw {
		wg.Go(func() {
			c := &counts[w]
			var buf []tableKey
			lo, hi := share(w)
			for i := lo; i < hi; i++ {
				buf = l.k.appendEntries(buf[:0], &l.docs.at(uint32(i)).f)
				for _, e := range buf {
					c[e.t][mixKey(e.key)>>24]++
				}
			}
		})
	}
	wg.Wait()

	var out [3]sortedPostings
	var starts [3][257]int
	for t, p := range tabs {
		n := 0
		for w := range counts {
			for _, c := range counts[w][t] {
				n += c
			}
		}
		if n == 0 {
			continue
		}
		if p.n > 2*n {
			// Rebuilding would move more entries than it adds.
			out[t].oneByOne = true
			continue
		}
		p.splitSome(len(p.old))
		var pre [256]int // the table's entries come first in each group
		for _, b := range p.buckets {
			for _, e := range b {
				pre[e.key>>24]++
			}
		}
		at := 0
		for g := range 256 {
			starts[t][g] = at
			at += pre[g]
			pre[g] = starts[t][g]
			for w := range counts {
				c := counts[w][t][g]
				counts[w][t][g] = at
				at += c
			}
		}
		starts[t][256] = at
		all := make([]posting, at)
		hugepage.Advise(all)
		for _, b := range p.buckets {
			for _, e := range b {
				all[pre[e.key>>24]] = e
				pre[e.key>>24]++
			}
		}
		bits := p.bits
		for at >= perBucket*(1<<bits) && bits < 30 {
			bits++
		}
		buckets := make([][]posting, 1<<bits)
		hugepage.Advise(buckets)
		out[t] = sortedPostings{all: all, bits: bits, buckets: buckets}
	}

	for w := range nw {
		wg.Go(func() {
			c := &counts[w]
			alls := [3][]posting{out[0].all, out[1].all, out[2].all}
			var buf []tableKey
			lo, hi := share(w)
			for i := lo; i < hi; i++ {
				slot := uint32(l.base + i)
				buf = l.k.appendEntries(buf[:0], &l.docs.at(uint32(i)).f)
				for _, e := range buf {
					if all := alls[e.t]; all != nil {
						m := mixKey(e.key)
						at := &c[e.t][m>>24]
						all[*at] = posting{m, slot}
						*at++
					}
				}
			}
		})
	}
	wg.Wait()

	var next atomic.Int32
	for range max(1, min(runtime.GOMAXPROCS(0), 3*256)) {
		wg.Go(func() {
			var spare []posting
			for {
				j := int(next.Add(1) - 1)
				if j >= 3*256 {
					return
				}
				t, g := j/256, j%256
				o := &out[t]
				switch {
				case o.all == nil:
				case o.bits <= 8:
					// A bucket spans groups, which are in bucket
					// order: one job slices the whole table.
					if g == 0 {
						o.slice(o.all)
					}
				default:
					group := o.all[starts[t][g]:starts[t][g+1]]
					if len(group) > cap(spare) {
						spare = make([]posting, len(group))
					}
					sortGroup(group, spare[:len(group)], uint(o.bits-8), 32-o.bits)
					o.slice(group) // its buckets are its own
				}
			}
		})
	}
	wg.Wait()
	return out
}

// idMap returns the loader's ids by slot, or an error wrapping
// index.ErrDuplicateID when one of them is in the set already or twice
// among them. The set's lock is held.
func (l *Loader) idMap() (map[string]uint32, error) {
	ids := make(map[string]uint32, len(l.order))
	for i, id := range l.order {
		// One map operation, not a lookup and then an insert: at millions
		// of ids each is a cache miss or two.
		n := len(ids)
		ids[id] = uint32(l.base + i)
		if len(ids) == n {
			return nil, fmt.Errorf("%w %q", index.ErrDuplicateID, id)
		}
	}
	if len(l.k.ids) > 0 {
		for id := range ids {
			if _, ok := l.k.ids[id]; ok {
				return nil, fmt.Errorf("%w %q", index.ErrDuplicateID, id)
			}
		}
	}
	return ids, nil
}

// AddFingerprints adds the fingerprint-only documents ids[i] with
// fingerprints fps[i], in that order, last in priority, as AddBulk does: only
// their fingerprints are known (the ids and fingerprints of an index
// snapshot, say), so they match on fingerprint distance alone and their
// matches are unverified (see Kept and Rule). Under MethodMinHash it is an
// error wrapping ErrOptions.
func (k *Kept) AddFingerprints(ids []string, fps []uint64) error {
	if len(ids) != len(fps) {
		return fmt.Errorf("dedup: AddFingerprints: %d ids, %d fingerprints", len(ids), len(fps))
	}
	if k.rule.method == MethodMinHash {
		return errFingerprintOnly
	}
	fs := make([]Features, len(fps))
	for i, fp := range fps {
		fs[i] = Features{FP: fp, FingerprintOnly: true}
	}
	return k.AddBulk(ids, fs)
}

// Remove removes id and reports whether it was there.
func (k *Kept) Remove(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.removeLocked(id)
}

func (k *Kept) removeLocked(id string) bool {
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
func (k *Kept) Match(f *Features) (KeptMatch, bool, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	ms, err := k.matchLocked(f, 1)
	if err != nil || len(ms) == 0 {
		return KeptMatch{}, false, err
	}
	return ms[0], true, nil
}

// MatchAll returns the documents of the set that f duplicates, in priority
// order, at most limit of them when limit > 0.
func (k *Kept) MatchAll(f *Features, limit int) ([]KeptMatch, error) {
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
func (k *Kept) AddIfNew(id string, f Features) (KeptMatch, bool, error) {
	k.mu.RLock()
	n0, resets0 := k.docs.n, k.resets
	ms, err := k.matchLocked(&f, 1)
	k.mu.RUnlock()
	if err != nil {
		return KeptMatch{}, false, err
	}
	if len(ms) > 0 {
		return ms[0], true, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.resets != resets0 || k.docs.n-n0 > maxRecheck || k.rule.method == MethodMinHash {
		// Emptied and refilled, many added, or candidates that are not a
		// superset of the rule's matches (LSH bands): match again.
		ms, err = k.matchLocked(&f, 1)
	} else {
		ms = k.matchSinceLocked(&f, uint32(n0))
	}
	if err != nil {
		return KeptMatch{}, false, err
	}
	if len(ms) > 0 {
		return ms[0], true, nil
	}
	return KeptMatch{}, false, k.addLocked(id, f)
}

// maxRecheck is the most documents added during an AddIfNew's match that
// it tests one by one; beyond, it matches the set again.
const maxRecheck = 1024

// matchSinceLocked returns the first live document from slot "from" on that
// f duplicates, testing each with Rule.Duplicates. Under MethodSimHash that
// is the first that matchLocked would return among them: its candidates
// are a superset of what the rule accepts (see Kept), which Duplicates
// then filters.
func (k *Kept) matchSinceLocked(f *Features, from uint32) []KeptMatch {
	for s := from; s < uint32(k.docs.n); s++ {
		if d := k.docs.at(s); d.live && k.rule.Duplicates(&d.f, f) {
			return []KeptMatch{k.keptMatch(s, f)}
		}
	}
	return nil
}

// keptMatch describes the match of f with the document in slot s.
func (k *Kept) keptMatch(s uint32, f *Features) KeptMatch {
	d := k.docs.at(s)
	verified := k.rule.Verified(&d.f, f)
	return KeptMatch{ID: d.id, Seq: uint64(s), Distance: simhash.Distance(d.f.FP, f.FP),
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

// matchLocked gathers the candidates (see Kept), keeps the distinct ones
// that Rule.Duplicates accepts and returns them in priority order.
func (k *Kept) matchLocked(f *Features, limit int) ([]KeptMatch, error) {
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
	var ms []KeptMatch
	if len(out) > 0 {
		ms = make([]KeptMatch, 0, len(out))
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
func (k *Kept) candidatesLocked(cands []uint32, f *Features) ([]uint32, error) {
	cands = k.exact.find(cands, f.Exact)
	switch {
	case k.rule.method == MethodMinHash:
		if len(f.Bands) == k.rule.bands {
			for b, key := range f.Bands {
				n := len(cands)
				cands = k.bands.find(cands, bandKey(b, key))
				// The table keeps part of the key: keep only real collisions.
				cands = append(cands[:n], slices.DeleteFunc(cands[n:], func(s uint32) bool {
					ks := k.docs.at(s).f.Bands
					return len(ks) != len(f.Bands) || ks[b] != key
				})...)
			}
		}
	case k.byPrefix(f):
		cands = k.sets.findEach(cands, f.Sketch.h[:prefixLen(len(f.Sketch.h), k.rule.threshold)])
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
func (k *Kept) queryIndex(cands []uint32, f *Features, onlyWide bool) ([]uint32, error) {
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

// postings maps 64-bit keys to document slots: a hash table of buckets, each
// a short slice of (the top 32 bits of the mixed key, slot). The bucket is
// the top bits of the mixed key, so an entry holds what growing needs. A
// lookup may return slots of other keys that share those 32 bits (about one
// entry in 2^(32-b) of a bucket of a table of 2^b buckets); callers check
// what they need to.
//
// The table doubles incrementally: growing allocates the new buckets and
// each later add splits a few old buckets into their two new ones, so no add
// moves the whole table (tens of millions of entries at a million
// documents, a second under the write lock). Until every old bucket is
// split, a key whose old bucket is not split yet lives there.
type postings struct {
	buckets [][]posting
	bits    uint8 // the table has 1<<bits buckets
	n       int
	// old holds the buckets before the last doubling while they are being
	// split: old[i] for i >= split is not split yet (nil when done).
	old   [][]posting
	split int
}

type posting struct{ key, slot uint32 }

// mixKey is the part of key that a posting keeps: the top 32 bits of the
// mixed key, whose top bits are its bucket.
func mixKey(key uint64) uint32 { return uint32(simhash.Mix64(key, 0) >> 32) }

// perBucket is the average bucket length at which the table doubles.
const perBucket = 16

// splitsPerAdd is the number of old buckets an add splits while the table
// grows: the doubling ends after len(old)/splitsPerAdd adds, long before the
// next one (8·len(old) adds later).
const splitsPerAdd = 2

func (p *postings) init(n int) {
	p.bits = uint8(min(30, max(4, mathbits.Len(uint(n/(perBucket/2))))))
	p.buckets = make([][]posting, 1<<p.bits)
	p.old, p.split = nil, 0
}

// bucket returns the bucket that holds mixed key h.
func (p *postings) bucket(h uint32) *[]posting {
	j := h >> (32 - p.bits)
	if p.old != nil && int(j>>1) >= p.split {
		return &p.old[j>>1]
	}
	return &p.buckets[j]
}

func (p *postings) add(key uint64, slot uint32) {
	if p.old != nil {
		p.splitSome(splitsPerAdd)
	} else if p.n >= perBucket*len(p.buckets) && p.bits < 30 {
		p.grow()
	}
	h := mixKey(key)
	b := p.bucket(h)
	*b = append(*b, posting{h, slot})
	p.n++
}

func (p *postings) find(dst []uint32, key uint64) []uint32 {
	h := mixKey(key)
	for _, e := range *p.bucket(h) {
		if e.key == h {
			dst = append(dst, e.slot)
		}
	}
	return dst
}

// findEach appends the slots of every key, as find does for each in turn.
// A match probes a few dozen buckets of a table of tens of megabytes, each
// a cache miss for its slice header and another for its entries: findEach
// reads the headers of a group of buckets first, then checks their first
// entries, then scans the rest, so that the misses of a group are in flight
// together rather than one after the other. The slots come in another order
// than find's, which callers do not rely on.
func (p *postings) findEach(dst []uint32, keys []uint32) []uint32 {
	const group = 32
	var (
		hs [group]uint32
		bs [group][]posting
	)
	for len(keys) > 0 {
		n := min(len(keys), group)
		for i, key := range keys[:n] {
			hs[i] = mixKey(uint64(key))
			bs[i] = *p.bucket(hs[i])
		}
		for i, b := range bs[:n] {
			if len(b) > 0 && b[0].key == hs[i] {
				dst = append(dst, b[0].slot)
			}
		}
		for i, b := range bs[:n] {
			if len(b) < 2 {
				continue
			}
			h := hs[i]
			for _, e := range b[1:] {
				if e.key == h {
					dst = append(dst, e.slot)
				}
			}
		}
		keys = keys[n:]
	}
	return dst
}

func (p *postings) remove(key uint64, slot uint32) {
	h := mixKey(key)
	b := p.bucket(h)
	for i, e := range *b {
		if e.key == h && e.slot == slot {
			last := len(*b) - 1
			(*b)[i] = (*b)[last]
			*b = (*b)[:last]
			if last == 0 {
				*b = nil
			}
			p.n--
			return
		}
	}
}

// grow doubles the buckets; the entries move to them by splitSome.
func (p *postings) grow() {
	p.old, p.split = p.buckets, 0
	p.bits++
	p.buckets = make([][]posting, 1<<p.bits)
}

// splitSome splits up to n old buckets into their new pair (an entry's new
// bucket is the next bit of its key below the old bucket's bits).
func (p *postings) splitSome(n int) {
	shift := 32 - p.bits
	for ; n > 0 && p.split < len(p.old); n-- {
		i := p.split
		b := p.old[i]
		var hi int
		for _, e := range b {
			hi += int(e.key>>shift) & 1
		}
		if lo := len(b) - hi; lo > 0 {
			p.buckets[2*i] = make([]posting, 0, lo)
		}
		if hi > 0 {
			p.buckets[2*i+1] = make([]posting, 0, hi)
		}
		for _, e := range b {
			j := e.key >> shift
			p.buckets[j] = append(p.buckets[j], e)
		}
		p.old[i] = nil
		p.split++
	}
	if p.split == len(p.old) {
		p.old, p.split = nil, 0
	}
}

// sortedPostings is a table's entries after a bulk load, sorted by bucket,
// ready to be installed (Loader.sortTables).
type sortedPostings struct {
	all      []posting   // sorted by bucket
	bits     uint8       // of the table
	buckets  [][]posting // the table's buckets: full slices of all
	oneByOne bool        // or the loader's entries are added one at a time
}

// slice sets the buckets of the sorted entries part, which holds whole
// buckets.
func (b *sortedPostings) slice(part []posting) {
	shift := 32 - b.bits
	for lo := 0; lo < len(part); {
		j := part[lo].key >> shift
		hi := lo + 1
		for hi < len(part) && part[hi].key>>shift == j {
			hi++
		}
		b.buckets[j] = part[lo:hi:hi]
		lo = hi
	}
}

// installBulk makes the table hold the entries sortTables sorted.
func (p *postings) installBulk(b sortedPostings) {
	p.bits, p.buckets, p.n = b.bits, b.buckets, len(b.all)
}

// sortGroup sorts a stably by the low bits bits of key>>shift, in passes of
// up to 11 bits, with spare (as long as a) for scratch; a ends sorted.
func sortGroup(a, spare []posting, bits uint, shift uint8) {
	const digit = 11
	passes := (int(bits) + digit - 1) / digit
	width := (bits + uint(passes) - 1) / uint(passes)
	mask := uint32(1)<<width - 1
	count := make([]int, 1<<width)
	src, dst := a, spare
	for i := range passes {
		sh := shift + uint8(uint(i)*width)
		clear(count)
		for _, e := range src {
			count[e.key>>sh&mask]++
		}
		sum := 0
		for d, m := range count {
			count[d] = sum
			sum += m
		}
		for _, e := range src {
			d := e.key >> sh & mask
			dst[count[d]] = e
			count[d]++
		}
		src, dst = dst, src
	}
	if len(src) > 0 && &src[0] != &a[0] {
		copy(a, src)
	}
}

// Index returns the set's fingerprint index (for saving it as a snapshot that
// 'neardup index query' can read). It must not be written to.
func (k *Kept) Index() *index.Index { return k.x }

// The kept-set file (FORMAT.md): magic, version, the settings the sets were
// made with, the documents in priority order, and a CRC-32C of all of it.
const (
	keptMagic   = "NDKEPT\r\n"
	keptVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// keptSettings are the options a kept set's features depend on; a run with
// other settings would compare different things.
func keptSettings(o *Options) string {
	s := fmt.Sprintf("method=%s profile=%s verify=%s shingle=%d sketch=%d", o.Method, o.Profile, o.Verify, o.Shingle, SketchVersion)
	if o.Method == MethodMinHash {
		s += fmt.Sprintf(" minhash=%d", MinHashVersion)
	}
	return s
}

// WriteTo writes the set in priority order.
func (k *Kept) writeTo(w io.Writer, settings string) error {
	k.mu.RLock()
	if k.fpOnly > 0 {
		k.mu.RUnlock()
		return fmt.Errorf("dedup: the kept set holds %d fingerprint-only documents, which a kept-set file cannot record", k.fpOnly)
	}
	docs := make([]keptDoc, 0, k.live)
	for i := range k.docs.n {
		if d := k.docs.at(uint32(i)); d.live {
			docs = append(docs, *d)
		}
	}
	k.mu.RUnlock()

	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	var b []byte
	b = append(b, keptMagic...)
	b = binary.AppendUvarint(b, keptVersion)
	b = appendString(b, settings)
	b = binary.AppendUvarint(b, uint64(len(docs)))
	for _, d := range docs {
		b = appendString(b, d.id)
		b, _ = d.f.AppendBinary(b)
		if len(b) >= 64<<10 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if _, err := bw.Write(b); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return binary.Write(w, binary.LittleEndian, crc.Sum32())
}

// readKept reads a kept-set file made with the same settings. The file is
// read whole and its checksum checked before it is parsed; it is smaller than
// the set it holds (delta-coded sketches).
func readKept(r io.Reader, rule *Rule, settings string) (*Kept, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrKeptFormat, fmt.Sprintf(format, args...))
	}
	all, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if len(all) < len(keptMagic)+4 || string(all[:len(keptMagic)]) != keptMagic {
		return nil, bad("not a kept-set file")
	}
	body := all[:len(all)-4]
	if binary.LittleEndian.Uint32(all[len(body):]) != crc32.Checksum(body, castagnoli) {
		return nil, bad("checksum mismatch: the file is damaged")
	}
	br := &sliceReader{b: body, i: len(keptMagic)}
	v, err := br.uvarint()
	if err != nil || v != keptVersion {
		return nil, bad("version %d, this build reads %d", v, keptVersion)
	}
	got, err := br.string()
	if err != nil {
		return nil, bad("%v", err)
	}
	if got != settings {
		return nil, fmt.Errorf("%w: made with %q, this run uses %q", ErrKeptFormat, got, settings)
	}
	n, err := br.uvarint()
	if err != nil || n > uint64(len(body)) {
		return nil, bad("document count")
	}
	k, err := NewKept(rule, int(n))
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, n)
	fs := make([]Features, 0, n)
	for i := uint64(0); i < n; i++ {
		id, err := br.string()
		if err != nil {
			return nil, bad("document %d: %v", i, err)
		}
		var f Features
		if err := f.readBinary(br); err != nil {
			return nil, bad("document %d: %v", i, err)
		}
		ids = append(ids, id)
		fs = append(fs, f)
	}
	if br.i != len(body) {
		return nil, bad("%d bytes after the last document", len(body)-br.i)
	}
	if err := k.AddBulk(ids, fs); err != nil {
		if errors.Is(err, index.ErrDuplicateID) {
			return nil, bad("%v", err)
		}
		return nil, err
	}
	return k, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendBinary appends the sketch: n, shift, the count of hashes and their
// deltas, as uvarints (the hashes are sorted).
func (s Sketch) appendBinary(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(s.n))
	b = append(b, s.shift)
	b = binary.AppendUvarint(b, uint64(len(s.h)))
	prev := uint32(0)
	for _, h := range s.h {
		b = binary.AppendUvarint(b, uint64(h-prev))
		prev = h
	}
	return b
}

func (s *Sketch) readBinary(r *sliceReader) error {
	n, err := r.uvarint()
	if err != nil || n > 1<<32-1 {
		return fmt.Errorf("sketch size")
	}
	shift, err := r.ReadByte()
	if err != nil || shift > 31 {
		return fmt.Errorf("sketch modulus")
	}
	c, err := r.uvarint()
	if err != nil || c > n || c > uint64(len(r.b)-r.i) {
		return fmt.Errorf("sketch count")
	}
	// The deltas are decoded from the slice in place: through
	// io.ByteReader, a call per byte made this loop a fifth of start-up.
	h := r.arena.alloc(int(c))
	b, prev := r.b[r.i:], uint64(0)
	for i := range h {
		var d uint64
		var w int
		if len(b) >= 8 {
			d, w = uvarint8(binary.LittleEndian.Uint64(b))
		}
		if w == 0 {
			d, w = binary.Uvarint(b)
		}
		if w <= 0 || prev+d > 1<<32-1 || (i > 0 && d == 0) {
			return fmt.Errorf("sketch hash %d", i)
		}
		b = b[w:]
		prev += d
		h[i] = uint32(prev)
	}
	r.i = len(r.b) - len(b)
	s.h, s.n, s.shift = h, uint32(n), shift
	return nil
}

// uvarint8 decodes the varint at the start of the 8 bytes x (little-endian)
// and returns it and its length, or a length of 0 when it is longer than 5
// bytes (a sketch's deltas take at most 5; Sketch.readBinary gives the rest,
// and the last 7 bytes of a record, to binary.Uvarint). It finds the value's
// last byte (the first without its top bit) from the one load and gathers
// the 7-bit groups with shifts, without a branch per byte; it is small
// enough to be inlined into the sketch's loop, where binary.Uvarint, a call
// and a branch per byte, was 9% of start-up.
func uvarint8(x uint64) (uint64, int) {
	n := mathbits.TrailingZeros64(^x&0x8080808080808080)/8 + 1
	if n > 5 {
		return 0, 0 // longer than a 32-bit delta: binary.Uvarint's
	}
	x &= ^uint64(0) >> (64 - 8*n) &^ 0x8080808080808080
	return x&0x7f | x>>1&(0x7f<<7) | x>>2&(0x7f<<14) | x>>3&(0x7f<<21) | x>>4&(0x7f<<28), n
}

// MarshalBinary encodes the sketch (for stores that keep it).
func (s Sketch) MarshalBinary() ([]byte, error) { return s.appendBinary(nil), nil }

// UnmarshalBinary decodes a sketch written by MarshalBinary.
func (s *Sketch) UnmarshalBinary(b []byte) error {
	r := &sliceReader{b: b}
	if err := s.readBinary(r); err != nil {
		return err
	}
	if r.i != len(b) {
		return fmt.Errorf("dedup: sketch: %d trailing bytes", len(b)-r.i)
	}
	return nil
}

type sliceReader struct {
	b     []byte
	i     int
	arena *Arena // of the sketches read; nil: allocated each
}

func (r *sliceReader) next(n int) ([]byte, error) {
	if n > len(r.b)-r.i {
		return nil, io.ErrUnexpectedEOF
	}
	b := r.b[r.i : r.i+n]
	r.i += n
	return b, nil
}

func (r *sliceReader) string() (string, error) {
	n, err := r.uvarint()
	if err != nil || n > index.MaxIDBytes {
		return "", fmt.Errorf("bad string length")
	}
	b, err := r.next(int(n))
	return string(b), err
}

// uvarint reads an unsigned varint.
func (r *sliceReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	r.i += n
	return v, nil
}

func (r *sliceReader) ReadByte() (byte, error) {
	if r.i >= len(r.b) {
		return 0, io.ErrUnexpectedEOF
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

// AppendBinary appends what the rule needs of f for a store to keep (the
// fingerprint, the token-sequence hash, the counts and the shingle set; not
// Vector or Sig): the record of one document in the kept-set file.
func (f *Features) AppendBinary(b []byte) ([]byte, error) {
	b = binary.LittleEndian.AppendUint64(b, f.FP)
	b = binary.LittleEndian.AppendUint64(b, f.Exact)
	b = binary.AppendUvarint(b, uint64(f.Tokens))
	b = binary.AppendUvarint(b, uint64(f.Length))
	b = f.Sketch.appendBinary(b)
	b = binary.AppendUvarint(b, uint64(len(f.Bands)))
	for _, k := range f.Bands {
		b = binary.LittleEndian.AppendUint64(b, k)
	}
	return b, nil
}

// MarshalBinary is AppendBinary to a new slice, allocated once: its
// capacity is the most AppendBinary can write.
func (f *Features) MarshalBinary() ([]byte, error) {
	const v = binary.MaxVarintLen32
	return f.AppendBinary(make([]byte, 0, 8+8+v+v+(v+1+v+v*len(f.Sketch.h))+v+8*len(f.Bands)))
}

// UnmarshalBinary decodes what MarshalBinary wrote.
func (f *Features) UnmarshalBinary(b []byte) error {
	return (*Arena)(nil).UnmarshalFeatures(f, b)
}

// An Arena allocates the shingle sets of the features it decodes from
// large blocks, advised for huge pages (internal/hugepage), rather than one
// allocation each: loading millions of stored documents, as the service's
// start-up does, then faults in 2 MB pages instead of 4 KB ones, and its
// allocator has a few hundred blocks to track instead of millions of sets.
// A block is freed once none of its sets is referenced, so the set of a
// document removed after a load is freed with the last of the block's
// others: an Arena is for documents loaded to be kept. A nil Arena
// allocates each set on its own. An Arena is not safe for concurrent use.
type Arena struct {
	free []uint32 // the rest of the current block
}

// arenaBlock is the size of an Arena's blocks in hashes: 16 MB.
const arenaBlock = 4 << 20

// alloc returns a slice of n hashes whose capacity is n.
func (a *Arena) alloc(n int) []uint32 {
	if a == nil || n > arenaBlock/16 {
		return make([]uint32, n)
	}
	if len(a.free) < n {
		a.free = make([]uint32, arenaBlock)
		hugepage.Advise(a.free)
	}
	h := a.free[:n:n]
	a.free = a.free[n:]
	return h
}

// UnmarshalFeatures decodes into f what Features.MarshalBinary wrote, as
// Features.UnmarshalBinary does, with f's shingle set allocated from a.
func (a *Arena) UnmarshalFeatures(f *Features, b []byte) error {
	r := &sliceReader{b: b, arena: a}
	if err := f.readBinary(r); err != nil {
		return fmt.Errorf("%w: features: %v", ErrKeptFormat, err)
	}
	if r.i != len(b) {
		return fmt.Errorf("%w: features: %d trailing bytes", ErrKeptFormat, len(b)-r.i)
	}
	return nil
}

func (f *Features) readBinary(r *sliceReader) error {
	fixed, err := r.next(16)
	if err != nil {
		return err
	}
	*f = Features{FP: binary.LittleEndian.Uint64(fixed[:8]), Exact: binary.LittleEndian.Uint64(fixed[8:])}
	t, err1 := r.uvarint()
	l, err2 := r.uvarint()
	if err := errors.Join(err1, err2); err != nil || t > 1<<32-1 || l > 1<<32-1 {
		return fmt.Errorf("counts")
	}
	f.Tokens, f.Length = uint32(t), uint32(l)
	f.Empty = f.Tokens == 0
	if err := f.Sketch.readBinary(r); err != nil {
		return err
	}
	nb, err := r.uvarint()
	if err != nil || nb > 4096 {
		return fmt.Errorf("band count")
	}
	if nb > 0 {
		raw, err := r.next(8 * int(nb))
		if err != nil {
			return err
		}
		f.Bands = make([]uint64, nb)
		for i := range f.Bands {
			f.Bands[i] = binary.LittleEndian.Uint64(raw[8*i:])
		}
	}
	return nil
}
