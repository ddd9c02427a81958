package pipeline

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
)

// docData is what verification and the decision need of a document: its
// position, id and rule.Features as Features.MarshalBinary encodes them
// (token-sequence hash, counts, shingle set, band keys; the fingerprint
// under MethodSimHash). Verification gets neither the id nor the band
// keys.
type docData struct {
	Pos      uint64
	ID       string
	Features []byte
}

// simEntry is a document's fingerprint, keyed by the plan tables once the
// document count is known (MethodSimHash).
type simEntry struct {
	Pos uint64
	FP  uint64
}

// Candidate keys are 64-bit: a band key, a plan table's key block, or the
// token-sequence hash, mixed with a tag of its kind and number so that keys
// of different bands and tables never meet (a collision of two mixed keys
// only adds a candidate, which verification rejects).
const (
	tagExact = 0x6578616374 // "exact"
	tagBand  = 0x62616e6400 // "band" + band number
	tagTable = 0x7461620000 // "tab" + table number
)

func exactKey(exact uint64) uint64      { return simhash.Mix64(exact, tagExact) }
func bandKey(b int, v uint64) uint64    { return simhash.Mix64(v, tagBand+uint64(b)) }
func tableKey(t int, blk uint64) uint64 { return simhash.Mix64(blk, tagTable+uint64(t)) }

// keysFn reads a range and computes each document's features with the
// rule's extractor (rule.NewRuleExtractor: the batch's hasher and
// shingles, no SimHash fingerprint under MethodMinHash), so that a text is
// never shuffled, and emits its candidate keys: the band keys and the
// token-sequence hash, a fixed 25 under the defaults, batched by key
// partition (keyBatcher); under MethodSimHash its fingerprint, for the
// plan's keys; per range its document count. The features themselves are
// not kept: most documents share no key with another, and those that do
// are read again (linkFn for their prefilters, dataFn).
type keysFn struct {
	rangeDocs
	Rule     ruleConfig
	KeyParts int // partitions of the candidate keys
	Shuffle  shuffleCounter

	ext  *rule.Extractor
	rule *rule.Rule
}

func (f *keysFn) Setup() (err error) {
	if f.rule, err = f.Rule.rule(); err != nil {
		return err
	}
	f.ext, err = rule.NewRuleExtractor(f.Rule.options())
	return err
}

func (f *keysFn) ProcessElement(ctx context.Context, _ uint64, r inputRange,
	keys func(int, []byte), sims func(simEntry), counts func(int)) error {
	kb := newKeyBatcher(f.KeyParts, func(part int, b []byte) {
		f.Shuffle.add(ctx, "keys", part, b)
		keys(part, b)
	})
	n := 0
	// Neither ids nor the file's line numbers are needed here: no line
	// counts, so that the read fuses with the ranges' stage.
	err := f.read(ctx, r, -1, true, func(pos uint64, doc *corpus.Doc, _ []byte) error {
		ft := f.ext.Extract(doc.Text)
		n++
		docsRead.Inc(ctx, 1)
		kb.add(exactKey(ft.Exact), pos)
		if f.rule.ExactOnly(&ft) {
			return nil // matches exact copies only (as dedup.Run, out of the LSH or join)
		}
		if f.Rule.Method == rule.MethodMinHash {
			for b, v := range ft.Bands {
				kb.add(bandKey(b, v), pos)
			}
		} else {
			sims(simEntry{Pos: pos, FP: ft.FP})
		}
		return nil
	})
	kb.flush()
	counts(n)
	return err
}

// Keys reads the ranges and computes the documents' candidate keys. It
// returns the key batches, the fingerprints of MethodSimHash and the
// document count per range.
func Keys(s beam.Scope, opt Options, in inputs) (keys, sims, counts beam.PCollection) {
	s = s.Scope("Read and key")
	f := &keysFn{
		rangeDocs: rangeDocs{Format: opt.Format, IDField: opt.IDField, TextField: opt.TextField, SkipBad: opt.SkipBad},
		Rule:      opt.ruleConfig(),
		KeyParts:  in.KeyParts,
		Shuffle:   shuffleCounter{On: opt.CountShuffle},
	}
	return beam.ParDo3(s, f, in.Ranges)
}

// starEdge links a bucket member to the bucket's centre (itself, for the
// centre), or a document to its component's label: the unit of work of
// dataFn, keyed by the member's range.
type starEdge struct{ Member, Centre uint64 }

// dataFn reads a range again and sends the data (the features, extracted
// once more) of each document named by a component label or a star edge.
// A document with a label goes to its component, with its id and band keys
// (the third output), and nowhere else: its label is that of a component
// decided as a whole, so its stars need no verification. A document with
// star edges and no label goes, without id and band keys, to itself when it
// is a centre (the first output) and to each distinct centre it is a leaf
// of, however many buckets it shares with that centre (the second). A
// document named by neither is only read. One call holds the range's star
// edges and labels (16 bytes each, at most 25 star edges and one label per
// document of the range).
type dataFn struct {
	rangeDocs
	Rule    ruleConfig
	Shuffle shuffleCounter
	// Stage names the component output in the shuffle_bytes_STAGE metric.
	Stage string

	ext *rule.Extractor
}

