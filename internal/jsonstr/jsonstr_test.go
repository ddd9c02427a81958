package jsonstr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestScan(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 3) // past the eight-byte steps
	for _, tt := range []struct {
		in      string // from the opening quote
		end     int    // past the closing quote, or the fault's offset
		esc     bool
		wantErr string // "" when the string is well formed
	}{
		{in: `""`, end: 2},
		{in: `"hello" rest`, end: 7},
		{in: `"` + long + `"`, end: len(long) + 2},
		{in: `"` + long + `\n"`, end: len(long) + 4, esc: true},
		{in: `"é中文😀"`, end: len(`"é中文😀"`)},
		{in: "\"caf\xe9\"", end: 6}, // invalid UTF-8 passes
		{in: `"\"\\\/\b\f\n\r\t"`, end: 18, esc: true},
		{in: `"\u00e9\ud83d\ude00\ud800"`, end: 26, esc: true},
		{in: `"\uABCD"`, end: 8, esc: true},
		{in: `"`, end: 1, wantErr: "unterminated string"},
		{in: `"abc`, end: 4, wantErr: "unterminated string"},
		{in: `"` + long, end: len(long) + 1, wantErr: "unterminated string"},
		{in: `"abc\`, end: 4, wantErr: "unterminated string"},
		{in: `"x\q"`, end: 2, wantErr: `invalid escape \q`},
		{in: `"x\u12"`, end: 2, wantErr: `invalid \u escape`},
		{in: `"x\u12g4"`, end: 2, wantErr: `invalid \u escape`},
		{in: "\"tab\there\"", end: 4, wantErr: "control character 0x9 in string"},
		{in: "\"" + long + "\x00\"", end: len(long) + 1, wantErr: "control character 0x0 in string"},
	} {
		end, esc, err := Scan([]byte(tt.in), 0)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if end != tt.end || esc != tt.esc || gotErr != tt.wantErr {
			t.Errorf("Scan(%q) = %d, %v, %q; want %d, %v, %q", tt.in, end, esc, gotErr, tt.end, tt.esc, tt.wantErr)
		}
	}
	// Scan starts at the quote it is given.
	if end, _, err := Scan([]byte(`{"k":"v"}`), 5); end != 8 || err != nil {
		t.Errorf(`Scan at offset 5 = %d, %v; want 8, nil`, end, err)
	}
}

func TestUnescape(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{``, ``},
		{`plain`, `plain`},
		{`\"\\\/\b\f\n\r\t`, "\"\\/\b\f\n\r\t"},
		{`a\u00e9b\u4e2d`, "aéb中"},
		{`\ud83d\ude00`, "😀"},
		{`\ud800`, "\ufffd"},               // lone high surrogate
		{`\udc00`, "\ufffd"},               // lone low surrogate
		{`\ude00\ud83d`, "\ufffd\ufffd"},   // reversed pair
		{`\ud83d\u0041`, "\ufffdA"},        // high surrogate before a non-surrogate
		{`\ud83d\n`, "\ufffd\n"},           // high surrogate before another escape
		{`\ud83dx\ude00`, "\ufffdx\ufffd"}, // not adjacent
		{"caf\xe9 \\n", "caf\xe9 \n"},      // invalid UTF-8 is kept, unlike encoding/json
	} {
		if got := Unescape([]byte(tt.raw)); got != tt.want {
			t.Errorf("Unescape(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

// FuzzUnescape checks Scan and Unescape against encoding/json: they accept
// exactly the strings it accepts and decode them to the same value (invalid
// UTF-8, which encoding/json replaces and Unescape keeps, compared rune by
// rune), and decoding in place gives the same bytes.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{
		`"hello"`, `""`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\ud83d\ude00\ud800"`, `"\udc00\ud800\udc00"`,
		`"\ud83d\u0041"`, `"\ud83d\\ude00"`, `"\u12"`, `"\q"`, "\"tab\t\"", `"abc`, "\"caf\xe9\"",
		`"` + strings.Repeat("long text, ", 10) + `\n"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		if len(lit) == 0 || lit[0] != '"' {
			return
		}
		end, esc, err := Scan(lit, 0)
		if err == nil && end != len(lit) {
			return // data after the string: not one JSON value
		}
		var want string
		jerr := json.Unmarshal(lit, &want)
		if (err == nil) != (jerr == nil) {
			t.Fatalf("Scan(%q): %d %v, encoding/json: %v", lit, end, err, jerr)
		}
		if err != nil {
			return
		}
		raw := lit[1 : end-1]
		got := string(raw)
		if esc {
			got = Unescape(raw)
		} else if bytes.ContainsAny(raw, `\"`) {
			t.Fatalf("Scan(%q): no escapes reported", lit)
		}
		if string([]rune(got)) != want {
			t.Fatalf("Unescape(%q) = %q, encoding/json %q", raw, got, want)
		}
		if utf8.Valid(raw) && got != want {
			t.Fatalf("Unescape(%q) = %q, encoding/json %q", raw, got, want)
		}
		buf := bytes.Clone(raw)
		if inPlace := AppendUnescaped(buf[:0], buf); string(inPlace) != got {
			t.Fatalf("in place %q, want %q", inPlace, got)
		}
	})
}
