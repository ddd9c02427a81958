package index

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Probed layouts: fewer tables, each searched for the keys near the query's.
//
// A plan of T tables keyed by T disjoint blocks finds every fingerprint
// within K bits when each table is searched not only for the query's key
// but for every key within r = floor(K/T) bits of it: two fingerprints
// within K bits cannot differ in more than r bits in every one of T blocks
// (that would be T(r+1) > K bits). With K = 3 and two blocks of 32 bits
// (flip-2x32) a query probes each table for its key and the key's 32
// one-bit variants, 66 probes; each probe reads one Elias-Fano bucket of
// about one entry (a 32-bit key, ~30 high bits at 1B). Two tables instead
// of four halve the bytes.

// FlipLayout is the default layout of a Frozen for k = 3: two tables keyed
// by the two 32-bit halves, each probed with keys within 1 bit.
const FlipLayout = "flip-2x32"

// flipPlan returns the plan of T tables, one per block of near-equal width
// (wider first), and the probe radius floor(k/T) that makes it exact.
func flipPlan(k, t int) (Plan, int, error) {
	if k < 0 || t < 1 || t > 64 {
		return Plan{}, 0, fmt.Errorf("%w: flip layout needs k >= 0 and 1..64 tables, got k=%d tables=%d", ErrLayout, k, t)
	}
	p := Plan{K: k, Blocks: make([]int, t)}
	for i := range p.Blocks {
		p.Blocks[i] = 64 / t
		if i < 64%t {
			p.Blocks[i]++
		}
		p.Tables = append(p.Tables, []int{i})
	}
	r := k / t
	if err := checkProbed(p, r); err != nil {
		return Plan{}, 0, err
	}
	return p, r, nil
}

// parseFrozenLayout reads the layouts only a Frozen has: "flip-2x32" and
// "flip:K:T" (T tables probed within floor(K/T) bits). ok is false for
// other names, which ParseLayout reads.
func parseFrozenLayout(name string) (p Plan, radius int, ok bool, err error) {
	s := strings.ToLower(strings.TrimSpace(name))
	if s == FlipLayout {
		p, radius, err = flipPlan(3, 2)
		return p, radius, true, err
	}
	rest, found := strings.CutPrefix(s, "flip:")
	if !found {
		return Plan{}, 0, false, nil
	}
	ks, ts, _ := strings.Cut(rest, ":")
	k, err1 := strconv.Atoi(ks)
	t, err2 := strconv.Atoi(ts)
	if err1 != nil || err2 != nil {
		return Plan{}, 0, true, fmt.Errorf("%w %q (want flip:K:T)", ErrLayout, name)
	}
	p, radius, err = flipPlan(k, t)
	return p, radius, true, err
}

// maxProbes bounds the keys a query probes in one table.
const maxProbes = 1 << 14

// checkProbed checks that plan p searched with keys within radius bits of
// the query's finds every fingerprint within p.K bits. Radius 0 is an
// exact plan (Plan.Validate); otherwise each table must be keyed by one
// block, no two by the same, and T(radius+1) > K.
func checkProbed(p Plan, radius int) error {
	if radius == 0 {
		return p.Validate()
	}
	if radius < 0 || radius > p.K {
		return fmt.Errorf("%w: probe radius %d with k=%d", ErrPlan, radius, p.K)
	}
	if err := p.checkBlocks(); err != nil {
		return err
	}
	seen := make([]bool, len(p.Blocks))
	for t, tab := range p.Tables {
		if len(tab) != 1 || tab[0] < 0 || tab[0] >= len(p.Blocks) || seen[tab[0]] {
			return fmt.Errorf("%w: probed table %d must be keyed by one block of its own, has %v", ErrPlan, t, tab)
		}
		seen[tab[0]] = true
		if c := ballSize(p.Blocks[tab[0]], radius); c > maxProbes {
			return fmt.Errorf("%w: %d probes a table for a %d-bit key within %d bits (at most %d)", ErrPlan, c, p.Blocks[tab[0]], radius, maxProbes)
		}
	}
	if len(p.Tables)*(radius+1) <= p.K {
		return fmt.Errorf("%w: %d tables probed within %d bits miss fingerprints %d bits apart", ErrPlan, len(p.Tables), radius, len(p.Tables)*(radius+1))
	}
	return nil
}

// ballSize returns the number of keys within r bits of a w-bit key, or
// more than maxProbes.
func ballSize(w, r int) int {
	c := 0
	for i := 0; i <= r; i++ {
		b, ok := binomial(w, i)
		if !ok {
			return maxProbes + 1
		}
		c += b
		if c > maxProbes {
			return c
		}
	}
	return c
}

// A bucketRange is the buckets [b0, b1) of one probe.
type bucketRange struct{ b0, b1 uint64 }

