package keptmem

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/rule"
)

// keptTexts returns version histories (each version a small edit of the one
// before, so neighbours are near-duplicates at every distance around the
// threshold) with exact copies, short and wordless texts mixed in, and
// (without -short) the documents of two shared corpora.
func keptTexts(t *testing.T) []string {
	rng := rand.New(rand.NewPCG(3, 9))
	var texts []string
	for range 40 {
		words := make([]string, 20+rng.IntN(300))
		for i := range words {
			words[i] = fmt.Sprintf("w%d", rng.IntN(3000))
		}
		for range 1 + rng.IntN(8) {
			for range 1 + rng.IntN(6) {
				words[rng.IntN(len(words))] = fmt.Sprintf("w%d", rng.IntN(3000))
			}
			texts = append(texts, strings.Join(words, " "))
			if rng.IntN(10) == 0 {
				texts = append(texts, strings.ToUpper(strings.Join(words, "  ")))
			}
		}
	}
	texts = append(texts, "a b", "a b", "c", "!!!", "!!!", "?")
	if testing.Short() {
		return texts // the race pass: the concurrent paths are elsewhere
	}
	for _, name := range []string{"en_spdx", "zh_fortunes"} {
		texts = append(texts, testcorpora.Texts(t, name, -1, 0)...)
	}
	return texts
}

// TestKeptMatchesEveryDocument checks Set's candidate tables against the rule
// itself: for every document, MatchAll must return exactly the kept documents
// that rule.Rule.Duplicates accepts, in priority order, whatever found the
// candidates (the prefix filter, LSH bands, the Hamming index, the exact
// table), while documents come and go and the tables grow from their smallest
// size. (Under rule.MethodMinHash the bands are the candidate test: the rule
// applies to documents that share a band key, as in the batch.)
func TestKeptMatchesEveryDocument(t *testing.T) {
	texts := keptTexts(t)
	for _, tc := range []struct {
		name string
		opt  rule.Options
		thin bool // store every third document's set sampled at modulus 2
	}{
		{"simhash", rule.Options{}, false},
		{"simhash-k3", rule.Options{K: 3, KShort: 3}, false},
		{"simhash-t0.5", rule.Options{Threshold: 0.5}, false},
		{"simhash-sampled", rule.Options{}, true},
		{"simhash-noverify", rule.Options{Verify: rule.VerifyNone, K: 3, KShort: 3}, false},
		{"minhash", rule.Options{Method: rule.MethodMinHash}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rl, err := rule.NewRule(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			ex, err := rule.NewExtractor(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := New(rl, 1)
			if err != nil {
				t.Fatal(err)
			}
			type doc struct {
				id string
				f  rule.Features
			}
			var all []doc // kept documents in priority order, removed ones deleted
			rng := rand.New(rand.NewPCG(5, 5))
			matched := 0
			for i, text := range texts {
				f := ex.Extract(text)
				if tc.thin && i%3 == 0 {
					f.Sketch = sampled(t, f.Sketch)
				}
				var want []string
				for _, d := range all {
					if rl.Duplicates(&d.f, &f) && (rl.Method() != rule.MethodMinHash || shareBand(&d.f, &f) || d.f.Exact == f.Exact) {
						want = append(want, d.id)
					}
				}
				ms, err := kept.MatchAll(&f, 0)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]string, len(ms))
				for j, m := range ms {
					got[j] = m.ID
				}
				if !slices.Equal(got, want) {
					t.Fatalf("document %d: MatchAll %v, the rule over every kept document %v", i, got, want)
				}
				if m, ok, _ := kept.Match(&f); ok != (len(want) > 0) || ok && m.ID != want[0] {
					t.Fatalf("document %d: Match %v %v, want the first of %v", i, m.ID, ok, want)
				}
				if rl.Method() != rule.MethodMinHash {
					// AddIfNew's recheck of the documents added during
					// its match, here over every slot.
					kept.mu.RLock()
					since := kept.matchSinceLocked(&f, 0)
					kept.mu.RUnlock()
					if len(since) != min(len(want), 1) || len(since) > 0 && !sameMatch(since[0], ms[0]) {
						t.Fatalf("document %d: matchSinceLocked %+v, want the first of %v (%+v)", i, since, want, ms)
					}
				}
				matched += min(len(want), 1)
				id := fmt.Sprint("d", i)
				if err := kept.Add(id, f); err != nil {
					t.Fatal(err)
				}
				all = append(all, doc{id, f})
				if rng.IntN(6) == 0 {
					j := rng.IntN(len(all))
					if !kept.Remove(all[j].id) {
						t.Fatalf("Remove(%s) found nothing", all[j].id)
					}
					all = slices.Delete(all, j, j+1)
				}
			}
			if kept.Len() != len(all) {
				t.Fatalf("Len %d, want %d", kept.Len(), len(all))
			}
			if matched < len(texts)/30 {
				t.Fatalf("only %d of %d documents had a match: the test proves little", matched, len(texts))
			}
			t.Logf("%d documents, %d with a match, %d kept", len(texts), matched, len(all))
		})
	}
}

