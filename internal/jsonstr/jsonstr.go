// Package jsonstr scans and decodes JSON string literals (RFC 8259 section
// 7) for the hand-written JSON readers of corpus and server, which must agree
// with encoding/json on every string they accept.
//
//	end, esc, err := jsonstr.Scan(b, i) // b[i] is the opening quote
//	if err != nil { ... }                // end is the offset of the fault
//	raw := b[i+1 : end-1]                // the content between the quotes
//	s := string(raw)
//	if esc {
//		s = jsonstr.Unescape(raw)
//	}
//
// Strings decode as encoding/json decodes them: the escapes of RFC 8259,
// \u escapes with UTF-16 surrogate pairs combined and a lone surrogate
// becoming U+FFFD. One difference: invalid UTF-8 is neither checked nor
// replaced (encoding/json replaces each bad byte with U+FFFD), so that a
// reader that must return its input untouched can; a reader that must match
// encoding/json exactly checks utf8.Valid first.
package jsonstr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Scan scans the string literal whose opening quote is at b[i]. It returns
// the offset just past the closing quote and whether the content holds
// escapes. A malformed string (unterminated, with a control character, an
// unknown escape or a \u without four hex digits) returns the offset of the
// byte at fault and an error saying what is wrong there, without the offset,
// for the caller to place.
func Scan(b []byte, i int) (end int, esc bool, err error) {
	i++
	for {
		// Jump to the next byte that needs a look: quote, backslash or a
		// control character (forbidden unescaped by RFC 8259 section 7).
		i = skipPlain(b, i)
		if i >= len(b) {
			return i, false, errors.New("unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, esc, nil
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return i, false, errors.New("unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					return i, false, errors.New("invalid \\u escape")
				}
				i += 6
			default:
				return i, false, fmt.Errorf("invalid escape \\%c", b[i+1])
			}
		default:
			return i, false, fmt.Errorf("control character %#x in string", c)
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

// Unescape decodes the content of a string that Scan accepted (the bytes
// between the quotes) into a new string.
func Unescape(raw []byte) string {
	out := AppendUnescaped(make([]byte, 0, len(raw)), raw)
	// out is a fresh buffer that nothing else refers to: no copy needed.
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// AppendUnescaped appends the decoded content of raw, a string that Scan
// accepted, to out. out may be raw[:0], to decode in place: every escape is
// at least as long as what it decodes to (\n 2 bytes for 1, \uXXXX 6 for at
// most 3, a surrogate pair 12 for 4), so the writes never overtake the reads,
// and append copies with memmove.
func AppendUnescaped(out, raw []byte) []byte {
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
				// As encoding/json: a pair combines, anything else (a lone
				// or reversed surrogate) is U+FFFD and the next escape is
				// decoded on its own.
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
