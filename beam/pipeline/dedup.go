package pipeline

import (
	"context"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/rule"
)

// Result holds the pipeline's PCollections, for tests and for further
// transforms.
type Result struct {
	Keys       beam.PCollection // KV<key partition, batch of (candidate key, position)>
	Stars      beam.PCollection // KV<range, batch of starEdge> of every bucket of two or more
	Candidates beam.PCollection // KV<position, label>: candidate components (MethodMinHash)
	Edges      beam.PCollection // KV<A, B>: verified pairs (and links of coarsened stars)
	Labels     beam.PCollection // KV<position, component label> of the documents in an edge
	Duplicates beam.PCollection // KV<range, Line>: dedup.Duplicate JSON of the removed documents
	Clusters   beam.PCollection // KV<range, Line>: dedup.Cluster JSON
}

// Dedup adds the dedup pipeline over opt.Inputs to s and writes the outputs
// opt names. Options and output paths are checked (and the inputs listed and
// cut into ranges) here, before anything runs.
func Dedup(s beam.Scope, opt Options) (Result, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return Result{}, err
	}
	if err := checkOutputs(opt); err != nil {
		return Result{}, err
	}
	if opt.Output != "" {
		// Kept Parquet rows are copied under their file's schema by
		// 'neardup dedup'; this pipeline writes lines.
		format, err := corpus.ParseFormat(opt.Format)
		if err != nil {
			return Result{}, err
		}
		if pq, err := anyParquet(context.Background(), opt.Inputs, format); err != nil {
			return Result{}, err
		} else if pq {
			return Result{}, fmt.Errorf("%w: --output with Parquet input: this pipeline writes kept lines, not Parquet rows; use --duplicates (and --clusters), or 'neardup dedup --output' for the kept rows", ErrOutput)
		}
	}
	in, err := Read(s, opt)
	if err != nil {
		return Result{}, err
	}
	keys, sims, counts := Keys(s, opt, in)
	stars := Stars(s, opt, keys, sims, counts, in.KeyParts)
	byRange, links := Links(s, opt, in, stars)
	var cands, edges, direct beam.PCollection
	if opt.Method == rule.MethodMinHash {
		// Small candidate components are decided as a whole; the
		// documents of larger ones go through verified stars (direct.go).
		cands = CandidateComponents(s, opt, links, in.KeyParts)
		self, leaves, comp := Data(s, opt, in, byRange, Direct(s, opt, cands))
		edges, direct = Verify(s, opt, self, leaves), comp
	} else {
		edges = links // unverified: see doc.go
	}
	labels := Components(s, opt, edges, in.KeyParts)
	dups, clusters := Decide(s, opt, in, labels, direct)
	Write(s, opt, in.Ranges, counts, dups, clusters, in.N)
	return Result{Keys: keys, Stars: stars, Candidates: cands, Edges: edges, Labels: labels, Duplicates: dups, Clusters: clusters}, nil
}
