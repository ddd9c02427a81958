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
	"github.com/neardup/neardup/simhash"
)

type compareCmd struct {
	prof    profileFlags
	json    bool
	text    bool
	explain bool
	k       int
	top     int
	shingle int
	perms   int
}

func newCompareCommand() *cobra.Command {
	var f compareCmd
	c := &cobra.Command{
		Use:   "compare [flags] A B",
		Short: "Compare two documents: SimHash distance, cosine, Jaccard and MinHash",
		Long: `Compare two documents A and B (files, .gz/.zst or - for stdin; with --text the
arguments themselves are the texts). Each file is read whole as one text, JSONL
or not. It prints:

  distance     Hamming distance of their SimHash fingerprints (of --bits bits)
  similarity   1 - distance/bits, as a percentage
  verdict      near-duplicate when distance <= --k
  cosine       cosine of the profile's weighted feature vectors (TF-IDF)
  jaccard      exact Jaccard similarity of the sets of word --shingle-shingles
               of the profile's tokens
  minhash      MinHash estimate of that Jaccard similarity (--perms permutations)
  levenshtein  1 - edit distance/length of the raw texts, in characters (only
               when both have at most 10,000 characters)

--explain adds the --top heaviest features of each document with their weights.
--json prints one object with the keys distance, similarity (percent), near, k,
cosine, jaccard, minhash, levenshtein (when computed), bits, profile, a and b (fingerprint, features, empty)
and, with --explain, explain.

SimHash misjudges short texts (seeds 001 and 004): for a few words, trust the
exact measures more than the distance.

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
	f.prof.register(fs)
	fs.BoolVar(&f.json, "json", false, "print the result as one JSON object")
	fs.BoolVar(&f.text, "text", false, "A and B are the texts themselves, not file names")
	fs.BoolVar(&f.explain, "explain", false, "show the heaviest features of each document")
	fs.IntVarP(&f.k, "k", "k", 3, "near-duplicate threshold: the largest Hamming distance that counts as near")
	fs.IntVar(&f.top, "top", 10, "features shown per document by --explain")
	fs.IntVar(&f.shingle, "shingle", 3, "words per shingle for jaccard and minhash")
	fs.IntVar(&f.perms, "perms", 128, "MinHash permutations")
	return c
}

// compareSide is one document's part of the JSON result.
type compareSide struct {
	Name        string `json:"name"`
	Fingerprint string `json:"fingerprint"`
	Features    int    `json:"features"`
	Empty       bool   `json:"empty"`
}

type explained struct {
	Feature string  `json:"feature"`
	Weight  float64 `json:"weight"`
}

type compareResult struct {
	A            compareSide `json:"a"`
	B            compareSide `json:"b"`
	Profile      string      `json:"profile"`
	Bits         int         `json:"bits"`
	Distance     int         `json:"distance"`
	Similarity   float64     `json:"similarity"`
	Near         bool        `json:"near"`
	K            int         `json:"k"`
	Cosine       float64     `json:"cosine"`
	Jaccard      float64     `json:"jaccard"`
	MinHash      float64     `json:"minhash"`
	MinHashPerms int         `json:"minhash_perms"`
	// Levenshtein is the edit similarity of the raw texts, only for short
	// ones (the cost is quadratic).
	Levenshtein *float64 `json:"levenshtein,omitempty"`
	Shingle     int      `json:"shingle"`
	Explain     *struct {
		A []explained `json:"a"`
		B []explained `json:"b"`
	} `json:"explain,omitempty"`
}

func (f *compareCmd) run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	p, err := f.prof.load()
	if err != nil {
		return err
	}
	switch {
	case f.k < 0 || f.k > f.prof.bits:
		return usagef("--k %d: must be between 0 and %d", f.k, f.prof.bits)
	case f.shingle < 1:
		return usagef("--shingle %d: must be at least 1", f.shingle)
	case f.perms < 1:
		return usagef("--perms %d: must be at least 1", f.perms)
	case f.top < 0:
		return usagef("--top %d: must be 0 or more", f.top)
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

	res := compareResult{Profile: p.Name(), K: f.k, MinHashPerms: f.perms, Shingle: f.shingle}
	var fps [2]features.Result
	var vecs [2]measure.Vector
	var sets [2]measure.Set
	var sigs [2]minhash.Signature
	var feats [2][]features.Feature
	mh := minhash.New(f.perms, 1)
	for i, t := range texts {
		fps[i] = p.Fingerprint(t)
		feats[i] = p.Features(t)
		terms := make([]measure.Term, len(feats[i]))
		for j, ft := range feats[i] {
			terms[j] = measure.Term{Key: ft.Hash, Weight: ft.Weight}
		}
		vecs[i] = measure.NewVector(terms)
		sets[i] = measure.NewSet(features.ShingleHashes(nil, p.Tokens(t), f.shingle))
		sigs[i] = mh.Sign(nil, sets[i])
		side := compareSide{Name: args[i], Fingerprint: formatFingerprint(fps[i]), Features: fps[i].Features, Empty: fps[i].Empty}
		if f.text {
			side.Name = "AB"[i : i+1]
		}
		if side.Empty {
			fmt.Fprintf(stderr, "neardup: warning: %s: empty document (no features); fingerprint is 0\n", side.Name)
		}
		if i == 0 {
			res.A = side
		} else {
			res.B = side
		}
	}
	res.Bits = fps[0].Bits
	switch res.Bits {
	case 128:
		res.Distance = fps[0].Fingerprint128.Distance(fps[1].Fingerprint128)
	default:
		res.Distance = fps[0].Fingerprint.Distance(fps[1].Fingerprint)
	}
	res.Similarity = simhash.Percent(res.Distance, res.Bits)
	res.Near = res.Distance <= f.k
	res.Cosine = measure.Cosine(vecs[0], vecs[1])
	res.Jaccard = measure.Jaccard(sets[0], sets[1])
	res.MinHash = minhash.Estimate(sigs[0], sigs[1])
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
	var b strings.Builder
	fmt.Fprintf(&b, "A           %s  (%d features)  %s\n", res.A.Fingerprint, res.A.Features, res.A.Name)
	fmt.Fprintf(&b, "B           %s  (%d features)  %s\n", res.B.Fingerprint, res.B.Features, res.B.Name)
	fmt.Fprintf(&b, "distance    %d of %d bits\n", res.Distance, res.Bits)
	fmt.Fprintf(&b, "similarity  %.2f%%\n", res.Similarity)
	if res.Near {
		fmt.Fprintf(&b, "verdict     near-duplicate (distance %d <= k %d)\n", res.Distance, f.k)
	} else {
		fmt.Fprintf(&b, "verdict     not near-duplicate (distance %d > k %d)\n", res.Distance, f.k)
	}
	fmt.Fprintf(&b, "cosine      %.4f  (weighted features of profile %s)\n", res.Cosine, res.Profile)
	fmt.Fprintf(&b, "jaccard     %.4f  (word %d-shingles)\n", res.Jaccard, f.shingle)
	fmt.Fprintf(&b, "minhash     %.4f  (estimate of jaccard, %d permutations)\n", res.MinHash, f.perms)
	if res.Levenshtein != nil {
		fmt.Fprintf(&b, "levenshtein %.4f  (1 - edit distance / length, in characters)\n", *res.Levenshtein)
	}
	if res.Explain != nil {
		for i, list := range [][]explained{res.Explain.A, res.Explain.B} {
			fmt.Fprintf(&b, "\ntop features of %s:\n", "AB"[i:i+1])
			for _, e := range list {
				fmt.Fprintf(&b, "  %10.4f  %s\n", e.Weight, printable(e.Feature))
			}
		}
	}
	_, err = io.WriteString(stdout, b.String())
	return err
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
