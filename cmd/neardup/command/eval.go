package command

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/internal/outfile"
	"github.com/neardup/neardup/rule"
)

type evalCmd struct {
	threshold       float64
	verifyThreshold float64
	profiles        string
	methods         string
	ks              string
	bits            string
	verify          string
	verifyProfile   string
	bandsRows       string
	perms           int
	json            bool
	plot            string
	html            string
	workers         int
	dedup           string
	dedupK          int
	dedupProfile    string
}

func newEvalCommand() *cobra.Command {
	var f evalCmd
	c := &cobra.Command{
		Use:   "eval [flags] CORPUS.jsonl[.zst]...",
		Short: "Measure precision and recall of near-duplicate settings against exact Jaccard",
		Long: `Compute the ground truth of each corpus (exact Jaccard of 5-token shingles, the
definition of the shared corpora README, with MinHash-LSH candidates: 32 bands
of 4 rows, so pairs at J >= 0.7 are missed with probability < 2e-4), print its
reference pair counts, then score every setting against J >= --threshold:
pair-level and document-level precision, recall and F1, and the time taken.

Settings are the product of --methods, --profiles, --bits and --verify:
  simhash  fingerprints of the profile, pairs within Hamming distance k (--k)
  minhash  MinHash-LSH over the profile's word 5-shingles (bands and rows from
           the threshold, or --bands-rows), no k
  naive    the README's baseline: unweighted 64-bit SimHash of the ground-truth
           shingles, never verified
Verification keeps a candidate only when the exact Jaccard of the word
5-shingles of the profile's tokens (or --verify-profile's) reaches
--verify-threshold (default: --threshold).

Exact duplicates (identical texts) are left out of truth and predictions; a
document is positive when it is in a true pair, predicted when it is in a
predicted pair.

--dedup also runs the dedup pipeline itself (the code path of 'neardup dedup'
with its defaults, the given method and --cluster, verification at
--verify-threshold) and scores what it removes: coverage (removed documents
that still have a kept document at truth J >= --threshold or with identical
text), residual (kept documents that still have such a kept partner), and
document precision, recall and F1 against the keep-first rule applied to the
truth (documents in input order; one is a true duplicate when an earlier
document the truth kept is a near-duplicate of it). Corpora are JSON Lines with "id" and "text", optionally zstd
compressed.`,
		Example: `  neardup eval testdata/corpora/en_spdx.jsonl.zst
  neardup eval --profiles default,shingles --verify on,off --k 0-12 --plot pr.png --html pr.html corpora/*.zst
  neardup eval --methods minhash --bands-rows 16x8 --json zh_laws.jsonl.zst`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("eval needs at least one CORPUS file (see '%s --help')", c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c.Context(), args, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fl := c.Flags()
	fl.Float64Var(&f.threshold, "threshold", 0.8, "ground-truth Jaccard threshold a pair must reach")
	fl.Float64Var(&f.verifyThreshold, "verify-threshold", 0, "Jaccard a verified candidate needs (0: --threshold)")
	fl.StringVar(&f.profiles, "profiles", "default", "comma-separated features profiles ("+strings.Join(features.Names(), ", ")+")")
	fl.StringVar(&f.methods, "methods", "naive,simhash,minhash", "comma-separated methods: simhash, minhash, naive")
	fl.StringVar(&f.ks, "k", "0-12", "Hamming distances: a range A-B or a comma-separated list")
	fl.StringVar(&f.bits, "bits", "64", "comma-separated SimHash widths: 32, 64, 128")
	fl.StringVar(&f.verify, "verify", "off,on", "verification: on, off or both (off,on)")
	fl.StringVar(&f.verifyProfile, "verify-profile", "", "profile whose word 5-shingles verify candidates (default: the setting's own)")
	fl.StringVar(&f.bandsRows, "bands-rows", "", "MinHash LSH bands×rows such as 16x8 (default: chosen for --threshold)")
	fl.IntVar(&f.perms, "perms", 128, "MinHash permutations")
	fl.BoolVar(&f.json, "json", false, "print the reports as JSON")
	fl.StringVar(&f.plot, "plot", "", "write a plot of precision and recall against k to FILE.svg or FILE.png")
	fl.StringVar(&f.html, "html", "", "write an HTML page with the plot and the tables to FILE")
	fl.IntVar(&f.workers, "workers", 0, "goroutines (0: all cores)")
	fl.StringVar(&f.dedup, "dedup", "simhash/greedy,minhash/greedy,simhash/components", "dedup pipeline runs to score, METHOD/CLUSTER comma-separated, or none")
	fl.IntVar(&f.dedupK, "dedup-k", 0, "--k of the simhash dedup runs (0: dedup's default)")
	fl.StringVar(&f.dedupProfile, "dedup-profile", "", "--profile of the simhash dedup runs (default: dedup's)")
	return c
}

// settings expands the flags into the product of settings.
func (f *evalCmd) settings() ([]eval.Setting, eval.Options, error) {
	opt := eval.Options{Threshold: f.threshold, VerifyThreshold: f.verifyThreshold, Perms: f.perms, Workers: f.workers}
	if f.threshold <= 0 || f.threshold > 1 {
		return nil, opt, usagef("--threshold %v: want a number in (0, 1]", f.threshold)
	}
	if f.verifyThreshold < 0 || f.verifyThreshold > 1 {
		return nil, opt, usagef("--verify-threshold %v: want a number in [0, 1]", f.verifyThreshold)
	}
	if f.perms < 1 || f.perms > 4096 {
		return nil, opt, usagef("--perms %d: want 1 to 4096", f.perms)
	}
	ks, err := parseKs(f.ks)
	if err != nil {
		return nil, opt, err
	}
	opt.Ks = ks
	var bands, rows int
	if f.bandsRows != "" {
		b, r, ok := strings.Cut(strings.ToLower(f.bandsRows), "x")
		bands, err = strconv.Atoi(b)
		if err == nil {
			rows, err = strconv.Atoi(r)
		}
		if !ok || err != nil || bands < 1 || rows < 1 || bands*rows > f.perms {
			return nil, opt, usagef("--bands-rows %q: want BxR with B·R <= --perms", f.bandsRows)
		}
	}
	var verifies []bool
	for _, v := range split(f.verify) {
		switch v {
		case "on", "true", "yes":
			verifies = append(verifies, true)
		case "off", "false", "no":
			verifies = append(verifies, false)
		default:
			return nil, opt, usagef("--verify %q: want on, off or off,on", v)
		}
	}
	var widths []int
	for _, b := range split(f.bits) {
		n, err := strconv.Atoi(b)
		if err != nil || (n != 32 && n != 64 && n != 128) {
			return nil, opt, usagef("--bits %q: want 32, 64 or 128", b)
		}
		widths = append(widths, n)
	}
	profiles := split(f.profiles)
	for _, p := range profiles {
		if _, err := features.Lookup(p); err != nil {
			return nil, opt, usageError{err}
		}
	}
	if f.verifyProfile != "" {
		if _, err := features.Lookup(f.verifyProfile); err != nil {
			return nil, opt, usageError{err}
		}
	}
	vp := func(verify bool) string {
		if verify {
			return f.verifyProfile
		}
		return ""
	}
	var out []eval.Setting
	for _, m := range split(f.methods) {
		if m == eval.MethodNaive {
			// The baseline is the unverified SimHash whatever --verify says.
			out = append(out, eval.Setting{Method: m})
			continue
		}
		for _, v := range verifies {
			switch m {
			case eval.MethodSimHash:
				for _, p := range profiles {
					for _, w := range widths {
						out = append(out, eval.Setting{Method: m, Profile: p, Bits: w, Verify: v, VerifyProfile: vp(v)})
					}
				}
			case eval.MethodMinHash:
				for _, p := range profiles {
					out = append(out, eval.Setting{Method: m, Profile: p, Verify: v, VerifyProfile: vp(v), Bands: bands, Rows: rows})
				}
			default:
				return nil, opt, usagef("--methods %q: want simhash, minhash or naive", m)
			}
		}
	}
	if len(out) == 0 {
		return nil, opt, usagef("no settings: give --methods, --profiles, --bits and --verify")
	}
	return out, opt, nil
}

func split(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// parseKs reads "A-B" or "a,b,c".
func parseKs(s string) ([]int, error) {
	bad := usagef("--k %q: want a range such as 0-12 or a list such as 0,3,6", s)
	if a, b, ok := strings.Cut(s, "-"); ok {
		lo, err1 := strconv.Atoi(strings.TrimSpace(a))
		hi, err2 := strconv.Atoi(strings.TrimSpace(b))
		if err1 != nil || err2 != nil || lo < 0 || hi < lo || hi > 128 {
			return nil, bad
		}
		var ks []int
		for k := lo; k <= hi; k++ {
			ks = append(ks, k)
		}
		return ks, nil
	}
	var ks []int
	for _, x := range split(s) {
		k, err := strconv.Atoi(x)
		if err != nil || k < 0 || k > 128 {
			return nil, bad
		}
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return nil, bad
	}
	return ks, nil
}

func (f *evalCmd) run(ctx context.Context, paths []string, stdout, stderr io.Writer) error {
	settings, opt, err := f.settings()
	if err != nil {
		return err
	}
	// Standard output carries the tables (or the JSON): a plot or page there
	// would be mixed into them.
	if f.plot == outfile.Stdout || f.html == outfile.Stdout {
		return usagef("--plot and --html need a file name: standard output carries the tables")
	}
	if f.plot != "" {
		if ext := strings.TrimPrefix(filepath.Ext(f.plot), "."); ext != "svg" && ext != "png" {
			return usagef("--plot %q: the name must end in .svg or .png", f.plot)
		}
	}
	var reports []*eval.Report
	for _, path := range paths {
		r, err := f.evalCorpus(ctx, path, settings, opt, stderr)
		if err != nil {
			return err
		}
		reports = append(reports, r)
		if !f.json {
			if err := r.WriteTable(stdout); err != nil {
				return err
			}
			fmt.Fprintln(stdout)
		}
	}
	if f.json {
		if err := eval.WriteJSON(stdout, reports); err != nil {
			return err
		}
	}
	if f.plot != "" {
		format := strings.TrimPrefix(filepath.Ext(f.plot), ".")
		if err := outfile.WriteFile(f.plot, nil, func(w io.Writer) error { return eval.WritePlot(w, reports, format) }); err != nil {
			return err
		}
	}
	if f.html != "" {
		if err := outfile.WriteFile(f.html, nil, func(w io.Writer) error { return eval.WriteHTML(w, reports) }); err != nil {
			return err
		}
	}
	return nil
}

func (f *evalCmd) evalCorpus(ctx context.Context, path string, settings []eval.Setting, opt eval.Options, stderr io.Writer) (*eval.Report, error) {
	docs, err := eval.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: %w", path, eval.ErrNoDocs)
	}
	name := filepath.Base(path)
	for _, ext := range []string{".zst", ".jsonl", ".ndjson", ".json", ".parquet"} {
		name = strings.TrimSuffix(name, ext)
	}
	start := time.Now()
	truth, err := eval.ComputeTruth(ctx, docs, eval.TruthOptions{Workers: f.workers})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sum := truth.Summarize(f.threshold)
	sum.Seconds = time.Since(start).Seconds()
	fmt.Fprintf(stderr, "%s: ground truth in %.1fs; scoring %d settings\n", name, sum.Seconds, len(settings))
	results, err := eval.Evaluate(ctx, docs, truth, settings, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	opt.EnsureDefaults()
	rep := &eval.Report{Corpus: name, Docs: truth.Docs, Distinct: truth.Distinct, Threshold: f.threshold, Truth: sum, Options: opt, Results: results}
	dopts, err := f.dedupSettings(opt)
	if err != nil {
		return nil, err
	}
	for _, o := range dopts {
		res, err := eval.EvaluateDedup(ctx, path, docs, truth, o, f.threshold)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, eval.DedupName(o), err)
		}
		rep.Dedup = append(rep.Dedup, res)
	}
	return rep, nil
}

// dedupSettings expands --dedup into dedup options.
func (f *evalCmd) dedupSettings(opt eval.Options) ([]dedup.Options, error) {
	if f.dedup == "none" || f.dedup == "" {
		return nil, nil
	}
	var out []dedup.Options
	for _, s := range split(f.dedup) {
		m, c, ok := strings.Cut(s, "/")
		o := dedup.Options{Options: rule.Options{Method: m, Threshold: opt.VerifyThreshold}, Cluster: c, Workers: f.workers}
		if m == rule.MethodSimHash {
			o.K, o.Profile = f.dedupK, f.dedupProfile
		}
		o.EnsureDefaults()
		if !ok || o.Validate() != nil {
			return nil, usagef("--dedup %q: want METHOD/CLUSTER (simhash or minhash / greedy or components), comma-separated, or none", s)
		}
		out = append(out, o)
	}
	return out, nil
}
