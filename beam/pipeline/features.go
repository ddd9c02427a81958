package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/minhash"
)

// DocFeatures is a document's id and its dedup.Features as
// Features.MarshalBinary encodes them (what the rule needs: fingerprint,
// token-sequence hash, counts, shingle set).
type DocFeatures struct {
	Pos      uint64
	ID       string
	Features []byte
}

// Entry is what the candidate stage needs of a document: Rule.Near reads
// the fingerprint, the token-sequence hash and the token count. Shard is set
// when the entry's key is split (see splitFn).
type Entry struct {
	Pos    uint64
	FP     uint64
	Exact  uint64
	Tokens uint32
	Shard  uint16
}

func (e *Entry) features() dedup.Features {
	return dedup.Features{FP: e.FP, Exact: e.Exact, Tokens: e.Tokens}
}

// Band keys of one document, for MethodMinHash: its Entry goes into one
// group per band.
type bandEntry struct {
	E    Entry
	Keys []uint64
}

// featuresFn computes each document's features with dedup.Extractor (the
// same hasher as dedup.Run, inside the Extractor) and emits its output line, its features and its candidate
// entry (with its band keys under MethodMinHash).
type featuresFn struct {
	Rule ruleConfig

	ext *dedup.Extractor
	lsh *minhash.LSH
}

func (f *featuresFn) Setup() error {
	var err error
	f.ext, err = dedup.NewExtractor(f.Rule.options())
	if f.Rule.Method == dedup.MethodMinHash {
		f.lsh = minhash.NewLSH(f.Rule.Bands, f.Rule.Rows)
	}
	return err
}

func (f *featuresFn) ProcessElement(ctx context.Context, d Doc, out func(uint64, []byte), feats func(DocFeatures), entries func(bandEntry)) error {
	ft := f.ext.Extract(d.Text)
	b, err := ft.MarshalBinary()
	if err != nil {
		return err
	}
	out(d.Pos, d.Out)
	feats(DocFeatures{Pos: d.Pos, ID: d.ID, Features: b})
	be := bandEntry{E: Entry{Pos: d.Pos, FP: ft.FP, Exact: ft.Exact, Tokens: ft.Tokens}}
	// As dedup.Run: documents without tokens stay out of the LSH (they
	// match only exact copies).
	if f.lsh != nil && ft.Tokens > 0 {
		if be.Keys, err = f.lsh.BandKeys(nil, ft.Sig); err != nil {
			return err
		}
	}
	entries(be)
	return nil
}

// Features computes the features of docs. It returns the output lines by
// position, the DocFeatures and the candidate entries.
func Features(s beam.Scope, opt Options, docs beam.PCollection) (outLines, feats, entries beam.PCollection) {
	s = s.Scope("Features")
	return beam.ParDo3(s, &featuresFn{Rule: opt.ruleConfig()}, docs)
}
