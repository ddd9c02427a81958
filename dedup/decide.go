package dedup

// decide picks the kept document of every cluster and counts the summary.
func (r *runner) decide() {
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
	clusters := 0
	for i := range n {
		root := r.uf.Find(i)
		k := best[root]
		r.keeper[i] = k
		if int(k) == i && r.uf.Size(i) > 1 {
			clusters++
		}
	}
	s := &r.sum
	s.Clusters = clusters
	for i := range n {
		switch {
		case r.indexID != nil && r.indexID[i] != "":
			s.IndexDuplicates++
		case int(r.keeper[i]) == i:
			s.Kept++
		case d.exact[i] == d.exact[r.keeper[i]]:
			s.ExactDuplicates++
		default:
			s.NearDuplicates++
		}
	}
	s.Removed = n - s.Kept
}

// removed reports whether document i is not kept.
func (r *runner) removed(i int) bool {
	return int(r.keeper[i]) != i || (r.indexID != nil && r.indexID[i] != "")
}

// better reports whether document i (read after j) should be kept rather than
// j under the keep policy. Ties keep the earlier document.
func (r *runner) better(i, j int) bool {
	switch r.opt.Keep {
	case KeepLongest:
		return r.d.length[i] > r.d.length[j]
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
