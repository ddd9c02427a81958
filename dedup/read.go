package dedup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
)

// The fingerprint pass: one goroutine reads documents, Workers goroutines turn
// batches of them into fingerprints and sketches, and the collector (the
// caller's goroutine) puts the batches back in input order, so document i is
// the i-th document read whatever the scheduling. Text never outlives its
// batch: what stays in memory per document is listed in docs.

// docs holds what the run keeps per document, column-wise to keep it
// compact, in chunks that never move (columns.go).
type docs struct {
	ids    *idStore
	fps    chunked[uint64] // SimHash fingerprints: empty when all are 0 (rule.MethodMinHash without an index or OnKept)
	exact  chunked[uint64] // hash of the token sequence: equal values are exact duplicates
	first  chunked[int32]  // the first document with the same exact hash and fingerprint (itself if none before)
	length chunked[uint32] // text length in bytes (saturating): empty unless KeepLongest, an index or OnKept needs it
	tokens chunked[uint32] // token count (saturating)
	vec    [][]uint64
	keys   []keyValue // KeepField values

	empty int // documents without features
}

func (d *docs) len() int { return d.ids.len() }

// fp returns document i's fingerprint (0 when the run keeps none).
func (d *docs) fp(i int) uint64 {
	if d.fps.len() == 0 {
		return 0
	}
	return d.fps.get(i)
}

// textLength returns document i's length in bytes (0 when the run keeps
// none).
func (d *docs) textLength(i int) uint32 {
	if d.length.len() == 0 {
		return 0
	}
	return d.length.get(i)
}

// keyValue is a KeepField value: a number, a string, or missing.
type keyValue struct {
	kind uint8 // 0 missing, 1 number, 2 other JSON (compared as text)
	num  float64
	str  string
}

// item is one document on its way through the workers.
type item struct {
	doc corpus.Doc
	raw []byte // copy of doc.Raw when the worker needs it (KeepField)

	f   rule.Features
	vec []uint64 // rule.VerifyCosine: term counts
	key keyValue
}

type batch struct {
	seq   int
	items []item
	bytes int64
}

// readStats counts what the read pass saw.
type readStats struct {
	bytes int64
	bad   atomic.Int64
}

// skips records what the read pass skipped, to say why a run read nothing.
// Safe for concurrent use.
type skips struct {
	mu     sync.Mutex // guards the fields below
	binary skipList   // files skipped as binary
	links  skipList   // broken symbolic links
	other  skipList   // bad lines and too-large documents
}

// skipList counts skipped inputs and keeps the first few to name them.
type skipList struct {
	n     int
	names []string
}

const skipNames = 3

func (l *skipList) add(name string) {
	l.n++
	if len(l.names) < skipNames {
		l.names = append(l.names, name)
	}
}

func (l *skipList) String() string {
	s := strings.Join(l.names, ", ")
	if l.n > len(l.names) {
		s += fmt.Sprintf(" and %d more", l.n-len(l.names))
	}
	return s
}

func (s *skips) add(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ce *corpus.Error
	switch {
	case errors.Is(err, corpus.ErrBinary) && errors.As(err, &ce):
		s.binary.add(ce.Source)
	case errors.Is(err, corpus.ErrBrokenLink) && errors.As(err, &ce):
		s.links.add(ce.Source)
	default:
		s.other.add(err.Error())
	}
}

// reason says what was skipped, "" when nothing was.
func (s *skips) reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	plural := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	if s.binary.n > 0 {
		parts = append(parts, plural(s.binary.n, "file", "files")+" skipped as binary ("+s.binary.String()+")")
	}
	if s.links.n > 0 {
		parts = append(parts, plural(s.links.n, "broken symbolic link", "broken symbolic links")+" skipped ("+s.links.String()+")")
	}
	if s.other.n > 0 {
		parts = append(parts, plural(s.other.n, "bad line", "bad lines")+" skipped ("+s.other.String()+")")
	}
	return strings.Join(parts, "; ")
}

