package pipeline

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/neardup/neardup/corpus"
)

// A document's position is its read range's index in input order, shifted
// left by lineBits, or'ed with its line in the range (1-based from the
// range's first line start, which for a range of a whole file is the file's
// line; 0 for a whole text file): input order is position order, and the
// range that holds a document, the one that writes its verdict, is
// pos >> lineBits.
const (
	lineBits  = 40
	rangeBits = 64 - lineBits
)

// Pos returns the position of line of the document in the read range of
// index rng.
func Pos(rng, line int) uint64 { return uint64(rng)<<lineBits | uint64(line) }

func rangeOf(pos uint64) int { return int(pos >> lineBits) }

// inputRange is a part of one input file read by one worker: the lines that
// start in [Start, End) of an uncompressed JSONL or lines file (End < 0: to
// the end of the file), as Beam's textio splits text files.
type inputRange struct {
	Index int    // in input order over all ranges
	First int    // Index of the file's first range
	Of    int    // ranges of the file
	Path  string // the file
	Start int64
	End   int64
	// WARC marks a range of a gzip'd WARC file: the records whose gzip
	// members start in [Start, End). Its documents are numbered by record
	// from 1 in the range, and named by target URI (no line counts).
	WARC bool
}

// split reports whether r is one of several ranges of its file, whose line
// numbers need the line counts of the ranges before it.
func (r inputRange) split() bool { return r.Of > 1 }

// expandInputs lists the files of the inputs' globs, in the order given and
// sorted within a glob, and cuts the splittable ones into ranges of
// splitBytes.
// It also returns the input's size in bytes (compressed files counted at 4
// times their size).
func expandInputs(ctx context.Context, inputs []string, format corpus.Format, splitBytes int64) ([]inputRange, int64, error) {
	var ranges []inputRange
	var total int64
	for _, in := range inputs {
		fs, err := filesystem.New(ctx, in)
		if err != nil {
			return nil, 0, fmt.Errorf("pipeline: %s: %w", in, err)
		}
		names, err := fs.List(ctx, in)
		if err != nil {
			fs.Close()
			return nil, 0, fmt.Errorf("pipeline: listing %s: %w", in, err)
		}
		if len(names) == 0 {
			fs.Close()
			return nil, 0, fmt.Errorf("pipeline: %s: no such file", in)
		}
		sort.Strings(names)
		for _, n := range names {
			size, err := fs.Size(ctx, n)
			if err != nil {
				fs.Close()
				return nil, 0, fmt.Errorf("pipeline: %s: %w", n, err)
			}
			parts := 1
			warc := warcSplittable(ctx, fs, n, format)
			if warc || splittable(ctx, fs, n, format) {
				parts = max(1, int((size+splitBytes-1)/splitBytes))
				total += size
			} else {
				total += 4 * size
			}
			for i := range parts {
				r := inputRange{Index: len(ranges), First: len(ranges) - i, Of: parts, Path: n, End: -1, WARC: warc}
				if parts > 1 {
					r.Start = int64(i) * splitBytes
					if i < parts-1 {
						r.End = r.Start + splitBytes
					}
				}
				ranges = append(ranges, r)
			}
		}
		fs.Close()
	}
	if len(ranges) >= 1<<rangeBits {
		return nil, 0, fmt.Errorf("pipeline: %d read ranges, at most %d: raise the split size", len(ranges), 1<<rangeBits-1)
	}
	return ranges, total, nil
}

// parquetInput reports whether a file is Parquet: by the format, or under
// auto by its name or its first four bytes ("PAR1"), as package corpus
// decides.
func parquetInput(ctx context.Context, fs filesystem.Interface, name string, format corpus.Format) bool {
	switch format {
	case corpus.Parquet:
		return true
	case corpus.Auto:
	default:
		return false
	}
	base := strings.ToLower(name)
	if strings.HasSuffix(base, ".parquet") || strings.HasSuffix(base, ".parq") {
		return true
	}
	r, err := fs.OpenRead(ctx, name)
	if err != nil {
		return false // the read reports it
	}
	defer r.Close()
	var head [4]byte
	n, _ := io.ReadFull(r, head[:])
	return string(head[:n]) == "PAR1"
}