// sameMatch compares matches, NaN scores equal.
func sameMatch(a, b rule.KeptMatch) bool {
	return a.ID == b.ID && a.Seq == b.Seq && a.Distance == b.Distance && a.Exact == b.Exact &&
		a.Unverified == b.Unverified && (a.Score == b.Score || math.IsNaN(a.Score) && math.IsNaN(b.Score))
}

// Concurrent AddIfNew calls of near-copies keep a set in which no document
// duplicates an earlier one, and decline each of the others in favour of a
// kept document that it duplicates: the guarantee of the write lock, with
// the match made under the read lock and the recheck of what was added
// meanwhile.
func TestKeptAddIfNewConcurrent(t *testing.T) {
	texts := keptTexts(t)
	for _, opt := range []rule.Options{{}, {Method: rule.MethodMinHash}} {
		t.Run(cmp.Or(opt.Method, rule.MethodSimHash), func(t *testing.T) {
			rl, ex := RuleAndExtractor(t, opt)
			var fs []rule.Features
			for _, text := range texts[:min(600, len(texts))] {
				fs = append(fs, ex.Extract(text), ex.Extract(nearCopy(text)))
			}
			for round := range 10 {
				kept, err := New(rl, 1)
				if err != nil {
					t.Fatal(err)
				}
				const workers = 4
				declined := make([]rule.KeptMatch, len(fs))
				isDup := make([]bool, len(fs))
				var wg sync.WaitGroup
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := w; i < len(fs); i += workers {
							// A text and its near-copy go to two
							// workers at about the same moment.
							j := (i + 2*round) % len(fs)
							m, dup, err := kept.AddIfNew(fmt.Sprint("d", j), fs[j])
							if err != nil {
								t.Error(err)
								return
							}
							declined[j], isDup[j] = m, dup
						}
					}()
				}
				wg.Wait()
				var stored []int
				for s := range kept.docs.n {
					d := kept.docs.at(uint32(s))
					var j int
					fmt.Sscanf(d.id, "d%d", &j)
					for _, e := range stored {
						if rl.Duplicates(&fs[e], &fs[j]) && (rl.Method() != rule.MethodMinHash || shareBand(&fs[e], &fs[j]) || fs[e].Exact == fs[j].Exact) {
							t.Fatalf("round %d: d%d stored after d%d, which it duplicates", round, j, e)
						}
					}
					stored = append(stored, j)
				}
				dups := 0
				for j := range fs {
					if !isDup[j] {
						continue
					}
					dups++
					var e int
					fmt.Sscanf(declined[j].ID, "d%d", &e)
					if !kept.Contains(declined[j].ID) || !rl.Duplicates(&fs[e], &fs[j]) {
						t.Fatalf("round %d: d%d declined for %q, which is not a kept duplicate", round, j, declined[j].ID)
					}
				}
				if dups+len(stored) != len(fs) || dups < len(fs)/10 {
					t.Fatalf("round %d: %d stored, %d declined of %d", round, len(stored), dups, len(fs))
				}
			}
		})
	}
}

