package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/neardup/neardup/simhash"
)

// Fingerprint files are read by one parser, shared by pairs, clusters, index
// build and index query. A line is
//
//   - a fingerprint alone;
//   - id<TAB or spaces>fingerprint (a quoted id is unquoted);
//   - a JSON object with "id" and "fingerprint" fields;
//
// and blank lines and lines starting with # are skipped.
//
// A bare fingerprint's form is decided once per input, never per line: 16
// decimal digits are also 16 hex digits, and about one random 64-bit value in
// 2,000 has exactly 16 decimal digits, so guessing per line silently turns
// some decimal fingerprints (seomoz/simhash-cpp writes decimal) into other
// values. With --fp-format auto the reader looks at the lines until one can
// only be read one way (a 0x or 0b prefix, a hex letter, or digits that are not
// 16 long), holding the lines it has seen, and reads the whole input that way;
// an input whose every fingerprint is 16 decimal digits is an error that asks
// for the flag. JSON lines say what they hold: a string fingerprint is hex, a
// number is decimal (read exactly, never through float64).
//
// The input is cut into chunks of whole lines that are parsed on all cores and
// delivered in input order, so errors keep their exact FILE:LINE.

// fpFormat is the value of --fp-format.
type fpFormat int

const (
	fpAuto fpFormat = iota
	fpHex
	fpDecimal
)

func (f fpFormat) String() string {
	switch f {
	case fpHex:
		return "hex"
	case fpDecimal:
		return "decimal"
	}
	return "auto"
}

// parseFPFormat reads the value of --fp-format.
func parseFPFormat(s string) (fpFormat, error) {
	switch s {
	case "auto", "":
		return fpAuto, nil
	case "hex":
		return fpHex, nil
	case "decimal":
		return fpDecimal, nil
	}
	return 0, usagef("--fp-format %q: want auto, hex or decimal", s)
}

// registerFPFormat adds --fp-format to a command that reads fingerprints.
func registerFPFormat(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "fp-format", "auto", "how bare fingerprints are written: hex, decimal, or auto (decided once per input from its lines)")
}

// fpFormatHelp describes --fp-format in the help of every command that
// reads fingerprint files.
const fpFormatHelp = `A bare fingerprint is hex (16 digits, 0x and hex digits, or 0b and 64 binary
digits) or decimal (as seomoz/simhash-cpp writes it), one form per input:
--fp-format hex or decimal says which; auto (the default) decides once per
input from its lines, and stops when every one is 16 decimal digits (hex and
decimal both read them, as different values). A line in the other form stops
the run with its FILE:LINE. In JSON lines a string fingerprint is hex and a
number is decimal.`

// fpReadOptions configure readFPInput.
type fpReadOptions struct {
	format  fpFormat
	skipBad bool      // report malformed lines to warn and go on
	warn    io.Writer // where skipped lines are reported
	lineIDs bool      // a line without an id is named FILE:LINE; otherwise its id is ""
	workers int       // chunks parsed at once; 0 means GOMAXPROCS

	// sizeHint is the input's size in bytes when known (a regular file), for
	// a collector to size its storage once.
	sizeHint int64
}

// Chunking. A chunk is cut at the last end of line after fpChunkSize bytes;
// a chunk that holds no end of line is one line longer than maxFPLine.
const (
	fpChunkSize = 2 << 20
	maxFPLine   = 1 << 20
)

// errLongLine is the error for a line over maxFPLine bytes.
var errLongLine = fmt.Errorf("line longer than %d bytes", maxFPLine)

// fpChunk is a run of whole lines on its way from the reader through a
// parsing worker to the collector, which waits on done.
type fpChunk struct {
	data   []byte
	line   int      // number of its first line, from 1
	long   bool     // one line over maxFPLine, skipped unread
	format fpFormat // fpHex or fpDecimal, decided before parsing
	done   chan struct{}

	fps []uint64
	ids []string // nil when no line had an id and !lineIDs
	bad []error  // FILE:LINE errors in order; without skipBad parsing stops at the first
}

