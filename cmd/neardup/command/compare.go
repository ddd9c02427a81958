package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/measure"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
)

type compareCmd struct {
	opt      rule.Options
	decision decisionFlags
	json     bool
	text     bool
	explain  bool
	top      int
}

func newCompareCommand() *cobra.Command {
	var f compareCmd
	c := &cobra.Command{
		Use:   "compare [flags] A B",
		Short: "Compare two documents: the dedup rule's verdict, SimHash distance, cosine, Jaccard and MinHash",
		Long: `Compare two documents A and B (files, .gz/.zst or - for stdin; with --text the
arguments themselves are the texts). Each file is read whole as one text, JSONL
or not. The verdict is the one 'neardup dedup' and 'neardup serve' give the
pair, by the same rule with the same flags and defaults (--profile, --k,
--k-short, --short-tokens, --threshold, --shingle, --method, --verify...):
candidates when the SimHash fingerprints are within k bits (or, with --method
minhash, when they share an LSH band), confirmed by the Jaccard similarity of
word shingles at --threshold; the same word sequence is always a duplicate, and
a text without features (punctuation, or stopwords only) matches exact copies
only. It prints:

  verdict      near-duplicate or not, and why
  distance     Hamming distance of the profile's 64-bit SimHash fingerprints,
               and k, the largest distance that makes the pair candidates
  similarity   1 - distance/64, as a percentage
  jaccard      Jaccard similarity of the sets of word --shingle-shingles: the
               rule's verification measure
  minhash      MinHash estimate of that Jaccard similarity (--perms permutations)
  cosine       cosine of the profile's weighted feature vectors (not used by
               the rule)
  levenshtein  1 - edit distance/length of the raw texts, in characters (only
               when both have at most 10,000 characters; not used by the rule)

--explain adds the --top heaviest features of each document with their weights.
--json prints one object with the keys near (the verdict), reason, candidate,
exact, distance, similarity, k, threshold, jaccard, minhash, minhash_perms,
cosine, levenshtein (when computed), bits, profile, method, verify, shingle, a
and b (name, fingerprint, features, tokens, empty, exact_only) and, with
--explain, explain.

Verification is jaccard or none, as in the service (cosine learns its IDF from
a whole corpus).

Profiles: ` + strings.Join(features.Names(), ", ") + `.`,
		Example: `  neardup compare old.txt new.txt
  neardup compare --text 'the cat sat on the mat' 'the cat sat on a mat'
  neardup compare --json --explain --profile zh-words a.txt b.txt`,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("compare needs two arguments A and B, got %d (see '%s --help')", len(args), c.CommandPath())
			}
			return f.run(args, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	o := &f.opt
	f.decision.register(fs, o)
	fs.StringVar(&o.Verify, "verify", rule.DefaultVerify, "verification: jaccard (word shingles) or none")
	fs.IntVar(&o.Perms, "perms", rule.DefaultPerms, "MinHash permutations")
	fs.IntVar(&o.Bands, "bands", 0, "MinHash LSH bands (0: from --threshold)")
	fs.IntVar(&o.Rows, "rows", 0, "MinHash LSH rows per band (0: from --threshold)")
	fs.BoolVar(&f.json, "json", false, "print the result as one JSON object")
	fs.BoolVar(&f.text, "text", false, "A and B are the texts themselves, not file names")
	fs.BoolVar(&f.explain, "explain", false, "show the heaviest features of each document")
	fs.IntVar(&f.top, "top", 10, "features shown per document by --explain")
	return c
}

// compareSide is one document's part of the JSON result.
type compareSide struct {
	Name        string `json:"name"`
	Fingerprint string `json:"fingerprint"`
	Features    int    `json:"features"`
	Tokens      uint32 `json:"tokens"`
	Empty       bool   `json:"empty"`
	// ExactOnly: a text without features, which matches exact copies only
	// (rule.Rule.ExactOnly).
	ExactOnly bool `json:"exact_only"`
}

type explained struct {
	Feature string  `json:"feature"`
	Weight  float64 `json:"weight"`
}

type compareResult struct {
	A       compareSide `json:"a"`
	B       compareSide `json:"b"`
	Profile string      `json:"profile"`
	Method  string      `json:"method"`
	Verify  string      `json:"verify"`
	// Near is the rule's verdict (rule.Rule.Duplicates): Candidate and
	// verified; Reason says why in words.
	Near       bool    `json:"near"`
	Reason     string  `json:"reason"`
	Candidate  bool    `json:"candidate"`
	Exact      bool    `json:"exact"` // the same word sequence
	Bits       int     `json:"bits"`
	Distance   int     `json:"distance"`
	Similarity float64 `json:"similarity"`
	K          int     `json:"k"` // the largest distance at which this pair is a SimHash candidate
	Threshold  float64 `json:"threshold"`
	Shingle    int     `json:"shingle"`
	// Jaccard of the word shingle sets, the rule's verification measure.
	Jaccard      float64 `json:"jaccard"`
	MinHash      float64 `json:"minhash"`
	MinHashPerms int     `json:"minhash_perms"`
	// Cosine of the profile's weighted features (not the rule's).
	Cosine float64 `json:"cosine"`
	// Levenshtein is the edit similarity of the raw texts, only for short
	// ones (the cost is quadratic).
	Levenshtein *float64 `json:"levenshtein,omitempty"`
	Explain     *struct {
		A []explained `json:"a"`
		B []explained `json:"b"`
	} `json:"explain,omitempty"`
}

// options returns the decision's options, as 'neardup dedup' and 'neardup
// serve' build them from the same flags.
func (f *compareCmd) options() (rule.Options, error) {
	o := f.opt
	f.decision.apply(&o)
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return o, usagef("%v", err)
	}
	if o.Verify == rule.VerifyCosine {
		return o, usagef("--verify cosine: compare verifies as the service does, with jaccard or none (cosine learns its IDF from a whole corpus)")
	}
	return o, nil
}