// The prefix is long enough for every set size and threshold: two sets at
// Jaccard t share a hash within their prefixes.
func TestPrefixLen(t *testing.T) {
	for _, th := range []float64{0.5, 0.7, 0.8, 0.9, 0.95, 1} {
		for n := 1; n < 400; n++ {
			p := prefixLen(n, th)
			if p < 1 || p > n {
				t.Fatalf("prefixLen(%d, %g) = %d", n, th, p)
			}
			// A set of n can share at most n-p+... : a set B whose
			// intersection with A misses A's whole prefix has |A∩B| <= n-p,
			// so J <= (n-p)/n, which must be below th.
			if float64(n-p)/float64(n) >= th && !(th == 1 && p == 1) {
				t.Fatalf("prefixLen(%d, %g) = %d: a set missing the prefix can still reach J = %g", n, th, p, float64(n-p)/float64(n))
			}
		}
	}
}

// sampled returns s as an earlier batch past its memory budget kept it: a
// MOD_2 sample when it has 256 hashes or more (the rule's docShift at a global
// modulus of 2), made through the binary encoding, which is how such sets
// reach a Set (kept-set files).
func sampled(tb testing.TB, s rule.Sketch) rule.Sketch {
	tb.Helper()
	h := s.Hashes()
	if len(h) < 256 {
		return s
	}
	b := binary.AppendUvarint(nil, uint64(len(h)))
	b = append(b, 1) // shift: modulus 2
	var even []uint32
	for _, v := range h {
		if v&1 == 0 {
			even = append(even, v)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(even)))
	prev := uint32(0)
	for _, v := range even {
		b = binary.AppendUvarint(b, uint64(v-prev))
		prev = v
	}
	var out rule.Sketch
	if err := out.UnmarshalBinary(b); err != nil {
		tb.Fatal(err)
	}
	if !out.Sampled() {
		tb.Fatal("sampled: the set is exact")
	}
	return out
}

// shareBand reports whether a and b have the same key in some LSH band.
func shareBand(a, b *rule.Features) bool {
	for i := range min(len(a.Bands), len(b.Bands)) {
		if a.Bands[i] == b.Bands[i] {
			return true
		}
	}
	return false
}

// A set loaded with AddBulk (in one call, and in pieces that take both of
// its paths: a rebuild with entries already in the table, and adds one by
// one) answers every match as the set built with Add does.
func TestKeptAddBulkEqualsAdd(t *testing.T) {
	texts := keptTexts(t)
	for _, opt := range []rule.Options{{}, {Method: rule.MethodMinHash}} {
		rl, _ := rule.NewRule(opt)
		ex, _ := rule.NewExtractor(opt)
		ids := make([]string, len(texts))
		fs := make([]rule.Features, len(texts))
		for i, text := range texts {
			ids[i], fs[i] = fmt.Sprint("d", i), ex.Extract(text)
		}
		one, _ := New(rl, 1)
		for i := range ids {
			if err := one.Add(ids[i], fs[i]); err != nil {
				t.Fatal(err)
			}
		}
		whole, _ := New(rl, 1)
		pieces, _ := New(rl, 1)
		a, b := len(ids)/3, len(ids)/3+len(ids)/2 // then a rebuild (a < b-a), then adds
		for _, err := range []error{whole.AddBulk(ids, fs), pieces.AddBulk(ids[:a], fs[:a]),
			pieces.AddBulk(ids[a:b], fs[a:b]), pieces.AddBulk(ids[b:], fs[b:])} {
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := pieces.AddBulk([]string{"d1"}, fs[:1]); err == nil {
			t.Fatal("AddBulk took an id already present")
		}
		for i := range fs {
			want, _ := one.MatchAll(&fs[i], 0)
			for name, k := range map[string]*Set{"whole": whole, "pieces": pieces} {
				got, _ := k.MatchAll(&fs[i], 0)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s %s: document %d: %v, Add gives %v", opt.Method, name, i, got, want)
				}
			}
		}
	}
}

// nearCopy replaces one word in the middle of text.
func nearCopy(text string) string {
	w := strings.Fields(text)
	w[len(w)/2] = "zyxwvut"
	return strings.Join(w, " ")
}

