package rule

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// setPair returns two sets of distinct 32-bit hashes of sizes a and b with
// k hashes in common: Jaccard k / (a + b - k).
func setPair(r *rand.Rand, a, b, k int) (x, y []uint32) {
	seen := make(map[uint32]bool, a+b)
	draw := func() uint32 {
		for {
			v := r.Uint32()
			if !seen[v] {
				seen[v] = true
				return v
			}
		}
	}
	for range k {
		v := draw()
		x, y = append(x, v), append(y, v)
	}
	for range a - k {
		x = append(x, draw())
	}
	for range b - k {
		y = append(y, draw())
	}
	return x, y
}

// atJaccard lists set shapes (sizes a and b, k in common) whose Jaccard
// similarity is exactly t = num/den: small and large sets, equal and unequal
// sizes.
func atJaccard(num, den int) [][3]int {
	var out [][3]int
	// k/(a+b-k) = num/den: k = num·m, a+b = (num+den)·m.
	for _, m := range []int{1, 2, 3, 5, 8, 13, 25, 40, 60, 100, 200} {
		k, sum := num*m, (num+den)*m
		u := sum - k // the union
		out = append(out, [3]int{sum / 2, sum - sum/2, k})
		if a := k + (u-k)/4; a >= k && sum-a <= u { // unequal sizes
			out = append(out, [3]int{a, sum - a, k})
		}
	}
	return out
}

// TestPrefilterBound checks the prefilter's bound on pairs at exactly the
// threshold: none is rejected at PrefilterFalseReject (1e-9) over many
// pairs of every size; and at a bound loose enough to be measured (0.99),
// pairs are rejected, but no more often than binomial draws at the
// threshold would be (the model behind the bound: the agreeing bins are at
// least a hypergeometric count, more concentrated than the binomial). It
// checks too that the test is not empty: pairs at J 0.3 are nearly all
// rejected.
func TestPrefilterBound(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, th := range []struct{ num, den int }{{4, 5}, {9, 10}, {1, 2}} {
		tval := float64(th.num) / float64(th.den)
		strict := prefilterCuts(tval, PrefilterFalseReject)
		loose := prefilterCuts(tval, 0.99)
		shapes := atJaccard(th.num, th.den)
		pairs := 2000
		if testing.Short() {
			pairs = 300
		}
		var n, strictRej, looseRej int
		var binomial float64 // expected rejections at the loose cut, binomial draws
		for _, s := range shapes {
			for range pairs {
				x, y := setPair(r, s[0], s[1], s[2])
				if j := float64(s[2]) / float64(s[0]+s[1]-s[2]); math.Abs(j-tval) > 1e-12 {
					t.Fatalf("shape %v has J %v, want %v", s, j, tval)
				}
				px, py := PrefilterOf(x), PrefilterOf(y)
				n++
				if prefilterRejects(&px, &py, strict) {
					strictRej++
				}
				if prefilterRejects(&px, &py, loose) {
					looseRej++
				}
				f := occupied(&px, &py)
				binomial += binomialBelow(f, tval, int(loose[f]))
			}
		}
		if strictRej != 0 {
			t.Errorf("t = %v: %d of %d pairs at the threshold rejected at %g, want 0", tval, strictRej, n, PrefilterFalseReject)
		}
		// Binomial draws would be rejected binomial times; allow four
		// standard deviations over it.
		if limit := binomial + 4*math.Sqrt(binomial); float64(looseRej) > limit || looseRej == 0 {
			t.Errorf("t = %v: %d of %d pairs at the threshold rejected at 0.99, want 1 to %.0f", tval, looseRej, n, limit)
		}
		t.Logf("t = %v: %d pairs at the threshold, %d rejected at 1e-9; at 0.99 %d (binomial draws: %.0f)", tval, n, strictRej, looseRej, binomial)
	}

	// Power: at t = 0.8 two 200-shingle sets at J 0.3 (92 in common) are
	// almost never passed, at J 0.5 (133) often rejected, and equal sets
	// always passed.
	cut := prefilterCuts(0.8, PrefilterFalseReject)
	for _, c := range []struct {
		k          int
		minRejRate float64
	}{{92, 0.99}, {133, 0.2}} {
		rej := 0
		const trials = 2000
		for range trials {
			x, y := setPair(r, 200, 200, c.k)
			px, py := PrefilterOf(x), PrefilterOf(y)
			if prefilterRejects(&px, &py, cut) {
				rej++
			}
		}
		if rate := float64(rej) / trials; rate < c.minRejRate {
			t.Errorf("J %.2f: rejected %.3f of pairs, want at least %.2f", float64(c.k)/float64(400-c.k), rate, c.minRejRate)
		}
	}
	x, _ := setPair(r, 200, 0, 0)
	px := PrefilterOf(x)
	if prefilterRejects(&px, &px, cut) {
		t.Error("a set against itself was rejected")
	}
}

