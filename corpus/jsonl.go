package corpus

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// A hand-written JSON (RFC 8259) object scanner rather than encoding/json:
// it validates the whole line with the same grammar and nesting limit as
// encoding/json, but decodes only the two fields we need and, when the text
// has no escapes, returns it without copying. On a 1 GB line that is the
// difference between holding the line once and holding it three times
// (json.RawMessage copy, decoded copy, line).

// maxDepth matches encoding/json's nesting limit.
const maxDepth = 10000

// field is what decodeLine found for one wanted key.
type field struct {
	found  bool
	str    string // decoded string, or a number's literal text
	isNum  bool
	isNull bool
	kind   byte // first byte of the value: '"', '-'/digit, 't', 'f', 'n', '{', '['
}

type scanner struct {
	b     []byte
	i     int
	depth int
}

var errEnd = errors.New("unexpected end of line")

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format+" at byte %d", append([]any{ErrMalformed}, append(args, s.i+1)...)...)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// decodeLine parses line as one JSON object and returns the values of the
// top-level keys idKey and textKey (the last one wins when a key repeats, as
// with encoding/json). Strings are returned as strings that may alias line.
func decodeLine(line []byte, idKey, textKey string) (id, text field, err error) {
	return decodeLineText(line, idKey, textKey, false)
}

// decodeLineText is decodeLine; with inPlace, an escaped text is decoded
// into the line's own bytes (never longer than its escaped form) instead of
// a new buffer, which leaves the line itself garbled.
func decodeLineText(line []byte, idKey, textKey string, inPlace bool) (id, text field, err error) {
	s := scanner{b: line}
	s.ws()
	if s.i >= len(s.b) {
		return id, text, fmt.Errorf("%w: empty line", ErrMalformed)
	}
	if s.b[s.i] != '{' {
		return id, text, s.errorf("not a JSON object (starts with %q)", s.b[s.i])
	}
	s.i++
	s.depth = 1
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
	} else {
		for {
			s.ws()
			if s.i >= len(s.b) {
				return id, text, s.errorf("%v", errEnd)
			}
			if s.b[s.i] != '"' {
				return id, text, s.errorf("want a quoted key, got %q", s.b[s.i])
			}
			k, kesc, err := s.str()
			if err != nil {
				return id, text, err
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return id, text, s.errorf("want ':' after key")
			}
			s.i++
			s.ws()
			var want *field
			if keyIs(k, kesc, idKey) {
				want = &id
			} else if keyIs(k, kesc, textKey) {
				want = &text
			}
			if want != nil {
				if err := s.wanted(want, inPlace && want == &text); err != nil {
					return id, text, err
				}
			} else if err := s.value(); err != nil {
				return id, text, err
			}
			s.ws()
			if s.i >= len(s.b) {
				return id, text, s.errorf("%v", errEnd)
			}
			if s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.b[s.i] == '}' {
				s.i++
				break
			}
			return id, text, s.errorf("want ',' or '}', got %q", s.b[s.i])
		}
	}
	s.ws()
	if s.i < len(s.b) {
		return id, text, s.errorf("trailing data after the object")
	}
	return id, text, nil
}

// keyIs reports whether the raw key bytes (escaped when esc) spell want.
func keyIs(raw []byte, esc bool, want string) bool {
	if !esc {
		return string(raw) == want
	}
	return unescape(raw) == want
}

// wanted scans a value into f; with inPlace an escaped string is decoded
// over its own bytes.
func (s *scanner) wanted(f *field, inPlace bool) error {
	*f = field{found: true}
	if s.i >= len(s.b) {
		return s.errorf("%v", errEnd)
	}
	f.kind = s.b[s.i]
	switch c := s.b[s.i]; {
	case c == '"':
		raw, esc, err := s.str()
		if err != nil {
			return err
		}
		switch {
		case esc && inPlace:
			out := appendUnescaped(raw[:0], raw)
			f.str = unsafe.String(unsafe.SliceData(out), len(out))
		case esc:
			f.str = unescape(raw)
		default:
			f.str = unsafe.String(unsafe.SliceData(raw), len(raw))
		}
	case c == '-' || c >= '0' && c <= '9':
		start := s.i
		if err := s.number(); err != nil {
			return err
		}
		raw := s.b[start:s.i]
		f.str, f.isNum = unsafe.String(unsafe.SliceData(raw), len(raw)), true
	case c == 'n':
		f.isNull = true
		return s.value()
	default:
		return s.value()
	}
	return nil
}

