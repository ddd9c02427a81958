package index

import (
	"bytes"
	"io"
	"maps"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// contents returns the live items of the current version, id -> fingerprint.
func contents(x *Index) map[string]uint64 {
	v := x.cur.Load()
	out := map[string]uint64{}
	add := func(fp uint64, iid uint32) {
		if !v.dead.has(iid) {
			out[v.ids.get(iid)] = fp
		}
	}
	for _, s := range v.segs {
		fps := s.prim.values(nil)
		for i, iid := range s.iids {
			add(fps[i], iid)
		}
	}
	for i, fp := range v.memFP {
		add(fp, v.memIID[i])
	}
	return out
}

// liveItem states, in an atomic word per item: a sequence number that every
// operation bumps (twice), a pending bit while the operation runs, a
// present bit and which of the item's two fingerprints it has.
const (
	statePending = 4
	statePresent = 2
	stateVariant = 1
	stateSeq     = 8
)

// TestLiveQueriesMatchModel runs queries against a writer that adds,
// removes and updates items one at a time while every merge runs in the
// background, and snapshots are taken; run it with -race. For every item
// whose state was settled before a query started and unchanged until it
// ended, the query must agree with brute force: present and within k means
// found with its current fingerprint, otherwise not found.
func TestLiveQueriesMatchModel(t *testing.T) {
	n, ops := 3000, 6000
	if raceEnabled {
		n, ops = 1500, 3000
	}
	const k = 3
	r := rand.New(rand.NewPCG(31, 32))
	base := plantedSet(r, 2*n, k+1)
	fp := [2][]uint64{base[:n], base[n:]} // an item's two fingerprints
	ids := numberedIDs(n)
	var merges atomic.Int64
	x, err := Build(ids[:n/2], fp[0][:n/2], Options{
		Memtable: 16, testInlineMerge: -1,
		testMergeHook: func() { merges.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	state := make([]atomic.Uint64, n)
	present := make([]bool, n)
	variant := make([]int, n)
	for i := range n / 2 {
		state[i].Store(statePresent)
		present[i] = true
	}

	var wg sync.WaitGroup
	var done atomic.Bool
	wg.Go(func() {
		defer done.Store(true)
		r := rand.New(rand.NewPCG(1, 2))
		for op := range ops {
			i := r.IntN(n)
			s := state[i].Load()
			state[i].Store(s + stateSeq | statePending)
			var err error
			switch c := r.IntN(10); {
			case c < 5 && !present[i]:
				err = x.Add(ids[i], fp[variant[i]][i])
				present[i] = true
			case c < 5:
				err = x.Remove(ids[i])
				present[i] = false
			case c < 9:
				variant[i] ^= 1
				err = x.Update(ids[i], fp[variant[i]][i])
				present[i] = true
			default:
				if op%500 == 0 {
					x.Compact()
				}
			}
			if err != nil {
				t.Error(err)
				return
			}
			ns := s&^(stateSeq-1) + 2*stateSeq
			if present[i] {
				ns |= statePresent | uint64(variant[i])
			}
			state[i].Store(ns)
		}
	})
	wg.Go(func() {
		for !done.Load() {
			if _, err := x.WriteTo(io.Discard); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for g := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 77))
			before := make([]uint64, n)
			for q := 0; !done.Load() || q < 50; q++ {
				i := r.IntN(n)
				qfp := flip(r, fp[r.IntN(2)][i], r.IntN(k+2))
				for j := range before {
					before[j] = state[j].Load()
				}
				ms, err := x.Query(qfp, k, 0)
				if err != nil {
					t.Error(err)
					return
				}
				found := map[string]uint64{}
				for _, m := range ms {
					found[m.ID] = m.Fingerprint
					if bits.OnesCount64(m.Fingerprint^qfp) != m.Distance || m.Distance > k {
						t.Errorf("query %016x: bad match %+v", qfp, m)
					}
				}
				for j := range n {
					got, ok := found[ids[j]]
					s := state[j].Load()
					if ok && got != fp[0][j] && got != fp[1][j] {
						t.Errorf("query %016x: %s with fingerprint %016x never stored", qfp, ids[j], got)
					}
					if s != before[j] || s&statePending != 0 {
						continue // changed during the query: either answer
					}
					want := s&statePresent != 0 && bits.OnesCount64(fp[s&stateVariant][j]^qfp) <= k
					if ok != want || ok && got != fp[s&stateVariant][j] {
						t.Errorf("query %016x: %s found=%v (%016x), want found=%v (%016x, state %b)",
							qfp, ids[j], ok, got, want, fp[s&stateVariant][j], s&7)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if merges.Load() == 0 {
		t.Error("no background merge ran")
	}
	x.Close()
	want := map[string]uint64{}
	for i := range n {
		if present[i] {
			want[ids[i]] = fp[variant[i]][i]
		}
	}
	if got := contents(x); !maps.Equal(got, want) || x.Len() != len(want) {
		t.Errorf("after the writes: %d items, Len %d; want %d", len(got), x.Len(), len(want))
	}
}

// TestSnapshotDuringWrites takes snapshots while a writer adds and removes
// and checks that each one loads into exactly the index of some moment
// between the snapshot's start and end: a consistent version, not a mix.
func TestSnapshotDuringWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	n := 4000
	ids := numberedIDs(n)
	fps := plantedSet(r, n, 4)
	x, err := Build(ids[:n/2], fps[:n/2], Options{Memtable: 8, testInlineMerge: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	type op struct {
		id  string
		fp  uint64
		add bool
	}
	var mu sync.Mutex // guards log, and is held across each write and its entry
	var log []op      // every write, in order, after the initial build
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		defer done.Store(true)
		r := rand.New(rand.NewPCG(3, 4))
		present := make([]bool, n)
		for i := range n / 2 {
			present[i] = true
		}
		for range 6000 {
			i := r.IntN(n)
			o := op{id: ids[i], fp: fps[i], add: !present[i]}
			// The write and its log entry under one lock: a write the
			// snapshot sees is in the log when the reader reads its end.
			mu.Lock()
			var err error
			if o.add {
				err = x.Add(o.id, o.fp)
			} else {
				err = x.Remove(o.id)
			}
			if err == nil {
				log = append(log, o)
			}
			mu.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
			present[i] = o.add
		}
	})
	initial := map[string]uint64{}
	for i := range n / 2 {
		initial[ids[i]] = fps[i]
	}
	snaps := 0
	for ; !done.Load() || snaps < 3; snaps++ {
		mu.Lock()
		lo := len(log)
		mu.Unlock()
		var buf bytes.Buffer
		if _, err := x.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		hi := len(log)
		ops := log[:hi:hi]
		mu.Unlock()
		y, err := Read(&buf, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := contents(y)
		if y.Len() != len(got) {
			t.Fatalf("snapshot %d: Len %d, %d items", snaps, y.Len(), len(got))
		}
		// Replay the log to lo, then look for a moment in lo..hi that got
		// equals, tracking how many ids differ.
		model := maps.Clone(initial)
		apply := func(o op) {
			if o.add {
				model[o.id] = o.fp
			} else {
				delete(model, o.id)
			}
		}
		for _, o := range ops[:lo] {
			apply(o)
		}
		differ := func(id string) bool {
			a, ok1 := model[id]
			b, ok2 := got[id]
			return ok1 != ok2 || a != b
		}
		diff := 0
		for id := range maps.Keys(model) {
			diff += b2i(differ(id))
		}
		for id := range maps.Keys(got) {
			if _, ok := model[id]; !ok {
				diff++
			}
		}
		match := diff == 0
		for _, o := range ops[lo:] {
			if match {
				break
			}
			diff -= b2i(differ(o.id))
			apply(o)
			diff += b2i(differ(o.id))
			match = diff == 0
		}
		if !match {
			t.Fatalf("snapshot %d (taken during writes %d..%d) is no version of the index", snaps, lo, hi)
		}
	}
	wg.Wait()
	if snaps < 3 {
		t.Fatalf("only %d snapshots", snaps)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestQueryDuringMerge blocks a background merge in its hook and checks
// that queries, adds, removes and a snapshot all complete meanwhile, and
// that the merged segment respects the removes made during the merge.
func TestQueryDuringMerge(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	hook := func() {
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
	}
	x, err := New(Options{Memtable: 4, testInlineMerge: -1, testMergeHook: hook})
	if err != nil {
		t.Fatal(err)
	}
	ids := numberedIDs(100)
	fps := plantedSet(rand.New(rand.NewPCG(51, 52)), len(ids), 3)
	// Two memtables' worth make two segments of 4, which must merge.
	added := 0
	for ; added < 8; added++ {
		if err := x.Add(ids[added], fps[added]); err != nil {
			t.Fatal(err)
		}
	}
	<-started // the merge is picked and waits in the hook
	merging := x.cur.Load().segs
	if len(merging) < 2 {
		t.Fatalf("%d segments while merging", len(merging))
	}

	// Everything added so far, the merging segments' items included, is
	// found; so are items added now, and removed ones are not.
	for i := range added {
		checkFound(t, x, ids[i], fps[i], true)
	}
	for ; added < 60; added++ {
		if err := x.Add(ids[added], fps[added]); err != nil {
			t.Fatal(err)
		}
	}
	removed := []int{0, 1, 2, 3, 50} // 0..3 are in the oldest segment, being merged
	for _, i := range removed {
		if err := x.Remove(ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	alive := make([]bool, len(ids))
	for i := range added {
		alive[i] = !slices.Contains(removed, i)
	}
	for i := range added {
		checkFound(t, x, ids[i], fps[i], alive[i])
	}
	var buf bytes.Buffer
	if _, err := x.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	y, err := Read(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := added - len(removed); y.Len() != want || x.Len() != want {
		t.Fatalf("during the merge Len = %d, snapshot Len = %d; want %d", x.Len(), y.Len(), want)
	}

	before := x.Stats().Segments
	close(release)
	x.waitMerges()
	if after := x.Stats().Segments; after >= before {
		t.Errorf("segments %d before the merge ended, %d after", before, after)
	}
	checkQueries(t, x, ids[:added], fps[:added], alive[:added], rand.New(rand.NewPCG(1, 1)), 3, 200)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	// After Close merges run inline; the index keeps working.
	for ; added < len(ids); added++ {
		if err := x.Add(ids[added], fps[added]); err != nil {
			t.Fatal(err)
		}
		alive[added] = true
	}
	x.wmu.Lock()
	if x.merging {
		t.Error("a background merger started after Close")
	}
	x.wmu.Unlock()
	checkQueries(t, x, ids, fps, alive, rand.New(rand.NewPCG(2, 2)), 3, 200)
}

// checkFound checks that querying id's fingerprint at distance 0 finds id,
// or does not.
func checkFound(t *testing.T, x *Index, id string, fp uint64, want bool) {
	t.Helper()
	ms, err := x.Query(fp, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := slices.ContainsFunc(ms, func(m Match) bool { return m.ID == id })
	if got != want || x.Contains(id) != want {
		t.Fatalf("%s: found %v, Contains %v; want %v", id, got, x.Contains(id), want)
	}
}
