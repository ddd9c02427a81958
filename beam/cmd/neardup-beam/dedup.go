package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/pprof"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/neardup/neardup/beam/pipeline"
	"github.com/neardup/neardup/rule"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"
)

const usage = `usage: neardup-beam dedup [flags] INPUT...

Deduplicates JSONL documents (plain, .gz, .zst; local paths or gs://) with
the verdicts of "neardup dedup", on an Apache Beam runner (--runner prism
runs in this process). Flags:
`

// dedupFlags are the flags of "neardup dedup" that mean the same here.
type dedupFlags struct {
	opt                    pipeline.Options
	cpuProfile, memProfile string
}

// register defines the flags on fs, which also holds Beam's (--runner,
// --endpoint, --project, ...): Beam reads its options from the global flag
// set, and a worker started by a runner gets only those.
func (f *dedupFlags) register(fs *flag.FlagSet) {
	o := &f.opt
	fs.StringVar(&o.Output, "output", "", "write the kept documents (original lines, input order) to this file")
	fs.StringVar(&o.Duplicates, "duplicates", "", "write one JSON object per removed document to this file")
	fs.StringVar(&o.Clusters, "clusters", "", "write one JSON object per kept document with duplicates to this file")
	fs.StringVar(&o.Method, "method", rule.DefaultMethod, "candidate method: simhash or minhash")
	fs.StringVar(&o.Profile, "profile", rule.DefaultProfile, "features profile for the SimHash fingerprint")
	fs.IntVar(&o.K, "k", rule.DefaultK, "Hamming distance for candidate pairs (simhash)")
	fs.IntVar(&o.KShort, "k-short", 0, "distance for pairs with a short document (default max(12, k))")
	fs.Float64Var(&o.Threshold, "threshold", rule.DefaultThreshold, "Jaccard threshold of the verification")
	fs.IntVar(&o.Shingle, "shingle", rule.DefaultShingle, "shingle width in tokens")
	fs.BoolVar(&o.SkipBad, "skip-bad", false, "skip malformed lines (counted in the bad_inputs metric) instead of failing")
	fs.StringVar(&o.IDField, "id-field", "id", "JSON field (or WARC header; id means WARC-Target-URI) holding the document id")
	fs.StringVar(&o.TextField, "text-field", "text", "JSON field holding the text")
	fs.StringVar(&o.Format, "format", "auto", "input format: auto, jsonl, text, lines or warc")
	fs.Int64Var(&o.SplitBytes, "split-bytes", pipeline.DefaultSplitBytes, "read uncompressed JSONL and lines files in byte ranges of this size, one per worker")
	fs.Int64Var(&o.HoldBytes, "hold-bytes", pipeline.DefaultHoldBytes, "features of a star's leaves one worker holds to verify the pairs among them")
	fs.Int64Var(&o.MaxChecks, "max-checks", pipeline.DefaultMaxChecks, "leaf pairs one star tests (with the prefilter, then verified) before it keeps its leaves' links to its centre unfiltered or unverified")
	fs.IntVar(&o.Rounds, "cc-rounds", pipeline.DefaultRounds, "large-star/small-star rounds before the residual union-find of the connected components")
	fs.IntVar(&o.MaxResidual, "max-residual", pipeline.DefaultMaxResidual, "label pairs left apart by the rounds that one worker joins; more fail the run")
	fs.IntVar(&o.MaxComponent, "max-component", pipeline.DefaultMaxComponent, "documents of one component decided on one worker; a larger component fails the run")
	fs.IntVar(&o.DirectComponent, "direct-component", 0, "documents of a candidate component decided as a whole, without verified stars; larger ones verify their stars (default 4096, or --max-component if less; 1: verify every star)")
	fs.IntVar(&o.Waves, "waves", 0, "parts the components are decided in, one after the other (default one per 256 MiB of input, at most 16)")
	fs.BoolVar(&o.Parts, "parts", false, "leave each output as one file per read range (PATH-00000-of-00012) instead of concatenating them")
	fs.BoolVar(&o.CountShuffle, "count-shuffle", false, "count the encoded bytes entering every shuffle in the shuffle_bytes metrics")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (with --runner prism, the whole run) to this file")
	fs.StringVar(&f.memProfile, "memprofile", "", "write a heap profile of this process at its largest heap to this file")
}

// run parses "dedup" and its flags from args, or runs as a Beam worker when
// a runner started this binary as one (beam.Init does not return then).
func run(ctx context.Context, args []string) error {
	sub := len(args) > 0 && args[0] == "dedup"
	if sub {
		args = args[1:]
	}
	var f dedupFlags
	f.register(flag.CommandLine)
	flag.CommandLine.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usage)
		flag.CommandLine.PrintDefaults()
	}
	if err := flag.CommandLine.Parse(args); err != nil {
		return err
	}
	beam.Init()
	if !sub {
		flag.CommandLine.Usage()
		return errors.New("want the subcommand dedup")
	}
	f.opt.Inputs = flag.CommandLine.Args()
	if f.opt.Output == "" && f.opt.Duplicates == "" && f.opt.Clusters == "" {
		return errors.New("nothing to write: give --output, --duplicates or --clusters")
	}
	p, s := beam.NewPipelineWithRoot()
	if _, err := pipeline.Dedup(s, f.opt); err != nil {
		return err
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); pf.Close() }()
	}
	if f.memProfile != "" {
		pctx, stop := context.WithCancel(ctx)
		defer stop()
		go heapPeak(pctx, f.memProfile)
	}
	res, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		return err
	}
	if res != nil {
		printMetrics(os.Stderr, res.Metrics().AllMetrics())
	}
	return nil
}

// printMetrics writes the pipeline's counters, summed over the steps that
// update each, and its distributions, one per line in name order.
func printMetrics(w io.Writer, m metrics.QueryResults) {
	sums := map[string]int64{}
	for _, c := range m.Counters() {
		if c.Key.Namespace == "neardup" {
			sums[c.Key.Name] += c.Result()
		}
	}
	dists := map[string]metrics.DistributionValue{}
	for _, d := range m.Distributions() {
		if d.Key.Namespace != "neardup" {
			continue
		}
		v, ok := dists[d.Key.Name]
		r := d.Result()
		if !ok {
			dists[d.Key.Name] = r
			continue
		}
		v.Count += r.Count
		v.Sum += r.Sum
		v.Min, v.Max = min(v.Min, r.Min), max(v.Max, r.Max)
		dists[d.Key.Name] = v
	}
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		fmt.Fprintf(w, "%s %d\n", name, sums[name])
	}
	for _, name := range slices.Sorted(maps.Keys(dists)) {
		d := dists[name]
		fmt.Fprintf(w, "%s count %d sum %d min %d max %d\n", name, d.Count, d.Sum, d.Min, d.Max)
	}
}