// TestPrefilterCuts checks the table of cuts against its definition: at
// every F, the bound of one agreement fewer than the cut is within delta,
// and the cut's own bound is not.
func TestPrefilterCuts(t *testing.T) {
	for _, tv := range []float64{0.5, 0.8, 0.95} {
		cut := prefilterCuts(tv, PrefilterFalseReject)
		if cut[0] != 0 {
			t.Errorf("t %v: cut[0] = %d, want 0 (no bin, no evidence)", tv, cut[0])
		}
		for f := 1; f <= preBins; f++ {
			c := int(cut[f])
			bound := func(c int) float64 {
				return math.Exp(-float64(f) * bernoulliKL(float64(c)/float64(f), tv))
			}
			if c > 0 && bound(c-1) > PrefilterFalseReject {
				t.Errorf("t %v F %d: cut %d rejects a count whose bound is %g", tv, f, c, bound(c-1))
			}
			if c < f && bound(c) <= PrefilterFalseReject {
				t.Errorf("t %v F %d: cut %d could be %d", tv, f, c, c+1)
			}
			if float64(c) > tv*float64(f) {
				t.Errorf("t %v F %d: cut %d above the expected agreement %v", tv, f, c, tv*float64(f))
			}
		}
	}
	// At t = 0.8 a pair with 12 occupied bins and no agreement is kept
	// (0.2^12 > 1e-9), with 13 rejected.
	cut := prefilterCuts(0.8, PrefilterFalseReject)
	if cut[12] != 0 || cut[13] != 1 {
		t.Errorf("cut[12], cut[13] = %d, %d, want 0, 1", cut[12], cut[13])
	}
}

// TestPrefilterRule checks the prefilter where the rule uses it: Verify
// rejects dissimilar texts that share a long passage and passes
// near-copies; decoding a record recomputes the prefilter; an unknown one
// (sampled sets, fingerprint-only documents) rejects nothing.
func TestPrefilterRule(t *testing.T) {
	rule, err := NewRule(Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewExtractor(Options{})
	if err != nil {
		t.Fatal(err)
	}
	words := func(seed uint64, n int) string {
		r := rand.New(rand.NewPCG(seed, 1))
		s := ""
		for i := range n {
			if i > 0 {
				s += " "
			}
			s += fmt.Sprintf("w%d", r.IntN(100000))
		}
		return s
	}
	shared := words(1, 120)
	a := e.Extract(shared + " " + words(2, 120))
	b := e.Extract(shared + " " + words(3, 120))
	if j := rule.Score(&a, &b); j > 0.4 {
		t.Fatalf("J %v, want the two texts below 0.4", j)
	}
	if !rule.PrefilterRejects(&a.Pre, &b.Pre) {
		t.Errorf("two texts at J %.2f not rejected by the prefilter", rule.Score(&a, &b))
	}
	if rule.Verify(&a, &b) {
		t.Error("Verify passed texts far below the threshold")
	}
	near := e.Extract(shared + " " + words(2, 117) + " x y z")
	if !rule.Verify(&a, &near) || rule.PrefilterRejects(&a.Pre, &near.Pre) {
		t.Errorf("a near-copy at J %.2f rejected", rule.Score(&a, &near))
	}
	// Unknown prefilters: the exact check decides.
	var raw []byte
	if raw, err = a.MarshalBinary(); err != nil {
		t.Fatal(err)
	}
	var back Features
	if err := back.UnmarshalBinary(raw); err != nil {
		t.Fatal(err)
	}
	if back.Pre != a.Pre || back.Prefilter() != a.Pre {
		t.Error("the decoded features' prefilter differs from the extractor's")
	}
	var unknown Prefilter
	if rule.PrefilterRejects(&unknown, &b.Pre) || rule.PrefilterRejects(&b.Pre, &unknown) {
		t.Error("an unknown prefilter rejected a pair")
	}
	// Without Jaccard verification there is no prefilter.
	cos, err := NewRule(Options{Verify: VerifyCosine})
	if err != nil {
		t.Fatal(err)
	}
	if cos.PrefilterRejects(&a.Pre, &b.Pre) {
		t.Error("the prefilter rejected under cosine verification")
	}
}

// occupied is the number of bins that hold a shingle of either set.
func occupied(a, b *Prefilter) int {
	n := 0
	for w := range preWords {
		n += bits.OnesCount64(a[w] | a[preWords+w] | b[w] | b[preWords+w])
	}
	return n
}

// binomialBelow is P(X < c) for X binomial with n draws of probability p.
func binomialBelow(n int, p float64, c int) float64 {
	s := 0.0
	for i := range c {
		lg, _ := math.Lgamma(float64(n + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		s += math.Exp(lg - li - lr + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return s
}

func BenchmarkPrefilter(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x, y := setPair(r, 200, 200, 100)
	b.Run("Of/200", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			PrefilterOf(x)
		}
	})
	px, py := PrefilterOf(x), PrefilterOf(y)
	cut := prefilterCuts(0.8, PrefilterFalseReject)
	b.Run("Rejects", func(b *testing.B) {
		for b.Loop() {
			prefilterRejects(&px, &py, cut)
		}
	})
}