// TestKeptFingerprintOnly adds the fingerprints of real texts as
// fingerprint-only documents, beside ordinary ones, and checks that a
// document matches exactly the fingerprint-only documents within
// rule.Rule.PairK (found through the Hamming index, since they are in no
// prefix table), that those matches are unverified with a NaN score, and that
// removing one works.
func TestKeptFingerprintOnly(t *testing.T) {
	texts := testcorpora.Texts(t, "en_spdx", 300, 150)
	rl, err := rule.NewRule(rule.Options{Method: rule.MethodSimHash})
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := rule.NewExtractor(rule.Options{Method: rule.MethodSimHash})
	kept, err := New(rl, 1)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(texts))
	fps := make([]uint64, len(texts))
	for i, text := range texts {
		ids[i], fps[i] = fmt.Sprintf("snap-%d", i), ex.Extract(text).FP
	}
	// One ordinary document first (so the prefix tables are not empty), then
	// the fingerprint-only ones.
	if err := kept.Add("plain", ex.Extract("the quick brown fox jumps over the lazy dog near the river bank today")); err != nil {
		t.Fatal(err)
	}
	if err := kept.AddFingerprints(ids, fps); err != nil {
		t.Fatal(err)
	}
	if got := kept.FingerprintOnlyLen(); got != len(ids) {
		t.Fatalf("FingerprintOnlyLen = %d, want %d", got, len(ids))
	}
	if err := kept.AddFingerprints([]string{"snap-0"}, []uint64{1}); err == nil {
		t.Fatal("AddFingerprints of an id already present: no error")
	}

	// brute returns the fingerprint-only documents f is a candidate of.
	brute := func(f *rule.Features) map[string]bool {
		want := map[string]bool{}
		for i, fp := range fps {
			g := rule.Features{FP: fp, FingerprintOnly: true}
			if simhash64Distance(fp, f.FP) <= rl.PairK(&g, f) {
				want[ids[i]] = true
			}
		}
		return want
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < len(texts); i += 7 {
		for _, q := range []string{nearCopy(texts[i]), texts[i], randomWords(rng, 200)} {
			f := ex.Extract(q)
			ms, err := kept.MatchAll(&f, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, m := range ms {
				if !m.Unverified || !math.IsNaN(m.Score) || m.Exact {
					t.Fatalf("match %+v against a fingerprint-only document: want Unverified, NaN score, not Exact", m)
				}
				got[m.ID] = true
			}
			if want := brute(&f); !maps.Equal(got, want) {
				t.Fatalf("query %d: matched %v, want the fingerprint-only documents within PairK %v", i, got, want)
			}
		}
		f := ex.Extract(nearCopy(texts[i]))
		if ms, _ := kept.MatchAll(&f, 0); !slices.ContainsFunc(ms, func(m rule.KeptMatch) bool { return m.ID == ids[i] }) {
			t.Fatalf("a near-copy of text %d (distance %d) does not match %s: %+v", i, simhash64Distance(f.FP, fps[i]), ids[i], ms)
		}
		if ms, _ := kept.MatchAll(ptr(ex.Extract(randomWords(rng, 200))), 0); len(ms) != 0 {
			t.Fatalf("an unrelated text matches %+v", ms)
		}
	}

	// The ordinary document is still verified.
	f := ex.Extract("The quick brown fox jumps over the lazy dog near the river bank, today!")
	if m, ok, _ := kept.Match(&f); !ok || m.ID != "plain" || m.Unverified || math.IsNaN(m.Score) {
		t.Fatalf("match of the ordinary document: %+v, %v", m, ok)
	}

	// add_if_new is declined by a fingerprint-only document.
	if m, dup, err := kept.AddIfNew("new", ex.Extract(nearCopy(texts[0]))); err != nil || !dup || !m.Unverified {
		t.Fatalf("AddIfNew of a near-copy of %s: %+v, dup %v, %v; want an unverified match", ids[0], m, dup, err)
	}

	// Removing one.
	if !kept.Remove(ids[0]) || kept.FingerprintOnlyLen() != len(ids)-1 {
		t.Fatalf("Remove(%s): FingerprintOnlyLen = %d, want %d", ids[0], kept.FingerprintOnlyLen(), len(ids)-1)
	}
	f = ex.Extract(nearCopy(texts[0]))
	if ms, _ := kept.MatchAll(&f, 0); slices.ContainsFunc(ms, func(m rule.KeptMatch) bool { return m.ID == ids[0] }) {
		t.Fatalf("removed %s still matches: %+v", ids[0], ms)
	}
}

func ptr[T any](v T) *T { return &v }

func simhash64Distance(a, b uint64) int { return bits.OnesCount64(a ^ b) }

func randomWords(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "w%x ", rng.IntN(1<<24))
	}
	return b.String()
}

