package eval

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/measure"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
)

// Methods a Setting can name.
const (
	// MethodSimHash: fingerprints from a features profile, pairs within
	// Hamming distance k.
	MethodSimHash = "simhash"
	// MethodMinHash: MinHash-LSH over the profile's word shingles (width
	// Options.VerifyWidth); k does not apply.
	MethodMinHash = "minhash"
	// MethodNaive: the corpora README's baseline, an unweighted 64-bit SimHash
	// of the ground-truth shingle hashes.
	MethodNaive = "naive"
)

// Setting is one way of predicting near-duplicate pairs.
type Setting struct {
	Method  string `json:"method"`            // MethodSimHash, MethodMinHash or MethodNaive; "": MethodSimHash
	Profile string `json:"profile,omitempty"` // features profile; "": "default" (not used by MethodNaive)
	Bits    int    `json:"bits,omitempty"`    // SimHash width 32, 64 or 128; 0: 64
	Verify  bool   `json:"verify"`            // keep only candidates whose verified Jaccard reaches Options.VerifyThreshold
	// VerifyProfile is the profile whose tokens make the verification
	// shingles; "": Profile ("default" for MethodNaive).
	VerifyProfile string `json:"verify_profile,omitempty"`
	Bands         int    `json:"bands,omitempty"` // MinHash LSH bands; 0: minhash.BandsRows(threshold, perms)
	Rows          int    `json:"rows,omitempty"`  // MinHash LSH rows per band
}

// EnsureDefaults fills in zero fields.
func (s *Setting) EnsureDefaults() {
	if s.Method == "" {
		s.Method = MethodSimHash
	}
	if s.Profile == "" && s.Method != MethodNaive {
		s.Profile = "default"
	}
	if s.Bits == 0 && s.Method != MethodMinHash {
		s.Bits = 64
	}
	if s.Verify && s.VerifyProfile == "" {
		s.VerifyProfile = s.Profile
		if s.VerifyProfile == "" {
			s.VerifyProfile = "default"
		}
	}
}

// String names the setting, for example "simhash default/64 verify".
func (s Setting) String() string {
	var b strings.Builder
	b.WriteString(s.Method)
	switch s.Method {
	case MethodNaive:
	case MethodMinHash:
		fmt.Fprintf(&b, " %s", s.Profile)
		if s.Bands > 0 {
			fmt.Fprintf(&b, " %dx%d", s.Bands, s.Rows)
		}
	default:
		fmt.Fprintf(&b, " %s/%d", s.Profile, s.Bits)
	}
	if s.Verify {
		b.WriteString(" +verify")
		if s.VerifyProfile != "" && s.VerifyProfile != s.Profile {
			b.WriteString("(" + s.VerifyProfile + ")")
		}
	}
	return b.String()
}

// Options configure Evaluate; the zero value means the defaults.
type Options struct {
	Threshold       float64 `json:"threshold"`        // ground-truth Jaccard threshold; 0: 0.8
	Ks              []int   `json:"k"`                // Hamming distances to score; nil: 0 to 12
	VerifyThreshold float64 `json:"verify_threshold"` // Jaccard a verified candidate needs; 0: Threshold
	VerifyWidth     int     `json:"verify_width"`     // tokens per verification (and MinHash) shingle; 0: 5
	Perms           int     `json:"perms"`            // MinHash permutations; 0: 128
	Workers         int     `json:"-"`                // 0: GOMAXPROCS
}

// EnsureDefaults fills in zero fields.
func (o *Options) EnsureDefaults() {
	if o.Threshold == 0 {
		o.Threshold = 0.8
	}
	if len(o.Ks) == 0 {
		for k := 0; k <= 12; k++ {
			o.Ks = append(o.Ks, k)
		}
	}
	if o.VerifyThreshold == 0 {
		o.VerifyThreshold = o.Threshold
	}
	if o.VerifyWidth == 0 {
		o.VerifyWidth = 5
	}
	if o.Perms == 0 {
		o.Perms = minhash.DefaultPerms
	}
}

// Validate reports an invalid option.
func (o *Options) Validate() error {
	if o.Threshold <= 0 || o.Threshold > 1 || o.VerifyThreshold < 0 || o.VerifyThreshold > 1 {
		return fmt.Errorf("%w: thresholds must be in (0, 1]", ErrSetting)
	}
	for _, k := range o.Ks {
		if k < 0 || k > 128 {
			return fmt.Errorf("%w: k %d out of range", ErrSetting, k)
		}
	}
	return nil
}