// anyParquet reports whether one of the inputs' files is Parquet.
func anyParquet(ctx context.Context, inputs []string, format corpus.Format) (bool, error) {
	for _, in := range inputs {
		fs, err := filesystem.New(ctx, in)
		if err != nil {
			return false, fmt.Errorf("pipeline: %s: %w", in, err)
		}
		names, err := fs.List(ctx, in)
		if err != nil {
			fs.Close()
			return false, fmt.Errorf("pipeline: listing %s: %w", in, err)
		}
		for _, n := range names {
			if parquetInput(ctx, fs, n, format) {
				fs.Close()
				return true, nil
			}
		}
		fs.Close()
	}
	return false, nil
}

// splittable reports whether a file can be read in byte ranges: JSONL or
// lines (by the format, or under auto by the name package corpus goes by),
// and not compressed (by name and by its first bytes).
func splittable(ctx context.Context, fs filesystem.Interface, name string, format corpus.Format) bool {
	base := strings.ToLower(name)
	if strings.HasSuffix(base, ".gz") || strings.HasSuffix(base, ".zst") {
		return false
	}
	switch format {
	case corpus.JSONL, corpus.Lines:
	case corpus.Auto:
		if !strings.HasSuffix(base, ".jsonl") && !strings.HasSuffix(base, ".ndjson") && !strings.HasSuffix(base, ".json") {
			return false
		}
	default:
		return false
	}
	r, err := fs.OpenRead(ctx, name)
	if err != nil {
		return false // the read reports it
	}
	defer r.Close()
	var head [4]byte
	n, _ := io.ReadFull(r, head[:])
	gzipMagic, zstdMagic := []byte{0x1f, 0x8b}, []byte{0x28, 0xb5, 0x2f, 0xfd}
	return !bytes.HasPrefix(head[:n], gzipMagic) && !bytes.HasPrefix(head[:n], zstdMagic)
}

// warcSplittable reports whether a file is a gzip'd WARC archive (by the
// format, or under auto by its name), read in ranges that start and end at
// gzip member boundaries: one large archive spreads over the workers.
func warcSplittable(ctx context.Context, fs filesystem.Interface, name string, format corpus.Format) bool {
	switch format {
	case corpus.WARC:
	case corpus.Auto:
		base := strings.ToLower(name)
		base = strings.TrimSuffix(base, ".gz")
		if !strings.HasSuffix(base, ".warc") && !strings.HasSuffix(base, ".wet") {
			return false
		}
	default:
		return false
	}
	r, err := fs.OpenRead(ctx, name)
	if err != nil {
		return false // the read reports it
	}
	defer r.Close()
	var head [2]byte
	n, _ := io.ReadFull(r, head[:])
	return n == 2 && head[0] == 0x1f && head[1] == 0x8b
}

// warcMemberAt returns the offset of the first gzip member starting a WARC
// record at or after off in path, or -1 when none does.
func warcMemberAt(ctx context.Context, path string, off int64) (int64, error) {
	rc, err := openAt(ctx, path, off)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n, err := corpus.NextWARCMember(rc)
	if err == io.EOF {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("pipeline: %s: %w", path, err)
	}
	return off + n, nil
}

// openWARCRange returns the records of a WARC range: from the first member
// that starts at or after Start up to the first one at or after End (two
// ranges find the same boundary), and the offset it starts at.
func openWARCRange(ctx context.Context, r inputRange) (io.ReadCloser, io.Reader, int64, error) {
	if !r.split() {
		rc, err := openAt(ctx, r.Path, 0)
		return rc, rc, 0, err
	}
	start, err := warcMemberAt(ctx, r.Path, r.Start)
	if err != nil {
		return nil, nil, 0, err
	}
	end := int64(-1)
	if r.End >= 0 {
		if end, err = warcMemberAt(ctx, r.Path, r.End); err != nil {
			return nil, nil, 0, err
		}
	}
	if start < 0 || end >= 0 && end <= start {
		return io.NopCloser(nil), bytes.NewReader(nil), 0, nil // no member starts in the range
	}
	rc, err := openAt(ctx, r.Path, start)
	if err != nil {
		return nil, nil, 0, err
	}
	var in io.Reader = rc
	if end >= 0 {
		in = io.LimitReader(rc, end-start)
	}
	return rc, in, start, nil
}

