package index

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestConcurrent runs adds, removes, updates, bulk adds, compactions and
// queries at once (run it with -race). A stable set of items is never touched
// by the writers, so every query must find its planted match.
func TestConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	stable := plantedSet(r, 2000, 3)
	x, err := Build(numberedIDs(len(stable)), stable, Options{Memtable: 32})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 99))
			for i := range 600 {
				id := fmt.Sprintf("w%d-%d", w, r.IntN(200))
				switch r.IntN(5) {
				case 0:
					x.Remove(id)
				case 1:
					x.Update(id, r.Uint64())
				case 2:
					x.Add(id, r.Uint64())
				case 3:
					if i%100 == 0 {
						x.Compact()
					}
				case 4:
					ids := []string{fmt.Sprintf("bulk%d-%d-a", w, i), fmt.Sprintf("bulk%d-%d-b", w, i)}
					if err := x.AddBulk(ids, []uint64{r.Uint64(), r.Uint64()}); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	for q := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(q), 7))
			for range 400 {
				i := r.IntN(len(stable))
				ms, err := x.Query(flip(r, stable[i], r.IntN(4)), 3, 0)
				if err != nil {
					t.Error(err)
					return
				}
				want := fmt.Sprintf("doc%d", i)
				found := false
				for _, m := range ms {
					found = found || m.ID == want
				}
				if !found {
					t.Errorf("query near %s missed it: %v", want, ms)
					return
				}
				x.Stats()
			}
		})
	}
	wg.Wait()
}