// readFPInput reads the fingerprint lines of one input named name, calling
// emit with the fingerprints of each chunk in input order (ids is nil when
// none of them has an id). emit must copy what it keeps of fps and ids: the
// reader reuses them.
func readFPInput(ctx context.Context, r io.Reader, name string, opt fpReadOptions, emit func(fps []uint64, ids []string) error) error {
	workers := opt.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if opt.warn == nil {
		opt.warn = io.Discard
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *fpChunk, workers)
	order := make(chan *fpChunk, 2*workers+2)
	free := make(chan []byte, 2*workers+4)
	freeFPs := make(chan []uint64, 2*workers+4)
	var readErr error
	go func() {
		defer close(work)
		defer close(order)
		cr := &fpChunker{r: r, free: free, freeFPs: freeFPs}
		readErr = cr.run(ctx, name, opt.format, func(c *fpChunk) bool {
			select {
			case order <- c:
			case <-ctx.Done():
				return false
			}
			select {
			case work <- c:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	for range workers {
		go func() {
			for c := range work {
				c.parse(name, &opt)
				close(c.done)
			}
		}()
	}
	for c := range order {
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		for _, err := range c.bad {
			if !opt.skipBad {
				return err // cancel stops the reader, which may be blocked in Read: it is abandoned
			}
			fmt.Fprintf(opt.warn, "neardup: skipped %v\n", err)
		}
		if len(c.fps) > 0 {
			if err := emit(c.fps, c.ids); err != nil {
				return err
			}
		}
		if c.data != nil {
			select {
			case free <- c.data[:0]:
			default:
			}
		}
		if c.fps != nil {
			select {
			case freeFPs <- c.fps[:0]:
			default:
			}
		}
	}
	return readErr
}

// fpChunker cuts an input into chunks and decides its format.
type fpChunker struct {
	r       io.Reader
	free    chan []byte   // buffers the collector is done with
	freeFPs chan []uint64 // and fingerprint slices
	carry   []byte        // the start of the next chunk's first line
	eof     bool
	line    int // number of the next chunk's first line, minus 1

	bufSize int // capacity of the last buffer made
}

// run sends every chunk of the input to send, in order, with its format
// decided: chunks read before the format is known are held back.
func (cr *fpChunker) run(ctx context.Context, name string, format fpFormat, send func(*fpChunk) bool) error {
	var held []*fpChunk
	ambiguous := 0 // first line whose fingerprint is 16 decimal digits, while undecided
	for ctx.Err() == nil {
		c, err := cr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, cr.line+1, err)
		}
		if format == fpAuto {
			format = decideFPFormat(c, &ambiguous)
			if format == fpAuto {
				held = append(held, c)
				continue
			}
		}
		for _, h := range append(held, c) {
			h.format = format
			if !send(h) {
				return ctx.Err()
			}
		}
		held = nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if format == fpAuto && ambiguous > 0 {
		return usageError{fmt.Errorf("%s:%d: every fingerprint in %s is 16 decimal digits, which read as hex and as decimal give different values: say which with --fp-format hex or --fp-format decimal", name, ambiguous, name)}
	}
	// No bare fingerprint at all (JSON lines, comments, bad lines): the
	// format does not matter.
	for _, h := range held {
		h.format = fpHex
		if !send(h) {
			return ctx.Err()
		}
	}
	return nil
}

// next returns the next chunk, or io.EOF after the last.
func (cr *fpChunker) next() (*fpChunk, error) {
	if cr.eof && len(cr.carry) == 0 {
		return nil, io.EOF
	}
	var buf []byte
	select {
	case buf = <-cr.free:
	default:
	}
	// Small inputs get small buffers: the first is 64 KiB, each next one
	// twice the last, up to twice the chunk size.
	cr.bufSize = min(max(2*cr.bufSize, 64<<10), 2*fpChunkSize)
	if need := max(cr.bufSize, len(cr.carry)+cr.bufSize/2); cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	buf = append(buf, cr.carry...)
	cr.carry = nil
	for !cr.eof && len(buf) < fpChunkSize {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := cr.r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			cr.eof = true
		} else if err != nil {
			return nil, err
		}
	}
	c := &fpChunk{line: cr.line + 1, done: make(chan struct{})}
	select {
	case c.fps = <-cr.freeFPs:
	default:
	}
	if cr.eof {
		if len(buf) == 0 {
			return nil, io.EOF
		}
		c.data = buf
		cr.line += bytes.Count(buf, []byte{'\n'})
		return c, nil
	}
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 {
		// fpChunkSize bytes without an end of line: skip the rest of the line.
		c.long = true
		cr.line++
		for {
			n, err := cr.r.Read(buf[:cap(buf)])
			if j := bytes.IndexByte(buf[:n], '\n'); j >= 0 {
				cr.carry = append([]byte(nil), buf[j+1:n]...)
				return c, nil
			}
			if err == io.EOF {
				cr.eof = true
				return c, nil
			}
			if err != nil {
				return nil, err
			}
		}
	}
	cr.carry = append(make([]byte, 0, len(buf)-i-1+fpChunkSize), buf[i+1:]...)
	c.data = buf[:i+1]
	cr.line += bytes.Count(c.data, []byte{'\n'})
	return c, nil
}

// decideFPFormat returns the format the first deciding line of c shows, or
// fpAuto when none does; *ambiguous is set to the first line of 16 decimal
// digits seen.
func decideFPFormat(c *fpChunk, ambiguous *int) fpFormat {
	data, line := c.data, c.line-1
	for len(data) > 0 {
		var b []byte
		b, data = cutLine(data)
		line++
		s := bytes.TrimSpace(b)
		if len(s) == 0 || s[0] == '#' || s[0] == '{' || len(b) > maxFPLine {
			continue
		}
		_, tok := splitFPLine(s)
		_, hexErr := parseFPToken(tok, fpHex)
		_, decErr := parseFPToken(tok, fpDecimal)
		switch {
		case hexErr == nil && decErr != nil:
			return fpHex
		case decErr == nil && hexErr != nil:
			return fpDecimal
		case hexErr == nil && *ambiguous == 0:
			*ambiguous = line
		}
	}
	return fpAuto
}

// cutLine splits data after its first line, which it returns without the
// end of line.
func cutLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

// parse parses the chunk's lines into fps and ids.
func (c *fpChunk) parse(name string, opt *fpReadOptions) {
	if c.long {
		c.bad = append(c.bad, fmt.Errorf("%s:%d: %w", name, c.line, errLongLine))
		return
	}
	c.fps = slices.Grow(c.fps[:0], len(c.data)/17+1)
	var (
		arena []byte   // every id's bytes, one after the other
		ends  []uint32 // ends[i]: where id i ends in arena
	)
	data, line := c.data, c.line-1
	for len(data) > 0 {
		var b []byte
		b, data = cutLine(data)
		line++
		if len(b) > maxFPLine {
			if c.fail(name, line, errLongLine, opt.skipBad) {
				continue
			}
			break
		}
		s := bytes.TrimSpace(b)
		if len(s) == 0 || s[0] == '#' {
			continue
		}
		id, fp, err := parseFPLine(s, c.format)
		if err != nil {
			if c.fail(name, line, err, opt.skipBad) {
				continue
			}
			break
		}
		if len(id) == 0 && opt.lineIDs {
			arena = append(arena, name...)
			arena = append(arena, ':')
			arena = strconv.AppendInt(arena, int64(line), 10)
		} else {
			arena = append(arena, id...)
		}
		if len(arena) > 0 && ends == nil {
			ends = make([]uint32, len(c.fps), cap(c.fps))
		}
		if ends != nil {
			ends = append(ends, uint32(len(arena)))
		}
		c.fps = append(c.fps, fp)
	}
	if ends != nil {
		all := string(arena)
		c.ids = make([]string, len(ends))
		start := uint32(0)
		for i, e := range ends {
			c.ids[i] = all[start:e]
			start = e
		}
	}
}

// fail records a bad line and reports whether parsing goes on.
func (c *fpChunk) fail(name string, line int, err error, skipBad bool) bool {
	c.bad = append(c.bad, fmt.Errorf("%s:%d: %w", name, line, err))
	return skipBad
}

// parseFPLine parses a trimmed, non-empty line that is not a comment. The
// id is a slice of s unless it had to be unquoted or decoded.
func parseFPLine(s []byte, f fpFormat) (id []byte, fp uint64, err error) {
	if s[0] == '{' {
		return parseFPJSONLine(s)
	}
	// Most lines are a fingerprint alone: try that before looking for an id.
	switch f {
	case fpDecimal:
		if v, ok := parseDecimalBytes(s); ok {
			return nil, v, nil
		}
	case fpHex:
		if v, ok := parseHex16(s); ok {
			return nil, v, nil
		}
	}
	id, tok := splitFPLine(s)
	if len(id) > 0 && id[0] == '"' {
		if u, err := strconv.Unquote(string(id)); err == nil {
			id = []byte(u)
		}
	}
	fp, err = parseFPToken(tok, f)
	return id, fp, err
}

// splitFPLine splits a trimmed line at its last space into the id and the
// fingerprint; id is nil when there is no space.
func splitFPLine(s []byte) (id, tok []byte) {
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c >= utf8.RuneSelf {
			// Not ASCII: look for any Unicode space.
			j := bytes.LastIndexFunc(s, unicode.IsSpace)
			if j < 0 {
				return nil, s
			}
			_, n := utf8.DecodeRune(s[j:])
			return bytes.TrimSpace(s[:j]), s[j+n:]
		}
		if c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' {
			return bytes.TrimSpace(s[:i]), s[i+1:]
		}
	}
	return nil, s
}

