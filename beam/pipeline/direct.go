package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Candidate components decided directly. The candidate graph (a star per
// bucket, unverified) is coarser than the batch's graph E, so its
// components are unions of E's and keep-first decides each exactly (see
// doc.go). Verifying the stars first makes the components smaller, and
// costs shipping every candidate's features to each distinct centre it is a
// leaf of (on a corpus of versions, about three) and once more to its
// component. A candidate component of at most DirectComponent documents is
// small enough to decide as a whole: its documents' features travel once,
// to it, and its stars are not verified. Only the documents of larger ones
// take the verified stars.

var (
	candidateSize = beam.NewDistribution("neardup", "candidate_component_size")
	directDocs    = beam.NewCounter("neardup", "direct_documents")
	starDocs      = beam.NewCounter("neardup", "star_documents")
)

// memberOf swaps a candidate label KV<position, label> for its group by
// label.
func memberOf(pos, label uint64) (uint64, uint64) { return label, pos }

// directFn emits, for each document of a candidate component of at most Max
// documents, KV<range, starEdge{document, label}>: the document's data goes
// to its component (dataFn). A larger component emits nothing: its
// documents' stars are verified. One call holds at most Max positions.
type directFn struct {
	Max     int
	Shuffle shuffleCounter
}

func (f *directFn) ProcessElement(ctx context.Context, label uint64, members func(*uint64) bool, emit func(uint64, starEdge)) {
	held := make([]uint64, 0, 16)
	var p uint64
	for members(&p) {
		if len(held) == f.Max {
			n := int64(len(held)) + 1
			for members(&p) {
				n++
			}
			candidateSize.Update(ctx, n)
			starDocs.Inc(ctx, n)
			return
		}
		held = append(held, p)
	}
	candidateSize.Update(ctx, int64(len(held)))
	directDocs.Inc(ctx, int64(len(held)))
	for _, p := range held {
		r, e := uint64(rangeOf(p)), starEdge{Member: p, Centre: label}
		f.Shuffle.add(ctx, "direct_labels", r, e)
		emit(r, e)
	}
}

// Direct groups the candidate labels (KV<position, label>) by component and
// returns the documents of the components of at most opt.DirectComponent
// documents as KV<range, starEdge{document, label}>.
func Direct(s beam.Scope, opt Options, candidates beam.PCollection) beam.PCollection {
	s = s.Scope("Direct components")
	sh := shuffleCounter{On: opt.CountShuffle}
	byLabel := countU64(s, sh, "candidates", beam.ParDo(s, memberOf, candidates))
	return beam.ParDo(s, &directFn{Max: opt.DirectComponent, Shuffle: sh}, beam.GroupByKey(s, byLabel))
}