// value skips one JSON value, checking its syntax.
func (s *scanner) value() error {
	if s.i >= len(s.b) {
		return s.errorf("%v", errEnd)
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, err := s.str()
		return err
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '{' || c == '[':
		return s.compound(c)
	default:
		return s.errorf("unexpected %q", c)
	}
}

func (s *scanner) literal(lit string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return s.errorf("invalid literal (want %s)", lit)
	}
	s.i += len(lit)
	return nil
}

// compound skips an object or array starting at s.b[s.i] == open.
func (s *scanner) compound(open byte) error {
	s.depth++
	if s.depth > maxDepth {
		return s.errorf("nested deeper than %d", maxDepth)
	}
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == closer {
		s.i++
		s.depth--
		return nil
	}
	for {
		s.ws()
		if open == '{' {
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return s.errorf("want a quoted key")
			}
			if _, _, err := s.str(); err != nil {
				return err
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return s.errorf("want ':' after key")
			}
			s.i++
			s.ws()
		}
		if err := s.value(); err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.errorf("%v", errEnd)
		}
		if s.b[s.i] == ',' {
			s.i++
			continue
		}
		if s.b[s.i] == closer {
			s.i++
			s.depth--
			return nil
		}
		return s.errorf("want ',' or %q, got %q", closer, s.b[s.i])
	}
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? .
func (s *scanner) number() error {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		s.i = i
		return s.errorf("invalid number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			s.i = i
			return s.errorf("invalid number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			s.i = i
			return s.errorf("invalid number")
		}
	}
	s.i = i
	return nil
}

// str scans a string starting at the opening quote and returns its raw
// content (between the quotes) and whether it contains escapes.
func (s *scanner) str() (raw []byte, esc bool, err error) {
	b := s.b
	start := s.i + 1
	i := start
	for {
		// Jump to the next byte that needs a look: quote, backslash or a
		// control character (forbidden unescaped by RFC 8259 section 7).
		i = skipPlain(b, i)
		if i >= len(b) {
			s.i = i
			return nil, false, s.errorf("unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return b[start:i], esc, nil
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				s.i = i
				return nil, false, s.errorf("unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					s.i = i
					return nil, false, s.errorf("invalid \\u escape")
				}
				i += 6
			default:
				s.i = i
				return nil, false, s.errorf("invalid escape \\%c", b[i+1])
			}
		default:
			s.i = i
			return nil, false, s.errorf("control character %#x in string", c)
		}
	}
}

// plain marks the bytes a string may hold unescaped: not '"', not '\\', not
// a control character. Bytes >= 0x80 pass: UTF-8 is not checked (see the
// package doc).
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipPlain returns the index of the first byte at or after i that is not
// plain. It tests eight bytes at a time with the "has zero byte" bit trick
// (Mycroft; see Anderson, "Bit Twiddling Hacks"): a word is skipped when it
// has no byte below 0x20, no '"' and no '\\'.
func skipPlain(b []byte, i int) int {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ ('"' * ones)
		bs := x ^ ('\\' * ones)
		if ((x-0x20*ones)&^x|(q-ones)&^q|(bs-ones)&^bs)&high != 0 {
			break
		}
		i += 8
	}
	for i < len(b) && plain[b[i]] {
		i++
	}
	return i
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if hexVal(c) < 0 {
			return false
		}
	}
	return true
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

func hex4(b []byte) rune {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

// unescape decodes the content of a string already checked by str. Surrogate
// pairs combine; a lone surrogate becomes U+FFFD, as in encoding/json.
func unescape(raw []byte) string {
	out := appendUnescaped(make([]byte, 0, len(raw)), raw)
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// appendUnescaped appends the decoded content of raw to out. out may be
// raw[:0]: every escape is at least as long as what it decodes to (\n 2 bytes
// for 1, \uXXXX 6 for at most 3, a surrogate pair 12 for 4), so the writes
// never overtake the reads, and append copies with memmove.
func appendUnescaped(out, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := bytes.IndexByte(raw[i:], '\\')
			if j < 0 {
				j = len(raw) - i
			}
			out = append(out, raw[i:i+j]...)
			i += j
			continue
		}
		switch raw[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 = hex4(raw[i+2:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, raw[i+1])
		}
		i += 2
	}
	return out
}
