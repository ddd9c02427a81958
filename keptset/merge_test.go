package keptset_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/keptset"
	"github.com/neardup/neardup/rule"
)

// manifestParts returns the part files the manifest in dir lists, and the
// documents it says they hold.
func manifestParts(t *testing.T, dir string) (names []string, docs int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "MANIFEST"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 5 && f[0] == "part" {
			n, err := strconv.Atoi(f[4])
			if err != nil {
				t.Fatalf("manifest line %q: %v", l, err)
			}
			names, docs = append(names, f[1]), docs+n
		}
	}
	return names, docs
}

// checkFiles fails unless dir holds the manifest, the deletes file and the
// part files the manifest lists, and nothing else.
func checkFiles(t *testing.T, dir string) {
	t.Helper()
	names, _ := manifestParts(t, dir)
	want := append(names, "MANIFEST", "deletes")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v (the manifest's parts, MANIFEST, deletes)", got, want)
	}
}

// checkSelfMatches fails unless each document of docs (distinct under the
// rule, document i at seq i, id "i") matches itself, or nothing when
// removed, and the set names it (those before idFrom: not, being in parts
// of format 1).
func checkSelfMatches(t *testing.T, s *keptset.Set, ex *rule.Extractor, docs []string, removed map[int]bool, idFrom int) {
	t.Helper()
	for i, text := range docs {
		f := ex.Extract(text)
		m, dup, err := s.Match(context.Background(), &f)
		if err != nil {
			t.Fatal(err)
		}
		if removed[i] {
			if dup && m.Seq == uint64(i) {
				t.Fatalf("removed doc %d matches itself", i)
			}
		} else if !dup || m.Seq != uint64(i) {
			t.Fatalf("doc %d: got %+v %v, want itself", i, m, dup)
		}
		id, known, err := s.ID(uint64(i))
		if err != nil || known != (!removed[i] && i >= idFrom) || known && id != fmt.Sprint(i) {
			t.Fatalf("ID(%d) = %q, %v, %v; removed %v", i, id, known, err, removed[i])
		}
	}
}

