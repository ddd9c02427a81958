package dedup

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sync"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/simhash"
)

// ErrKeptFormat is wrapped by the errors of ReadKept for a file that is not a
// kept set, is damaged, or was made with other settings.
var ErrKeptFormat = errors.New("dedup: bad kept-set file")

// Kept is a set of kept documents that new documents are matched against
// under a Rule: their fingerprints in an index.Index queried at Rule.QueryK,
// their token-sequence hashes for exact copies, and their verification data
// (shingle sets), in the order they were added, which is their priority under
// the keep-first rule. Incremental runs of Run keep one beside their index
// snapshot (FORMAT.md); the online service keeps one in memory in front of
// its store. A new document matched against a Kept gets the verdict Run
// would give it after the same documents in one run.
//
// Kept is safe for concurrent use: matches share a read lock, Add and Remove
// take the write lock.
type Kept struct {
	rule *Rule
	x    *index.Index

	mu    sync.RWMutex            // guards the fields below, and orders x's writes with them
	docs  map[string]*keptDoc     // by id
	exact map[uint64][]*keptDoc   // by token-sequence hash
	bands []map[uint64][]*keptDoc // MethodMinHash: by band key, one table per band
	seq   uint64                  // the next document's sequence number
	bytes int64                   // sketch bytes held
}

type keptDoc struct {
	id  string
	seq uint64
	f   Features
}

// KeptMatch is a kept document that a new document duplicates.
type KeptMatch struct {
	ID       string
	Seq      uint64  // its position in the order of addition
	Distance int     // Hamming distance of the fingerprints
	Score    float64 // the verification measure (Jaccard), NaN without verification
	Exact    bool    // same token sequence
}

// NewKept returns an empty set for documents judged by rule, expecting about
// n of them (the index plans for that many; it keeps working beyond). Under
// MethodMinHash the candidates come from one hash table per LSH band
// (Features.Bands) instead of the Hamming index: the same pairs the batch LSH
// finds, at the cost of a lookup per band.
func NewKept(rule *Rule, n int) (*Kept, error) {
	k := &Kept{rule: rule, docs: map[string]*keptDoc{}, exact: map[uint64][]*keptDoc{}}
	if rule.method == MethodMinHash {
		k.bands = make([]map[uint64][]*keptDoc, rule.bands)
		for b := range k.bands {
			k.bands[b] = map[uint64][]*keptDoc{}
		}
	}
	x, err := index.New(index.Options{K: max(rule.QueryK(), 1), ExpectedN: max(n, 1)})
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
	return len(k.docs)
}

// SketchBytes returns the bytes of verification data the set holds.
func (k *Kept) SketchBytes() int64 {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.bytes
}

// Contains reports whether id is in the set.
func (k *Kept) Contains(id string) bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	_, ok := k.docs[id]
	return ok
}

// Get returns the features of id.
func (k *Kept) Get(id string) (Features, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	d, ok := k.docs[id]
	if !ok {
		return Features{}, false
	}
	return d.f, true
}

// Add adds id, last in priority. An id already present is an error wrapping
// index.ErrDuplicateID.
func (k *Kept) Add(id string, f Features) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.addLocked(id, f)
}

func (k *Kept) addLocked(id string, f Features) error {
	if _, ok := k.docs[id]; ok {
		return fmt.Errorf("%w %q", index.ErrDuplicateID, id)
	}
	if k.bands == nil {
		if err := k.x.Add(id, f.FP); err != nil {
			return err
		}
	}
	k.insertLocked(id, f)
	return nil
}

// insertLocked puts id in the maps, last in priority.
func (k *Kept) insertLocked(id string, f Features) *keptDoc {
	// The signature made the band keys; the rule needs only those (and the
	// signature is Perms·8 bytes, 1 KiB by default, per document).
	f.Sig = nil
	d := &keptDoc{id: id, seq: k.seq, f: f}
	k.seq++
	k.docs[id] = d
	k.exact[f.Exact] = append(k.exact[f.Exact], d)
	if k.bands != nil && len(f.Bands) == len(k.bands) {
		for b, key := range f.Bands {
			k.bands[b][key] = append(k.bands[b][key], d)
		}
	}
	k.bytes += int64(4 * len(f.Sketch.h))
	return d
}

// deleteFrom removes d from m's list at key.
func deleteFrom(m map[uint64][]*keptDoc, key uint64, d *keptDoc) {
	es := slices.DeleteFunc(m[key], func(e *keptDoc) bool { return e == d })
	if len(es) == 0 {
		delete(m, key)
	} else {
		m[key] = es
	}
}

// AddBulk adds the documents ids[i] with features fs[i], in that order, last
// in priority: the index sorts them at once, which is what start-up wants
// (Add merges as it goes). An id already present, or twice in ids, is an error
// wrapping index.ErrDuplicateID, and then nothing is added.
func (k *Kept) AddBulk(ids []string, fs []Features) error {
	if len(ids) != len(fs) {
		return fmt.Errorf("dedup: AddBulk: %d ids, %d features", len(ids), len(fs))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	seen := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		if _, ok := k.docs[id]; ok {
			return fmt.Errorf("%w %q", index.ErrDuplicateID, id)
		}
		if _, ok := seen[id]; ok {
			return fmt.Errorf("%w %q", index.ErrDuplicateID, id)
		}
		seen[id] = struct{}{}
	}
	if k.bands == nil {
		fps := make([]uint64, len(fs))
		for i := range fs {
			fps[i] = fs[i].FP
		}
		if err := k.x.AddBulk(ids, fps); err != nil {
			return fmt.Errorf("dedup: kept set index: %w", err)
		}
	}
	for i, id := range ids {
		k.insertLocked(id, fs[i])
	}
	return nil
}

