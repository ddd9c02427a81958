package simhash

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestTextForms(t *testing.T) {
	f := Fingerprint(0x00c8f1a3e7b2d9c4)
	if got := f.String(); got != "00c8f1a3e7b2d9c4" {
		t.Errorf("String = %q", got)
	}
	if got := f.Decimal(); got != "56560681611352516" {
		t.Errorf("Decimal = %q", got)
	}
	if got := f.Binary(); len(got) != 66 || got[:10] != "0b00000000" {
		t.Errorf("Binary = %q", got)
	}
	for _, s := range []string{f.String(), "0x" + f.String(), "0xc8f1a3e7b2d9c4", f.Binary(), "0XC8F1A3E7B2D9C4", "00C8F1A3E7B2D9C4"} {
		g, err := Parse(s)
		if err != nil || g != f {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, g, err, f)
		}
	}
	if g, err := ParseDecimal(f.Decimal()); err != nil || g != f {
		t.Errorf("ParseDecimal(%q) = %v, %v; want %v", f.Decimal(), g, err, f)
	}
}

// TestNoLengthGuess: a string of 16 decimal digits is hex to Parse and decimal
// to ParseDecimal, and no other length makes Parse read decimal. The values
// are ones whose decimal form has exactly 16 digits, the forms a per-string
// guess confused.
func TestNoLengthGuess(t *testing.T) {
	for _, v := range []uint64{1_000_000_000_000_000, 1_234_567_890_123_456, 9_999_999_999_999_999} {
		dec := strconv.FormatUint(v, 10)
		if len(dec) != 16 {
			t.Fatalf("%d has %d decimal digits, want 16", v, len(dec))
		}
		if g, err := ParseDecimal(dec); err != nil || uint64(g) != v {
			t.Errorf("ParseDecimal(%q) = %v, %v; want %d", dec, g, err, v)
		}
		if g, err := ParseFormat(dec, FormatDecimal); err != nil || uint64(g) != v {
			t.Errorf("ParseFormat(%q, decimal) = %v, %v; want %d", dec, g, err, v)
		}
		hex, _ := strconv.ParseUint(dec, 16, 64)
		if g, err := Parse(dec); err != nil || uint64(g) != hex {
			t.Errorf("Parse(%q) = %v, %v; want the hex value %#x", dec, g, err, hex)
		}
		if g, err := ParseFormat(dec, FormatHex); err != nil || uint64(g) != hex {
			t.Errorf("ParseFormat(%q, hex) = %v, %v; want %#x", dec, g, err, hex)
		}
		// One digit fewer or more is not hex and Parse must not take it as decimal.
		for _, s := range []string{dec[1:], dec + "0"} {
			if g, err := Parse(s); !errors.Is(err, ErrSyntax) {
				t.Errorf("Parse(%q) = %v, %v; want ErrSyntax", s, g, err)
			}
			var f Fingerprint
			if err := f.UnmarshalText([]byte(s)); !errors.Is(err, ErrSyntax) {
				t.Errorf("UnmarshalText(%q) = %v; want ErrSyntax", s, err)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"", "0x", "0b", "xyz", "0b102", "-1", "+5", "18446744073709551616", "0x1ffffffffffffffff", "00c8f1a3e7b2d9cg",
		"12345", "56560681611352516", "0b101", "0x+1", "0x_1", "0b" + strings.Repeat("1", 65), "+123456789abcdef", "0x-1"} {
		if _, err := Parse(s); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q): err = %v, want ErrSyntax", s, err)
		}
	}
	for _, s := range []string{"", "-1", "+5", "0x10", "1e3", "18446744073709551616", "12 3", "00c8f1a3e7b2d9c4"} {
		if _, err := ParseDecimal(s); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseDecimal(%q): err = %v, want ErrSyntax", s, err)
		}
	}
	if g, err := ParseDecimal("18446744073709551615"); err != nil || g != 1<<64-1 {
		t.Errorf("ParseDecimal(max) = %v, %v", g, err)
	}
	if _, err := ParseFormat("1", Format(7)); err == nil {
		t.Error("ParseFormat accepted an unknown format")
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, f := range []Fingerprint{0, 1, 0xffffffffffffffff, 0x8000000000000000, 0x0123456789abcdef} {
		txt, _ := f.MarshalText()
		var g Fingerprint
		if err := g.UnmarshalText(txt); err != nil || g != f {
			t.Errorf("text round trip of %v: %v, %v", f, g, err)
		}
		bin, _ := f.MarshalBinary()
		var h Fingerprint
		if err := h.UnmarshalBinary(bin); err != nil || h != f || len(bin) != 8 {
			t.Errorf("binary round trip of %v: %v, %v", f, h, err)
		}
		js, _ := json.Marshal(struct{ F Fingerprint }{f})
		var back struct{ F Fingerprint }
		if err := json.Unmarshal(js, &back); err != nil || back.F != f {
			t.Errorf("JSON round trip of %v via %s: %v, %v", f, js, back.F, err)
		}
	}
	var g Fingerprint
	if err := g.UnmarshalBinary([]byte{1, 2, 3}); err == nil {
		t.Error("UnmarshalBinary accepted 3 bytes")
	}
}

