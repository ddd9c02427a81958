package index

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
)

// Planner defaults.
const (
	// DefaultK is the largest query distance of an Index built with a zero
	// Options.K.
	DefaultK = 3
	// DefaultExpectedN is the collection size the planner assumes when
	// Options.ExpectedN is zero.
	DefaultExpectedN = 1 << 20
	// DefaultBytesPerFingerprint is the memory budget per expected
	// fingerprint when Options.BudgetBytes is zero (at least
	// DefaultMinBudget in all).
	DefaultBytesPerFingerprint = 64
	// DefaultMinBudget is the smallest default memory budget.
	DefaultMinBudget = 256 << 20
	// DefaultMemtable is how many single adds are buffered, unsorted, before
	// they become a sorted segment.
	DefaultMemtable = 1024
	// assumedIDBytes is the id length the planner's memory estimate assumes.
	assumedIDBytes = 12
	// maxPlanTables bounds the block plans the planner considers.
	maxPlanTables = 1024
	// tableCost is the planner's cost of searching one table (permuting the
	// query and finding the key's run), in candidate checks.
	tableCost = 64
)

// Options configure an Index. The zero value asks for k = 3 and lets the
// planner choose tables for about a million fingerprints.
type Options struct {
	// K is the largest Hamming distance queries may ask for; zero means
	// DefaultK (3). For an exact-match index (k = 0) set Layout to
	// "blocks:0:1". Ignored when Plan or Layout is set.
	K int
	// ExpectedN is the number of fingerprints the planner plans for; zero
	// means DefaultExpectedN, or the batch size in Build.
	ExpectedN int
	// BudgetBytes is the memory the planner may plan for; zero means
	// DefaultBytesPerFingerprint bytes per expected fingerprint, at least
	// DefaultMinBudget.
	BudgetBytes int64
	// Plan, when not nil, is used as is instead of the planner's choice.
	Plan *Plan
	// Layout names a plan instead: "seeds-4x16", "manku-20", "blocks:K:B"
	// (BlockPlan(K, B)), or "" or "auto" for the planner.
	Layout string
	// Memtable is how many single adds are buffered before they are sorted
	// into a segment; zero means DefaultMemtable.
	Memtable int
	// Workers is how many goroutines build tables and answer QueryBatch;
	// zero means GOMAXPROCS. Background merges use half of them.
	Workers int

	// testMergeHook, when set, is called by the background merger after it
	// has picked a merge and before it builds the merged segment.
	testMergeHook func()
	// testInlineMerge overrides the largest merge a write does itself
	// (defaultInlineMerge); negative sends every merge to the background.
	testInlineMerge int
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.ExpectedN == 0 {
		o.ExpectedN = DefaultExpectedN
	}
	if o.BudgetBytes == 0 {
		o.BudgetBytes = DefaultBudget(o.ExpectedN)
	}
	if o.Memtable == 0 {
		o.Memtable = DefaultMemtable
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
}

// Validate checks the options after EnsureDefaults.
func (o *Options) Validate() error {
	switch {
	case o.K < 0 || o.K > 63:
		return fmt.Errorf("%w: k %d not in 0..63", ErrOptions, o.K)
	case o.ExpectedN < 0:
		return fmt.Errorf("%w: negative expected size %d", ErrOptions, o.ExpectedN)
	case o.BudgetBytes < 0:
		return fmt.Errorf("%w: negative budget %d", ErrOptions, o.BudgetBytes)
	case o.Memtable < 0 || o.Workers < 0:
		return fmt.Errorf("%w: negative memtable or workers", ErrOptions)
	}
	if o.Plan != nil {
		return o.Plan.Validate()
	}
	return nil
}

// DefaultBudget is the memory budget used for n fingerprints when none is given.
func DefaultBudget(n int) int64 {
	return max(int64(n)*DefaultBytesPerFingerprint, DefaultMinBudget)
}

// choice returns the plan the options ask for, with its explanation.
func (o *Options) choice() (Choice, error) {
	if o.Plan != nil {
		c := Explain(*o.Plan, o.ExpectedN)
		c.Budget = o.BudgetBytes
		c.Fits = c.Bytes <= c.Budget
		c.Why = "explicit plan"
		return c, nil
	}
	if o.Layout != "" && o.Layout != "auto" {
		p, err := ParseLayout(o.Layout)
		if err != nil {
			return Choice{}, err
		}
		c := Explain(p, o.ExpectedN)
		c.Budget = o.BudgetBytes
		c.Fits = c.Bytes <= c.Budget
		c.Why = "named layout " + o.Layout
		return c, nil
	}
	return Choose(o.ExpectedN, o.K, o.BudgetBytes)
}

// ParseLayout returns the plan a layout name stands for: "seeds-4x16"
// (Seeds4x16), "manku-20" (Manku20) or "blocks:K:B" (BlockPlan(K, B)).
func ParseLayout(name string) (Plan, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "seeds-4x16", "seeds4x16":
		return Seeds4x16, nil
	case "manku-20", "manku20":
		return Manku20, nil
	}
	if rest, ok := strings.CutPrefix(name, "blocks:"); ok {
		ks, bs, ok := strings.Cut(rest, ":")
		k, err1 := strconv.Atoi(ks)
		b, err2 := strconv.Atoi(bs)
		if ok && err1 == nil && err2 == nil {
			if n, ok := binomial(b, k); !ok || n > maxPlanTables {
				return Plan{}, fmt.Errorf("%w: %q needs more than %d tables", ErrLayout, name, maxPlanTables)
			}
			p, err := BlockPlan(k, b)
			if err != nil {
				return Plan{}, fmt.Errorf("%w: %q: %w", ErrLayout, name, err)
			}
			return p, nil
		}
	}
	return Plan{}, fmt.Errorf("%w %q (want seeds-4x16, manku-20, blocks:K:B or auto)", ErrLayout, name)
}

