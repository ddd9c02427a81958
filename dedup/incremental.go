package dedup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/neardup/neardup/index"
)

// Incremental mode: the crawler's daily batch of Manku, Jain and Das Sarma
// (WWW 2007, section 3.1.2) checked against everything seen before. The index
// holds only fingerprints and ids, so the match against it is on fingerprints
// alone (IndexK bits); within the batch the usual verification applies.

// matchIndex loads Options.Index (a missing file is an empty index when
// UpdateIndex is set) and marks every cluster of the batch that has a member
// within IndexK bits of a stored fingerprint.
func (r *runner) matchIndex(ctx context.Context) error {
	o := r.opt
	x, err := index.LoadFile(o.Index, index.Options{Workers: o.Workers})
	switch {
	case errors.Is(err, fs.ErrNotExist) && o.UpdateIndex:
		x, err = index.New(index.Options{K: o.IndexK, ExpectedN: max(r.d.len(), 1), Workers: o.Workers})
		if err != nil {
			return fmt.Errorf("dedup: new index: %w", err)
		}
		r.log().Info("index file absent: starting an empty index", "path", o.Index)
	case err != nil:
		return fmt.Errorf("dedup: loading index: %w", err)
	}
	if x.K() < o.IndexK {
		return fmt.Errorf("%w: index %s answers queries up to k %d, asked for %d (rebuild it with a larger k or lower --index-k)",
			ErrOptions, o.Index, x.K(), o.IndexK)
	}
	r.index = x
	d := r.d
	var pos []int
	var fps []uint64
	for i := range d.len() {
		if !r.emptyFP(i) {
			pos = append(pos, i)
			fps = append(fps, d.fps[i])
		}
	}
	const chunk = 1 << 16 // bounds the result slices and lets ctx interrupt
	r.indexID = make([]string, d.len())
	matched := map[int]string{} // cluster root -> stored id
	for s := 0; s < len(fps); s += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := min(s+chunk, len(fps))
		res, err := x.QueryBatch(fps[s:e], o.IndexK, 1)
		if err != nil {
			return fmt.Errorf("dedup: querying index: %w", err)
		}
		for j, ms := range res {
			if len(ms) == 0 {
				continue
			}
			root := r.uf.Find(pos[s+j])
			if _, ok := matched[root]; !ok {
				matched[root] = ms[0].ID
			}
		}
	}
	for i := range d.len() {
		if id, ok := matched[r.uf.Find(i)]; ok {
			r.indexID[i] = id
		}
	}
	return nil
}

// updateIndex adds the kept documents to the index (replacing the fingerprint
// of an id already there) and saves the snapshot atomically.
func (r *runner) updateIndex() error {
	x := r.index
	d := r.d
	var ids []string
	var fps []uint64
	for i := range d.len() {
		if r.removed(i) {
			continue
		}
		if x.Contains(d.ids[i]) {
			if err := x.Update(d.ids[i], d.fps[i]); err != nil {
				return fmt.Errorf("dedup: updating index: %w", err)
			}
			continue
		}
		ids = append(ids, d.ids[i])
		fps = append(fps, d.fps[i])
	}
	if err := x.AddBulk(ids, fps); err != nil {
		return fmt.Errorf("dedup: adding to index: %w", err)
	}
	if err := x.SaveFile(r.opt.Index); err != nil {
		return fmt.Errorf("dedup: saving index: %w", err)
	}
	return nil
}