func (f *compareCmd) run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := f.options()
	if err != nil {
		return err
	}
	if f.top < 0 {
		return usagef("--top %d: must be 0 or more", f.top)
	}
	// The verdict: the rule and the extractor of the options. The
	// measures: Jaccard and its MinHash estimate over the same shingles,
	// whatever the method and verification, and the profile's features.
	rl, ex, err := ruleAndExtractor(o)
	if err != nil {
		return err
	}
	mo := o
	mo.Method, mo.Verify, mo.Bands, mo.Rows = rule.MethodMinHash, rule.VerifyJaccard, 0, 0
	mrule, mex, err := ruleAndExtractor(mo)
	if err != nil {
		return err
	}
	p, err := features.Lookup(o.Profile)
	if err != nil {
		return usagef("--profile: %v", err)
	}
	if !f.text && args[0] == "-" && args[1] == "-" {
		return usagef("standard input (-) can be only one of A and B")
	}
	var texts [2]string
	for i, a := range args {
		if f.text {
			texts[i] = a
		} else if texts[i], err = readDocument(a, stdin); err != nil {
			return err
		}
	}

	res := compareResult{Profile: p.Name(), Method: o.Method, Verify: o.Verify, Bits: 64, Threshold: o.Threshold,
		Shingle: o.Shingle, MinHashPerms: o.Perms}
	var fs, ms [2]rule.Features
	var fps [2]uint64
	var vecs [2]measure.Vector
	var feats [2][]features.Feature
	for i, t := range texts {
		fs[i], ms[i] = ex.Extract(t), mex.Extract(t)
		fr := p.Fingerprint(t)
		fps[i] = uint64(fr.Fingerprint)
		feats[i] = p.Features(t)
		terms := make([]measure.Term, len(feats[i]))
		for j, ft := range feats[i] {
			terms[j] = measure.Term{Key: ft.Hash, Weight: ft.Weight}
		}
		vecs[i] = measure.NewVector(terms)
		side := compareSide{Name: args[i], Fingerprint: simhash.Fingerprint(fps[i]).String(), Features: fr.Features,
			Tokens: fs[i].Tokens, Empty: fr.Empty || fs[i].Tokens == 0, ExactOnly: rl.ExactOnly(&fs[i])}
		if f.text {
			side.Name = "AB"[i : i+1]
		}
		if side.ExactOnly {
			fmt.Fprintf(stderr, "neardup: note: %s: no features: matches exact copies only\n", side.Name)
		}
		if i == 0 {
			res.A = side
		} else {
			res.B = side
		}
	}
	a, b := &fs[0], &fs[1]
	res.Distance = simhash.Distance(fps[0], fps[1])
	res.Similarity = simhash.Percent(res.Distance, 64)
	res.K = rl.PairK(a, b)
	res.Candidate = rl.Near(a, b)
	res.Near = rl.Duplicates(a, b)
	res.Exact = a.Exact == b.Exact
	res.Jaccard = mrule.Score(&ms[0], &ms[1])
	res.MinHash = minhash.Estimate(ms[0].Sig, ms[1].Sig)
	res.Cosine = measure.Cosine(vecs[0], vecs[1])
	res.Reason = compareReason(&res, o)
	if utf8.RuneCountInString(texts[0]) <= maxLevenshteinRunes && utf8.RuneCountInString(texts[1]) <= maxLevenshteinRunes {
		l := measure.LevenshteinSimilarity(texts[0], texts[1])
		res.Levenshtein = &l
	}
	if f.explain {
		res.Explain = &struct {
			A []explained `json:"a"`
			B []explained `json:"b"`
		}{topFeatures(feats[0], f.top), topFeatures(feats[1], f.top)}
	}

	if f.json {
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	var w strings.Builder
	fmt.Fprintf(&w, "A           %s  (%d features, %d tokens)  %s\n", res.A.Fingerprint, res.A.Features, res.A.Tokens, res.A.Name)
	fmt.Fprintf(&w, "B           %s  (%d features, %d tokens)  %s\n", res.B.Fingerprint, res.B.Features, res.B.Tokens, res.B.Name)
	if res.Near {
		fmt.Fprintf(&w, "verdict     near-duplicate (%s)\n", res.Reason)
	} else {
		fmt.Fprintf(&w, "verdict     not near-duplicate (%s)\n", res.Reason)
	}
	if o.Method == rule.MethodSimHash {
		fmt.Fprintf(&w, "distance    %d of 64 bits  (SimHash of profile %s; candidates within k %d)\n", res.Distance, res.Profile, res.K)
	} else {
		fmt.Fprintf(&w, "distance    %d of 64 bits  (SimHash of profile %s; not the candidate test of --method minhash)\n", res.Distance, res.Profile)
	}
	fmt.Fprintf(&w, "similarity  %.2f%%\n", res.Similarity)
	if o.Verify == rule.VerifyJaccard {
		fmt.Fprintf(&w, "jaccard     %.4f  (word %d-shingles, the rule's verification, threshold %g)\n", res.Jaccard, o.Shingle, o.Threshold)
	} else {
		fmt.Fprintf(&w, "jaccard     %.4f  (word %d-shingles; not verified: --verify %s)\n", res.Jaccard, o.Shingle, o.Verify)
	}
	fmt.Fprintf(&w, "minhash     %.4f  (estimate of that jaccard, %d permutations)\n", res.MinHash, o.Perms)
	fmt.Fprintf(&w, "cosine      %.4f  (weighted features of profile %s; not used by the rule)\n", res.Cosine, res.Profile)
	if res.Levenshtein != nil {
		fmt.Fprintf(&w, "levenshtein %.4f  (1 - edit distance / length, in characters; not used by the rule)\n", *res.Levenshtein)
	}
	if res.Explain != nil {
		for i, list := range [][]explained{res.Explain.A, res.Explain.B} {
			fmt.Fprintf(&w, "\ntop features of %s:\n", "AB"[i:i+1])
			for _, e := range list {
				fmt.Fprintf(&w, "  %10.4f  %s\n", e.Weight, printable(e.Feature))
			}
		}
	}
	_, err = io.WriteString(stdout, w.String())
	return err
}