// fingerprintPass reads every input and fills d. lsh, when not nil, receives
// the signatures of the first document of each exact-duplicate group.
func (r *runner) fingerprintPass(ctx context.Context, rd *corpus.Reader, lsh *minhash.LSH) error {
	o := r.opt
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	work := make(chan *batch, 2*o.Workers)
	done := make(chan *batch, 2*o.Workers)
	var readErr error
	go func() { // reader
		defer close(work)
		const maxDocs, maxBytes = 256, 4 << 20
		b := &batch{}
		seq := 0
		send := func() bool {
			b.seq = seq
			seq++
			select {
			case work <- b:
				b = &batch{}
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			doc, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				readErr = err
				cancel()
				return
			}
			it := item{doc: doc}
			switch {
			case o.Keep != KeepField:
			case doc.Raw != nil:
				it.raw = append([]byte(nil), doc.Raw...)
			case len(doc.Columns) == 1: // Parquet: the column, as JSON
				it.key = jsonKey(json.RawMessage(doc.Columns[0]))
			}
			it.doc.Columns = nil
			it.doc.Raw = nil // the reader may reuse it; only the output pass needs it
			b.items = append(b.items, it)
			b.bytes += int64(len(doc.Text))
			if len(b.items) >= maxDocs || b.bytes >= maxBytes {
				if !send() {
					return
				}
			}
		}
		if len(b.items) > 0 {
			send()
		}
	}()

	var wg sync.WaitGroup
	for range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := r.newWorker()
			for b := range work {
				for i := range b.items {
					w.process(&b.items[i])
				}
				w.shrink()
				select {
				case done <- b:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()

	pending := map[int]*batch{}
	next := 0
	tick := time.Now()
	for b := range done {
		pending[b.seq] = b
		for {
			b, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			for i := range b.items {
				if err := r.collect(&b.items[i], lsh); err != nil {
					cancel()
					for range done { // let the workers finish
					}
					return err
				}
			}
			r.stats.bytes += b.bytes
			if time.Since(tick) >= o.ProgressInterval {
				tick = time.Now()
				r.progress(Progress{Stage: "read", Docs: int64(r.d.len()), Bytes: r.stats.bytes,
					Stored: rd.Consumed(), TotalStored: rd.Size()})
			}
		}
	}
	if readErr != nil {
		return readErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.progress(Progress{Stage: "read", Docs: int64(r.d.len()), Bytes: r.stats.bytes,
		Stored: rd.Consumed(), TotalStored: rd.Size(), Done: true})
	return nil
}

// worker holds one goroutine's scratch buffers.
type worker struct {
	r *runner
	e *rule.Extractor
}

func (r *runner) newWorker() *worker {
	// The rule of MethodMinHash needs no fingerprint; the index of an
	// incremental run holds them. The prefilters are computed for the
	// members only, after the candidate keys (members.go).
	e, err := rule.NewExtractorWith(r.opt.Options, rule.ExtractorOptions{
		Fingerprints: r.opt.Index != "" || r.opt.OnKept != nil, NoPrefilter: true})
	if err != nil {
		panic(err) // the options were validated and the profile looked up by Run
	}
	return &worker{r: r, e: e}
}

func (w *worker) process(it *item) {
	o := w.r.opt
	it.f = rule.Features{} // the features are kept: they must own their slices
	it.vec = w.e.ExtractTerms(&it.f, it.doc.Text)
	if it.raw != nil {
		it.key = fieldValue(it.raw, o.KeepField)
		it.raw = nil
	}
	// Let the text go. The id may alias the JSONL line (corpus decodes it in
	// place), and keeping the id must not keep the line: copy it.
	it.doc.Text = ""
	it.doc.ID = strings.Clone(it.doc.ID)
}

func (w *worker) shrink() { w.e.Shrink() }

// fieldValue extracts field from a JSON object line.
func fieldValue(raw []byte, field string) keyValue {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return keyValue{}
	}
	v, ok := m[field]
	if !ok {
		return keyValue{}
	}
	return jsonKey(v)
}

// jsonKey is the KeepField value of the JSON value v.
func jsonKey(v json.RawMessage) keyValue {
	if string(v) == "null" {
		return keyValue{}
	}
	if f, err := strconv.ParseFloat(string(v), 64); err == nil {
		return keyValue{kind: 1, num: f}
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return keyValue{kind: 2, str: s}
	}
	return keyValue{kind: 2, str: string(v)}
}

// collect appends one processed document to r.d, in input order.
func (r *runner) collect(it *item, lsh *minhash.LSH) error {
	d := r.d
	i := d.len()
	if i >= 1<<31-1 {
		return fmt.Errorf("dedup: more than %d documents", 1<<31-1)
	}
	id := it.doc.ID
	if !r.opt.AllowDuplicateIDs {
		// A hash seen before is a duplicate id but for a 64-bit collision:
		// the earlier id is looked for in the id store (a scan, once).
		if r.seen.add(simhash.HashString64(id)) {
			j, dup, err := d.ids.find(id)
			if err != nil {
				return err
			}
			if dup {
				return fmt.Errorf("%w: %q at %s and at %s (use AllowDuplicateIDs / --allow-duplicate-ids)",
					ErrDuplicateID, id, r.pos.where(j), where(it.doc))
			}
		}
		r.pos.add(i, it.doc.Source, it.doc.Line)
	}
	// Line is set for JSONL (and Lines) documents, whose output is a line,
	// and for Parquet rows, and zero for whole text files, whose output is
	// the path.
	switch {
	case it.doc.Format == corpus.Parquet:
		r.onlyFiles = false
		if r.firstRow == "" {
			r.firstRow = where(it.doc)
		}
	case it.doc.Line != 0:
		r.onlyFiles = false
		if r.firstLine == "" {
			r.firstLine = where(it.doc)
		}
	case r.firstFile == "":
		r.firstFile = it.doc.Source
	}
	if r.opt.Output != "" && r.firstLine != "" && r.firstFile != "" {
		return fmt.Errorf("%w: %s is a JSONL line and %s a whole text file: the kept file would mix JSONL lines and "+
			"file paths; dedup them in separate runs, or read all as one format (--format)", ErrMixedFormats, r.firstLine, r.firstFile)
	}
	if r.opt.Output != "" && r.firstRow != "" && (r.firstLine != "" || r.firstFile != "") {
		return fmt.Errorf("%w: %s is a Parquet row and %s is not: the kept file would mix formats; "+
			"write one shard per input (--output-dir) or dedup them in separate runs", ErrMixedFormats, r.firstRow, r.firstLine+r.firstFile)
	}
	if r.opt.Output != "" && it.doc.Format == corpus.Parquet && it.doc.Source != r.schemaOf {
		// One kept file holds one schema: say so now, not after the run.
		r.schemaOf = it.doc.Source
		l, err := corpus.ReadParquetLayout(it.doc.Source)
		if err != nil {
			return err
		}
		if r.schema == nil {
			r.schema, r.schemaFirst = l.Schema, it.doc.Source
		} else if !parquet.EqualNodes(l.Schema, r.schema) {
			return fmt.Errorf("%w: %s and %s have different Parquet schemas: the kept file can hold one; "+
				"write one shard per input (--output-dir)", ErrMixedFormats, r.schemaFirst, it.doc.Source)
		}
	}
	f := &it.f
	if err := d.ids.add(id); err != nil {
		return fmt.Errorf("%w at %s", err, where(it.doc))
	}
	if r.keepFP {
		d.fps.append(f.FP)
	}
	d.exact.append(f.Exact)
	d.first.append(r.twin(i, f))
	if r.keepLength {
		d.length.append(f.Length)
	}
	d.tokens.append(f.Tokens)
	if f.Empty {
		d.empty++
	}
	if r.sets != nil {
		if err := r.sets.add(f.Sketch.Hashes()); err != nil {
			return err
		}
		if r.rereadOK && r.sets.onDisk() > r.opt.SketchDisk {
			// Past the disk the sets may take: drop them, and read the
			// members' again from the input after the candidate stage
			// (members.go).
			r.sum.SketchDiskBytes = r.sets.onDisk()
			if err := r.sets.close(); err != nil {
				return err
			}
			r.sets = nil
		}
	}
	if r.keys != nil {
		r.keyBuf = r.keyBuf[:0]
		for _, k := range f.Bands {
			r.keyBuf = append(r.keyBuf, uint32(k), uint32(k>>32))
		}
		if err := r.keys.add(r.keyBuf); err != nil {
			return err
		}
	}
	if r.opt.Verify == rule.VerifyCosine {
		d.vec = append(d.vec, it.vec)
		for _, v := range it.vec {
			r.df[uint32(v>>32)]++
		}
	}
	if r.opt.Keep == KeepField {
		d.keys = append(d.keys, it.key)
	}
	if lsh != nil && d.first.get(i) == int32(i) && f.Tokens > 0 {
		if err := lsh.Add(i, f.Sig); err != nil {
			return err
		}
	}
	if r.bands != nil && d.first.get(i) == int32(i) && f.Tokens > 0 {
		if len(f.Bands) != r.opt.Bands {
			return fmt.Errorf("dedup: document %d has %d band keys, want %d", i, len(f.Bands), r.opt.Bands)
		}
		if err := r.bands.add(int32(i), f.Bands); err != nil {
			return err
		}
	}
	return nil
}

// twin returns the first document read with the same token sequence and the
// same fingerprint as document i (i itself if none): such twins are
// interchangeable for the rule (same candidates, same verification), so only
// the first of each goes through the candidate stage and the others share its
// verdict. Documents with the same token sequence but another fingerprint (a
// profile that sees markup the tokenizer does not) are separate twins, made
// candidates of each other here: equal token sequences always pass.
func (r *runner) twin(i int, f *rule.Features) int32 {
	key := func(d int32) uint64 { return r.d.exact.get(int(d)) }
	e0, seen := r.exactFirst.get(f.Exact, key)
	if !seen {
		r.exactFirst.insert(f.Exact, int32(i), key)
		return int32(i)
	}
	if r.d.fp(int(e0)) == f.FP {
		return e0
	}
	more := r.exactMore[f.Exact]
	for _, o := range more {
		if r.d.fp(int(o)) == f.FP {
			return o
		}
	}
	r.exactPairs = append(r.exactPairs, rule.PackPair(int(e0), i))
	for _, o := range more {
		r.exactPairs = append(r.exactPairs, rule.PackPair(int(o), i))
	}
	if r.exactMore == nil {
		r.exactMore = map[uint64][]int32{}
	}
	r.exactMore[f.Exact] = append(more, int32(i))
	return int32(i)
}

// where names a document's position for error messages.
func where(d corpus.Doc) string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d", d.Source, d.Line)
	}
	return d.Source
}
