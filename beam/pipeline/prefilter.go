package pipeline

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/rule"
)

// The prefilter at the stars' centres (rule.Rule.PrefilterRejects: 64
// bytes a document, a few nanoseconds a pair; a pair it rejects is below the
// threshold, and so not an edge of the batch's graph E, except with
// probability rule.PrefilterFalseReject, the same decision the batch takes
// for the same pair). The range's links step reads the range again,
// computes the prefilter of each bucket member, and sends it, once per
// partition of the member's distinct centres, to the centres (linkFn); a
// centre's partition then drops the leaves whose prefilter rejects against
// the centre's before any features move and before the links make the
// candidate components (centreFn). Why the components stay unions of E's:
// see doc.go and centreFn.

var (
	candidateLinks     = beam.NewCounter("neardup", "candidate_links")
	prefilteredLinks   = beam.NewCounter("neardup", "prefiltered")
	prefilterLeafLinks = beam.NewCounter("neardup", "prefilter_leaf_links")
	prefilterChecks    = beam.NewCounter("neardup", "prefilter_checks")
	prefilterCoarsened = beam.NewCounter("neardup", "prefilter_coarsened")
	unshippedLeaves    = beam.NewCounter("neardup", "unshipped_leaves")
)

const preBytes = 8 * len(rule.Prefilter{}) // 64