// TestFingerprintOnlyRule checks the rule's reading of a fingerprint-only
// document: taken to be as long as the other document (KShort against a
// short one, K against a long one, K between two), never an exact copy,
// nothing to verify; and rule.MethodMinHash refuses them.
func TestFingerprintOnlyRule(t *testing.T) {
	rl, err := rule.NewRule(rule.Options{Method: rule.MethodSimHash, K: 3, KShort: 8})
	if err != nil {
		t.Fatal(err)
	}
	fo := &rule.Features{FP: 0x100, FingerprintOnly: true}
	short := &rule.Features{FP: 0x1ff, Tokens: 10, Exact: 1}
	long := &rule.Features{FP: 0x1ff, Tokens: 1000, Exact: 1}
	for _, tc := range []struct {
		name string
		a, b *rule.Features
		want int
	}{
		{"short", fo, short, 8},
		{"short-reversed", short, fo, 8},
		{"long", fo, long, 3},
		{"both", fo, &rule.Features{FP: 1, FingerprintOnly: true}, 3},
	} {
		if got := rl.PairK(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: PairK = %d, want %d", tc.name, got, tc.want)
		}
	}
	if !rl.Near(fo, short) || rl.Near(fo, long) {
		t.Errorf("Near at distance 8: short %v (want true), long %v (want false)", rl.Near(fo, short), rl.Near(fo, long))
	}
	if rl.Near(&rule.Features{FingerprintOnly: true, FP: 0xff}, &rule.Features{Exact: 0}) {
		t.Error("a fingerprint-only document is near a document without a fingerprint")
	}
	// Fingerprint 0 is a text without features: exact copies only, which
	// a fingerprint-only document cannot tell.
	if rl.Near(&rule.Features{FingerprintOnly: true}, &rule.Features{FP: 1, Tokens: 10, Exact: 1}) {
		t.Error("a fingerprint-only document with fingerprint 0 is near a document at distance 1")
	}
	if !rl.Verify(fo, short) || rl.Verified(fo, short) || !math.IsNaN(rl.Score(fo, short)) {
		t.Errorf("Verify %v (want true), Verified %v (want false), Score %v (want NaN)",
			rl.Verify(fo, short), rl.Verified(fo, short), rl.Score(fo, short))
	}

	mr, err := rule.NewRule(rule.Options{Method: rule.MethodMinHash})
	if err != nil {
		t.Fatal(err)
	}
	mk, err := New(mr, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := mk.AddFingerprints([]string{"a"}, []uint64{1}); !errors.Is(err, rule.ErrOptions) {
		t.Errorf("AddFingerprints under minhash: %v, want rule.ErrOptions", err)
	}
	if err := mk.Add("a", rule.Features{FP: 1, FingerprintOnly: true}); !errors.Is(err, rule.ErrOptions) {
		t.Errorf("Add of a fingerprint-only document under minhash: %v, want rule.ErrOptions", err)
	}
}

// TestPostingsGrowIncrementally checks the table against a model through
// many doublings, with lookups and removes while old buckets are still
// being split, and that no add moves more than splitsPerAdd old buckets.
func TestPostingsGrowIncrementally(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: one goroutine, no concurrency to check; the run without it asserts this")
	}
	var p postings
	p.init(0)
	model := map[uint64][]uint32{}
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(key uint64) {
		t.Helper()
		got := p.find(nil, key)
		// Other keys may share the 32 bits kept: only count this key's.
		want := slices.Clone(model[key])
		slices.Sort(got)
		slices.Sort(want)
		for _, s := range want {
			if _, ok := slices.BinarySearch(got, s); !ok {
				t.Fatalf("key %d: slot %d missing from %v (bits %d, split %d of %d)", key, s, got, p.bits, p.split, len(p.old))
			}
		}
		// findEach, over more keys than one group, finds what find
		// finds for each.
		keys := []uint32{uint32(key)}
		for range 40 {
			keys = append(keys, uint32(rng.IntN(50000)))
		}
		var each []uint32
		for _, k := range keys {
			each = p.find(each, uint64(k))
		}
		all := p.findEach(nil, keys)
		slices.Sort(each)
		slices.Sort(all)
		if !slices.Equal(all, each) {
			t.Fatalf("findEach(%v) = %v, find of each gives %v", keys, all, each)
		}
	}
	grows, midSplit := 0, 0
	for i := range 200000 {
		key := uint64(rng.IntN(50000))
		bits := p.bits
		before := p.split
		p.add(key, uint32(i))
		model[key] = append(model[key], uint32(i))
		if p.bits != bits {
			grows++
		} else if p.old != nil && p.split-before > splitsPerAdd {
			t.Fatalf("one add split %d buckets", p.split-before)
		}
		if p.old != nil {
			midSplit++
		}
		if i%7 == 0 {
			check(uint64(rng.IntN(50000)))
		}
		if i%5 == 0 {
			k := uint64(rng.IntN(50000))
			if ss := model[k]; len(ss) > 0 {
				j := rng.IntN(len(ss))
				p.remove(k, ss[j])
				model[k] = slices.Delete(ss, j, j+1)
			}
		}
	}
	n := 0
	for k, ss := range model {
		n += len(ss)
		check(k)
	}
	if p.n != n {
		t.Errorf("table counts %d entries, model %d", p.n, n)
	}
	if grows < 5 || midSplit == 0 {
		t.Errorf("%d doublings, %d adds during a split: the test did not exercise growth", grows, midSplit)
	}
}

