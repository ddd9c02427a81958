package dedup

import (
	"context"

	"github.com/neardup/neardup/rule"
)

// decide picks the kept document of every cluster (ClusterComponents; the
// keep-first rule decided already) and counts the summary.
func (r *runner) decide(ctx context.Context) error {
	if r.opt.Cluster == ClusterComponents {
		if err := r.decideComponents(ctx); err != nil {
			return err
		}
	}
	d := r.d
	n := d.len()
	s := &r.sum
	kept := make([]bool, n) // kept documents that others duplicate
	for i := range n {
		k := int(r.keeper[i])
		switch {
		case k < 0:
			s.IndexDuplicates++
		case k == i:
			s.Kept++
		case d.exact.get(int(i)) == d.exact.get(int(k)):
			s.ExactDuplicates++
			kept[k] = true
		default:
			s.NearDuplicates++
			kept[k] = true
		}
	}
	for _, c := range kept {
		if c {
			s.Clusters++
		}
	}
	s.Removed = n - s.Kept
	return nil
}

// decideComponents keeps one document per connected component of verified
// pairs; with a kept set, a component any of whose members duplicates a
// stored document is removed whole in its favour.
func (r *runner) decideComponents(ctx context.Context) error {
	d := r.d
	n := d.len()
	best := make([]int32, n) // best[root]: the keeper so far of root's cluster
	for i := range best {
		best[i] = -1
	}
	for i := range n {
		root := r.uf.Find(i)
		if b := best[root]; b < 0 || r.better(i, int(b)) {
			best[root] = int32(i)
		}
	}
	r.keeper = make([]int32, n)
	for i := range n {
		r.keeper[i] = best[r.uf.Find(i)]
	}
	if r.kept == nil {
		return nil
	}
	r.stored = make([]rule.KeptMatch, n)
	r.storedOK = make([]bool, n)
	if err := r.matchKept(ctx, func(g int32) int32 { return g }); err != nil {
		return err
	}
	matched := map[int]int{} // component root -> member matched first
	for i := range n {
		if f := int(d.first.get(int(i))); f == i && r.storedOK[i] {
			if _, ok := matched[r.uf.Find(i)]; !ok {
				matched[r.uf.Find(i)] = i
			}
		}
	}
	for i := range n {
		if m, ok := matched[r.uf.Find(i)]; ok {
			r.keeper[i] = -1
			r.stored[i], r.storedOK[i] = r.stored[m], true
		}
	}
	return nil
}

// removed reports whether document i is not kept.
func (r *runner) removed(i int) bool { return int(r.keeper[i]) != i }

// better reports whether document i (read after j) should be kept rather than
// j under the keep policy. Ties keep the earlier document.
func (r *runner) better(i, j int) bool {
	switch r.opt.Keep {
	case KeepLongest:
		return r.d.textLength(int(i)) > r.d.textLength(int(j))
	case KeepField:
		a, b := r.d.keys[i], r.d.keys[j]
		if a.kind == 0 || b.kind == 0 {
			return b.kind == 0 && a.kind != 0 // a present value beats a missing one
		}
		c := compareKeys(a, b)
		if r.opt.KeepOrder == "min" {
			c = -c
		}
		return c > 0
	}
	return false
}

// compareKeys orders field values: numbers numerically, other values by their
// text, and any number above any text.
func compareKeys(a, b keyValue) int {
	if a.kind != b.kind {
		if a.kind == 1 {
			return 1
		}
		return -1
	}
	if a.kind == 1 {
		switch {
		case a.num > b.num:
			return 1
		case a.num < b.num:
			return -1
		}
		return 0
	}
	switch {
	case a.str > b.str:
		return 1
	case a.str < b.str:
		return -1
	}
	return 0
}