// parseFPToken reads a bare fingerprint in format f (fpHex or fpDecimal): the
// usual forms without allocating, everything else through package simhash,
// whose error says what was wrong.
func parseFPToken(tok []byte, f fpFormat) (uint64, error) {
	if f == fpDecimal {
		if v, ok := parseDecimalBytes(tok); ok {
			return v, nil
		}
		v, err := simhash.ParseDecimal(string(tok)) // such as leading zeros past 20 digits
		if err == nil {
			return uint64(v), nil
		}
		if _, herr := simhash.Parse(string(tok)); herr == nil {
			err = fmt.Errorf("%q is hex, but this input's fingerprints are decimal (--fp-format)", tok)
		}
		return 0, err
	}
	if v, ok := parseHex16(tok); ok {
		return v, nil
	}
	v, err := simhash.Parse(string(tok))
	if err != nil {
		if _, derr := simhash.ParseDecimal(string(tok)); derr == nil {
			err = fmt.Errorf("%q is decimal, but this input's fingerprints are hex (--fp-format)", tok)
		}
	}
	return uint64(v), err
}

// parseDecimalBytes reads 1 to 20 decimal digits that fit in 64 bits.
func parseDecimalBytes(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	// 19 digits cannot overflow; only a 20th needs the check.
	var v uint64
	for _, c := range b[:min(len(b), 19)] {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	if len(b) == 20 {
		d := b[19] - '0'
		hi, lo := bits.Mul64(v, 10)
		var carry uint64
		v, carry = bits.Add64(lo, uint64(d), 0)
		if d > 9 || hi != 0 || carry != 0 {
			return 0, false
		}
	}
	return v, true
}

// hexValue maps a byte to its hex digit value, 0xff when it is not one.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := byte(0); i < 10; i++ {
		t['0'+i] = i
	}
	for i := byte(0); i < 6; i++ {
		t['a'+i], t['A'+i] = 10+i, 10+i
	}
	return t
}()