// Scores are precision, recall and F1 from true positives, false positives
// and false negatives. A score with nothing to measure is 1 (no predictions:
// precision 1; no positives: recall 1).
type Scores struct {
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

func scores(tp, fp, fn int) Scores {
	s := Scores{TP: tp, FP: fp, FN: fn, Precision: 1, Recall: 1}
	if tp+fp > 0 {
		s.Precision = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		s.Recall = float64(tp) / float64(tp+fn)
	}
	if s.Precision+s.Recall > 0 {
		s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
	return s
}

// Result is the score of one setting at one k.
type Result struct {
	Setting Setting `json:"setting"`
	Name    string  `json:"name"` // Setting.String()
	// K is the Hamming distance; -1 for MethodMinHash.
	K    int    `json:"k"`
	Pair Scores `json:"pair"`
	Doc  Scores `json:"doc"`
	// Candidates are the pairs before verification; Predicted after.
	Candidates int `json:"candidates"`
	Predicted  int `json:"predicted"`
	// Times in seconds: features and fingerprints (or signatures) of every
	// distinct text, the candidate search, verification (tokens, shingle sets
	// and exact Jaccard of the candidates up to the largest k, so an upper
	// bound for smaller k), and their sum.
	FingerprintSeconds float64 `json:"fingerprint_seconds"`
	CandidateSeconds   float64 `json:"candidate_seconds"`
	VerifySeconds      float64 `json:"verify_seconds"`
	Seconds            float64 `json:"seconds"`
}

// candidate is a predicted pair before verification: distinct-text documents
// a < b, their Hamming distance (0 for MinHash) and verified Jaccard.
type candidate struct {
	a, b     int32
	d        int16
	verified float64 // Jaccard of the verification profile's shingle sets (an upper bound below the threshold when the size filter rejects)
	truth    float64 // ground-truth Jaccard
	known    bool    // the pair is one of the truth's pairs
}

// Evaluate scores every setting against truth, which must have been computed
// from the same docs. Only distinct texts take part (exact duplicates are left
// out, see the package doc); texts whose profile gives no features are never
// predicted near-duplicates.
func Evaluate(ctx context.Context, docs []Doc, truth *Truth, settings []Setting, opt Options) ([]Result, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, ErrNoDocs
	}
	if truth == nil || truth.Docs != len(docs) {
		return nil, fmt.Errorf("%w: truth computed for another corpus", ErrSetting)
	}
	e := &evaluator{docs: docs, truth: truth, opt: opt, sets: map[string]profileSets{}}
	for i, c := range truth.Canon {
		if c == i {
			e.distinct = append(e.distinct, i)
		}
	}
	var out []Result
	for _, s := range settings {
		s.EnsureDefaults()
		// Load dictionaries (gse takes seconds, once per process) before any
		// clock starts: the times are per corpus, not per process.
		for _, name := range []string{s.Profile, s.VerifyProfile} {
			if name == "" {
				continue
			}
			p, err := features.Lookup(name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s, err)
			}
			p.Tokens("预热 warm-up")
			p.Fingerprint("预热 warm-up")
		}
		rs, err := e.run(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s, err)
		}
		out = append(out, rs...)
	}
	return out, nil
}

type evaluator struct {
	docs     []Doc
	truth    *Truth
	opt      Options
	distinct []int // positions of the first document of each distinct text

	mu   sync.Mutex
	sets map[string]profileSets // by profile name; sets by position in distinct; guarded by mu
}

