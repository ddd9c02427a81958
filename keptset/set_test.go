package keptset_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/keptset"
	"github.com/neardup/neardup/rule"
)

// memRecords is Records over a map, as a store would hold them.
type memRecords struct {
	mu   sync.Mutex
	docs map[uint64]rec
}

type rec struct {
	id string
	f  rule.Features
}

func newMemRecords() *memRecords { return &memRecords{docs: map[uint64]rec{}} }

func (m *memRecords) put(seq uint64, id string, f rule.Features) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.docs[seq] = rec{id, f}
}

func (m *memRecords) del(seq uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.docs, seq)
}

func (m *memRecords) Record(_ context.Context, seq uint64) (string, rule.Features, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.docs[seq]
	return r.id, r.f, ok, nil
}

func (m *memRecords) LoadFrom(_ context.Context, from uint64, fn func(uint64, string, *rule.Features) error) error {
	m.mu.Lock()
	var seqs []uint64
	for s := range m.docs {
		if s >= from {
			seqs = append(seqs, s)
		}
	}
	m.mu.Unlock()
	slices.Sort(seqs)
	for _, s := range seqs {
		r := m.docs[s]
		if err := fn(s, r.id, &r.f); err != nil {
			return err
		}
	}
	return nil
}

// addDocs adds docs[from:to] to s as documents from..to-1 (seq i, id "i"),
// puts their records in recs and marks them written.
func addDocs(t testing.TB, s *keptset.Set, ex *rule.Extractor, recs *memRecords, docs []string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		f := ex.Extract(docs[i])
		recs.put(uint64(i), fmt.Sprint(i), f)
		if err := s.Add(uint64(i), fmt.Sprint(i), f); err != nil {
			t.Fatal(err)
		}
		s.Written(uint64(i))
	}
}

