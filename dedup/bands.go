package dedup

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/neardup/neardup/rule"
)

// Band buckets: the candidate stage of rule.MethodMinHash under the keep-first
// rule, in time and memory linear in the number of band keys.
//
// Two documents are candidates when their MinHash signatures agree on every
// row of at least one band (LSH banding), that is when they share a band key
// (rule.BandKey mixes the band's number into the key, so one table holds every
// band). Enumerating every pair of a bucket (minhash.LSH.Pairs) costs m²/2
// pairs for a bucket of m documents, and on a corpus of versions or mirrors
// nearly all of those pairs point at documents that keep-first removes
// anyway. Here instead:
//
//  1. Collect (bandCollector, during the read pass): each lead document (the
//     first of its twin group) gives its band keys; they go, with the
//     document's number, to one of bandParts partitions chosen by the top
//     bits of the key. Entries stay in memory up to a budget; past it every
//     partition's entries are appended to that partition's temporary file
//     (12 bytes an entry), so memory does not grow with the corpus.
//  2. Group (groupBands, one partition per worker at a time): a partition's
//     entries are sorted by key; a key held by one document only, the fate of
//     nearly every key, is dropped; a key held by two documents is a
//     candidate pair (8 bytes, and a pair met in several bands, as a near
//     copy meets its original in a third of them at J 0.85, is kept once);
//     a key held by three or more becomes a bucket listing its members in
//     priority order.
//  3. Keep first (keepFirstBuckets): documents are taken in priority order.
//     A document's candidates are the kept members of its buckets, which each
//     bucket holds at the front of its member list: when a document is kept it
//     is written in place after the bucket's kept members (every position
//     before it in the list belongs to a document already decided), so a
//     removed document is never looked at again. A bucket of m copies of one
//     document costs m - 1 comparisons, not m²/2; only documents that are all
//     kept, and so pairwise not near-duplicates, are compared pairwise.
//
// The candidates of a document, and the order rule.Rule.Match sees them in (the
// kept candidates by priority), are exactly those of the pairs LSH.Pairs
// gives, so the verdicts are those of rule.Rule.KeepFirst over its pairs, of the
// online Kept and of the Beam pipeline.

// bandParts is the number of partitions of the band keys, chosen by the top
// bandPartBits bits of a key: a partition is grouped by one worker at a time,
// in memory (with a radix sort's copy): at 10^8 documents 2.4·10^9 keys, 9.4M
// a partition, 150 MB and its copy.
const (
	bandPartBits = 8
	bandParts    = 1 << bandPartBits
)

// defaultBandSpill is the memory held by band entries before they go to
// temporary files.
const defaultBandSpill = 64 << 20

// bandEntrySize is the size of an entry in a spill file: the mixed key and the
// document number, little-endian.
const bandEntrySize = 12

// bandCollector collects the band keys of lead documents. It is not safe for
// concurrent use.
type bandCollector struct {
	dir   string // temporary files ("" for os.TempDir)
	limit int64  // bytes of entries held before a spill
	held  int64
	parts [bandParts]bandPart
	buf   []byte
	err   error // the first spill error: the collector takes no more
}

type bandPart struct {
	keys []uint64
	docs []int32
	f    *os.File // spilled entries; nil before the first spill
	n    int64    // entries in f
}

func newBandCollector(dir string, limit int64) *bandCollector {
	if limit <= 0 {
		limit = defaultBandSpill
	}
	return &bandCollector{dir: dir, limit: limit}
}

// add records the band keys of document doc (keys[b] is band b's).
func (c *bandCollector) add(doc int32, keys []uint64) error {
	if c.err != nil {
		return c.err
	}
	for b, k := range keys {
		k = rule.BandKey(b, k)
		p := &c.parts[k>>(64-bandPartBits)]
		p.keys = append(p.keys, k)
		p.docs = append(p.docs, doc)
	}
	c.held += int64(len(keys)) * bandEntrySize
	if c.held >= c.limit {
		c.err = c.spill()
	}
	return c.err
}