// readWARC reads the pages of a WARC range; their output is their id (the
// kept URIs: a page is not a line).
func (f *rangeDocs) readWARC(ctx context.Context, r inputRange, countBad bool, fn func(pos uint64, doc *corpus.Doc, out []byte) error) error {
	rc, in, start, err := openWARCRange(ctx, r)
	if err != nil {
		return err
	}
	if rc != nil {
		defer rc.Close()
	}
	opt := corpus.Options{Format: corpus.WARC, IDField: f.IDField, SkipBad: f.SkipBad, StartOffset: start}
	if countBad {
		opt.OnBad = func(error) { badInputs.Inc(ctx, 1) }
	}
	rd, err := corpus.OpenReader(in, r.Path, opt)
	if err != nil {
		return err
	}
	defer rd.Close()
	for {
		doc, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("pipeline: %w", err)
		}
		if doc.Line >= 1<<lineBits {
			return fmt.Errorf("pipeline: %s: more than %d records in a read range", r.Path, 1<<lineBits-1)
		}
		if err := fn(Pos(r.Index, doc.Line), &doc, []byte(doc.ID)); err != nil {
			return err
		}
	}
}

// lineCount is the number of "\n" bytes in a split range's [Start, End)
// (0 for a file's last range, whose count no range needs).
type lineCount struct {
	Index, First int // the range's index and its file's first range's
	Lines        int64
}

// countLines counts the line ends in a split range, for the ids of the
// documents without one in the ranges after it, under one key (lineBases
// adds them up). Ranges of whole files have line numbers of their own.
func countLines(ctx context.Context, _ uint64, r inputRange, emit func(int, lineCount)) error {
	if !r.split() {
		return nil
	}
	c := lineCount{Index: r.Index, First: r.First}
	if r.End >= 0 && !r.WARC { // a WARC range's records are numbered in the range
		n, err := newlines(ctx, r.Path, r.Start, r.End-r.Start)
		if err != nil {
			return err
		}
		c.Lines = n
	}
	emit(0, c)
	return nil
}

// lineBases emits, for each split range, KV<index, the line ends of its
// file before its Start>: the sum of the counts of the file's ranges before
// it. One call holds a lineCount per split range (24 bytes each; at most
// 2^24 ranges).
func lineBases(_ int, iter func(*lineCount) bool, emit func(uint64, int64)) {
	var cs []lineCount
	var c lineCount
	for iter(&c) {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b lineCount) int { return cmp.Compare(a.Index, b.Index) })
	var before int64
	for i, c := range cs {
		if i == 0 || c.First != cs[i-1].First {
			before = 0
		}
		emit(uint64(c.Index), before)
		before += c.Lines
	}
}

// newlines counts the "\n" bytes in the n bytes of path from off.
func newlines(ctx context.Context, path string, off, n int64) (int64, error) {
	f, err := openAt(ctx, path, off)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<16)
	var c int64
	for n > 0 {
		m, err := f.Read(buf[:min(int64(len(buf)), n)])
		c += int64(bytes.Count(buf[:m], []byte{'\n'}))
		n -= int64(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("pipeline: %s: %w", path, err)
		}
	}
	return c, nil
}

// openAt opens path at byte offset off: by seeking when the file system's
// reader can, else by reading up to it.
func openAt(ctx context.Context, path string, off int64) (io.ReadCloser, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if off == 0 {
		return r, nil
	}
	if s, ok := r.(io.Seeker); ok {
		_, err = s.Seek(off, io.SeekStart)
	} else {
		_, err = io.CopyN(io.Discard, r, off)
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("pipeline: %s: seeking to %d: %w", path, off, err)
	}
	return r, nil
}

// rangeReader yields the lines of a range: from its first line start to the
// end of the last line that starts before End.
type rangeReader struct {
	br      *bufio.Reader
	left    int64 // bytes before End
	pending []byte
	done    bool
}