func (e *evaluator) run(ctx context.Context, s Setting) ([]Result, error) {
	var (
		cands        []candidate
		fpSec, joinS float64
		err          error
	)
	switch s.Method {
	case MethodSimHash, MethodNaive:
		cands, fpSec, joinS, err = e.simhashCandidates(ctx, s)
	case MethodMinHash:
		cands, fpSec, joinS, err = e.minhashCandidates(ctx, &s)
	default:
		return nil, fmt.Errorf("%w: unknown method %q", ErrSetting, s.Method)
	}
	if err != nil {
		return nil, err
	}
	// Ground-truth Jaccard of every candidate, once. A pair the truth does not
	// hold is below its MinJaccard or was no LSH candidate; when the truth is
	// complete at the threshold (a miss probability under 1e-3 there) such a
	// pair is a negative without computing anything, which keeps settings that
	// predict millions of unrelated pairs cheap. Otherwise it is computed
	// exactly from the shingle sets.
	exactUnknown := e.opt.Threshold < e.truth.Options.MinJaccard || e.truth.MissProbability(e.opt.Threshold) > 1e-3
	if err := parallel(ctx, len(cands), e.opt.Workers, func(k int) {
		c := &cands[k]
		a, b := e.distinct[c.a], e.distinct[c.b]
		j, known := e.truth.Known(a, b)
		if !known && exactUnknown {
			j = e.truth.Jaccard(a, b)
		}
		c.truth, c.known = j, known
	}); err != nil {
		return nil, err
	}
	var verSec float64
	if s.Verify {
		if verSec, err = e.verify(ctx, s, cands); err != nil {
			return nil, err
		}
	}
	ks := e.opt.Ks
	if s.Method == MethodMinHash {
		ks = []int{-1}
	}
	var out []Result
	for _, k := range ks {
		r := e.score(s, cands, k)
		r.FingerprintSeconds, r.CandidateSeconds, r.VerifySeconds = fpSec, joinS, verSec
		r.Seconds = fpSec + joinS + verSec
		out = append(out, r)
	}
	return out, nil
}

// simhashCandidates fingerprints every distinct text and returns the pairs
// within the largest k, by brute force over all pairs (the corpora have at
// most ~10^4 texts, so ~5·10^7 popcounts).
func (e *evaluator) simhashCandidates(ctx context.Context, s Setting) ([]candidate, float64, float64, error) {
	n := len(e.distinct)
	hi, lo := make([]uint64, n), make([]uint64, n)
	empty := make([]bool, n)
	start := time.Now()
	if s.Method == MethodNaive {
		if err := parallel(ctx, n, e.opt.Workers, func(k int) {
			var b simhash.Builder
			set := e.truth.Sets[e.distinct[k]]
			for _, h := range set {
				b.Add(h, 1)
			}
			lo[k], empty[k] = uint64(b.Sum64()), len(set) == 0
		}); err != nil {
			return nil, 0, 0, err
		}
	} else {
		p, err := features.Lookup(s.Profile)
		if err != nil {
			return nil, 0, 0, err
		}
		if p, err = p.WithBits(s.Bits); err != nil {
			return nil, 0, 0, err
		}
		start = time.Now()
		if err := parallel(ctx, n, e.opt.Workers, func(k int) {
			r := p.Fingerprint(e.docs[e.distinct[k]].Text)
			empty[k] = r.Empty
			if r.Bits == 128 {
				hi[k], lo[k] = r.Fingerprint128.Hi, r.Fingerprint128.Lo
			} else {
				lo[k] = uint64(r.Fingerprint)
			}
		}); err != nil {
			return nil, 0, 0, err
		}
	}
	fpSec := time.Since(start).Seconds()
	start = time.Now()
	maxK := slices.Max(e.opt.Ks)
	var (
		mu    sync.Mutex
		cands []candidate // guarded by mu
	)
	err := parallel(ctx, n, e.opt.Workers, func(a int) {
		if empty[a] {
			return
		}
		var local []candidate
		ha, la := hi[a], lo[a]
		for b := a + 1; b < n; b++ {
			d := bits.OnesCount64(la^lo[b]) + bits.OnesCount64(ha^hi[b])
			if d <= maxK && !empty[b] {
				local = append(local, candidate{a: int32(a), b: int32(b), d: int16(d)})
			}
		}
		if len(local) > 0 {
			mu.Lock()
			cands = append(cands, local...)
			mu.Unlock()
		}
	})
	return cands, fpSec, time.Since(start).Seconds(), err
}

// profileSets returns the shingle sets (width VerifyWidth) of the profile's
// tokens of every distinct text, computing them once per profile, and the
// seconds the computation took.
func (e *evaluator) profileSets(ctx context.Context, profile string) ([]measure.Set, float64, error) {
	if profile == "" {
		profile = "default"
	}
	e.mu.Lock()
	ps, ok := e.sets[profile]
	e.mu.Unlock()
	if ok {
		return ps.sets, ps.seconds, nil
	}
	p, err := features.Lookup(profile)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	sets := make([]measure.Set, len(e.distinct))
	if err := parallel(ctx, len(sets), e.opt.Workers, func(k int) {
		sets[k] = measure.NewSet(features.ShingleHashes(nil, p.Tokens(e.docs[e.distinct[k]].Text), e.opt.VerifyWidth))
	}); err != nil {
		return nil, 0, err
	}
	ps = profileSets{sets, time.Since(start).Seconds()}
	e.mu.Lock()
	e.sets[profile] = ps
	e.mu.Unlock()
	return ps.sets, ps.seconds, nil
}

