package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
)

// Line is one line of an output file at the position that orders it.
type Line struct {
	Pos  uint64
	Data []byte // with its "\n"
}

var (
	removedCount  = beam.NewCounter("neardup", "removed")
	componentSize = beam.NewDistribution("neardup", "component_size")
)

// labelByRange keys a document's component label by the document's range,
// for the read that sends its data to the component.
func labelByRange(pos, label uint64) (uint64, starEdge) {
	return uint64(rangeOf(pos)), starEdge{Member: pos, Centre: label}
}

// decideFn runs the keep-first rule over one component: documents in input
// order, each compared with the kept documents it is a candidate of (those
// sharing a band key or its token-sequence hash under MethodMinHash, every
// kept one, filtered by Rule.Near, under MethodSimHash), in input order,
// and removed in favour of the first it duplicates: rule.Rule.Match, as
// the batch's keepFirstBuckets. No edge of the batch's graph leaves a
// component, so the verdicts are the batch's. One call holds the
// component: at most MaxComponent documents' features.
type decideFn struct {
	Rule         ruleConfig
	MaxComponent int
	Shuffle      shuffleCounter

	rule *rule.Rule
}

func (f *decideFn) Setup() (err error) { f.rule, err = f.Rule.rule(); return err }

func (f *decideFn) ProcessElement(ctx context.Context, label uint64, iter func(*docData) bool,
	emitDup func(uint64, Line), emitCluster func(uint64, Line)) error {
	var docs []docData
	var d docData
	for iter(&d) {
		if len(docs) == f.MaxComponent {
			return fmt.Errorf("pipeline: the component of position %d (read range %d, its line %d) has more than %d documents: raise --max-component, or see the component's documents with a smaller input",
				label, rangeOf(label), label&(1<<lineBits-1), f.MaxComponent)
		}
		docs = append(docs, d)
	}
	componentSize.Update(ctx, int64(len(docs)))
	slices.SortFunc(docs, func(a, b docData) int { return cmp.Compare(a.Pos, b.Pos) })
	fs := make([]rule.Features, len(docs))
	for i := range docs {
		if err := fs[i].UnmarshalBinary(docs[i].Features); err != nil {
			return fmt.Errorf("pipeline: features of %q: %w", docs[i].ID, err)
		}
	}
	keeper := f.keepFirst(fs)

	clusters := map[int32]*dedup.Cluster{}
	var order []int32 // keepers in the order of their first removed document
	first := map[int32]uint64{}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i, k := range keeper {
		if int(k) == i {
			continue
		}
		removedCount.Inc(ctx, 1)
		buf.Reset()
		if err := enc.Encode(f.duplicate(&docs[i], &fs[i], &docs[k], &fs[k])); err != nil {
			return err
		}
		l := Line{Pos: docs[i].Pos, Data: slices.Clone(buf.Bytes())}
		f.Shuffle.add(ctx, "outputs", uint64(rangeOf(l.Pos)), l)
		emitDup(uint64(rangeOf(l.Pos)), l)
		c, ok := clusters[k]
		if !ok {
			c = &dedup.Cluster{KeptID: docs[k].ID, IDs: []string{docs[k].ID}}
			clusters[k] = c
			order = append(order, k)
			first[k] = docs[i].Pos
		}
		c.IDs = append(c.IDs, docs[i].ID)
	}
	for _, k := range order {
		c := clusters[k]
		c.Size = len(c.IDs)
		buf.Reset()
		if err := enc.Encode(c); err != nil {
			return err
		}
		l := Line{Pos: first[k], Data: slices.Clone(buf.Bytes())}
		f.Shuffle.add(ctx, "outputs", uint64(rangeOf(l.Pos)), l)
		emitCluster(uint64(rangeOf(l.Pos)), l)
	}
	return nil
}

// keepFirst returns keeper[i]: i when document i (in input order) is kept,
// else the kept document it duplicates.
func (f *decideFn) keepFirst(fs []rule.Features) []int32 {
	keeper := make([]int32, len(fs))
	byKey := map[uint64][]int32{} // MethodMinHash: kept documents by candidate key, ascending
	var kept []int32              // MethodSimHash: every kept document, ascending
	var cands []int32
	var keys []uint64
	minHash := f.Rule.Method == rule.MethodMinHash
	for y := range fs {
		fy := &fs[y]
		keeper[y] = int32(y)
		if minHash {
			keys = append(keys[:0], exactKey(fy.Exact))
			if !f.rule.ExactOnly(fy) {
				for b, v := range fy.Bands {
					keys = append(keys, bandKey(b, v))
				}
			}
			cands = cands[:0]
			for _, k := range keys {
				cands = append(cands, byKey[k]...)
			}
			slices.Sort(cands)
			cands = slices.Compact(cands)
		} else {
			cands = kept
		}
		for _, x := range cands {
			if f.rule.Duplicates(&fs[x], fy) {
				keeper[y] = x
				break
			}
		}
		if keeper[y] != int32(y) {
			continue
		}
		if minHash {
			for _, k := range keys {
				byKey[k] = append(byKey[k], int32(y))
			}
		} else {
			kept = append(kept, int32(y))
		}
	}
	return keeper
}

