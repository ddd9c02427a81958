package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/rule"
)

// Verification data for the documents that need it. The candidate stage
// compares a document with its candidates only: the members of a band
// bucket or pair (under keep-first; and the first document of each group
// of exact copies, which the reports compare with its copies). At 10^8
// generated documents they are about a quarter of them, and the others'
// shingle sets and prefilters are never looked at. So, once the buckets are
// known, the members are numbered (memberIndex) and their prefilters
// computed and held in memory, 64 bytes each, for the candidate stage's
// cheap test (rule/prefilter.go); and their shingle sets come
//
//   - from the first pass's sets (sketchStore: in memory up to
//     Options.SketchBudget, then in a temporary file), while those take at
//     most Options.SketchDisk bytes of disk: what the first pass wrote; or
//   - past that, from the input read again (rereadMembers), which keeps the
//     members' sets only: the first pass drops its sets when they pass
//     SketchDisk and writes no more, so the temporary disk holds the band
//     keys (288 bytes a document) during the first pass and the members'
//     sets after it, not every document's set (~800 bytes a document of
//     1.3 KB: 80 GB at 10^8). The input is re-read in order, its documents
//     checked against the first pass's (ids and token-sequence hashes), and
//     only the members' texts tokenised again.
//
// Either way the sets are exact and the verdicts the same (the tests run
// both); the second costs a read of the input and the members' tokenising,
// and needs inputs that can be read again (files, or standard input spooled
// for the output pass).

// canReread reports whether the run may drop the first pass's sets and read
// its members' from the input again: under keep-first with MinHash bands
// (the stage that names its members before it verifies), from inputs that
// can be read again, and with nothing that needs every document's set
// (an index of earlier runs, OnKept).
func (r *runner) canReread(inputs []string) bool {
	o := &r.opt
	return o.Method == rule.MethodMinHash && o.Cluster == ClusterGreedy && o.Verify == rule.VerifyJaccard &&
		o.Index == "" && o.OnKept == nil && o.SketchDisk > 0 && !usesStdin(inputs)
}

// setMembers numbers the documents the candidate stage needs: those of the
// pairs and bucket memberships (positions, turned into documents by doc),
// and the first document of each group of exact copies.
func (r *runner) setMembers(pairs []uint64, b *buckets, doc func(p int) int) {
	n := r.d.len()
	m := newMemberIndex(n)
	for _, p := range pairs {
		m.add(doc(int(uint32(p))))
		m.add(doc(int(p >> 32)))
	}
	if b != nil {
		for _, o := range b.of {
			m.add(doc(int(o >> 32)))
		}
	}
	for i := range n {
		if f := int(r.d.first.get(i)); f != i {
			m.add(r.twinLead(i))
		}
	}
	m.seal()
	r.members = m
}

// twinLead returns the document whose verification data stands for
// document i: the lead (in priority order) of i's group of exact copies,
// whose text has the same tokens.
func (r *runner) twinLead(i int) int {
	g := r.d.first.get(i)
	if r.leadOf == nil {
		return int(g)
	}
	return int(r.leadOf[g])
}