// binomial returns C(n, k), or false when it exceeds 1<<40.
func binomial(n, k int) (int, bool) {
	if k < 0 || k > n {
		return 0, true
	}
	k = min(k, n-k)
	c := 1
	for i := 1; i <= k; i++ {
		c = c * (n - k + i) / i
		if c > 1<<40 {
			return 0, false
		}
	}
	return c, true
}

// A Choice is a plan with the planner's estimates for n fingerprints.
type Choice struct {
	Plan Plan
	// N is the number of fingerprints the estimates are for.
	N int
	// Tables is the number of tables in the plan; StoredTables is how many
	// the index keeps (the identity table, when the plan has one, is the
	// sorted fingerprint array itself).
	Tables, StoredTables int
	// KeyBits is the smallest key of any table.
	KeyBits int
	// Candidates is the expected number of entries a query checks, the sum
	// over tables of n / 2^keybits for random fingerprints.
	Candidates float64
	// BytesPerFingerprint is the estimated memory per fingerprint, ids of
	// 12 bytes included; Bytes is the total for N.
	BytesPerFingerprint float64
	Bytes               int64
	// Budget is the memory budget the choice was made against, and Fits
	// whether Bytes is within it.
	Budget int64
	Fits   bool
	// Why says in words why this plan was picked.
	Why string
}

// String explains the choice in a few lines.
func (c Choice) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan: %v\n", c.Plan)
	fmt.Fprintf(&b, "tables: %d (%d stored), key bits >= %d\n", c.Tables, c.StoredTables, c.KeyBits)
	fmt.Fprintf(&b, "expected candidates per query at n=%d: %.1f\n", c.N, c.Candidates)
	fmt.Fprintf(&b, "memory: %.1f bytes/fingerprint (ids of %d bytes), %s total", c.BytesPerFingerprint, assumedIDBytes, humanBytes(c.Bytes))
	if c.Budget > 0 {
		fit := "within"
		if !c.Fits {
			fit = "OVER"
		}
		fmt.Fprintf(&b, ", %s budget %s", fit, humanBytes(c.Budget))
	}
	if c.Why != "" {
		fmt.Fprintf(&b, "\nwhy: %s", c.Why)
	}
	return b.String()
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Explain estimates the cost of plan p for n fingerprints. The memory model
// is the Index's: per stored table 64-bb bits per entry plus its bucket
// offsets (bb from n, see bucketBits); 4 bytes of internal id per entry; and
// per id its bytes, a 4-byte arena offset and a hash slot of 5 bytes at a
// load of 0.7.
func Explain(p Plan, n int) Choice {
	c := Choice{Plan: p, N: n, Tables: len(p.Tables), KeyBits: 64}
	l := newLayout(p)
	c.StoredTables = c.Tables
	if l.ident < 0 {
		c.StoredTables++ // the sorted fingerprint array
	}
	for t := range p.Tables {
		kb := p.KeyBits(t)
		c.KeyBits = min(c.KeyBits, kb)
		c.Candidates += float64(n) / math.Ldexp(1, kb)
	}
	nn := max(n, 1)
	bb := bucketBits(nn)
	perTable := float64(64-bb)/8 + 4*math.Ldexp(1, int(bb))/float64(nn)
	c.BytesPerFingerprint = float64(c.StoredTables)*perTable + 4 + assumedIDBytes + 4 + 5.0/0.7 + 1.0/8
	c.Bytes = int64(c.BytesPerFingerprint * float64(n))
	return c
}

// Choose picks a block plan (BlockPlan(k, B), C(B, k) tables, B from k+1
// up) for n fingerprints and distances up to k: among the plans whose
// estimated memory fits budgetBytes (zero: DefaultBudget(n)) the one with
// the lowest expected query cost, candidates + 64 per table; when none fits,
// the one that needs the least memory. More blocks mean longer keys and so
// fewer candidates, but C(B, k) tables (section 3.1.1 of Manku et al.).
func Choose(n, k int, budgetBytes int64) (Choice, error) {
	if k < 0 || k > 63 || n < 0 {
		return Choice{}, fmt.Errorf("%w: k=%d n=%d", ErrOptions, k, n)
	}
	if budgetBytes == 0 {
		budgetBytes = DefaultBudget(n)
	}
	var best, small Choice
	found := false
	for b := k + 1; b <= 64; b++ {
		nt, ok := binomial(b, k)
		if !ok || nt > maxPlanTables {
			break
		}
		p, err := BlockPlan(k, b)
		if err != nil {
			return Choice{}, err
		}
		c := Explain(p, n)
		c.Budget = budgetBytes
		c.Fits = c.Bytes <= budgetBytes
		cost := c.Candidates + tableCost*float64(c.Tables)
		if c.Fits && (!found || cost < best.Candidates+tableCost*float64(best.Tables)) {
			best, found = c, true
		}
		if small.Tables == 0 || c.Bytes < small.Bytes {
			small = c
		}
		if k == 0 {
			break // every block count gives the same single 64-bit table
		}
	}
	if found {
		best.Why = fmt.Sprintf("lowest expected query cost (candidates + %d per table) among block plans for k=%d that fit the budget", tableCost, k)
		return best, nil
	}
	small.Why = fmt.Sprintf("no block plan for k=%d fits the budget; this one needs the least memory", k)
	return small, nil
}
