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
// with no prefix (String, MarshalText). Parse reads it and the two prefixed
// forms, whose prefix says what they hold:
//
//	"00c8f1a3e7b2d9c4"   canonical hex: exactly 16 hex digits, either case
//	"0x00c8f1a3e7b2d9c4" hex with a prefix, 1 to 16 digits
//	"0b0000000011001..." binary with a prefix, exactly 64 digits, as Binary writes
//
// Decimal, the form seomoz/simhash-cpp's tools and the Python package print,
// has its own function, ParseDecimal, and ParseFormat takes the form as an
// argument. Nothing here guesses the form from the length of a string: about one
// random 64-bit value in 2,000 has exactly 16 decimal digits, and those digits
// read as hex are another fingerprint. Parse rejects bare decimal numbers
// (except 16-digit ones, which are canonical hex); a caller holding numbers of
// unknown form must find out which form they are in, not ask per string. The
// binary form has all 64 digits for the same reason: "0b" and 14 binary digits
// is also 16 hex digits.

// Format is a text form of fingerprints, for callers that know which one
// their input uses. The zero value is FormatHex.
type Format int

const (
	// FormatHex is what Parse reads: 16 hex digits, "0x" hex or "0b" binary.
	FormatHex Format = iota
	// FormatDecimal is an unsigned decimal number, as ParseDecimal reads it.
	FormatDecimal
)

// String returns "hex" or "decimal".
func (f Format) String() string {
	switch f {
	case FormatHex:
		return "hex"
	case FormatDecimal:
		return "decimal"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

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

// UnmarshalText implements encoding.TextUnmarshaler; it accepts the forms
// Parse does (never decimal: see ParseDecimal).
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

// Parse reads a 64-bit fingerprint in canonical hex (16 digits), "0x" hex or
// "0b" binary (64 digits). It never reads decimal: "56560681611352516" is an
// error, and "1234567890123456" is the hex value 0x1234567890123456. Use
// ParseDecimal or ParseFormat for decimal input.
func Parse(s string) (Fingerprint, error) {
	v, err := parseUint(s, 64)
	return Fingerprint(v), err
}

// ParseDecimal reads a fingerprint written as an unsigned decimal number: one
// or more digits, no sign, no prefix, at most 2^64-1.
func ParseDecimal(s string) (Fingerprint, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || s == "" || s[0] < '0' || s[0] > '9' {
		return 0, fmt.Errorf("%w: %q: not a 64-bit unsigned decimal number", ErrSyntax, s)
	}
	return Fingerprint(v), nil
}

// ParseFormat reads s in the given form: Parse for FormatHex, ParseDecimal for
// FormatDecimal.
func ParseFormat(s string, f Format) (Fingerprint, error) {
	switch f {
	case FormatHex:
		return Parse(s)
	case FormatDecimal:
		return ParseDecimal(s)
	}
	return 0, fmt.Errorf("simhash: unknown format %v", f)
}

// parseUint parses s as an n-bit (32 or 64) value in the forms Parse accepts:
// exactly n/4 hex digits, "0x" and 1 to n/4 hex digits, or "0b" and exactly n
// binary digits.
func parseUint(s string, n int) (uint64, error) {
	digits := n / 4
	var (
		v   uint64
		err = ErrSyntax
	)
	switch {
	case len(s) == digits && isHexDigits(s):
		// Before the prefixes: the canonical form may itself begin with "0b".
		v, err = strconv.ParseUint(s, 16, n)
	case len(s) > 2 && len(s) <= 2+digits && (s[:2] == "0x" || s[:2] == "0X") && isHexDigits(s[2:]):
		v, err = strconv.ParseUint(s[2:], 16, n)
	case len(s) == 2+n && (s[:2] == "0b" || s[:2] == "0B"):
		v, err = strconv.ParseUint(s[2:], 2, n)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %q: want %d hex digits, 0x and hex digits, or 0b and %d binary digits (decimal is read only when asked for)", ErrSyntax, s, digits, n)
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

// UnmarshalText implements encoding.TextUnmarshaler with Parse32.
func (f *Fingerprint32) UnmarshalText(b []byte) error {
	v, err := Parse32(string(b))
	*f = v
	return err
}

// Parse32 reads a 32-bit fingerprint: 8 hex digits, "0x" and 1 to 8 hex
// digits, or "0b" and 32 binary digits. Like Parse it never reads decimal.
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