// parseHex16 reads the canonical form: exactly 16 hex digits.
func parseHex16(b []byte) (uint64, bool) {
	if len(b) != 16 {
		return 0, false
	}
	var v uint64
	var bad byte
	for _, c := range b {
		d := hexValue[c]
		bad |= d
		v = v<<4 | uint64(d&0xf)
	}
	return v, bad&0xf0 == 0
}

// parseFPJSONLine reads a JSON object with "id" and "fingerprint" fields.
func parseFPJSONLine(s []byte) ([]byte, uint64, error) {
	var v struct {
		ID          json.RawMessage `json:"id"`
		Fingerprint json.RawMessage `json:"fingerprint"`
	}
	if err := json.Unmarshal(s, &v); err != nil {
		return nil, 0, fmt.Errorf("malformed JSON: %v", err)
	}
	if len(v.Fingerprint) == 0 {
		return nil, 0, errors.New(`JSON object without a "fingerprint" field (documents need --from-text)`)
	}
	fp, err := parseFPJSON(v.Fingerprint)
	if err != nil {
		return nil, 0, err
	}
	var id []byte
	if len(v.ID) > 0 && string(v.ID) != "null" {
		var s string
		if err := json.Unmarshal(v.ID, &s); err == nil {
			id = []byte(s)
		} else {
			id = v.ID // a number
		}
	}
	return id, fp, nil
}

// parseFPJSON reads a JSON fingerprint: a string is hex (simhash.Parse), a
// number is decimal, read exactly as a uint64.
func parseFPJSON(raw json.RawMessage) (uint64, error) {
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, fmt.Errorf("fingerprint %s: %v", raw, err)
		}
		fp, err := simhash.Parse(s)
		return uint64(fp), err
	}
	if v, ok := parseDecimalBytes(raw); ok {
		return v, nil
	}
	return 0, fmt.Errorf("fingerprint %s is neither a hex string nor a 64-bit unsigned integer", raw)
}