// loadMembers computes the members' prefilters, from the first pass's sets
// or, when those were dropped, from the input read again, whose members'
// sets it keeps.
func (r *runner) loadMembers(ctx context.Context) error {
	r.memberPre = make([]rule.Prefilter, r.members.len())
	if r.sets == nil {
		return r.rereadMembers(ctx)
	}
	// Workers take the members in turns of 4,096, in document order: the
	// sets spilled are read nearly in file order.
	var members []int32
	r.members.each(func(i, _ int) error { members = append(members, int32(i)); return nil })
	const turn = 4096
	errs := make([]error, r.opt.Workers)
	var wg sync.WaitGroup
	for w := range r.opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := w * turn; lo < len(members); lo += r.opt.Workers * turn {
				if ctx.Err() != nil {
					errs[w] = ctx.Err()
					return
				}
				for k := lo; k < min(lo+turn, len(members)); k++ {
					sk, err := r.sets.get(int(members[k]))
					if err != nil {
						errs[w] = err
						return
					}
					r.memberPre[k] = rule.PrefilterOf(sk.Hashes())
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// memberSet returns the set of member rank k.
func (r *runner) memberSet(k int) (rule.Sketch, error) { return r.memberSets.get(k) }

// rereadMembers reads the input again and keeps the members' shingle sets
// (in a sketchStore numbered by member rank: in memory up to SketchBudget,
// then in a temporary file) and prefilters. Workers tokenise the members'
// texts; the collector checks every document against the first pass's
// (the id, and a member's token-sequence hash) and appends in order.
func (r *runner) rereadMembers(ctx context.Context) error {
	copt := r.copt
	copt.OnBad = func(error) {} // counted by the first pass
	rd, err := corpus.Open(r.inputs, copt)
	if err != nil {
		return err
	}
	defer rd.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.memberSets = newSketchStore(r.opt.TempDir, r.opt.SketchBudget)

	type doc struct {
		i      int
		id     string
		text   string
		member bool
		f      rule.Features
	}
	type batch struct {
		seq  int
		docs []doc
	}
	work := make(chan *batch, 2*r.opt.Workers)
	done := make(chan *batch, 2*r.opt.Workers)
	var readErr error
	go func() { // reader
		defer close(work)
		b := &batch{}
		seq, bytes := 0, 0
		for i := 0; ; i++ {
			d, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				readErr = err
				cancel()
				return
			}
			x := doc{i: i}
			if i < r.d.len() {
				_, x.member = r.members.rank(i)
			}
			if x.member {
				x.text = d.Text
				bytes += len(d.Text)
			}
			x.id = strings.Clone(d.ID)
			b.docs = append(b.docs, x)
			if len(b.docs) >= 256 || bytes >= 4<<20 {
				b.seq = seq
				select {
				case work <- b:
				case <-ctx.Done():
					return
				}
				seq, bytes, b = seq+1, 0, &batch{}
			}
		}
		if len(b.docs) > 0 {
			b.seq = seq
			select {
			case work <- b:
			case <-ctx.Done():
			}
		}
	}()
	var wg sync.WaitGroup
	for range r.opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The set and the prefilter only.
			e, err := rule.NewExtractorWith(r.opt.Options, rule.ExtractorOptions{SetOnly: true})
			if err != nil {
				panic(err) // validated by Run
			}
			for b := range work {
				for k := range b.docs {
					if x := &b.docs[k]; x.member {
						e.ExtractInto(&x.f, x.text)
						x.text = ""
					}
				}
				e.Shrink()
				select {
				case done <- b:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()

	ids := r.d.ids.cursor()
	pending := map[int]*batch{}
	next, count := 0, 0
	var err2 error
	for b := range done {
		pending[b.seq] = b
		for err2 == nil {
			b, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			for k := range b.docs {
				if err2 = r.rereadDoc(&b.docs[k].f, b.docs[k].i, b.docs[k].id, b.docs[k].member, ids); err2 != nil {
					break
				}
				count++
			}
			r.progress(Progress{Stage: "reread", Docs: int64(count), TotalDocs: int64(r.d.len()),
				Stored: rd.Consumed(), TotalStored: rd.Size()})
		}
		if err2 != nil {
			cancel()
		}
	}
	switch {
	case err2 != nil:
		return err2
	case readErr != nil:
		return readErr
	case ctx.Err() != nil:
		return ctx.Err()
	case count != r.d.len():
		return fmt.Errorf("%w: %d documents read again, the first pass read %d", ErrInputChanged, count, r.d.len())
	}
	r.sum.Reread = int64(r.memberSets.len())
	r.progress(Progress{Stage: "reread", Docs: int64(count), TotalDocs: int64(r.d.len()),
		Stored: rd.Consumed(), TotalStored: rd.Size(), Done: true})
	return nil
}

// rereadDoc checks document i read again (its id, and for a member its
// token-sequence hash) against the first pass and keeps a member's set.
func (r *runner) rereadDoc(f *rule.Features, i int, id string, member bool, ids *idCursor) error {
	if i >= r.d.len() {
		return fmt.Errorf("%w: more documents than the first pass read", ErrInputChanged)
	}
	want, err := ids.next()
	if err != nil {
		return err
	}
	if id != want || member && f.Exact != r.d.exact.get(i) {
		return fmt.Errorf("%w: document %d (%q) is not the one the first pass read", ErrInputChanged, i+1, id)
	}
	if !member {
		return nil
	}
	k := r.memberSets.len()
	if err := r.memberSets.add(f.Sketch.Hashes()); err != nil {
		return err
	}
	r.memberPre[k] = f.Pre
	return nil
}