// TestLoaderTables loads a set in bulk three times: into empty tables (the
// groups sorted), into tables that hold entries (a rebuild), and a piece
// small enough to go in one entry at a time. Each bucket of each table must
// hold exactly its keys' entries, in the order they were added, and every
// document's entries must be found.
func TestLoaderTables(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ex, _ := rule.NewExtractor(rule.Options{Method: rule.MethodSimHash})
	rl, _ := rule.NewRule(rule.Options{Method: rule.MethodSimHash})
	k, _ := New(rl, 1)
	var fs []rule.Features
	for _, n := range []int{12000, 8000, 500} {
		l := k.NewLoader()
		for range n {
			w := make([]string, 170)
			for i := range w {
				w[i] = fmt.Sprint("w", rng.IntN(20000))
			}
			f := ex.Extract(strings.Join(w, " "))
			if err := l.Add(fmt.Sprint("d", len(fs)), f); err != nil {
				t.Fatal(err)
			}
			fs = append(fs, f)
		}
		if err := l.Finish(); err != nil {
			t.Fatal(err)
		}
		if k.sets.bits <= 8 {
			t.Fatalf("%d buckets: no group was sorted", 1<<k.sets.bits)
		}
	}
	want := map[*postings]int{}
	for i := range fs {
		k.entries(&fs[i], func(p *postings, key uint64) {
			want[p]++
			if !slices.Contains(p.find(nil, key), uint32(i)) {
				t.Fatalf("document %d not found by its key %x", i, key)
			}
		})
	}
	for name, p := range map[string]*postings{"exact": &k.exact, "sets": &k.sets} {
		total := 0
		for j, b := range p.buckets {
			total += len(b)
			for i, e := range b {
				if int(e.key>>(32-p.bits)) != j {
					t.Fatalf("%s: bucket %d holds key %x", name, j, e.key)
				}
				if i > 0 && e.slot < b[i-1].slot { // a document may have two keys in a bucket
					t.Fatalf("%s: bucket %d: slot %d after %d", name, j, e.slot, b[i-1].slot)
				}
			}
		}
		if total != want[p] || p.n != total {
			t.Fatalf("%s: %d entries in buckets, n = %d, %d added", name, total, p.n, want[p])
		}
	}
}

// TestSortGroup compares a group's sort with a stable sort by its bits, in
// one pass and in several.
func TestSortGroup(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: one goroutine, no concurrency to check; the run without it asserts this")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, bits := range []uint{1, 11, 12, 22, 23} {
		shift := uint8(24 - bits) // the bits below a group's top 8
		a := make([]posting, 1+rng.IntN(100000))
		for i := range a {
			// One group (its top 8 bits), and few distinct keys, so that
			// equal buckets test stability.
			a[i] = posting{0x5a<<24 | rng.Uint32()>>8&^(1<<(shift/2)-1), uint32(i)}
		}
		mask := uint32(1)<<bits - 1
		want := slices.Clone(a)
		slices.SortStableFunc(want, func(x, y posting) int { return cmp.Compare(x.key>>shift&mask, y.key>>shift&mask) })
		sortGroup(a, make([]posting, len(a)), bits, shift)
		if !slices.Equal(a, want) {
			t.Fatalf("bits %d: the sort differs from a stable sort", bits)
		}
	}
}

