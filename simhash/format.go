package simhash

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSyntax is returned, wrapped, when a fingerprint's text form cannot be parsed.
var ErrSyntax = errors.New("simhash: invalid fingerprint syntax")

// Text forms. The canonical form of a Fingerprint is 16 lower-case hex digits
// with no prefix (String, MarshalText). Parse also accepts "0x" hex, "0b" binary
// and plain decimal (the form seomoz/simhash-cpp's tools and the Python package
// print), so every form round-trips:
//
//	"00c8f1a3e7b2d9c4"   canonical hex: exactly 16 hex digits
//	"0x00c8f1a3e7b2d9c4" hex with a prefix, 1 to 16 digits
//	"0b1010..."          binary, 1 to 64 digits, most significant first
//	"56562357120146372"  decimal, when it is not exactly 16 characters long
//
// A 16-character string of decimal digits is read as hex, the canonical form;
// write decimal with ParseDecimal's help, or use the "0x" and "0b" prefixes,
// where that matters.

// String returns the canonical text form: 16 lower-case hex digits.
func (f Fingerprint) String() string {
	var buf [16]byte
	return string(appendHex(buf[:0], uint64(f), 16))
}

// Hex is String.
func (f Fingerprint) Hex() string { return f.String() }

// Decimal returns f as an unsigned decimal number.
func (f Fingerprint) Decimal() string { return strconv.FormatUint(uint64(f), 10) }

// Binary returns f as "0b" and 64 binary digits, most significant first.
func (f Fingerprint) Binary() string { return "0b" + Bits(uint64(f), 64) }

// Bits returns the low n bits of v as a string of '0' and '1', most significant
// first, with no prefix: Bits(0b101011, 6) is "101011".
func Bits(v uint64, n int) string {
	b := make([]byte, n)
	for i := 0; i < n; i++ {
		b[i] = '0' + byte(v>>uint(n-1-i)&1)
	}
	return string(b)
}

// AppendText appends the canonical text form of f to b.
func (f Fingerprint) AppendText(b []byte) ([]byte, error) { return appendHex(b, uint64(f), 16), nil }

// MarshalText implements encoding.TextMarshaler with the canonical form.
func (f Fingerprint) MarshalText() ([]byte, error) { return f.AppendText(make([]byte, 0, 16)) }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts every form Parse does.
func (f *Fingerprint) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// MarshalBinary implements encoding.BinaryMarshaler: 8 bytes, big-endian.
func (f Fingerprint) MarshalBinary() ([]byte, error) {
	return binary.BigEndian.AppendUint64(nil, uint64(f)), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler: exactly 8 bytes, big-endian.
func (f *Fingerprint) UnmarshalBinary(b []byte) error {
	if len(b) != 8 {
		return fmt.Errorf("simhash: binary fingerprint is %d bytes, want 8", len(b))
	}
	*f = Fingerprint(binary.BigEndian.Uint64(b))
	return nil
}

// Parse reads a 64-bit fingerprint in any of the text forms above.
func Parse(s string) (Fingerprint, error) {
	v, err := parseUint(s, 64)
	return Fingerprint(v), err
}

// ParseDecimal reads a fingerprint written as an unsigned decimal number.
func ParseDecimal(s string) (Fingerprint, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q: not a 64-bit decimal number", ErrSyntax, s)
	}
	return Fingerprint(v), nil
}

// parseUint parses s as an n-bit (32 or 64) value in the forms Parse accepts.
func parseUint(s string, n int) (uint64, error) {
	digits := n / 4
	var (
		v   uint64
		err error
	)
	switch {
	case len(s) == digits && isHexDigits(s):
		// Before the prefixes: String's hex may itself begin with "0b".
		v, err = strconv.ParseUint(s, 16, n)
	case len(s) > 2 && (strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X")):
		v, err = strconv.ParseUint(s[2:], 16, n)
	case len(s) > 2 && (strings.HasPrefix(s, "0b") || strings.HasPrefix(s, "0B")):
		v, err = strconv.ParseUint(s[2:], 2, n)
	case len(s) == digits:
		v, err = strconv.ParseUint(s, 16, n)
	default:
		v, err = strconv.ParseUint(s, 10, n)
	}
	if err != nil || s == "" || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%w: %q: want %d hex digits, 0x hex, 0b binary or decimal", ErrSyntax, s, digits)
	}
	return v, nil
}

func isHexDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; !('0' <= s[i] && s[i] <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func appendHex(b []byte, v uint64, digits int) []byte {
	const hexDigits = "0123456789abcdef"
	for i := digits - 1; i >= 0; i-- {
		b = append(b, hexDigits[v>>(uint(i)*4)&0xf])
	}
	return b
}

// String returns 8 lower-case hex digits.
func (f Fingerprint32) String() string { return string(appendHex(nil, uint64(f), 8)) }

// MarshalText implements encoding.TextMarshaler: 8 lower-case hex digits.
func (f Fingerprint32) MarshalText() ([]byte, error) { return appendHex(nil, uint64(f), 8), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (f *Fingerprint32) UnmarshalText(b []byte) error {
	v, err := Parse32(string(b))
	*f = v
	return err
}

// Parse32 reads a 32-bit fingerprint: 8 hex digits, 0x hex, 0b binary or decimal.
func Parse32(s string) (Fingerprint32, error) {
	v, err := parseUint(s, 32)
	return Fingerprint32(v), err
}

// String returns 32 lower-case hex digits, Hi first.
func (f Fingerprint128) String() string {
	b := appendHex(make([]byte, 0, 32), f.Hi, 16)
	return string(appendHex(b, f.Lo, 16))
}

// MarshalText implements encoding.TextMarshaler: 32 lower-case hex digits.
func (f Fingerprint128) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (f *Fingerprint128) UnmarshalText(b []byte) error {
	v, err := Parse128(string(b))
	*f = v
	return err
}

// Parse128 reads a 128-bit fingerprint: 32 hex digits, optionally with "0x".
func Parse128(s string) (Fingerprint128, error) {
	h := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if len(h) != 32 {
		return Fingerprint128{}, fmt.Errorf("%w: %q: want 32 hex digits", ErrSyntax, s)
	}
	hi, err1 := strconv.ParseUint(h[:16], 16, 64)
	lo, err2 := strconv.ParseUint(h[16:], 16, 64)
	if err1 != nil || err2 != nil {
		return Fingerprint128{}, fmt.Errorf("%w: %q: want 32 hex digits", ErrSyntax, s)
	}
	return Fingerprint128{Hi: hi, Lo: lo}, nil
}

// MarshalBinary implements encoding.BinaryMarshaler: 16 bytes big-endian, Hi first.
func (f Fingerprint128) MarshalBinary() ([]byte, error) {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), f.Hi)
	return binary.BigEndian.AppendUint64(b, f.Lo), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (f *Fingerprint128) UnmarshalBinary(b []byte) error {
	if len(b) != 16 {
		return fmt.Errorf("simhash: binary fingerprint is %d bytes, want 16", len(b))
	}
	f.Hi, f.Lo = binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])
	return nil
}