// importDocs writes docs as documents 0..len(docs)-1 (seq i, id "i")
// through a Writer in opt.Dir, as a bulk import does, and puts their
// records in recs.
func importDocs(t testing.TB, rl *rule.Rule, ex *rule.Extractor, recs *memRecords, opt keptset.Options, docs []string) {
	t.Helper()
	w, err := keptset.NewWriter(rl, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range docs {
		f := ex.Extract(text)
		recs.put(uint64(i), fmt.Sprint(i), f)
		if err := w.Add(uint64(i), fmt.Sprint(i), &f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// texts returns n documents of a shared corpus with near-copies (a word
// changed, a sentence appended) and exact copies among them.
func texts(t *testing.T, n int) []string {
	src := testcorpora.Texts(t, "en_gitdocs_dev", n, 30)
	r := rand.New(rand.NewPCG(1, 2))
	var out []string
	for _, s := range src {
		out = append(out, s)
		switch r.IntN(4) {
		case 0:
			w := strings.Fields(s)
			w[r.IntN(len(w))] = "changed"
			out = append(out, strings.Join(w, " "))
		case 1:
			out = append(out, s)
		case 2:
			out = append(out, s+" Posted by an editor today.")
		}
	}
	return out
}

// distinct returns n texts of the corpus with no two alike under the rule
// (so each matches itself first).
func distinct(t *testing.T, n int) []string {
	rl, ex := setup(t)
	if testing.Short() {
		n = min(n, 200)
	}
	var out []string
	var fs []*rule.Features
	for _, s := range testcorpora.Texts(t, "en_gitdocs_dev", 3*n, 30) {
		f := ex.Extract(s)
		if rl.Match(&f, fs) < 0 {
			out, fs = append(out, s), append(fs, &f)
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// setup returns the default rule and an extractor, made once: the race
// pass would otherwise spend most of its time loading the profile.
func setup(t testing.TB) (*rule.Rule, *rule.Extractor) { return setupFor(t, rule.Options{}) }

// setupFor returns the rule of opt and an extractor, made once for each.
func setupFor(t testing.TB, opt rule.Options) (*rule.Rule, *rule.Extractor) {
	opt.EnsureDefaults()
	key := fmt.Sprintf("%+v", opt)
	setupMu.Lock()
	r := setups[key]
	if r == nil {
		r = new(ruleSetup)
		setups[key] = r
	}
	setupMu.Unlock()
	r.once.Do(func() {
		r.rule, r.err = rule.NewRule(opt)
		if r.err == nil {
			r.ex, r.err = rule.NewExtractor(opt)
		}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.rule, r.ex
}

type ruleSetup struct {
	once sync.Once
	rule *rule.Rule
	ex   *rule.Extractor
	err  error
}

var (
	setupMu sync.Mutex
	setups  = map[string]*ruleSetup{}
)

// methods are the decision settings the comparisons with refSet run
// under: the default (MethodMinHash), MethodSimHash with Jaccard
// verification (keys of the shingle sets' prefixes), and MethodSimHash
// without verification (every document found by fingerprint distance).
var methods = []struct {
	name string
	opt  rule.Options
}{
	{"minhash", rule.Options{}},
	{"simhash", rule.Options{Method: rule.MethodSimHash}},
	{"simhash-none", rule.Options{Method: rule.MethodSimHash, Verify: rule.VerifyNone}},
}

// TestMatchesKept: the set's verdicts, adding each document unless it
// duplicates one before it, are refSet's (the rule tested against every
// kept document), through deltas written as parts, through merges of parts
// running beside the matches, and after a reopen; under each method.
func TestMatchesKept(t *testing.T) {
	for _, m := range methods {
		t.Run(m.name, func(t *testing.T) { testMatchesKept(t, m.opt) })
	}
}

func testMatchesKept(t *testing.T, ropt rule.Options) {
	rl, ex := setupFor(t, ropt)
	n := 1500
	if testing.Short() {
		n = 300 // the race pass
	}
	docs := texts(t, n)
	for _, tc := range []struct {
		name string
		dir  bool
		opt  keptset.Options
	}{
		{"memory", false, keptset.Options{DeltaSpan: 200, PartSpan: 500}},
		{"dir", true, keptset.Options{DeltaSpan: 200, PartSpan: 500}},
		// Many small deltas: merged into few parts.
		{"memory/merges", false, keptset.Options{DeltaSpan: 16, PartSpan: 1 << 12}},
		{"dir/merges", true, keptset.Options{DeltaSpan: 16, PartSpan: 1 << 12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := ""
			if tc.dir {
				dir = t.TempDir()
			}
			kept := newRefSet(rl)
			recs := newMemRecords()
			opt := tc.opt
			opt.Dir, opt.Settings = dir, "test"
			s, err := keptset.Open(context.Background(), rl, recs, opt)
			if err != nil {
				t.Fatal(err)
			}
			dups := 0
			seq := uint64(0)
			var late []uint64
			for i, text := range docs {
				f := ex.Extract(text)
				id := fmt.Sprint("d", i)
				want, wantDup, err := kept.addIfNew(id, f)
				if err != nil {
					t.Fatal(err)
				}
				got, dup, err := s.Match(context.Background(), &f)
				if err != nil {
					t.Fatal(err)
				}
				sameScore := got.Score == want.Score || math.IsNaN(got.Score) && math.IsNaN(want.Score) // NaN without verification
				if dup != wantDup || got.ID != want.ID || got.Exact != want.Exact || !sameScore || got.Unverified != want.Unverified {
					t.Fatalf("doc %d: got %+v %v, refSet says %+v %v", i, got, dup, want, wantDup)
				}
				if dup {
					dups++
					continue
				}
				if err := s.Add(seq, id, f); err != nil {
					t.Fatal(err)
				}
				if i%3 == 0 { // some writes land late
					recs.put(seq, id, f)
					s.Written(seq)
				} else {
					recs.put(seq, id, f)
					late = append(late, seq)
				}
				seq++
			}
			if dups < len(docs)/8 {
				t.Fatalf("only %d duplicates among %d documents: the test tests little", dups, len(docs))
			}
			if n, _ := kept.len(); s.Len() != n {
				t.Fatalf("Len %d, refSet %d", s.Len(), n)
			}
			if err := s.WaitParts(); err != nil {
				t.Fatal(err)
			}
			if st := s.Stats(); opt.DeltaSpan < 100 {
				// Without merges, one part a delta; with them at most
				// mergeFanIn-1 = 3 parts in each tier below PartSpan
				// (spans 16, 64, 256 and 1024 seqs) and the parts at it.
				deltas := int(s.Next()) / opt.DeltaSpan
				bound := 3*4 + int(s.Next())/opt.PartSpan
				if st.Merges == 0 || st.Parts > bound {
					t.Fatalf("%d deltas left %d parts after %d merges: want merges, and at most %d parts",
						deltas, st.Parts, st.Merges, bound)
				}
				if n, _ := kept.len(); st.Docs != n {
					t.Fatalf("after merges Docs %d, refSet %d", st.Docs, n)
				}
			}
			for _, seq := range late {
				s.Written(seq)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if dir == "" {
				return
			}
			// Reopen: the parts are mapped back; the same verdicts.
			s, err = keptset.Open(context.Background(), rl, recs, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if st := s.Stats(); st.Parts == 0 || st.DeltaDocs != 0 {
				t.Fatalf("reopened with %+v: want parts and an empty delta", st)
			}
			for i, text := range docs {
				f := ex.Extract(text)
				want, wantDup := kept.match(&f)
				got, dup, err := s.Match(context.Background(), &f)
				if err != nil {
					t.Fatal(err)
				}
				if dup != wantDup || got.ID != want.ID {
					t.Fatalf("after reopen, doc %d: got %+v %v, refSet says %+v %v", i, got, dup, want, wantDup)
				}
			}
		})
	}
}

// TestRemove: a removed document is no candidate, in the delta, in a part,
// and after a reopen (the deletes file), and Len follows.
func TestRemove(t *testing.T) {
	rl, ex := setup(t)
	docs := distinct(t, 600)
	recs := newMemRecords()
	dir := t.TempDir()
	opt := keptset.Options{Dir: dir, Settings: "test", DeltaSpan: len(docs)/3 + 1}
	last := len(docs) - 1
	ctx := context.Background()
	s, err := keptset.Open(ctx, rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range docs {
		f := ex.Extract(text)
		if err := s.Add(uint64(i), fmt.Sprint(i), f); err != nil {
			t.Fatal(err)
		}
		recs.put(uint64(i), fmt.Sprint(i), f)
		s.Written(uint64(i))
	}
	// 10 is in a part by now, the last in the delta.
	for _, i := range []int{10, last} {
		if ok, err := s.Remove(uint64(i)); !ok || err != nil {
			t.Fatalf("Remove(%d) = %v, %v", i, ok, err)
		}
		f := ex.Extract(docs[i])
		if m, dup, _ := s.Match(ctx, &f); dup && m.Seq == uint64(i) {
			t.Fatalf("removed %d still matches", i)
		}
	}
	if ok, _ := s.Remove(10); ok {
		t.Fatal("second Remove reported true")
	}
	if s.Len() != len(docs)-2 {
		t.Fatalf("Len %d, want %d", s.Len(), len(docs)-2)
	}
	// The store drops only the last (10's delete is in the set's deletes file).
	recs.del(uint64(last))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = keptset.Open(ctx, rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != len(docs)-2 {
		t.Fatalf("after reopen Len %d, want %d", s.Len(), len(docs)-2)
	}
	f := ex.Extract(docs[10])
	if m, dup, _ := s.Match(ctx, &f); dup && m.Seq == 10 {
		t.Fatal("removed 10 matches after reopen")
	}
	f = ex.Extract(docs[11])
	if m, dup, _ := s.Match(ctx, &f); !dup || m.Seq != 11 {
		t.Fatalf("11 does not match itself after reopen: %+v %v", m, dup)
	}
}

// TestDamagedPart: a damaged part is rebuilt from the records, with a log
// line naming it, and the set answers as before.
func TestDamagedPart(t *testing.T) {
	rl, ex := setup(t)
	docs := distinct(t, 400)
	recs := newMemRecords()
	dir := t.TempDir()
	opt := keptset.Options{Dir: dir, Settings: "test", DeltaSpan: 100}
	ctx := context.Background()
	s, err := keptset.Open(ctx, rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	addDocs(t, s, ex, recs, docs, 0, len(docs))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	parts, _ := filepath.Glob(filepath.Join(dir, "*.part"))
	if len(parts) < 2 {
		t.Fatalf("%d parts, want several", len(parts))
	}
	for _, damage := range []string{"flip", "cut", "missing", "manifest", "unmergeable"} {
		t.Run(damage, func(t *testing.T) {
			victim := parts[min(1, len(parts)-1)]
			b, _ := os.ReadFile(victim)
			switch damage {
			case "flip":
				b[len(b)/2] ^= 0x40
				os.WriteFile(victim, b, 0o644)
			case "cut":
				os.WriteFile(victim, b[:len(b)-100], 0o644)
			case "missing":
				os.Remove(victim)
			case "manifest":
				victim = filepath.Join(dir, "MANIFEST")
				m, _ := os.ReadFile(victim)
				os.WriteFile(victim, append(m[:10], 'x'), 0o644)
			case "unmergeable":
				// A sound part whose table keeps no ext bits, as merges of
				// parts from before minTableBits made: 16+16 known bits.
				b[33] = 0 // the header's ext bits
				binary.LittleEndian.PutUint32(b[len(b)-8:], crc32.Checksum(b[:len(b)-8], crc32.MakeTable(crc32.Castagnoli)))
				os.WriteFile(victim, b, 0o644)
			}
			var logBuf bytes.Buffer
			o := opt
			o.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
			s, err := keptset.Open(ctx, rl, recs, o)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logBuf.String(), "rebuild") || !strings.Contains(logBuf.String(), filepath.Base(victim)) {
				t.Fatalf("log does not name the rebuild of %s: %s", filepath.Base(victim), logBuf.String())
			}
			for i, text := range docs {
				f := ex.Extract(text)
				if m, dup, err := s.Match(ctx, &f); err != nil || !dup || m.Seq != uint64(i) {
					t.Fatalf("doc %d: %+v %v %v", i, m, dup, err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			parts, _ = filepath.Glob(filepath.Join(dir, "*.part"))
		})
	}
}

// TestWriter: a set written in bulk answers as one built by Add.
func TestWriter(t *testing.T) {
	rl, ex := setup(t)
	docs := distinct(t, 500)
	recs := newMemRecords()
	dir := t.TempDir()
	opt := keptset.Options{Dir: dir, Settings: "test", PartSpan: 128}
	w, err := keptset.NewWriter(rl, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range docs {
		seq := uint64(2 * i) // gaps, as deletes leave
		f := ex.Extract(text)
		recs.put(seq, fmt.Sprint(i), f)
		if err := w.Add(seq, fmt.Sprint(i), &f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := keptset.NewWriter(rl, opt); err == nil {
		t.Fatal("a second Writer over a set succeeded")
	}
	s, err := keptset.Open(context.Background(), rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.Stats(); st.Parts < 4 || st.DeltaDocs != 0 || st.Docs != len(docs) {
		t.Fatalf("stats %+v", st)
	}
	for i, text := range docs {
		f := ex.Extract(text)
		if m, dup, err := s.Match(context.Background(), &f); err != nil || !dup || m.Seq != uint64(2*i) {
			t.Fatalf("doc %d: %+v %v %v", i, m, dup, err)
		}
		hits, err := s.QueryFingerprint(f.FP, 3, 0)
		if err != nil || !slices.ContainsFunc(hits, func(h keptset.Hit) bool { return h.Seq == uint64(2*i) && h.Distance == 0 }) {
			t.Fatalf("fingerprint query of doc %d: %v %v", i, hits, err)
		}
		if id, known, err := s.ID(uint64(2 * i)); err != nil || !known || id != fmt.Sprint(i) {
			t.Fatalf("ID(%d) = %q, %v, %v; want %d", 2*i, id, known, err, i)
		}
		if _, known, err := s.ID(uint64(2*i + 1)); err != nil || known {
			t.Fatalf("ID(%d) of a gap: known %v, %v", 2*i+1, known, err)
		}
	}
	if err := s.Add(0, "x", rule.Features{}); err == nil || errors.Is(err, keptset.ErrClosed) {
		t.Fatalf("Add of an old seq: %v", err)
	}
}

// TestFingerprintQuery: the block tables of parts, of merged parts and of
// the delta answer k <= 3 as a scan of every stored fingerprint does, and
// k > 3 by a scan.
func TestFingerprintQuery(t *testing.T) {
	for _, span := range []int{700, 48} {
		t.Run(fmt.Sprint("delta=", span), func(t *testing.T) { testFingerprintQuery(t, span) })
	}
}

func testFingerprintQuery(t *testing.T, deltaSpan int) {
	rl, _ := setup(t)
	r := rand.New(rand.NewPCG(5, 5))
	s, err := keptset.Open(context.Background(), rl, newMemRecords(), keptset.Options{DeltaSpan: deltaSpan})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var fps []uint64
	for i := range 2000 {
		fp := r.Uint64()
		if i%10 == 0 && len(fps) > 0 { // near copies
			fp = fps[r.IntN(len(fps))] ^ 1<<r.IntN(64) ^ 1<<r.IntN(64)
		}
		fps = append(fps, fp)
		if err := s.Add(uint64(i), fmt.Sprint(i), rule.Features{FP: fp, Exact: uint64(i)}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			s.Written(uint64(i)) // the odd ones stay pending
		}
	}
	if _, err := s.Remove(3); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitParts(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Parts == 0 || st.DeltaDocs == 0 || (deltaSpan < 100) != (st.Merges > 0) {
		t.Fatalf("%+v: want parts, a delta, and merges of small deltas", st)
	}
	for q := range 300 {
		fp := fps[r.IntN(len(fps))] ^ 1<<r.IntN(64)
		if q%3 == 0 {
			fp = r.Uint64()
		}
		for _, k := range []int{0, 1, 3, 5} {
			var want []keptset.Hit
			for i, g := range fps {
				if d := bits.OnesCount64(g ^ fp); d <= k && i != 3 {
					want = append(want, keptset.Hit{Seq: uint64(i), FP: g, Distance: d, Pending: i%2 == 1})
				}
			}
			slices.SortFunc(want, func(a, b keptset.Hit) int {
				return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.Seq, b.Seq))
			})
			got, err := s.QueryFingerprint(fp, k, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("k = %d: got %v, a scan finds %v", k, got, want)
			}
			for _, h := range got {
				if id, known, err := s.ID(h.Seq); err != nil || !known || id != fmt.Sprint(h.Seq) {
					t.Fatalf("ID(%d) = %q, %v, %v", h.Seq, id, known, err)
				}
			}
		}
	}
	if _, known, err := s.ID(3); err != nil || known {
		t.Fatalf("ID of a removed document: known %v, %v", known, err)
	}
}

// TestMatchFrom: a match taken before other documents were added, then
// completed from its next over what was added meanwhile, gives the verdict
// of one match after them (the server's add_if_new matches outside its
// write lock so).
func TestMatchFrom(t *testing.T) {
	rl, ex := setup(t)
	docs := texts(t, 600)
	s, err := keptset.Open(context.Background(), rl, newMemRecords(), keptset.Options{DeltaSpan: 64, PartSpan: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seq := uint64(0)
	add := func(i int) {
		f := ex.Extract(docs[i])
		if _, dup, err := s.Match(context.Background(), &f); err != nil || dup {
			return
		}
		if err := s.Add(seq, fmt.Sprint("d", i), f); err != nil {
			t.Fatal(err)
		}
		seq++
	}
	late := 0
	for i := 0; i+3 < len(docs); i += 3 {
		// Document i+2 is matched, then i and i+1 are added, then its
		// match is completed from the next it was given.
		f := ex.Extract(docs[i+2])
		m, dup, next, err := s.MatchFrom(context.Background(), &f, 0)
		if err != nil {
			t.Fatal(err)
		}
		if next != s.Next() {
			t.Fatalf("next %d, the set's %d", next, s.Next())
		}
		add(i)
		add(i + 1)
		if !dup {
			if m, dup, _, err = s.MatchFrom(context.Background(), &f, next); err != nil {
				t.Fatal(err)
			}
			if dup {
				late++
			}
		}
		want, wantDup, err := s.Match(context.Background(), &f)
		if err != nil {
			t.Fatal(err)
		}
		if dup != wantDup || m.ID != want.ID || m.Seq != want.Seq {
			t.Fatalf("doc %d: in two steps %+v %v, in one %+v %v", i+2, m, dup, want, wantDup)
		}
		add(i + 2)
	}
	if late == 0 {
		t.Fatal("no match was found among the documents added meanwhile: the test tests little")
	}
}

// TestPrefilterBeforeRecords: documents that share a long passage (a site's
// template, J about 0.4 between any two) are often LSH candidates of one
// another; the prefilter drops nearly all of them before their records are
// read, from the delta and from mapped parts alike (after a reopen), and the
// verdicts are the rule's.
func TestPrefilterBeforeRecords(t *testing.T) {
	rl, ex := setup(t)
	r := rand.New(rand.NewPCG(3, 4))
	words := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "w%d", r.IntN(1_000_000))
		}
		return b.String()
	}
	template := words(150)
	page := func() string { return template + " " + words(100) }
	var docs []string
	for range 300 {
		docs = append(docs, page())
	}
	recs := newMemRecords()
	dir := t.TempDir()
	opt := keptset.Options{Dir: dir, Settings: "test", DeltaSpan: 64}
	ctx := context.Background()
	s, err := keptset.Open(ctx, rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	addDocs(t, s, ex, recs, docs, 0, len(docs))
	if err := s.WaitParts(); err != nil {
		t.Fatal(err)
	}
	check := func(s *keptset.Set) {
		t.Helper()
		before := s.Stats()
		for range 100 {
			f := ex.Extract(page())
			if m, dup, err := s.Match(ctx, &f); err != nil || dup {
				t.Fatalf("a new page matched %+v, %v, %v", m, dup, err)
			}
		}
		st := s.Stats()
		pre, read := st.Prefiltered-before.Prefiltered, st.Examined-before.Examined
		t.Logf("parts %d: %d candidates dropped by the prefilter, %d records read", st.Parts, pre, read)
		if pre < 20 || 5*read > pre {
			t.Errorf("%d candidates dropped by the prefilter and %d records read, want most dropped", pre, read)
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = keptset.Open(ctx, rl, recs, opt); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.Stats(); st.Parts == 0 || st.DeltaDocs != 0 {
		t.Fatalf("%+v: want every document in mapped parts", st)
	}
	check(s)
}

// TestFingerprintOnly: a set with fingerprint-only documents (an index
// snapshot's ids and fingerprints) ahead of the stored ones gives
// refSet's matches (addFingerprints, then the same adds): the same
// documents in the same order, the snapshot's unverified; after removals of
// snapshot documents, and after a reopen given the snapshot less them.
// Fingerprint queries name them, and MethodMinHash refuses them.
func TestFingerprintOnly(t *testing.T) {
	rl, ex := setupFor(t, rule.Options{Method: rule.MethodSimHash})
	n := 600
	if testing.Short() {
		n = 200
	}
	docs := texts(t, n)
	nsnap := len(docs) / 3
	snap := keptset.FingerprintDocs{}
	for i, text := range docs[:nsnap] {
		snap.IDs = append(snap.IDs, fmt.Sprint("snap-", i))
		snap.FPs = append(snap.FPs, ex.Extract(text).FP)
	}
	kept := newRefSet(rl)
	if err := kept.addFingerprints(snap.IDs, snap.FPs); err != nil {
		t.Fatal(err)
	}
	recs := newMemRecords()
	opt := keptset.Options{Dir: t.TempDir(), Settings: "test", DeltaSpan: 64, PartSpan: 256, FingerprintOnly: snap}
	s, err := keptset.Open(context.Background(), rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	compare := func(when string, i int, f *rule.Features) (dup bool) {
		t.Helper()
		want := kept.matchAll(f, 0)
		got, err := s.MatchAll(context.Background(), f, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s, doc %d: %d matches %+v, refSet %d %+v", when, i, len(got), got, len(want), want)
		}
		for j := range got {
			if got[j].ID != want[j].ID || got[j].Unverified != want[j].Unverified || got[j].Distance != want[j].Distance {
				t.Fatalf("%s, doc %d: match %d is %+v, refSet's %+v", when, i, j, got[j], want[j])
			}
		}
		return len(got) > 0
	}
	unverified, seq := 0, uint64(0)
	for i, text := range docs[nsnap:] {
		f := ex.Extract(text)
		if compare("adding", i, &f) {
			m, _, _ := s.Match(context.Background(), &f)
			if m.Unverified {
				unverified++
			}
			continue
		}
		id := fmt.Sprint("d", i)
		if err := kept.add(id, f); err != nil {
			t.Fatal(err)
		}
		recs.put(seq, id, f)
		if err := s.Add(seq, id, f); err != nil {
			t.Fatal(err)
		}
		s.Written(seq)
		seq++
	}
	if unverified == 0 {
		t.Fatal("no document matched a fingerprint-only one: the test tests little")
	}
	if n, fpOnly := kept.len(); s.Len() != n || s.FingerprintOnlyLen() != fpOnly {
		t.Fatalf("Len %d, fingerprint-only %d; refSet %d, %d", s.Len(), s.FingerprintOnlyLen(), n, fpOnly)
	}
	// A fingerprint query names a snapshot document, first at its distance.
	hits, err := s.QueryFingerprint(snap.FPs[5], 0, 0)
	if err != nil || len(hits) == 0 || !hits[0].FingerprintOnly || hits[0].ID == "" {
		t.Fatalf("QueryFingerprint of snapshot document 5: %+v, %v", hits, err)
	}
	// Removals, then a reopen without them.
	left := keptset.FingerprintDocs{}
	for i, id := range snap.IDs {
		if i%3 != 0 {
			left.IDs, left.FPs = append(left.IDs, id), append(left.FPs, snap.FPs[i])
			continue
		}
		if ok, err := s.RemoveFingerprintOnly(id); !ok || err != nil {
			t.Fatalf("RemoveFingerprintOnly(%s) = %v, %v", id, ok, err)
		}
		kept.remove(id)
		if _, ok := s.FingerprintOnly(id); ok {
			t.Fatalf("%s still there after its removal", id)
		}
	}
	if ok, _ := s.RemoveFingerprintOnly(snap.IDs[0]); ok {
		t.Fatal("a second removal found the document")
	}
	for i, text := range docs {
		f := ex.Extract(text)
		compare("after removals", i, &f)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	opt.FingerprintOnly = left
	if s, err = keptset.Open(context.Background(), rl, recs, opt); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, _ := kept.len(); s.Len() != n {
		t.Fatalf("reopened: Len %d, refSet %d", s.Len(), n)
	}
	for i, text := range docs {
		f := ex.Extract(text)
		compare("after reopen", i, &f)
	}

	mrl, _ := setup(t)
	if _, err := keptset.Open(context.Background(), mrl, newMemRecords(), keptset.Options{FingerprintOnly: snap}); !errors.Is(err, rule.ErrOptions) {
		t.Fatalf("fingerprint-only documents under minhash: %v, want ErrOptions", err)
	}
}