// TestKeptLoaderAllOrNothing checks a Loader's failures: an id already in
// the set, a set changed between NewLoader and Finish, a bad id, and use
// after Finish. Each adds nothing, and the set still matches as before.
func TestKeptLoaderAllOrNothing(t *testing.T) {
	texts := keptTexts(t)[:60]
	rl, _ := rule.NewRule(rule.Options{})
	ex, _ := rule.NewExtractor(rule.Options{})
	fs := make([]rule.Features, len(texts))
	for i, text := range texts {
		fs[i] = ex.Extract(text)
	}
	kept, _ := New(rl, 1)
	for i := range 20 {
		if err := kept.Add(fmt.Sprint("d", i), fs[i]); err != nil {
			t.Fatal(err)
		}
	}
	before := func() []string {
		var out []string
		for i := range fs {
			ms, _ := kept.MatchAll(&fs[i], 0)
			out = append(out, fmt.Sprint(ms))
		}
		return out
	}
	want := before()
	matched := 0
	for _, w := range want {
		if w != "[]" {
			matched++
		}
	}
	if matched < 20 {
		t.Fatalf("only %d of %d documents match: the test proves little", matched, len(want))
	}
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if kept.Len() != 20 || kept.Contains("d25") {
			t.Fatalf("%s: the set holds %d documents (d25: %v)", what, kept.Len(), kept.Contains("d25"))
		}
		if got := before(); !slices.Equal(got, want) {
			t.Fatalf("%s: the matches changed", what)
		}
	}

	l := kept.NewLoader()
	for i := 20; i < 40; i++ {
		if err := l.Add(fmt.Sprint("d", i), fs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Add("d3", fs[3]); err != nil {
		t.Fatal(err) // the set's ids are Finish's to check
	}
	err := l.Finish()
	if !errors.Is(err, index.ErrDuplicateID) {
		t.Fatalf("Finish with an id of the set: %v", err)
	}
	check("duplicate", err)
	check("after Finish", l.Add("d50", fs[50]))

	l = kept.NewLoader()
	for _, i := range []int{25, 26, 25, 27} {
		if err := l.Add(fmt.Sprint("d", i), fs[i]); err != nil {
			t.Fatal(err) // ids are Finish's to check
		}
	}
	err = l.Finish()
	if !errors.Is(err, index.ErrDuplicateID) {
		t.Fatalf("Finish with an id twice: %v", err)
	}
	check("an id twice", err)

	l = kept.NewLoader()
	if err := l.Add(strings.Repeat("x", index.MaxIDBytes+1), fs[27]); !errors.Is(err, index.ErrBadID) {
		t.Fatalf("Add of a long id: %v", err)
	}

	l = kept.NewLoader()
	if err := l.Add("d25", fs[25]); err != nil {
		t.Fatal(err)
	}
	if err := kept.Add("d41", fs[41]); err != nil {
		t.Fatal(err)
	}
	err = l.Finish()
	if err == nil || kept.Contains("d25") || kept.Len() != 21 {
		t.Fatalf("Finish after the set changed: %v, %d documents", err, kept.Len())
	}
	kept.Remove("d41")
	check("changed", err)

	// And a loader that succeeds adds what Add would.
	l = kept.NewLoader()
	one, _ := New(rl, 1)
	for i := range 45 {
		if i >= 20 {
			if err := l.Add(fmt.Sprint("d", i), fs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := one.Add(fmt.Sprint("d", i), fs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		ids := func(ms []rule.KeptMatch) (out []string) {
			for _, m := range ms {
				out = append(out, m.ID)
			}
			return out
		}
		got, _ := kept.MatchAll(&fs[i], 0)
		w, _ := one.MatchAll(&fs[i], 0)
		if !slices.Equal(ids(got), ids(w)) {
			t.Fatalf("document %d: %v after the loader, %v by Add", i, got, w)
		}
	}
}