func TestWidthForms(t *testing.T) {
	f32 := Fingerprint32(0xdeadbeef)
	if f32.String() != "deadbeef" {
		t.Errorf("Fingerprint32 String = %q", f32.String())
	}
	for _, s := range []string{"deadbeef", "0xdeadbeef", "0b11011110101011011011111011101111"} {
		if g, err := Parse32(s); err != nil || g != f32 {
			t.Errorf("Parse32(%q) = %v, %v", s, g, err)
		}
	}
	for _, s := range []string{"3735928559", "12345678"[1:], "0b1101"} {
		if g, err := Parse32(s); err == nil {
			t.Errorf("Parse32(%q) = %v; want an error (no decimal, no short binary)", s, g)
		}
	}
	if _, err := Parse32("0x1deadbeef"); err == nil {
		t.Error("Parse32 accepted 33 bits")
	}
	f128 := Fingerprint128{Hi: 0x0123456789abcdef, Lo: 0xfedcba9876543210}
	s := f128.String()
	if s != "0123456789abcdeffedcba9876543210" {
		t.Errorf("Fingerprint128 String = %q", s)
	}
	if g, err := Parse128(s); err != nil || g != f128 {
		t.Errorf("Parse128 = %v, %v", g, err)
	}
	var back Fingerprint128
	bin, _ := f128.MarshalBinary()
	if err := back.UnmarshalBinary(bin); err != nil || back != f128 {
		t.Errorf("128 binary round trip: %v %v", back, err)
	}
	var t2 Fingerprint128
	if err := t2.UnmarshalText([]byte("0x" + s)); err != nil || t2 != f128 {
		t.Errorf("128 text round trip: %v %v", t2, err)
	}
	if _, err := Parse128("abc"); err == nil {
		t.Error("Parse128 accepted 3 digits")
	}
	var t3 Fingerprint32
	if err := t3.UnmarshalText([]byte("zz")); err == nil {
		t.Error("Fingerprint32 UnmarshalText accepted zz")
	}
}

// FuzzParse: whatever Parse accepts, the canonical form of the result parses
// back to the same value, and no input panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"00c8f1a3e7b2d9c4", "0x1", "0b101", "12345", "", "0x", "美国"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			return
		}
		for _, form := range []string{v.String(), v.Binary()} {
			w, err := Parse(form)
			if err != nil || w != v {
				t.Fatalf("Parse(%q) = %v, but its form %q parses to %v, %v", s, v, form, w, err)
			}
		}
		if w, err := ParseDecimal(v.Decimal()); err != nil || w != v {
			t.Fatalf("Parse(%q) = %v, but its decimal form parses to %v, %v", s, v, w, err)
		}
		// Only 16 decimal digits are read by both: the ambiguity callers must settle.
		if d, err := ParseDecimal(s); err == nil && len(s) != 16 {
			t.Fatalf("%q reads as hex %v and as decimal %v", s, v, d)
		}
	})
}