// compareReason says in words why the rule decided as it did.
func compareReason(r *compareResult, o rule.Options) string {
	switch {
	case r.Exact:
		return "the same word sequence"
	case r.A.ExactOnly || r.B.ExactOnly:
		return "no features: matches exact copies only"
	case !r.Candidate && o.Method == rule.MethodMinHash:
		return "no shared MinHash band"
	case !r.Candidate:
		return fmt.Sprintf("distance %d > k %d", r.Distance, r.K)
	}
	cand := fmt.Sprintf("distance %d <= k %d", r.Distance, r.K)
	if o.Method == rule.MethodMinHash {
		cand = "a shared MinHash band"
	}
	switch {
	case o.Verify != rule.VerifyJaccard:
		return cand + ", not verified"
	case r.Near:
		return fmt.Sprintf("%s, jaccard %.4f >= %g", cand, r.Jaccard, o.Threshold)
	}
	return fmt.Sprintf("%s, but jaccard %.4f < %g", cand, r.Jaccard, o.Threshold)
}

// maxLevenshteinRunes bounds the texts compare computes an edit distance for:
// 10,000 x 10,000 runes is 10^8 cells, a fraction of a second.
const maxLevenshteinRunes = 10000

// topFeatures returns the first n features (Features sorts them by weight).
func topFeatures(fs []features.Feature, n int) []explained {
	out := make([]explained, 0, min(n, len(fs)))
	for _, f := range fs[:min(n, len(fs))] {
		out = append(out, explained{Feature: f.Text, Weight: f.Weight})
	}
	return out
}

// printable quotes a feature that holds spaces at its ends or control
// characters, so the listing stays one feature per line.
func printable(s string) string {
	if s == "" || strings.TrimSpace(s) != s || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' }) {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// readDocument reads a whole file (decompressed; "-" is stdin) as one text.
func readDocument(name string, stdin io.Reader) (string, error) {
	if name != "-" {
		fi, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		if fi.IsDir() {
			return "", usagef("%s is a directory; compare takes two files (or --text)", name)
		}
	}
	var binErr error
	r, err := corpus.Open([]string{name}, corpus.Options{
		Format: corpus.Text,
		Stdin:  stdin,
		OnBad:  func(err error) { binErr = err },
	})
	if err != nil {
		return "", err
	}
	defer r.Close()
	d, err := r.Next()
	if errors.Is(err, io.EOF) && binErr != nil {
		return "", fmt.Errorf("cannot compare: %w", binErr)
	}
	if err != nil {
		return "", err
	}
	return d.Text, nil
}

// ruleAndExtractor returns the rule and an extractor of o; an error is a
// usage error (the options came from flags).
func ruleAndExtractor(o rule.Options) (*rule.Rule, *rule.Extractor, error) {
	rl, err := rule.NewRule(o)
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	ex, err := rule.NewExtractor(o)
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	return rl, ex, nil
}
