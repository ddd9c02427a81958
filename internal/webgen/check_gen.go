package webgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/dedup"
)

// CheckGenerated is Check for the corpus g makes of its first n documents,
// without reading it: every document is a pure function of its number, so
// the truth about each one and the texts a removal is checked with are made
// again by g. Check holds the removed documents' texts and those kept in
// their place (at 10^8 generated documents, ~26 GB); this holds 4 bytes a
// document and ~24 a removal. The report is Check's on the same corpus,
// field for field (TestCheckGenerated). Workers goroutines share the work
// (0: GOMAXPROCS); a removal's texts are made twice over (~60 us).
func CheckGenerated(ctx context.Context, g *Generator, n int64, duplicates io.Reader, opt CheckOptions, workers int) (Report, error) {
	if opt.Threshold == 0 {
		opt.Threshold = 0.8
	}
	if opt.Examples == 0 {
		opt.Examples = 20
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if n > 1<<31-1 {
		return Report{}, fmt.Errorf("%w: %d documents, at most 2^31-1", ErrOptions, n)
	}
	rep := Report{Threshold: opt.Threshold, Docs: int(n)}

	// The removals, and each document's keeper: -1 when kept, -2 when
	// removed for a document of an index.
	keeper := make([]int32, n)
	for i := range keeper {
		keeper[i] = -1
	}
	var dups []genDup
	dec := json.NewDecoder(bufio.NewReaderSize(duplicates, 1<<20))
	for {
		var d dedup.Duplicate
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return rep, fmt.Errorf("%w: line %d: %v", ErrDuplicates, len(dups)+1, err)
		}
		gd := genDup{d: d, kept: -2}
		var err error
		if gd.dup, err = docNumber(d.DupID, n); err != nil {
			return rep, fmt.Errorf("%w: line %d: %v", ErrDuplicates, len(dups)+1, err)
		}
		if !d.Index {
			if gd.kept, err = docNumber(d.KeptID, n); err != nil {
				return rep, fmt.Errorf("%w: line %d: %v", ErrDuplicates, len(dups)+1, err)
			}
		}
		keeper[gd.dup] = gd.kept
		dups = append(dups, gd)
	}

	// The planted truth of every document, counted; and the near-copies
	// kept whose original was removed (Report.NearOfRemoved).
	var nExact, nNear, nControls, nOrphans atomic.Int64
	err := parallel(ctx, n, 4096, workers, func(lo, hi int64, s *Scratch) {
		var e, nr, c, o int64
		for i := lo; i < hi; i++ {
			k, _ := g.plan(i, s)
			if k == original {
				continue
			}
			text, p := g.text(i, s)
			switch {
			case p.kind == original:
			case p.kind == exact:
				e++
			case p.jaccard >= opt.Threshold:
				nr++
				if keeper[i] == -1 && keeper[p.of] >= 0 {
					t := string(text)
					k, _ := g.text(int64(keeper[p.of]), s)
					if TextJaccard(t, string(k)) < opt.Threshold {
						o++
					}
				}
			default:
				c++
			}
		}
		nExact.Add(e)
		nNear.Add(nr)
		nControls.Add(c)
		nOrphans.Add(o)
	})
	if err != nil {
		return rep, err
	}
	rep.Exact, rep.Near, rep.Controls, rep.NearOfRemoved = int(nExact.Load()), int(nNear.Load()), int(nControls.Load()), int(nOrphans.Load())

	// Each removal: its planted truth and the recomputed Jaccard to the
	// document kept in its place, counted in chunks in file order, whose
	// examples are then merged in order.
	const chunkDups = 4096
	chunks := make([]checkChunk, (len(dups)+chunkDups-1)/chunkDups)
	err = parallel(ctx, int64(len(chunks)), 1, workers, func(lo, hi int64, s *Scratch) {
		for c := lo; c < hi; c++ {
			ch := &chunks[c]
			ch.rep.Threshold = opt.Threshold
			for _, gd := range dups[c*chunkDups : min((c+1)*chunkDups, int64(len(dups)))] {
				text, p := g.text(int64(gd.dup), s)
				pl := Planted{Of: ID(p.of), Kind: p.kind.String(), Jaccard: p.jaccard}
				isPlanted := p.kind != original
				t := string(text)
				j := func() float64 {
					k, _ := g.text(int64(gd.kept), s)
					return TextJaccard(t, string(k))
				}
				r, below, candidate := ch.rep.countRemoval(gd.d, pl, isPlanted, j)
				// The events that can make an example once the chunks
				// are merged in order: the first Examples removals below
				// the threshold, and the first 2·Examples that may be
				// examples of the second kind (at most Examples of those
				// can have gone to the first).
				keep := below && ch.below < opt.Examples || candidate && ch.candidates < 2*opt.Examples
				if below {
					ch.below++
				}
				if candidate {
					ch.candidates++
				}
				if keep {
					ch.events = append(ch.events, exampleOf{r, below, candidate})
				}
			}
		}
	})
	if err != nil {
		return rep, err
	}
	var bad, other []Removal
	for _, ch := range chunks {
		rep.add(&ch.rep)
		for _, e := range ch.events {
			switch {
			case e.below && len(bad) < opt.Examples:
				bad = append(bad, e.r)
			case e.candidate && len(other) < opt.Examples:
				other = append(other, e.r)
			}
		}
	}
	rep.finish(bad, other, opt.Examples)
	return rep, nil
}

// genDup is a removal with its documents' numbers (kept -2: an index's).
type genDup struct {
	d         dedup.Duplicate
	dup, kept int32
}

// checkChunk is what one chunk of removals counted.
type checkChunk struct {
	rep               Report
	events            []exampleOf // removals that may be examples, in order
	below, candidates int
}

// exampleOf is a removal that may be an example: below the threshold (a
// false removal), or a candidate for the second kind (unplanted, or a
// control).
type exampleOf struct {
	r                Removal
	below, candidate bool
}

// add adds the removals' counts of o to r.
func (r *Report) add(o *Report) {
	r.Removed += o.Removed
	r.NearRemoved += o.NearRemoved
	r.ExactRemoved += o.ExactRemoved
	r.ControlsRemoved += o.ControlsRemoved
	r.ControlsAbove += o.ControlsAbove
	r.Unplanted += o.Unplanted
	r.UnplantedAbove += o.UnplantedAbove
	r.FalseRemovals += o.FalseRemovals
	r.Unverified += o.Unverified
}

// docNumber returns the number of the document ID(i) names.
func docNumber(id string, n int64) (int32, error) {
	if len(id) < 2 || id[0] != 'd' {
		return 0, fmt.Errorf("id %q is not a generated document's", id)
	}
	i, err := strconv.ParseInt(id[1:], 10, 64)
	if err != nil || i < 0 || i >= n || ID(i) != id {
		return 0, fmt.Errorf("id %q is not one of the %d documents", id, n)
	}
	return int32(i), nil
}

// parallel calls fn over [0, n) in chunks of up to step, from workers
// goroutines each with its own Scratch, and stops early when ctx is done.
func parallel(ctx context.Context, n, step int64, workers int, fn func(lo, hi int64, s *Scratch)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s := NewScratch()
			for ctx.Err() == nil {
				lo := next.Add(step) - step
				if lo >= n {
					return
				}
				fn(lo, min(lo+step, n), s)
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}