// spill appends every partition's entries to its file.
func (c *bandCollector) spill() error {
	for i := range c.parts {
		p := &c.parts[i]
		if len(p.keys) == 0 {
			continue
		}
		if p.f == nil {
			f, err := os.CreateTemp(c.dir, "neardup-bands-*")
			if err != nil {
				return fmt.Errorf("dedup: band keys: %w", err)
			}
			// Unlinked at once: the space comes back when the file is closed,
			// however the run ends.
			os.Remove(f.Name())
			p.f = f
		}
		c.buf = slices.Grow(c.buf[:0], len(p.keys)*bandEntrySize)[:len(p.keys)*bandEntrySize]
		for j, k := range p.keys {
			binary.LittleEndian.PutUint64(c.buf[j*bandEntrySize:], k)
			binary.LittleEndian.PutUint32(c.buf[j*bandEntrySize+8:], uint32(p.docs[j]))
		}
		if _, err := p.f.Write(c.buf); err != nil {
			return fmt.Errorf("dedup: band keys: writing %s: %w", p.f.Name(), err)
		}
		p.n += int64(len(p.keys))
		p.keys, p.docs = p.keys[:0], p.docs[:0]
	}
	c.held = 0
	c.buf = nil
	return nil
}

// close releases the spill files.
func (c *bandCollector) close() error {
	var errs []error
	for i := range c.parts {
		if f := c.parts[i].f; f != nil {
			errs = append(errs, f.Close())
			c.parts[i].f = nil
		}
		c.parts[i].keys, c.parts[i].docs = nil, nil
	}
	return errors.Join(errs...)
}

// buckets are the band buckets of three or more documents, and each
// document's buckets; and the pairs of documents that share a bucket of
// two. Documents are numbered by priority position. A bucket of two is a
// pair rather than a bucket: the same candidates (the other document when
// it is kept), in 8 bytes once where a bucket costs 24 bytes for every band
// the two share.
type buckets struct {
	start   []uint32 // bucket b's members are members[start[b]:start[b+1]]
	members []int32  // positions, ascending within a bucket; kept ones first once decided
	kept    []uint32 // kept members at the front of bucket b
	of      []uint64 // memberships pos<<32 | bucket, ascending
	pairs   []uint64 // rule.PackPair of the two positions, ascending, each once
}

// bandEnt is an entry being grouped.
type bandEnt struct {
	key uint64
	pos int32
}

// group turns the collected keys into buckets. pos maps a document number as
// added to its priority position. The collector is closed.
func (c *bandCollector) group(workers int, pos func(int32) int32) (*buckets, error) {
	defer c.close()
	if c.err != nil {
		return nil, c.err
	}
	type result struct {
		start   []uint32 // relative to members
		members []int32
		pairs   []uint64
		err     error
	}
	res := make([]result, bandParts)
	var wg sync.WaitGroup
	next := make(chan int, bandParts)
	for i := range bandParts {
		next <- i
	}
	close(next)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ents, tmp []bandEnt
			var buf []byte
			for i := range next {
				p := &c.parts[i]
				ents = ents[:0]
				if p.f != nil {
					var err error
					ents, buf, err = readBandEntries(ents, buf, p.f, p.n, pos)
					if err != nil {
						res[i].err = err
						continue
					}
				}
				for j, k := range p.keys {
					ents = append(ents, bandEnt{k, pos(p.docs[j])})
				}
				p.keys, p.docs = nil, nil
				tmp = sortBandEnts(ents, tmp)
				var r result
				for lo := 0; lo < len(ents); {
					hi := lo + 1
					for hi < len(ents) && ents[hi].key == ents[lo].key {
						hi++
					}
					switch {
					case hi-lo == 2:
						r.pairs = append(r.pairs, rule.PackPair(int(ents[lo].pos), int(ents[lo+1].pos)))
					case hi-lo > 2:
						r.start = append(r.start, uint32(len(r.members)))
						for _, e := range ents[lo:hi] {
							r.members = append(r.members, e.pos)
						}
					}
					lo = hi
				}
				res[i] = r
			}
		}()
	}
	wg.Wait()
	b := &buckets{}
	var nb, nm, np int
	for _, r := range res {
		if r.err != nil {
			return nil, r.err
		}
		nb += len(r.start)
		nm += len(r.members)
		np += len(r.pairs)
	}
	b.pairs = make([]uint64, 0, np)
	for i := range res {
		b.pairs = append(b.pairs, res[i].pairs...)
		res[i].pairs = nil
	}
	sortUint64(b.pairs, workers)
	b.pairs = slices.Compact(b.pairs)
	if nm >= 1<<32 {
		return nil, fmt.Errorf("dedup: %d band bucket memberships, more than 2^32", nm)
	}
	b.start = make([]uint32, 0, nb+1)
	b.members = make([]int32, 0, nm)
	for i := range res {
		off := uint32(len(b.members))
		for _, s := range res[i].start {
			b.start = append(b.start, off+s)
		}
		b.members = append(b.members, res[i].members...)
		res[i] = result{}
	}
	b.start = append(b.start, uint32(len(b.members)))
	b.kept = make([]uint32, nb)
	b.of = make([]uint64, 0, nm)
	for bk := range nb {
		for _, p := range b.members[b.start[bk]:b.start[bk+1]] {
			b.of = append(b.of, uint64(uint32(p))<<32|uint64(bk))
		}
	}
	sortUint64(b.of, workers)
	return b, nil
}