func (f *dataFn) Setup() (err error) {
	f.ext, err = rule.NewRuleExtractor(f.Rule.options())
	return err
}

// sortedEdges collects labels sorted by member, without repeats.
func sortedEdges(iter func(*starEdge) bool) []starEdge {
	var es []starEdge
	var e starEdge
	for iter(&e) {
		es = append(es, e)
	}
	return sortEdges(es)
}

// sortEdges sorts star edges (or labels) by member, then target, and drops
// repeats.
func sortEdges(es []starEdge) []starEdge {
	slices.SortFunc(es, func(a, b starEdge) int {
		if c := cmp.Compare(a.Member, b.Member); c != 0 {
			return c
		}
		return cmp.Compare(a.Centre, b.Centre)
	})
	return slices.Compact(es)
}

func (f *dataFn) ProcessElement(ctx context.Context, _ uint64, rangeIter func(*inputRange) bool, edgeIter func(*[]byte) bool,
	labelIter func(*starEdge) bool, before func(*int64) bool, self func(uint64, docData), leaf func(uint64, docData),
	comp func(uint64, docData)) error {
	es, err := gather(edgeIter, appendStarEdges)
	if err != nil {
		return err
	}
	return f.send(ctx, rangeIter, sortEdges(es), sortedEdges(labelIter), before, self, leaf, comp)
}

// componentDataFn is dataFn for a read that sends documents to their
// components only (no star edges): a grouping of two inputs, where dataFn
// would need an empty third.
type componentDataFn struct{ dataFn }

func (f *componentDataFn) ProcessElement(ctx context.Context, _ uint64, rangeIter func(*inputRange) bool,
	labelIter func(*starEdge) bool, before func(*int64) bool, comp func(uint64, docData)) error {
	return f.send(ctx, rangeIter, nil, sortedEdges(labelIter), before, nil, nil, comp)
}

// send reads the range rangeIter gives and sends its documents' data as
// star edges es and labels ls (sorted by member) say.
func (f *dataFn) send(ctx context.Context, rangeIter func(*inputRange) bool, es, ls []starEdge, beforeIter func(*int64) bool,
	self, leaf, comp func(uint64, docData)) error {
	var r inputRange
	if !rangeIter(&r) {
		return errors.New("pipeline: edges for a range that was not read")
	}
	if len(es) == 0 && len(ls) == 0 {
		return nil
	}
	var before int64
	if r.split() && !beforeIter(&before) {
		return fmt.Errorf("pipeline: %s: no line count before range %d", r.Path, r.Index)
	}
	return f.read(ctx, r, before, false, func(pos uint64, doc *corpus.Doc, _ []byte) error {
		for len(es) > 0 && es[0].Member < pos {
			es = es[1:]
		}
		for len(ls) > 0 && ls[0].Member < pos {
			ls = ls[1:]
		}
		labelled := len(ls) > 0 && ls[0].Member == pos
		if !labelled && (len(es) == 0 || es[0].Member != pos) {
			return nil
		}
		ft := f.ext.Extract(doc.Text)
		d := docData{Pos: pos}
		if labelled {
			d.ID = doc.ID
		} else {
			// Verification needs neither the id nor the band keys
			// (see verifyFn: without them Rule.Near holds, and a
			// star's centre and leaf share a bucket's key).
			ft.Bands = nil
		}
		b, err := ft.MarshalBinary()
		if err != nil {
			return err
		}
		d.Features = b
		if labelled {
			t := ls[0].Centre
			f.Shuffle.add(ctx, f.Stage, t, d)
			comp(t, d)
			return nil
		}
		for ; len(es) > 0 && es[0].Member == pos; es = es[1:] {
			if t := es[0].Centre; t == pos {
				f.Shuffle.add(ctx, "centre", t, d)
				self(t, d)
			} else {
				f.Shuffle.add(ctx, "leaf", t, d)
				leaf(t, d)
			}
		}
		return nil
	})
}

// readData runs dataFn over the ranges with the star edge batches and the
// labels keyed by range (edges invalid: the labels only); stage names the
// component output's shuffle counter.
func readData(s beam.Scope, opt Options, in inputs, edges, labels beam.PCollection, stage string) (self, leaves, comp beam.PCollection) {
	f := dataFn{
		rangeDocs: rangeDocs{Format: opt.Format, IDField: opt.IDField, TextField: opt.TextField, SkipBad: opt.SkipBad},
		Rule:      opt.ruleConfig(),
		Shuffle:   shuffleCounter{On: opt.CountShuffle},
		Stage:     stage,
	}
	if !edges.IsValid() {
		return self, leaves, beam.ParDo(s, &componentDataFn{f}, beam.CoGroupByKey(s, in.Ranges, labels, in.Bases))
	}
	return beam.ParDo3(s, &f, beam.CoGroupByKey(s, in.Ranges, edges, labels, in.Bases))
}