// TestMergeRemovals: documents removed before their parts are merged are
// left out of the merged part, those removed during or after a merge stay
// removed, and both after a reopen; Len follows.
func TestMergeRemovals(t *testing.T) {
	rl, ex := setup(t)
	docs := distinct(t, 600)
	recs := newMemRecords()
	dir := t.TempDir()
	opt := keptset.Options{Dir: dir, Settings: "test", DeltaSpan: 16}
	ctx := context.Background()
	s, err := keptset.Open(ctx, rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	removed := map[int]bool{}
	remove := func(i int) {
		if ok, err := s.Remove(uint64(i)); !ok || err != nil {
			t.Fatalf("Remove(%d) = %v, %v", i, ok, err)
		}
		removed[i] = true
	}
	for i, text := range docs {
		f := ex.Extract(text)
		// The records keep the removed documents: only the set can hide them.
		recs.put(uint64(i), fmt.Sprint(i), f)
		if err := s.Add(uint64(i), fmt.Sprint(i), f); err != nil {
			t.Fatal(err)
		}
		s.Written(uint64(i))
		if i%7 == 3 && i >= 40 && !removed[i-40] {
			remove(i - 40) // in a part by now, merged or not yet
		}
		if i%50 == 0 {
			remove(i) // in the delta
			if err := s.WaitParts(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.WaitParts(); err != nil {
		t.Fatal(err)
	}
	for i := len(docs) - 100; ; i++ { // after the merges
		if !removed[i] {
			remove(i)
			break
		}
	}
	st := s.Stats()
	if st.Merges == 0 {
		t.Fatalf("%+v: no merge", st)
	}
	if want := len(docs) - len(removed); st.Docs != want {
		t.Fatalf("Len %d, want %d", st.Docs, want)
	}
	checkSelfMatches(t, s, ex, docs, removed, 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The merged parts hold fewer documents than were added to them: the
	// removed ones were left out.
	if _, n := manifestParts(t, dir); n >= len(docs) || n < len(docs)-len(removed) {
		t.Fatalf("the manifest's parts hold %d documents: want fewer than the %d added, at least the %d kept",
			n, len(docs), len(docs)-len(removed))
	}
	checkFiles(t, dir)
	s, err = keptset.Open(ctx, rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if want := len(docs) - len(removed); s.Len() != want {
		t.Fatalf("after reopen Len %d, want %d", s.Len(), want)
	}
	checkSelfMatches(t, s, ex, docs, removed, 0)
}

// copyDir copies the set's directory src to a new one, the manifest first:
// the image a crash at that moment leaves (a part file is renamed into
// place before a manifest lists it, and only a merge removes one, which is
// paused while this runs).
func copyDir(t *testing.T, src string) string {
	dst := t.TempDir()
	names := []string{"MANIFEST"}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Error(err)
		return dst
	}
	for _, e := range ents {
		if e.Name() != "MANIFEST" {
			names = append(names, e.Name())
		}
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil && !os.IsNotExist(err) { // a .tmp renamed meanwhile
			t.Error(err)
		}
		if err == nil {
			if err := os.WriteFile(filepath.Join(dst, n), b, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	return dst
}

// TestMergeCrash: a crash at each step of a merge's switch (the merged
// part written but not listed; the manifest listing it with the sources'
// files still there) leaves a directory that opens with the same verdicts,
// the same Len, and no file but those its manifest lists.
func TestMergeCrash(t *testing.T) {
	rl, ex := setup(t)
	docs := distinct(t, 500)
	recs := newMemRecords()
	dir := t.TempDir()
	opt := keptset.Options{Dir: dir, Settings: "test", DeltaSpan: 16}
	ctx := context.Background()
	s, err := keptset.Open(ctx, rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	add := func(i int) { addDocs(t, s, ex, recs, docs, i, i+1) }
	// First some documents, merged, and removals from their parts.
	half := len(docs) / 2
	for i := range half {
		add(i)
	}
	if err := s.WaitParts(); err != nil {
		t.Fatal(err)
	}
	removed := map[int]bool{}
	for i := 5; i < half; i += 9 {
		recs.del(uint64(i)) // the store first, as the service does
		if ok, err := s.Remove(uint64(i)); !ok || err != nil {
			t.Fatalf("Remove(%d) = %v, %v", i, ok, err)
		}
		removed[i] = true
	}
	// Then the crash images of the next merge.
	var (
		mu     sync.Mutex
		images = map[string]string{}
	)
	restore := keptset.SetMergeHook(func(step string) {
		mu.Lock()
		defer mu.Unlock()
		if images[step] == "" {
			images[step] = copyDir(t, dir)
		}
	})
	defer restore()
	for i := half; i < len(docs); i++ {
		add(i)
	}
	if err := s.WaitParts(); err != nil {
		t.Fatal(err)
	}
	restore() // the sets opened below merge too
	for _, step := range []string{"part written", "manifest written"} {
		t.Run(strings.ReplaceAll(step, " ", "-"), func(t *testing.T) {
			img := images[step]
			if img == "" {
				t.Fatal("no merge reached this step")
			}
			// The image is a crash: a stray part, or the sources' files.
			names, _ := manifestParts(t, img)
			parts, _ := fs.Glob(os.DirFS(img), "*.part")
			if len(parts) <= len(names) {
				t.Fatalf("image holds parts %v, its manifest %v: want more files than listed", parts, names)
			}
			o := opt
			o.Dir = img
			c, err := keptset.Open(ctx, rl, recs, o)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.WaitParts(); err != nil { // merges it starts
				t.Fatal(err)
			}
			checkFiles(t, img)
			if want := len(docs) - len(removed); c.Len() != want {
				t.Fatalf("Len %d, want %d", c.Len(), want)
			}
			checkSelfMatches(t, c, ex, docs, removed, 0)
		})
	}
}

// toFormat3 rewrites the format 4 part file at path as format 3, as sets
// before fingerprint-distance documents (MethodSimHash) wrote it: no wide
// section.
func toFormat3(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:8]) != "NDKPART4" {
		t.Fatalf("%s: magic %q", path, b[:8])
	}
	body := b[:len(b)-8]
	pad := func(n int) int { return n + (8-n%8)%8 }
	span := int(binary.LittleEndian.Uint32(body[16:]))
	entries := int(binary.LittleEndian.Uint64(body[24:]))
	// The wide section follows live.
	start := 40 + pad(int(binary.LittleEndian.Uint32(body[36:]))) + pad(4*(1<<body[32]+1)) + pad(2*entries) +
		pad(3*entries) + 8*span + 8*((span+63)/64)
	body = append(slices.Clone(body[:start]), body[start+8*((span+63)/64):]...)
	copy(body, "NDKPART3")
	out := binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(path, append(out, "PEND"...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// toFormat2 rewrites the format 4 part file at path as format 2, as sets
// before the prefilter wrote it: no pre section (and no wide section).
func toFormat2(t *testing.T, path string) {
	t.Helper()
	toFormat3(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:8]) != "NDKPART3" {
		t.Fatalf("%s: magic %q", path, b[:8])
	}
	body := b[:len(b)-8]
	pad := func(n int) int { return n + (8-n%8)%8 }
	span := int(binary.LittleEndian.Uint32(body[16:]))
	entries := int(binary.LittleEndian.Uint64(body[24:]))
	// The pre section follows ext.
	docs := int(binary.LittleEndian.Uint32(body[20:]))
	start := 40 + pad(int(binary.LittleEndian.Uint32(body[36:]))) + pad(4*(1<<body[32]+1)) + pad(2*entries) +
		pad(3*entries) + 8*span + 8*((span+63)/64) + 4*pad(4*(65536+1)) + 4*pad(3*docs) + pad(entries)
	body = append(slices.Clone(body[:start]), body[start+64*span:]...)
	copy(body, "NDKPART2")
	out := binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(path, append(out, "PEND"...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// toFormat1 rewrites the format 4 part file at path as format 1, as sets
// before merges wrote it: no ext section, no ext bits (and no pre section).
func toFormat1(t *testing.T, path string) {
	t.Helper()
	toFormat2(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:8]) != "NDKPART2" {
		t.Fatalf("%s: magic %q", path, b[:8])
	}
	body := b[:len(b)-8]
	// Format 1 ends where ext starts: the sections before it, padded.
	pad := func(n int) int { return n + (8-n%8)%8 }
	span, docs := int(binary.LittleEndian.Uint32(body[16:])), int(binary.LittleEndian.Uint32(body[20:]))
	entries := int(binary.LittleEndian.Uint64(body[24:]))
	end := 40 + pad(int(binary.LittleEndian.Uint32(body[36:]))) + pad(4*(1<<body[32]+1)) + pad(2*entries) +
		pad(3*entries) + 8*span + 8*((span+63)/64) + 4*pad(4*(65536+1)) + 4*pad(3*docs)
	body = body[:end]
	copy(body, "NDKPART1")
	body[33] = 0
	out := binary.LittleEndian.AppendUint32(slices.Clone(body), crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(path, append(out, "PEND"...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFormat1: the parts of format 1 (before merges) are mapped, not
// rebuilt, and answer as before; they are not merged, for want of key bits,
// while the parts written since are.
func TestFormat1(t *testing.T) {
	rl, ex := setup(t)
	docs := distinct(t, 400)
	recs := newMemRecords()
	dir := t.TempDir()
	opt := keptset.Options{Dir: dir, Settings: "test", PartSpan: 64, DeltaSpan: 16}
	half := len(docs) / 2
	importDocs(t, rl, ex, recs, opt, docs[:half])
	old, _ := filepath.Glob(filepath.Join(dir, "*.part"))
	for _, p := range old {
		toFormat1(t, p)
	}
	var logBuf bytes.Buffer
	opt.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	opt.PartSpan = 1 << 12
	s, err := keptset.Open(context.Background(), rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if logBuf.Len() > 0 {
		t.Fatalf("format 1 parts not mapped as they are: %s", logBuf.String())
	}
	addDocs(t, s, ex, recs, docs, half, len(docs))
	if err := s.WaitParts(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Merges == 0 {
		t.Fatalf("%+v: the new parts were not merged", st)
	}
	for _, p := range old {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("format 1 part: %v", err)
		}
	}
	checkSelfMatches(t, s, ex, docs, nil, half)
}

// TestFormat3: the parts of format 3 (before the wide section) are mapped,
// not rebuilt, answer as before under MethodMinHash (which has no
// fingerprint-distance documents), and merge with the parts written since.
func TestFormat3(t *testing.T) { testOldFormatMerges(t, 3, toFormat3) }

// TestFormat2: the parts of format 2 (before the prefilter column) are
// mapped, not rebuilt, answer as before (their documents are not
// prefiltered), and merge with the parts written since.
func TestFormat2(t *testing.T) { testOldFormatMerges(t, 2, toFormat2) }

// testOldFormatMerges imports half the documents into parts, rewrites them
// in an older format with convert, then checks that they are mapped as
// they are, that the adds after them merge them away, and the verdicts.
func testOldFormatMerges(t *testing.T, format int, convert func(t *testing.T, path string)) {
	rl, ex := setup(t)
	docs := distinct(t, 400)
	recs := newMemRecords()
	dir := t.TempDir()
	opt := keptset.Options{Dir: dir, Settings: "test", PartSpan: 64, DeltaSpan: 16}
	half := len(docs) / 2
	importDocs(t, rl, ex, recs, opt, docs[:half])
	old, _ := filepath.Glob(filepath.Join(dir, "*.part"))
	for _, p := range old {
		convert(t, p)
	}
	var logBuf bytes.Buffer
	opt.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	opt.PartSpan = 1 << 12
	s, err := keptset.Open(context.Background(), rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if logBuf.Len() > 0 {
		t.Fatalf("format %d parts not mapped as they are: %s", format, logBuf.String())
	}
	addDocs(t, s, ex, recs, docs, half, len(docs))
	if err := s.WaitParts(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Merges == 0 {
		t.Fatalf("%+v: no merge", st)
	}
	gone := 0
	for _, p := range old {
		if _, err := os.Stat(p); err != nil {
			gone++
		}
	}
	if gone == 0 {
		t.Fatalf("none of the %d format %d parts was merged", len(old), format)
	}
	checkSelfMatches(t, s, ex, docs, nil, 0)
}

// TestFillMerge: the adds after an import's last part, below PartSpan and
// in the top tier, are merged into it once they span an eighth of it (the
// tiers alone would leave them beside it), and not before; the verdicts
// stay, before and after a reopen.
func TestFillMerge(t *testing.T) {
	rl, ex := setup(t)
	docs := distinct(t, 48)
	recs := newMemRecords()
	dir := t.TempDir()
	opt := keptset.Options{Dir: dir, Settings: "test", DeltaSpan: 4, PartSpan: 64}
	const imported = 40 // one part of 40 seqs: below 64, at least 64/4
	importDocs(t, rl, ex, recs, opt, docs[:imported])
	ctx := context.Background()
	s, err := keptset.Open(ctx, rl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	add := func(from, to int) {
		addDocs(t, s, ex, recs, docs, from, to)
		if err := s.WaitParts(); err != nil {
			t.Fatal(err)
		}
	}
	add(imported, imported+4) // a part of 4: 4 seqs, under an eighth of 40
	if st := s.Stats(); st.Parts != 2 || st.Merges != 0 {
		t.Fatalf("after 4 adds: %+v, want 2 parts and no merge", st)
	}
	add(imported+4, imported+8) // a second: 8 seqs, an eighth of 40 and more
	if st := s.Stats(); st.Parts != 1 || st.Merges != 1 || st.Docs != len(docs) {
		t.Fatalf("after 8 adds: %+v, want the 3 parts merged into 1", st)
	}
	checkSelfMatches(t, s, ex, docs, nil, 0)
	// Each match read its document at least (the first candidate).
	if st := s.Stats(); st.Matches != uint64(len(docs)) || st.Examined < st.Matches {
		t.Fatalf("after %d matches: %+v", len(docs), st)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkFiles(t, dir)
	if names, n := manifestParts(t, dir); len(names) != 1 || n != len(docs) {
		t.Fatalf("manifest: parts %v holding %d documents, want 1 holding %d", names, n, len(docs))
	}
	if s, err = keptset.Open(ctx, rl, recs, opt); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkSelfMatches(t, s, ex, docs, nil, 0)
}

// TestMethodChangeRebuilds: parts whose keys were made under another method
// (here MethodMinHash's, under the same Options.Settings) are not used
// under MethodSimHash, whose parts record its key scheme: they are rebuilt
// from the records, with a log line, and every document finds itself.
func TestMethodChangeRebuilds(t *testing.T) {
	mrl, _ := setup(t)
	srl, sex := setupFor(t, rule.Options{Method: rule.MethodSimHash})
	var docs []string
	var fs []*rule.Features
	for _, text := range testcorpora.Texts(t, "en_gitdocs_dev", 600, 30) {
		f := sex.Extract(text)
		if srl.Match(&f, fs) < 0 {
			docs, fs = append(docs, text), append(fs, &f)
		}
	}
	recs := newMemRecords()
	opt := keptset.Options{Dir: t.TempDir(), Settings: "test", PartSpan: 64, DeltaSpan: 16}
	importDocs(t, mrl, sex, recs, opt, docs)
	var logBuf bytes.Buffer
	opt.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	s, err := keptset.Open(context.Background(), srl, recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(logBuf.String(), "other settings") || !strings.Contains(logBuf.String(), "keys=simhash") {
		t.Fatalf("parts of another method used without a rebuild: log %q", logBuf.String())
	}
	if s.Len() != len(docs) {
		t.Fatalf("Len %d, want %d", s.Len(), len(docs))
	}
	checkSelfMatches(t, s, sex, docs, nil, 0)
}
