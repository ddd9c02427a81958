package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"unsafe"

	"github.com/neardup/neardup/internal/jsonstr"
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
	return jsonstr.Unescape(raw) == want
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
			out := jsonstr.AppendUnescaped(raw[:0], raw)
			f.str = unsafe.String(unsafe.SliceData(out), len(out))
		case esc:
			f.str = jsonstr.Unescape(raw)
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
	start := s.i
	end, esc, err := jsonstr.Scan(s.b, start)
	s.i = end
	if err != nil {
		return nil, false, s.errorf("%v", err)
	}
	return s.b[start+1 : end-1], esc, nil
}