func (r *rangeReader) Read(p []byte) (int, error) {
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	if r.done {
		return 0, io.EOF
	}
	if r.left > 0 {
		n, err := r.br.Read(p[:min(int64(len(p)), r.left)])
		r.left -= int64(n)
		if r.left == 0 && n > 0 && p[n-1] == '\n' {
			r.done = true // the last line ends just before End
		}
		if err == io.EOF {
			r.done, err = true, nil
		}
		return n, err
	}
	// Past End: the rest of the line that straddles it.
	line, err := r.br.ReadSlice('\n')
	switch {
	case err == nil || err == io.EOF:
		r.done = true
	case errors.Is(err, bufio.ErrBufferFull):
	default:
		return 0, err
	}
	n := copy(p, line)
	r.pending = append(r.pending[:0], line[n:]...)
	return n, nil
}

// openRange opens the lines of r and returns the number of the first one
// relative to the line of Start: 1 when a line starts at Start, 2 when the
// range begins inside a line (which belongs to the range before).
func openRange(ctx context.Context, r inputRange) (io.ReadCloser, io.Reader, int64, error) {
	if !r.split() {
		rc, err := openAt(ctx, r.Path, 0)
		return rc, rc, 1, err
	}
	start := max(r.Start-1, 0)
	rc, err := openAt(ctx, r.Path, start)
	if err != nil {
		return nil, nil, 0, err
	}
	br := bufio.NewReaderSize(rc, 1<<16)
	skip := int64(1)
	consumed := int64(0)
	if r.Start > 0 {
		// The byte before Start: a line starts at Start only after a "\n".
		b, err := br.ReadByte()
		if err != nil {
			rc.Close()
			return nil, nil, 0, fmt.Errorf("pipeline: %s: %w", r.Path, err)
		}
		consumed = 1
		if b != '\n' {
			line, err := br.ReadSlice('\n')
			consumed += int64(len(line))
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				consumed += int64(len(line))
			}
			if err != nil && err != io.EOF {
				rc.Close()
				return nil, nil, 0, fmt.Errorf("pipeline: %s: %w", r.Path, err)
			}
			skip = 2
		}
	}
	rr := &rangeReader{br: br, left: 1 << 62}
	if r.End >= 0 {
		rr.left = r.End - start - consumed
		rr.done = rr.left <= 0 // the range holds no line start
	}
	return rc, rr, skip, nil
}

var (
	docsRead  = beam.NewCounter("neardup", "documents")
	badInputs = beam.NewCounter("neardup", "bad_inputs")
)

// rangeDocs reads the documents of a range with package corpus, as dedup.Run
// reads the file: ids, line numbers and bad-line handling are the batch's.
// Each document goes to fn with its position and output line.
type rangeDocs struct {
	Format             string
	IDField, TextField string
	SkipBad            bool
}