// probeRanges appends the bucket ranges that hold the keys within radius
// bits of y's kb-bit key, in a sequence of h high bits, ascending. A key
// longer than the high part maps to one bucket, and keys that differ only
// below it share their bucket: the variants are of the key's top min(kb,
// h) bits. A key shorter than the high part spans 2^(h-kb) buckets.
func probeRanges(dst []bucketRange, y uint64, kb, h uint, radius int) []bucketRange {
	m := min(kb, h)
	key := y >> (64 - m)
	span := h - m
	start := len(dst)
	var rec func(v uint64, from uint, left int)
	rec = func(v uint64, from uint, left int) {
		dst = append(dst, bucketRange{v << span, (v + 1) << span})
		if left == 0 {
			return
		}
		for b := from; b < m; b++ {
			rec(v^1<<b, b+1, left-1)
		}
	}
	rec(key, 0, radius)
	slices.SortFunc(dst[start:], func(a, b bucketRange) int {
		if a.b0 < b.b0 {
			return -1
		}
		if a.b0 > b.b0 {
			return 1
		}
		return 0
	})
	return dst
}

// Layout describes the Frozen's tables in one line: its plan and, for a
// probed layout, the radius of the probes.
func (f *Frozen) Layout() string {
	s := f.lay.plan.String()
	if f.radius > 0 {
		s += fmt.Sprintf(" probed within %d bit", f.radius)
		if f.radius > 1 {
			s += "s"
		}
	}
	return s
}

// Radius returns the bits a table's key may differ from the query's in a
// probe: 0 for the exact plans, 1 for flip-2x32.
func (f *Frozen) Radius() int { return f.radius }

// A bucketProbe is one single-bucket probe of a batched query.
type bucketProbe struct {
	t   int    // table
	b   uint64 // bucket
	pos uint64 // its sample's position in hi, then its start
}

// A probeCand is an entry of a probed bucket whose high bits are within k
// of the query's: its low bits decide.
type probeCand struct {
	t    int
	i, h uint64
}

// singleBuckets reports whether every probe of every table is one bucket
// (keys at least as long as the high bits: flip-2x32 up to 4B entries).
func (f *Frozen) singleBuckets() bool {
	for t := range f.tables {
		if f.lay.kb[t] < f.tables[t].h {
			return false
		}
	}
	return true
}

// queryBuckets appends to buf the stored fingerprints within k of fp when
// every probe is one bucket, in three passes over all the probes of all
// tables, each of whose memory reads are independent of one another so
// that their cache misses overlap: the probes' samples (and the first word
// of high bits after each), then the buckets' entries by their high bits,
// then the candidates' low bits. At 1B a probe is three or four misses
// (sample, high bits, low bits, and their TLB misses) in a 13 GB mapping;
// one probe after another, they would add up.
func (f *Frozen) queryBuckets(fp uint64, k int, buf []uint64, sc *frozenScratch) []uint64 {
	var ys, yhs [maxBatchTables]uint64
	probes := sc.probes[:0]
	for t := range f.tables {
		s := &f.tables[t]
		y := f.lay.perms[t].Apply(fp)
		ys[t], yhs[t] = y, y>>s.l
		sc.ranges = probeRanges(sc.ranges[:0], y, f.lay.kb[t], s.h, f.radius)
		for _, r := range sc.ranges {
			probes = append(probes, bucketProbe{t: t, b: r.b0})
		}
	}
	// Pass 1: the samples, and the high-bit word each points to.
	touch := uint64(0)
	for j := range probes {
		p := &probes[j]
		s := &f.tables[p.t]
		g := p.b >> sampleShift
		if g >= uint64(len(s.samples)) {
			p.pos = ^uint64(0)
			continue
		}
		p.pos = s.samples[g]
		if w := p.pos / 64; w < uint64(len(s.hi)) {
			touch += s.hi[w]
		}
	}
	sc.touch = touch
	// Pass 2: each bucket's start, and its entries whose high bits alone
	// are within k of the query's.
	cands := sc.cands[:0]
	for _, p := range probes {
		s := &f.tables[p.t]
		if p.pos == ^uint64(0) || bits.OnesCount64(p.b^yhs[p.t]) > k {
			continue
		}
		pos, ok := s.skipZeros(p.pos, p.b-p.b>>sampleShift<<sampleShift)
		if !ok || pos < p.b {
			continue
		}
		for q := pos; ; q++ {
			wi := q / 64
			if wi >= uint64(len(s.hi)) || s.hi[wi]&(1<<(q%64)) == 0 {
				break
			}
			if i := q - p.b; i < s.n {
				cands = append(cands, probeCand{t: p.t, i: i, h: p.b})
			}
		}
	}
	// Pass 3: the candidates' low bits.
	for _, c := range cands {
		s := &f.tables[c.t]
		v := c.h<<s.l | s.lowAt(c.i)
		if bits.OnesCount64(v^ys[c.t]) <= k {
			if c.t != f.lay.ident {
				v = f.lay.perms[c.t].Invert(v)
			}
			buf = append(buf, v)
		}
	}
	sc.probes, sc.cands = probes, cands
	return buf
}

// maxBatchTables bounds the tables of a batched query.
const maxBatchTables = 64