// readBandEntries appends the n entries of spill file f to ents.
func readBandEntries(ents []bandEnt, buf []byte, f *os.File, n int64, pos func(int32) int32) ([]bandEnt, []byte, error) {
	const chunk = 1 << 16 // entries per read
	buf = slices.Grow(buf[:0], chunk*bandEntrySize)[:chunk*bandEntrySize]
	ents = slices.Grow(ents, int(n))
	var off int64
	for off < n {
		m := min(n-off, chunk)
		b := buf[:m*bandEntrySize]
		if got, err := f.ReadAt(b, off*bandEntrySize); err != nil && !(err == io.EOF && got == len(b)) {
			return ents, buf, fmt.Errorf("dedup: band keys: reading %s: %w", f.Name(), err)
		}
		for j := range int(m) {
			e := b[j*bandEntrySize:]
			ents = append(ents, bandEnt{binary.LittleEndian.Uint64(e), pos(int32(binary.LittleEndian.Uint32(e[8:])))})
		}
		off += m
	}
	return ents, buf, nil
}

// sortUint64 sorts a ascending, splitting the work between workers when a is
// large: each sorts a share, then the shares are merged.
func sortUint64(a []uint64, workers int) {
	if workers < 2 || len(a) < 1<<16 {
		slices.Sort(a)
		return
	}
	mid := len(a) / 2
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); sortUint64(a[:mid], workers/2) }()
	sortUint64(a[mid:], workers-workers/2)
	wg.Wait()
	merged := make([]uint64, 0, len(a))
	i, j := 0, mid
	for i < mid && j < len(a) {
		if a[i] <= a[j] {
			merged = append(merged, a[i])
			i++
		} else {
			merged = append(merged, a[j])
			j++
		}
	}
	merged = append(merged, a[i:mid]...)
	merged = append(merged, a[j:]...)
	copy(a, merged)
}

// keepFirstBuckets is the keep-first rule over n documents in priority order
// whose candidates are the kept members of their buckets, plus the pairs
// (y<<32 | x, x < y, sorted; exact copies with different fingerprints).
// removed and the result are as for rule.Rule.KeepFirst. It stops with ctx's
// error when ctx is done (checked every 1,024 documents).
func keepFirstBuckets(ctx context.Context, r *rule.Rule, n int, feat func(p int) rule.Features, pre func(p int) *rule.Prefilter, b *buckets, pairs []uint64, removed []bool, st *rule.Counts) ([]int32, error) {
	keeper := rule.NewKeeper(n, removed)
	var cands []int32
	mi, pi := 0, 0
	for docs := 0; mi < len(b.of) || pi < len(pairs); docs++ {
		if docs&1023 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The next document with candidates.
		y := int32(1<<31 - 1)
		if mi < len(b.of) {
			y = int32(b.of[mi] >> 32)
		}
		if pi < len(pairs) {
			y = min(y, int32(pairs[pi]>>32))
		}
		cands = cands[:0]
		m0 := mi
		for ; mi < len(b.of) && int32(b.of[mi]>>32) == y; mi++ {
			bk := uint32(b.of[mi])
			s := b.start[bk]
			cands = append(cands, b.members[s:s+b.kept[bk]]...)
		}
		for ; pi < len(pairs) && int32(pairs[pi]>>32) == y; pi++ {
			if x := int32(uint32(pairs[pi])); keeper[x] == x {
				cands = append(cands, x)
			}
		}
		if keeper[y] != y {
			if st != nil {
				st.Skipped.Add(int64(len(cands)))
			}
			continue
		}
		if len(cands) > 0 {
			slices.Sort(cands)
			cands = slices.Compact(cands)
			if st != nil {
				st.Candidates.Add(int64(len(cands)))
			}
			if m := r.FirstKept(y, cands, feat, pre, st); m >= 0 {
				keeper[y] = m
			}
		}
		if keeper[y] == y {
			for _, o := range b.of[m0:mi] {
				bk := uint32(o)
				b.members[b.start[bk]+b.kept[bk]] = y
				b.kept[bk]++
			}
		}
	}
	return keeper, nil
}