// read reads range r. A document's position is the range's index and the
// document's line in the range (1-based from the range's first line start;
// a whole file's lines are the file's): every read gives a document the
// same position without knowing the ranges before it, so the reads that
// need no ids (the keys, the kept output) do without the line counts, and
// run in the stage that reads the ranges. before is the number of line
// ends in a split range's file before its Start (lineBases): with it, the
// documents of a split range get the file's line numbers, and a document
// without an id the batch's "file:line"; without it (negative), a split
// range's documents keep the range's line numbers and ids, and only an
// error's line is the file's (counted then from the file's start). The
// first read of a range (countBad) counts its bad lines; the reads after
// it skip the same lines silently.
func (f *rangeDocs) read(ctx context.Context, r inputRange, before int64, countBad bool, fn func(pos uint64, doc *corpus.Doc, out []byte) error) error {
	format, err := corpus.ParseFormat(f.Format)
	if err != nil {
		return err
	}
	if r.WARC || format == corpus.WARC || format == corpus.Auto && corpus.IsWARC(r.Path) {
		return f.readWARC(ctx, r, countBad, fn)
	}
	rc, in, skip, err := openRange(ctx, r)
	if err != nil {
		return err
	}
	defer rc.Close()
	base := int64(0) // line ends before the range's first line
	if r.split() {
		base = -1 // not known: counted only for an error
		if before >= 0 {
			base = before + skip - 1
		}
	}
	shift := func(err error) error {
		if base < 0 {
			n, cerr := newlines(ctx, r.Path, 0, r.Start)
			if cerr != nil {
				return errors.Join(err, cerr)
			}
			base = n + skip - 1
		}
		return shiftError(err, base)
	}
	opt := corpus.Options{Format: format, IDField: f.IDField, TextField: f.TextField, SkipBad: f.SkipBad}
	if countBad {
		opt.OnBad = func(error) { badInputs.Inc(ctx, 1) }
	}
	rd, err := corpus.OpenReader(in, r.Path, opt)
	if err != nil {
		return shift(err)
	}
	defer rd.Close()
	for {
		doc, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var ce *corpus.Error
			if errors.As(err, &ce) {
				return shift(err)
			}
			return fmt.Errorf("pipeline: %s: %w", r.Path, err)
		}
		if doc.Line >= 1<<lineBits {
			return fmt.Errorf("pipeline: %s: more than %d lines in a read range", r.Path, 1<<lineBits-1)
		}
		pos := Pos(r.Index, doc.Line)
		if base > 0 && doc.Line > 0 {
			if doc.ID == r.Path+":"+strconv.Itoa(doc.Line) {
				doc.ID = r.Path + ":" + strconv.FormatInt(base+int64(doc.Line), 10) // a missing id is file:line
			}
			doc.Line += int(base)
		}
		var out []byte
		switch {
		case doc.Raw != nil:
			out = doc.Raw
		case doc.Line > 0:
			out = []byte(doc.Text)
		default:
			out = []byte(doc.Source)
		}
		if err := fn(pos, &doc, out); err != nil {
			return err
		}
	}
}

// shiftError moves the line of a corpus.Error read from a range to the
// file's line numbers.
func shiftError(err error, base int64) error {
	var ce *corpus.Error
	if base == 0 || !errors.As(err, &ce) || ce.Line == 0 {
		return err
	}
	return &corpus.Error{Source: ce.Source, Line: ce.Line + int(base), Err: ce.Err}
}

// inputs are the read ranges, the line bases of the split ones, and the
// sizes the stages after the read are cut by.
type inputs struct {
	// Ranges are the read ranges keyed by index, KV<index, inputRange>,
	// spread over the workers: every read starts from them.
	Ranges beam.PCollection
	// Bases are KV<index, line ends before the range> of the split
	// ranges (lineBases), for the reads that name documents by id. They
	// go with the range through the reads' groupings, not as a side
	// input: prism's scheduler spins (a core) while a stage with a side
	// input runs a bundle, and the reads are long bundles.
	Bases    beam.PCollection
	N        int // ranges
	KeyParts int // partitions of the candidate keys: one per KeyPartBytes of input
	Waves    int // of the decision, by default: one per DefaultWaveBytes of input
}

// Read lists the inputs and returns their ranges and the line bases of the
// split ones.
func Read(s beam.Scope, opt Options) (inputs, error) {
	s = s.Scope("Read")
	format, err := corpus.ParseFormat(opt.Format)
	if err != nil {
		return inputs{}, err
	}
	rs, total, err := expandInputs(context.Background(), opt.Inputs, format, opt.SplitBytes)
	if err != nil {
		return inputs{}, err
	}
	in := inputs{
		N:        len(rs),
		KeyParts: int(min(max(total/opt.KeyPartBytes, 1), 1<<24)),
		Waves:    int(min(max((total+DefaultWaveBytes-1)/DefaultWaveBytes, 1), MaxWaves)),
	}
	// One range per worker: spread them before reading. A runner that
	// elides the reshuffle (prism) starts a stage at each of its
	// consumers, so it has one: the keying, which the counting, the keys
	// read and the reads after a grouping all start from.
	in.Ranges = beam.ParDo(s, rangeByIndex, beam.Reshuffle(s, beam.CreateList(s, rs)))
	cs := s.Scope("Count lines")
	in.Bases = beam.ParDo(cs, lineBases, beam.GroupByKey(cs, beam.ParDo(cs, countLines, in.Ranges)))
	return in, nil
}
