package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/simhash"
)

// docData is what verification and the decision need of a document: its
// position, id and dedup.Features as Features.MarshalBinary encodes them
// (token-sequence hash, counts, shingle set, band keys; the fingerprint
// under MethodSimHash).
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

// readFn reads a range and computes each document's features with the
// rule's extractor (dedup.NewRuleExtractor: the batch's hasher and
// shingles, no SimHash fingerprint under MethodMinHash), so that a text is
// never shuffled. Per document it emits its candidate keys (KV<key,
// position>: the band keys and the token-sequence hash, a fixed 25 under
// the defaults), its docData (KV<position, docData>) and, under
// MethodSimHash, its fingerprint for the plan's keys; per range its
// document count.
type readFn struct {
	rangeDocs
	Rule    ruleConfig
	Shuffle shuffleCounter

	ext  *dedup.Extractor
	rule *dedup.Rule
}

func (f *readFn) Setup() (err error) {
	if f.rule, err = f.Rule.rule(); err != nil {
		return err
	}
	f.ext, err = dedup.NewRuleExtractor(f.Rule.options())
	return err
}

func (f *readFn) ProcessElement(ctx context.Context, r inputRange, lines func(*lineCount) bool,
	keys func(uint64, uint64), data func(uint64, docData), sims func(simEntry), counts func(int)) error {
	var m map[int]int64
	if r.split() {
		m = lineCounts(lines)
	}
	n := 0
	err := f.read(ctx, r, m, func(pos uint64, doc *corpus.Doc, _ []byte) error {
		ft := f.ext.Extract(doc.Text)
		b, err := ft.MarshalBinary()
		if err != nil {
			return err
		}
		n++
		docsRead.Inc(ctx, 1)
		d := docData{Pos: pos, ID: doc.ID, Features: b}
		f.Shuffle.add(ctx, "data", pos, d)
		data(pos, d)
		emitKey := func(k uint64) {
			f.Shuffle.add(ctx, "keys", k, pos)
			keys(k, pos)
		}
		emitKey(exactKey(ft.Exact))
		if f.rule.ExactOnly(&ft) {
			return nil // matches exact copies only (as dedup.Run, out of the LSH or join)
		}
		if f.Rule.Method == dedup.MethodMinHash {
			for b, v := range ft.Bands {
				emitKey(bandKey(b, v))
			}
		} else {
			sims(simEntry{Pos: pos, FP: ft.FP})
		}
		return nil
	})
	counts(n)
	return err
}

// Features reads the ranges and computes the documents' features. It
// returns the candidate keys, the docData by position, the fingerprints of
// MethodSimHash and the document count per range.
func Features(s beam.Scope, opt Options, ranges, lineCounts beam.PCollection) (keys, data, sims, counts beam.PCollection) {
	s = s.Scope("Read and extract")
	f := &readFn{
		rangeDocs: rangeDocs{Format: opt.Format, IDField: opt.IDField, TextField: opt.TextField, SkipBad: opt.SkipBad},
		Rule:      opt.ruleConfig(),
		Shuffle:   shuffleCounter{On: opt.CountShuffle},
	}
	return beam.ParDo4(s, f, ranges, beam.SideInput{Input: lineCounts})
}