// Data sends the candidates' data on: the documents of the candidate
// components direct names (KV<range, starEdge{document, label}>) to their
// components (comp), the others' to their star centres (self, the
// centres' own, and leaves).
func Data(s beam.Scope, opt Options, in inputs, stars, direct beam.PCollection) (self, leaves, comp beam.PCollection) {
	return readData(s.Scope("Data to centres and components"), opt, in, stars, direct, "direct")
}

// Candidate keys travel in batches: one element per key partition per
// range (or per flush) holding entries (key, position), instead of one
// element per key. A runner's cost per element (prism keeps each one as its
// own buffer, and a key per group) dwarfs a few bytes, and 25 keys a
// document made the key shuffle most of the elements of a run. The
// partitions are chosen by key (key mod parts); their number grows with the
// input (one per KeyPartBytes of input), so a partition's group stays the
// same size whatever the corpus.
//
// An entry is the key's 32 high bits (4 bytes, little-endian), then the
// position as a uvarint of its difference from the batch's previous entry
// (the first entry's from 0). A reader adds entries in input order, so the
// differences are small: a document's 25 keys share its position (a
// difference of 0 in each partition it already reached), and the next
// document's comes a few lines later. About 5 bytes an entry on web text
// where a fixed layout took 12, which the key shuffle (the largest of a run
// on web text) is made of.
const keyFlushBytes = 8 << 20 // entries a reader holds before it emits them

type keyBatcher struct {
	partBatches
	last []uint64 // the position of each partition's last entry
	emit func(part int, b []byte)
}

func newKeyBatcher(parts int, emit func(int, []byte)) *keyBatcher {
	pb := newPartBatches(parts)
	return &keyBatcher{partBatches: pb, last: make([]uint64, len(pb.parts)), emit: emit}
}

// add appends an entry; pos must not be less than the positions added
// before it (input order).
func (kb *keyBatcher) add(key, pos uint64) {
	p := int(key % uint64(len(kb.parts)))
	// The partition holds the key's low bits; 32 high bits tell keys apart
	// within it. Two keys of a partition that agree on them (about one pair
	// in 2^32) make a bucket of documents that share no key: its star's
	// pairs are candidates that verification rejects (or under simhash an
	// unverified link that merges two components), never a lost pair.
	n := len(kb.parts[p])
	if n == 0 {
		kb.last[p] = 0 // a new batch: its first entry's difference is from 0
	}
	kb.parts[p] = binary.AppendUvarint(binary.LittleEndian.AppendUint32(kb.parts[p], uint32(key>>32)), pos-kb.last[p])
	kb.last[p] = pos
	if kb.grew(p, n, keyFlushBytes) {
		kb.flush()
	}
}

func (kb *keyBatcher) flush() { kb.partBatches.flush(kb.emit) }

// partBatches holds a DoFn's output batches (keyBatcher's, edgeBatcher's),
// one per destination partition, and the bytes they hold together.
type partBatches struct {
	parts [][]byte
	held  int
}

func newPartBatches(parts int) partBatches {
	return partBatches{parts: make([][]byte, max(parts, 1))}
}

// grew counts the bytes partition p's batch gained since it held n, and
// reports whether the batches now hold limit bytes or more.
func (pb *partBatches) grew(p, n, limit int) bool {
	pb.held += len(pb.parts[p]) - n
	return pb.held >= limit
}

// flush hands each batch that holds anything to emit and starts them all
// anew (emit keeps its batch).
func (pb *partBatches) flush(emit func(part int, b []byte)) {
	for p, b := range pb.parts {
		if len(b) > 0 {
			emit(p, b)
			pb.parts[p] = nil
		}
	}
	pb.held = 0
}

// appendKeyEntries decodes a batch of keyBatcher entries onto es.
func appendKeyEntries(es []keyEntry, b []byte) ([]keyEntry, error) {
	var pos uint64
	for len(b) > 0 {
		if len(b) < 5 {
			return es, fmt.Errorf("pipeline: a key batch ends inside an entry (%d bytes left)", len(b))
		}
		key := uint64(binary.LittleEndian.Uint32(b))
		d, n := binary.Uvarint(b[4:])
		if n <= 0 {
			return es, errors.New("pipeline: a key batch holds a bad position")
		}
		pos += d
		es = append(es, keyEntry{key, pos})
		b = b[4+n:]
	}
	return es, nil
}
