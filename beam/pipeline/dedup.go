package pipeline

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Result holds the pipeline's PCollections, for tests and for further
// transforms.
type Result struct {
	Docs       beam.PCollection // Doc
	Features   beam.PCollection // DocFeatures
	Pairs      beam.PCollection // Pair: distinct candidate pairs
	Labels     beam.PCollection // KV<position, component label> of the documents in a pair
	Kept       beam.PCollection // Line: output lines of the kept documents
	Duplicates beam.PCollection // Line: dedup.Duplicate JSON of the removed documents
	Clusters   beam.PCollection // Line: dedup.Cluster JSON
}

// Dedup adds the dedup pipeline over opt.Inputs to s and writes the outputs
// opt names. Options and output paths are checked (and the inputs listed)
// here, before anything runs.
func Dedup(s beam.Scope, opt Options) (Result, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return Result{}, err
	}
	if err := checkOutputs(opt); err != nil {
		return Result{}, err
	}
	docs, err := Read(s, opt)
	if err != nil {
		return Result{}, err
	}
	return dedupDocs(s, opt, docs), nil
}

// dedupDocs is Dedup after Read.
func dedupDocs(s beam.Scope, opt Options, docs beam.PCollection) Result {
	outLines, feats, entries := Features(s, opt, docs)
	pairs := Candidates(s, opt, entries)
	labels := Components(s, opt.Rounds, pairs)
	dups, clusters := Decide(s, opt, feats, pairs, labels)
	kept := Kept(s, outLines, dups)
	for _, o := range []struct {
		path  string
		lines beam.PCollection
	}{{opt.Output, kept}, {opt.Duplicates, dups}, {opt.Clusters, clusters}} {
		if o.path != "" {
			Write(s, o.path, o.lines)
		}
	}
	return Result{Docs: docs, Features: feats, Pairs: pairs, Labels: labels, Kept: kept, Duplicates: dups, Clusters: clusters}
}