// appendPrefilter appends the words of p, little-endian.
func appendPrefilter(b []byte, p *rule.Prefilter) []byte {
	for _, w := range p {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

func readPrefilter(b []byte) (rule.Prefilter, []byte, error) {
	var p rule.Prefilter
	if len(b) < preBytes {
		return p, b, fmt.Errorf("pipeline: a prefilter cut to %d bytes", len(b))
	}
	for i := range p {
		p[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return p, b[preBytes:], nil
}

// A link entry, in a batch for a partition of star centres (nodePart of the
// centre), is a bucket member with its prefilter and its distinct centres
// in that partition: the uvarint of the member's difference from the entry
// before (entries are added in member order; the first's from 0), the
// uvarint of n<<1 | known, n uvarints of member - centre (a centre is its
// buckets' least member), and the 64 bytes of the prefilter when known. A
// centre is an entry's member too (its own star edge), so its prefilter
// reaches its partition.
type linkEntry struct {
	member uint64
	known  bool
	pre    rule.Prefilter
	// centres is the entry's slice of the decoded centres.
	centres []uint64
}

// appendLinkEntry appends an entry after one of member last.
func appendLinkEntry(b []byte, last uint64, e *linkEntry) []byte {
	b = binary.AppendUvarint(b, e.member-last)
	flag := uint64(len(e.centres)) << 1
	if e.known {
		flag |= 1
	}
	b = binary.AppendUvarint(b, flag)
	for _, c := range e.centres {
		b = binary.AppendUvarint(b, e.member-c)
	}
	if e.known {
		b = appendPrefilter(b, &e.pre)
	}
	return b
}

// appendLinkEntries decodes a batch of link entries onto es.
func appendLinkEntries(es []linkEntry, b []byte) ([]linkEntry, error) {
	var m uint64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			return es, errors.New("pipeline: a link batch holds a bad member")
		}
		m += d
		b = b[n:]
		flag, n := binary.Uvarint(b)
		if n <= 0 || flag>>1 > uint64(len(b)) {
			return es, errors.New("pipeline: a link batch holds a bad centre count")
		}
		b = b[n:]
		e := linkEntry{member: m, known: flag&1 == 1, centres: make([]uint64, flag>>1)}
		for i := range e.centres {
			dc, n := binary.Uvarint(b)
			if n <= 0 || dc > m {
				return es, errors.New("pipeline: a link batch holds a bad centre")
			}
			e.centres[i] = m - dc
			b = b[n:]
		}
		if e.known {
			var err error
			if e.pre, b, err = readPrefilter(b); err != nil {
				return es, err
			}
		}
		es = append(es, e)
	}
	return es, nil
}

// linkFn gathers a range's star edges, drops the repeats (a document
// shares most of its bands with its near copies, so it meets the same centre
// in many buckets), reads the range again to compute the prefilter of each
// member (the features extracted once more, as dataFn does; under
// MethodSimHash, which ships no features before the decision, none: the
// unknown prefilter, which rejects nothing) and sends each member, with its
// prefilter, to the partitions of its distinct centres (KV<partition,
// batch>, one entry per member and partition: a member with one distinct
// centre, the common case, costs its prefilter once). A range without star
// edges is not read. One call holds the range's star edges (16 bytes each
// decoded, at most 25 per document of the range), one document, and up to
// 8 MiB of entries before a flush.
type linkFn struct {
	rangeDocs
	Rule    ruleConfig
	Parts   int // partitions of the centres, as the keys'
	Shuffle shuffleCounter

	ext *rule.Extractor
	ft  rule.Features
}

func (f *linkFn) Setup() (err error) {
	f.ext, err = rule.NewRuleExtractor(f.Rule.options())
	return err
}

func (f *linkFn) ProcessElement(ctx context.Context, _ uint64, rangeIter func(*inputRange) bool, edgeBatches func(*[]byte) bool,
	emit func(int, []byte)) error {
	var r inputRange
	if !rangeIter(&r) {
		return errors.New("pipeline: star edges for a range that was not read")
	}
	es, err := gather(edgeBatches, appendStarEdges)
	if err != nil || len(es) == 0 {
		return err
	}
	es = sortEdges(es)
	out := newPartBatches(f.Parts)
	last := make([]uint64, len(out.parts)) // each batch's last member
	emitBatch := func(p int, b []byte) {
		f.Shuffle.add(ctx, "links", p, b)
		emit(p, b)
	}
	var byPart []uint64 // a member's centres, sorted by partition
	// add sends member m, whose star edges es start with, and drops them.
	add := func(m uint64, pre *rule.Prefilter) {
		hi := 1
		for hi < len(es) && es[hi].Member == m {
			hi++
		}
		e := linkEntry{member: m}
		if pre != nil && pre.Known() {
			e.known, e.pre = true, *pre
		}
		byPart = byPart[:0]
		for _, se := range es[:hi] {
			byPart = append(byPart, se.Centre)
		}
		es = es[hi:]
		slices.SortFunc(byPart, func(a, b uint64) int {
			return cmp.Or(cmp.Compare(nodePart(a, f.Parts), nodePart(b, f.Parts)), cmp.Compare(a, b))
		})
		for i := 0; i < len(byPart); {
			p := nodePart(byPart[i], f.Parts)
			j := i + 1
			for j < len(byPart) && nodePart(byPart[j], f.Parts) == p {
				j++
			}
			e.centres = byPart[i:j]
			n := len(out.parts[p])
			if n == 0 {
				last[p] = 0 // a new batch: its first entry's difference is from 0
			}
			out.parts[p] = appendLinkEntry(out.parts[p], last[p], &e)
			last[p] = m
			if out.grew(p, n, edgeFlushBytes) {
				out.flush(emitBatch)
			}
			i = j
		}
	}
	if f.Rule.Method == rule.MethodMinHash {
		err = f.read(ctx, r, -1, false, func(pos uint64, doc *corpus.Doc, _ []byte) error {
			for len(es) > 0 && es[0].Member < pos {
				add(es[0].Member, nil) // not read again: the keys read skipped it
			}
			if len(es) > 0 && es[0].Member == pos {
				f.ext.ExtractInto(&f.ft, doc.Text)
				add(pos, &f.ft.Pre)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for len(es) > 0 {
		add(es[0].Member, nil)
	}
	out.flush(emitBatch)
	return nil
}

// centreFn applies the prefilter to the stars of one partition of centres
// and emits what is left: the links of the candidate graph (KV<a, b>) and
// the star edges of the data read (KV<range, batch> of (member, centre), a
// centre's own among them when it keeps a leaf).
//
// A star here is a centre c and its leaves: the distinct members of the
// buckets whose least member is c (up to 25 buckets). A leaf whose
// prefilter passes against c's is linked to c. A leaf y that fails may still
// be an E-neighbour of another leaf x of the same bucket, and their edge be
// what connects them (x passing, or both failing, when c is a page of their
// site's template and they are near copies of each other): so, as verifyFn
// does with Duplicates, each failing leaf is tested against the other leaves
// with the prefilter, except pairs already connected (a union-find over the
// star) and pairs of failing leaves looked at once, and linked to those it
// passes with. A pair of E passes the prefilter (Rule.Duplicates applies
// it), so whatever E connects within a bucket, these links connect: the
// candidate components stay unions of E's components. Pairs of leaves from
// different buckets of c are tested too; a link between them only merges.
//
// A leaf's features are sent to c (for a verified star) only when the
// union-find joined it to something (c, or another leaf), and c's own only
// when a leaf passed against it: then every E-edge within the star has both
// ends at c, as verifyFn needs. A leaf left alone has no E-edge within the
// star and is neither linked nor sent (counted in unshipped_leaves); a
// centre no leaf passed against has none either, and its star is verified
// without it. A star whose failing leaves times its leaves exceed MaxChecks
// links and sends every leaf as without the prefilter
// (prefilter_coarsened): coarser, never wrong.
//
// One call holds the partition's entries (about 100 bytes each decoded, one
// per member and distinct centre of the partition) and one star's union-find.
type centreFn struct {
	Rule      ruleConfig
	MaxChecks int64
	Shuffle   shuffleCounter

	rule *rule.Rule
}

func (f *centreFn) Setup() (err error) { f.rule, err = f.Rule.rule(); return err }

// starLeaf is a member of a centre's star with its prefilter (the zero,
// unknown one when none was known).
type starLeaf struct {
	centre, member uint64
	pre            *rule.Prefilter
}

func (f *centreFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool,
	links func(uint64, uint64), edges func(uint64, []byte)) error {
	es, err := gather(batches, appendLinkEntries)
	if err != nil {
		return err
	}
	var ls []starLeaf
	for i := range es {
		for _, c := range es[i].centres {
			ls = append(ls, starLeaf{centre: c, member: es[i].member, pre: &es[i].pre})
		}
	}
	slices.SortFunc(ls, func(a, b starLeaf) int {
		return cmp.Or(cmp.Compare(a.centre, b.centre), cmp.Compare(a.member, b.member))
	})
	out := map[uint64][]byte{}
	send := func(member, centre uint64) {
		r := uint64(rangeOf(member))
		out[r] = appendStarEdge(out[r], starEdge{Member: member, Centre: centre})
	}
	var st prefilterStar
	for lo := 0; lo < len(ls); {
		hi := lo + 1
		for hi < len(ls) && ls[hi].centre == ls[lo].centre {
			hi++
		}
		if err := f.star(ctx, &st, ls[lo:hi], send, links); err != nil {
			return err
		}
		lo = hi
	}
	for r, b := range out {
		f.Shuffle.add(ctx, "star_range", r, b)
		edges(r, b)
	}
	return nil
}

// prefilterStar is a star's scratch space, reused from star to star.
type prefilterStar struct {
	pass   []bool
	parent []int32
	size   []int32
}

func (s *prefilterStar) find(i int32) int32 {
	for s.parent[i] != i {
		s.parent[i] = s.parent[s.parent[i]]
		i = s.parent[i]
	}
	return i
}

func (s *prefilterStar) union(a, b int32) {
	a, b = s.find(a), s.find(b)
	if a == b {
		return
	}
	if s.size[a] < s.size[b] {
		a, b = b, a
	}
	s.parent[b] = a
	s.size[a] += s.size[b]
}

// star applies the prefilter to one star: ls are the centre's members
// (sorted, the centre itself among them), send names the star edges of the
// data read and link the links of the candidate graph.
func (f *centreFn) star(ctx context.Context, st *prefilterStar, ls []starLeaf, send func(member, centre uint64), link func(a, b uint64)) error {
	c := ls[0].centre
	if ls[0].member != c {
		return fmt.Errorf("pipeline: the centre %d of a star is not among its members", c)
	}
	pc, leaves := ls[0].pre, ls[1:]
	if len(leaves) == 0 {
		return nil
	}
	candidateLinks.Inc(ctx, int64(len(leaves)))
	// Index 0 of the union-find is the centre, i+1 leaf i.
	n := len(leaves)
	st.pass = slices.Grow(st.pass[:0], n)[:n]
	st.parent = slices.Grow(st.parent[:0], n+1)[:n+1]
	st.size = slices.Grow(st.size[:0], n+1)[:n+1]
	for i := range st.parent {
		st.parent[i], st.size[i] = int32(i), 1
	}
	failing := 0
	for i := range leaves {
		st.pass[i] = !f.rule.PrefilterRejects(pc, leaves[i].pre)
		if st.pass[i] {
			st.union(0, int32(i+1))
		} else {
			failing++
		}
	}
	prefilterChecks.Inc(ctx, int64(n))
	if failing == 0 || int64(failing)*int64(n) > f.MaxChecks {
		if failing > 0 {
			prefilterCoarsened.Inc(ctx, 1)
		}
		send(c, c)
		for _, l := range leaves {
			link(c, l.member)
			send(l.member, c)
		}
		return nil
	}
	prefilteredLinks.Inc(ctx, int64(failing))
	for i, l := range leaves {
		if st.pass[i] {
			link(c, l.member)
		}
	}
	checks, added := int64(0), int64(0)
	for y := range leaves {
		if st.pass[y] {
			continue
		}
		for x := range leaves {
			if x == y || (!st.pass[x] && x > y) {
				continue // a pair of failing leaves is looked at once
			}
			if st.find(int32(x+1)) == st.find(int32(y+1)) {
				continue
			}
			checks++
			if !f.rule.PrefilterRejects(leaves[x].pre, leaves[y].pre) {
				st.union(int32(x+1), int32(y+1))
				link(leaves[x].member, leaves[y].member)
				added++
			}
		}
	}
	prefilterChecks.Inc(ctx, checks)
	prefilterLeafLinks.Inc(ctx, added)
	shipped := 0
	for i, l := range leaves {
		if st.size[st.find(int32(i+1))] > 1 {
			send(l.member, c)
			shipped++
		}
	}
	unshippedLeaves.Inc(ctx, int64(n-shipped))
	if failing < n {
		// The centre is sent to its star only when linked to a leaf:
		// otherwise it has no E-edge there, and verifyFn compares the
		// leaves sent among themselves.
		send(c, c)
	}
	return nil
}

// Links returns the candidate graph's edges (KV<a, b>, each once), after
// the prefilter, and the star edges of the data read (KV<range, batch>),
// from the bucket members' edges to their centres (stars, KV<range,
// batch>) and the ranges, read again.
func Links(s beam.Scope, opt Options, in inputs, stars beam.PCollection) (edges, links beam.PCollection) {
	s = s.Scope("Candidate links")
	sh := shuffleCounter{On: opt.CountShuffle}
	lf := &linkFn{
		rangeDocs: rangeDocs{Format: opt.Format, IDField: opt.IDField, TextField: opt.TextField, SkipBad: opt.SkipBad},
		Rule:      opt.ruleConfig(),
		Parts:     in.KeyParts,
		Shuffle:   sh,
	}
	byCentre := beam.ParDo(s, lf, beam.CoGroupByKey(s, in.Ranges, stars))
	cs := s.Scope("Prefilter at the centres")
	links, edges = beam.ParDo2(cs, &centreFn{Rule: opt.ruleConfig(), MaxChecks: opt.MaxChecks, Shuffle: sh}, beam.GroupByKey(cs, byCentre))
	return edges, links
}