// profileSets are one profile's shingle sets and the time they took.
type profileSets struct {
	sets    []measure.Set
	seconds float64
}

// minhashCandidates signs the profile shingle sets and returns the LSH pairs.
func (e *evaluator) minhashCandidates(ctx context.Context, s *Setting) ([]candidate, float64, float64, error) {
	if s.Bands == 0 || s.Rows == 0 {
		s.Bands, s.Rows = minhash.BandsRows(e.opt.Threshold, e.opt.Perms)
	}
	if s.Bands*s.Rows > e.opt.Perms {
		return nil, 0, 0, fmt.Errorf("%w: %d bands × %d rows > %d permutations", ErrSetting, s.Bands, s.Rows, e.opt.Perms)
	}
	sets, setsSec, err := e.profileSets(ctx, s.Profile)
	if err != nil {
		return nil, 0, 0, err
	}
	start := time.Now()
	h := minhash.New(e.opt.Perms, 1)
	sigs := make([]minhash.Signature, len(sets))
	if err := parallel(ctx, len(sets), e.opt.Workers, func(k int) {
		sigs[k] = h.Sign(nil, sets[k])
	}); err != nil {
		return nil, 0, 0, err
	}
	fpSec := setsSec + time.Since(start).Seconds()
	start = time.Now()
	l := minhash.NewLSH(s.Bands, s.Rows)
	for k, sig := range sigs {
		if len(sets[k]) == 0 {
			continue
		}
		if err := l.Add(k, sig); err != nil {
			return nil, 0, 0, err
		}
	}
	var cands []candidate
	err = l.Pairs(func(a, b int) error {
		cands = append(cands, candidate{a: int32(min(a, b)), b: int32(max(a, b))})
		return ctx.Err()
	})
	return cands, fpSec, time.Since(start).Seconds(), err
}

// verify computes the exact Jaccard of the profile's shingle sets of every
// candidate.
// The time includes building the shingle sets, even when an earlier setting
// built them already, so that every verified setting pays the same.
func (e *evaluator) verify(ctx context.Context, s Setting, cands []candidate) (float64, error) {
	sets, setsSec, err := e.profileSets(ctx, s.VerifyProfile)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	th := e.opt.VerifyThreshold
	err = parallel(ctx, len(cands), e.opt.Workers, func(k int) {
		c := &cands[k]
		a, b := sets[c.a], sets[c.b]
		// J <= min(|A|,|B|)/max(|A|,|B|): pairs of very different sizes are
		// rejected without a merge (the size filter of Chaudhuri, Ganti,
		// Kaushik, "A primitive operator for similarity joins", ICDE 2006).
		if lo, hi := min(len(a), len(b)), max(len(a), len(b)); hi > 0 && float64(lo) < th*float64(hi) {
			c.verified = float64(lo) / float64(hi)
			return
		}
		c.verified = jaccard(a, b)
	})
	return setsSec + time.Since(start).Seconds(), err
}

// score counts the candidates predicted at k against the truth.
func (e *evaluator) score(s Setting, cands []candidate, k int) Result {
	th := e.opt.Threshold
	r := Result{Setting: s, Name: s.String(), K: k}
	predictedDoc := make(map[int]bool)
	positiveDoc := make(map[int]bool)
	tp, fp, extra := 0, 0, 0
	for _, c := range cands {
		if k >= 0 && int(c.d) > k {
			continue
		}
		r.Candidates++
		if s.Verify && c.verified < e.opt.VerifyThreshold {
			continue
		}
		r.Predicted++
		a, b := e.distinct[c.a], e.distinct[c.b]
		predictedDoc[a], predictedDoc[b] = true, true
		if c.truth >= th {
			tp++
			if !c.known {
				// A true pair the truth's LSH missed: count it as a positive too.
				extra++
				positiveDoc[a], positiveDoc[b] = true, true
			}
		} else {
			fp++
		}
	}
	positives := e.truth.Count(th) + extra
	r.Pair = scores(tp, fp, positives-tp)
	for _, p := range e.truth.Pairs {
		if p.Jaccard >= th {
			positiveDoc[p.A], positiveDoc[p.B] = true, true
		}
	}
	dtp := 0
	for d := range predictedDoc {
		if positiveDoc[d] {
			dtp++
		}
	}
	r.Doc = scores(dtp, len(predictedDoc)-dtp, len(positiveDoc)-dtp)
	return r
}