// duplicate is the report of removed document d against kept document k, as
// dedup.Run writes it.
func (f *decideFn) duplicate(d *docData, fd *rule.Features, k *docData, fk *rule.Features) dedup.Duplicate {
	dup := dedup.Duplicate{DupID: d.ID, KeptID: k.ID, Exact: fd.Exact == fk.Exact}
	if f.Rule.Method == rule.MethodSimHash {
		dist := simhash.Distance(fd.FP, fk.FP)
		sim := simhash.Similarity(dist, 64)
		dup.Distance, dup.Similarity = &dist, &sim
	}
	j := f.rule.Score(fk, fd)
	dup.Jaccard = &j
	return dup
}

// waveFn passes on the data of the components of one wave: those whose
// label mixes to Wave modulo Waves.
type waveFn struct{ Wave, Waves int }

func (f *waveFn) ProcessElement(label uint64, d docData, emit func(uint64, docData)) {
	if waveOf(label, f.Waves) == f.Wave {
		emit(label, d)
	}
}

func waveOf(label uint64, waves int) int { return int(simhash.Mix64(label, tagWave) % uint64(waves)) }

const tagWave = 0x77617665 // "wave"

// waveDone consumes a wave's duplicates lines and emits nothing: its empty
// output, complete once the wave's keep-first is, goes into the next wave's
// grouping, which a runner starts only once all its inputs are complete.
func waveDone(uint64, Line, func(uint64, docData)) {}

// Decide applies the keep-first rule per component: the ranges are read
// again, and the data of each document with a label goes to its component;
// direct, when valid, holds the data of components sent on already (Data).
// It returns the duplicates and clusters output lines keyed by the read
// range of the document they are written at.
//
// The components are decided in waves (in.Waves, or opt.Waves): wave w
// groups the data of the components whose label mixes to w, and its
// grouping waits for wave w-1's keep-first to finish: an empty output of
// it is one of the grouping's inputs (not a side input of the keep-first:
// prism's scheduler spins while a stage that reads a side input runs a
// bundle). The result is the same as one wave's. A runner that holds a
// shuffle's elements in memory until their consumer has run (prism in
// process holds the grouped input of a stage and then, while its one
// bundle runs, about three more copies of it: the bundle's encoding, the
// joined block, the gRPC message) then groups the data of one wave at a
// time while the others' wait as elements, not all of it three times over: the
// components' data is the largest shuffle of a run on web text (252 of 476
// bytes per document at 1M). Waves run one after the other, but one
// keep-first stage is one bundle on prism anyway; a cluster runner loses
// the overlap of the waves' groupings.
func Decide(s beam.Scope, opt Options, in inputs, labels, direct beam.PCollection) (dups, clusters beam.PCollection) {
	s = s.Scope("Decide")
	sh := shuffleCounter{On: opt.CountShuffle}
	gs := s.Scope("Data to components")
	byRange := beam.ParDo(gs, labelByRange, labels)
	if sh.On {
		byRange = beam.ParDo(gs, &countEdgeFn{Stage: "labels", Shuffle: sh}, byRange)
	}
	_, _, comp := readData(gs, opt, in, beam.PCollection{}, byRange, "component")
	data := []beam.PCollection{comp}
	if direct.IsValid() {
		data = append(data, direct)
	}
	ks := s.Scope("Keep first")
	waves := opt.Waves
	if waves == 0 {
		waves = in.Waves
	}
	f := &decideFn{Rule: opt.ruleConfig(), MaxComponent: opt.MaxComponent, Shuffle: sh}
	var after beam.PCollection // the wave before's signal; none before the first
	var ds, cs []beam.PCollection
	for w := range max(waves, 1) {
		ws, part := ks, data
		if waves > 1 {
			// Each wave's part is cut from each producer's output, not
			// from their Flatten: prism runs a Flatten's consumers as
			// stages of their own, each fed the whole of it.
			ws, part = ks.Scope(fmt.Sprintf("Wave %d", w+1)), nil
			for _, c := range data {
				part = append(part, beam.ParDo(ws, &waveFn{Wave: w, Waves: waves}, c))
			}
		}
		if after.IsValid() {
			part = append(part, after)
		}
		d, c := beam.ParDo2(ws, f, beam.GroupByKey(ws, beam.Flatten(ws, part...)))
		if w+1 < waves {
			after = beam.ParDo(ws, waveDone, d)
		}
		ds, cs = append(ds, d), append(cs, c)
	}
	if len(ds) == 1 {
		return ds[0], cs[0]
	}
	return beam.Flatten(ks, ds...), beam.Flatten(ks, cs...)
}
