package dedup

import (
	"context"
	"math"
	"sync"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/measure"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/rule"
)

// The candidate stage. Twins (same token sequence and fingerprint) are
// grouped without comparison; the first document of each twin group goes on
// to the SimHash self-join (index.Join at the larger of K and KShort, each
// pair then held to rule.Rule.PairK) or to MinHash LSH.
//
// Under ClusterGreedy the candidate pairs are collected (8 bytes each) and
// the keep-first rule (rule.Rule.KeepFirst) runs over them in priority order,
// verifying a pair only when its earlier document is kept: on corpora of many
// versions most candidates point at removed documents and are never verified.
//
// Under ClusterComponents every candidate pair whose documents are not yet in
// one cluster is verified by Workers goroutines, and verified pairs are merged
// in a union-find: clusters are the connected components of the verified
// pairs. A pair found inside an existing cluster changes nothing and is not
// verified.

type pairJob struct{ a, b int32 }

func (r *runner) candidates(ctx context.Context, lsh *minhash.LSH) error {
	if r.opt.Verify == rule.VerifyCosine {
		r.buildVectors()
	}
	if r.opt.Cluster == ClusterGreedy {
		return r.greedyCandidates(ctx, lsh)
	}
	return r.components(ctx, lsh)
}

// components is the candidate stage of ClusterComponents.
func (r *runner) components(ctx context.Context, lsh *minhash.LSH) error {
	d := r.d
	n := d.len()
	r.uf = index.NewUnionFind(n)
	for i := range n {
		if f := int(d.first.get(int(i))); f != i {
			r.uf.Union(i, f)
		}
	}
	for _, p := range r.exactPairs {
		r.uf.Union(int(uint32(p)), int(p>>32))
	}

	var mu sync.Mutex // guards r.uf
	jobs := make(chan []pairJob, 2*r.opt.Workers)
	var wg sync.WaitGroup
	for range r.opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for js := range jobs {
				for _, j := range js {
					if r.rule.PrefilterRejects(r.pre(int(j.a)), r.pre(int(j.b))) {
						r.cand.Prefiltered.Add(1)
					} else if r.verify(int(j.a), int(j.b)) {
						r.cand.Verified.Add(1)
						mu.Lock()
						r.uf.Union(int(j.a), int(j.b))
						mu.Unlock()
					} else {
						r.cand.Rejected.Add(1)
					}
				}
			}
		}()
	}
	const batchSize = 512
	buf := make([]pairJob, 0, batchSize)
	var count int
	submit := func(a, b int) error {
		r.cand.Candidates.Add(1)
		if count++; count&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			r.progress(Progress{Stage: "candidates", Docs: r.cand.Candidates.Load()})
		}
		none := r.opt.Verify == rule.VerifyNone
		accept := none && r.d.tokens.get(int(a)) > 0 && r.d.tokens.get(int(b)) > 0
		mu.Lock()
		same := r.uf.Same(a, b)
		if !same && accept {
			r.uf.Union(a, b)
		}
		mu.Unlock()
		switch {
		case same:
			r.cand.Skipped.Add(1)
			return nil
		case accept:
			r.cand.Verified.Add(1)
			return nil
		case none:
			r.cand.Rejected.Add(1)
			return nil
		}
		buf = append(buf, pairJob{int32(a), int32(b)})
		if len(buf) == batchSize {
			select {
			case jobs <- buf:
			case <-ctx.Done():
				return ctx.Err()
			}
			buf = make([]pairJob, 0, batchSize)
		}
		return nil
	}

	err := r.candidatePairs(ctx, lsh, submit)
	if err == nil && len(buf) > 0 {
		select {
		case jobs <- buf:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	r.progress(Progress{Stage: "candidates", Docs: r.cand.Candidates.Load(), Done: true})
	return err
}

// candidatePairs submits the candidate pairs of the SimHash self-join or of
// the LSH, one goroutine at a time.
func (r *runner) candidatePairs(ctx context.Context, lsh *minhash.LSH, submit func(a, b int) error) error {
	if r.opt.Method == rule.MethodMinHash {
		return lsh.Pairs(submit)
	}
	return r.simhashPairs(ctx, submit)
}

// simhashPairs self-joins the fingerprints of the first document of each twin
// group that has features, and submits the pairs within rule.Rule.PairK. Pairs
// involving a short document may be up to KShort apart: a second, smaller
// join covers them, over the documents short enough to be in such a pair.
func (r *runner) simhashPairs(ctx context.Context, submit func(a, b int) error) error {
	d := r.d
	long, short := r.rule.K()
	partnerLimit := r.rule.ShortPartners()
	var pos, spos []int32
	var fps, sfps []uint64
	for i := range d.len() {
		// Documents without features all have fingerprint 0: they can only be
		// exact duplicates (rule.Rule.ExactOnly), and joining them would make a
		// clique of pairs.
		if int(d.first.get(int(i))) != i || r.exactOnly(i) {
			continue
		}
		pos = append(pos, int32(i))
		fps = append(fps, d.fp(int(i)))
		if short > long && d.tokens.get(int(i)) < partnerLimit {
			spos = append(spos, int32(i))
			sfps = append(sfps, d.fp(int(i)))
		}
	}
	pairK := func(a, b int) int {
		fa, fb := rule.Features{Tokens: d.tokens.get(int(a))}, rule.Features{Tokens: d.tokens.get(int(b))}
		return r.rule.PairK(&fa, &fb)
	}
	jopt := index.JoinOptions{Workers: r.opt.Workers}
	err := index.Join(ctx, fps, long, jopt, func(p index.Pair) error {
		a, b := int(pos[p.A]), int(pos[p.B])
		if p.Distance > pairK(a, b) {
			return nil // only when KShort < K
		}
		return submit(a, b)
	})
	if err != nil || short <= long {
		return err
	}
	return index.Join(ctx, sfps, short, jopt, func(p index.Pair) error {
		a, b := int(spos[p.A]), int(spos[p.B])
		if p.Distance <= long || p.Distance > pairK(a, b) {
			return nil // the first join had it, or it is not a short pair
		}
		return submit(a, b)
	})
}

// exactOnly reports whether document i matches exact copies only
// (rule.Rule.ExactOnly: no tokens, or no features and so fingerprint 0).
func (r *runner) exactOnly(i int) bool {
	f := rule.Features{FP: r.d.fp(int(i)), Tokens: r.d.tokens.get(int(i))}
	return r.rule.ExactOnly(&f)
}

// feat returns document i's features as the rule sees them.
func (r *runner) feat(i int) rule.Features {
	d := r.d
	f := rule.Features{FP: d.fp(int(i)), Exact: d.exact.get(int(i)), Tokens: d.tokens.get(int(i)), Length: d.textLength(int(i))}
	f.Pre = *r.pre(i)
	switch {
	case r.sets != nil && r.sets.off != nil:
		sk, err := r.sets.get(i)
		if err != nil {
			r.failSet(err) // an empty set fails verification; Run reports the error
		}
		f.Sketch = sk
	case r.memberSets != nil:
		if k, ok := r.members.rank(r.memberOf(i)); ok {
			sk, err := r.memberSets.get(k)
			if err != nil {
				r.failSet(err)
			}
			f.Sketch = sk
		}
	}
	if r.kept != nil && !f.Pre.Known() && r.opt.Verify == rule.VerifyJaccard {
		// Incremental mode matches every lead against the kept set, whose
		// documents have their prefilters: so must the lead.
		f.Pre = rule.PrefilterOf(f.Sketch.Hashes())
	}
	if r.keys != nil && r.keys.off != nil {
		w, err := r.keys.get(i)
		if err != nil {
			r.failSet(err)
		}
		if h := w.Hashes(); len(h) > 0 {
			f.Bands = make([]uint64, len(h)/2)
			for j := range f.Bands {
				f.Bands[j] = uint64(h[2*j]) | uint64(h[2*j+1])<<32
			}
		}
	}
	if r.vectors != nil {
		f.Vector = r.vectors[i]
	}
	return f
}

// noPrefilter is the unknown prefilter of documents without one.
var noPrefilter rule.Prefilter

// pre returns document i's prefilter: a member's (members.go); the unknown
// one for another document, or without Jaccard verification.
func (r *runner) pre(i int) *rule.Prefilter {
	if r.members != nil {
		if k, ok := r.members.rank(r.memberOf(i)); ok && k < len(r.memberPre) {
			return &r.memberPre[k]
		}
	}
	return &noPrefilter
}

// memberOf returns the member whose verification data stands for document
// i: i, or the lead of its group of exact copies.
func (r *runner) memberOf(i int) int {
	if _, ok := r.members.rank(i); ok {
		return i
	}
	return r.twinLead(i)
}

// verify reports whether documents a and b pass verification.
func (r *runner) verify(a, b int) bool {
	fa, fb := r.feat(a), r.feat(b)
	return r.rule.Verify(&fa, &fb)
}

// score is the verification measure of documents a and b.
func (r *runner) score(a, b int) float64 {
	fa, fb := r.feat(a), r.feat(b)
	return r.rule.Score(&fa, &fb)
}

// buildVectors turns the term counts into TF-IDF vectors, with the IDF learned
// from this input: idf(t) = ln((N+1)/(df(t)+1)) + 1, the smoothed form of
// scikit-learn's TfidfVectorizer, so a term in every document keeps a small
// positive weight.
func (r *runner) buildVectors() {
	n := float64(r.d.len())
	r.vectors = make([]measure.Vector, r.d.len())
	for i, v := range r.d.vec {
		t := make([]measure.Term, len(v))
		for j, kv := range v {
			key := uint32(kv >> 32)
			tf := float64(uint32(kv))
			t[j] = measure.Term{Key: uint64(key), Weight: tf * (math.Log((n+1)/float64(r.df[key]+1)) + 1)}
		}
		r.vectors[i] = measure.NewVector(t)
		r.d.vec[i] = nil
	}
	r.d.vec = nil
	r.df = nil
}