// Remove removes id and reports whether it was there.
func (k *Kept) Remove(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.removeLocked(id)
}

func (k *Kept) removeLocked(id string) bool {
	d, ok := k.docs[id]
	if !ok {
		return false
	}
	delete(k.docs, id)
	deleteFrom(k.exact, d.f.Exact, d)
	if k.bands != nil && len(d.f.Bands) == len(k.bands) {
		for b, key := range d.f.Bands {
			deleteFrom(k.bands[b], key, d)
		}
	}
	k.bytes -= int64(4 * len(d.f.Sketch.h))
	if k.bands == nil {
		k.x.Remove(id)
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
func (k *Kept) AddIfNew(id string, f Features) (KeptMatch, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	ms, err := k.matchLocked(&f, 1)
	if err != nil {
		return KeptMatch{}, false, err
	}
	if len(ms) > 0 {
		return ms[0], true, nil
	}
	return KeptMatch{}, false, k.addLocked(id, f)
}

// matchLocked gathers the candidates (the index at QueryK, the exact map),
// puts them in priority order and keeps those that Rule.Match accepts.
func (k *Kept) matchLocked(f *Features, limit int) ([]KeptMatch, error) {
	var cands []*keptDoc
	switch {
	case k.bands != nil:
		if len(f.Bands) == len(k.bands) {
			for b, key := range f.Bands {
				cands = append(cands, k.bands[b][key]...)
			}
		}
	case !f.noFP():
		hits, err := k.x.Query(f.FP, k.rule.QueryK(), 0)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			if d, ok := k.docs[h.ID]; ok {
				cands = append(cands, d)
			}
		}
	}
	cands = append(cands, k.exact[f.Exact]...)
	slices.SortFunc(cands, func(a, b *keptDoc) int { return cmp.Compare(a.seq, b.seq) })
	cands = slices.Compact(cands)
	var out []KeptMatch
	for _, d := range cands {
		if !k.rule.Duplicates(&d.f, f) {
			continue
		}
		out = append(out, KeptMatch{ID: d.id, Seq: d.seq, Distance: simhash.Distance(d.f.FP, f.FP),
			Score: k.rule.Score(&d.f, f), Exact: d.f.Exact == f.Exact})
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out, nil
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
	return fmt.Sprintf("method=%s profile=%s verify=%s shingle=%d", o.Method, o.Profile, o.Verify, o.Shingle)
}

// WriteTo writes the set in priority order.
func (k *Kept) writeTo(w io.Writer, settings string) error {
	k.mu.RLock()
	docs := make([]*keptDoc, 0, len(k.docs))
	for _, d := range k.docs {
		docs = append(docs, d)
	}
	k.mu.RUnlock()
	slices.SortFunc(docs, func(a, b *keptDoc) int { return cmp.Compare(a.seq, b.seq) })

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
	v, err := binary.ReadUvarint(br)
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
	n, err := binary.ReadUvarint(br)
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

func (s *Sketch) readBinary(r io.ByteReader) error {
	n, err := binary.ReadUvarint(r)
	if err != nil || n > 1<<32-1 {
		return fmt.Errorf("sketch size")
	}
	shift, err := r.ReadByte()
	if err != nil || shift > 31 {
		return fmt.Errorf("sketch modulus")
	}
	c, err := binary.ReadUvarint(r)
	if err != nil || c > n {
		return fmt.Errorf("sketch count")
	}
	if br, ok := r.(*sliceReader); ok && c > uint64(len(br.b)-br.i) {
		return fmt.Errorf("sketch count")
	}
	h := make([]uint32, c)
	prev := uint64(0)
	for i := range h {
		d, err := binary.ReadUvarint(r)
		if err != nil || prev+d > 1<<32-1 || (i > 0 && d == 0) {
			return fmt.Errorf("sketch hash %d", i)
		}
		prev += d
		h[i] = uint32(prev)
	}
	s.h, s.n, s.shift = h, uint32(n), shift
	return nil
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
	b []byte
	i int
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
	n, err := binary.ReadUvarint(r)
	if err != nil || n > index.MaxIDBytes {
		return "", fmt.Errorf("bad string length")
	}
	b, err := r.next(int(n))
	return string(b), err
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

// MarshalBinary is AppendBinary to a new slice.
func (f *Features) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary decodes what MarshalBinary wrote.
func (f *Features) UnmarshalBinary(b []byte) error {
	r := &sliceReader{b: b}
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
	t, err1 := binary.ReadUvarint(r)
	l, err2 := binary.ReadUvarint(r)
	if err := errors.Join(err1, err2); err != nil || t > 1<<32-1 || l > 1<<32-1 {
		return fmt.Errorf("counts")
	}
	f.Tokens, f.Length = uint32(t), uint32(l)
	f.Empty = f.Tokens == 0
	if err := f.Sketch.readBinary(r); err != nil {
		return err
	}
	nb, err := binary.ReadUvarint(r)
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
