package corpus

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// FuzzDecodeLine checks the hand-written decoder against encoding/json: it
// accepts exactly the lines that are valid JSON objects, and finds the same
// text and id (invalid UTF-8, which encoding/json replaces and we keep,
// compared rune by rune).
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","text":"hello"}`,
		`{"id":12,"text":"x","meta":{"a":[1,2.5e-3,true,false,null,"s"]}}`,
		`{"text":"\u00e9\ud83d\ude00\ud800\\\"\/\b\f\n\r\t"}`,
		`{"te\u0078t":"escaped key"}`,
		`{"text":null,"id":null}`,
		`{}`, `[]`, `"text"`, `{"text":"x"} x`, `{"text":"x",}`, `{"id":-0.0e+1,"text":""}`,
		"{\"text\":\"\xff\xfe\"}",
		` { "text" : "spaces" } `,
		`{"a":[[[[[[]]]]]],"text":"deep"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		id, text, err := decodeLine(line, "id", "text")
		// Decoding the text in place (Options.NoRaw) gives the same fields.
		id2, text2, err2 := decodeLineText(bytes.Clone(line), "id", "text", true)
		if (err2 == nil) != (err == nil) || err == nil && (id2 != id || text2 != text) {
			t.Fatalf("in place: %+v %+v %v, want %+v %+v %v for %q", id2, text2, err2, id, text, err, line)
		}
		var m map[string]json.RawMessage
		jerr := json.Unmarshal(line, &m)
		if jerr == nil && m == nil {
			jerr = json.Unmarshal([]byte("x"), &m) // top-level null is not an object
		}
		if (err == nil) != (jerr == nil) {
			t.Fatalf("decodeLine err %v, encoding/json err %v for %q", err, jerr, line)
		}
		if err != nil {
			return
		}
		check := func(name string, f field) {
			raw, ok := m[name]
			if ok != f.found {
				t.Fatalf("%s: found %v, encoding/json %v in %q", name, f.found, ok, line)
			}
			if !ok {
				return
			}
			var v any
			d := json.NewDecoder(bytes.NewReader(raw))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				t.Fatal(err)
			}
			switch v := v.(type) {
			case string:
				if f.kind != '"' || string([]rune(f.str)) != string([]rune(v)) {
					t.Fatalf("%s: got %q (kind %c), want %q in %q", name, f.str, f.kind, v, line)
				}
			case json.Number:
				if !f.isNum || f.str != string(v) {
					t.Fatalf("%s: got %q, want number %s", name, f.str, v)
				}
			case nil:
				if !f.isNull {
					t.Fatalf("%s: want null", name)
				}
			}
		}
		check("id", id)
		check("text", text)
	})
}

func BenchmarkDecodeLine(b *testing.B) {
	text := bytes.Repeat([]byte("Near-duplicate detection with SimHash fingerprints, "), 40)
	for _, tt := range []struct{ name, line string }{
		{"plain", `{"id":"doc-1","text":"` + string(text) + `","group":"g"}`},
		{"escaped", `{"id":"doc-1","text":"` + string(bytes.ReplaceAll(text, []byte(", "), []byte(`,\n`))) + `","group":"g"}`},
	} {
		line := []byte(tt.line)
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := decodeLine(line, "id", "text"); err != nil {
					b.Fatal(err)
				}
			}
		})
		// Baseline: what encoding/json needs for a configurable text field.
		b.Run(tt.name+"/encoding-json", func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				var m map[string]json.RawMessage
				var text string
				if err := json.Unmarshal(line, &m); err != nil {
					b.Fatal(err)
				}
				if err := json.Unmarshal(m["text"], &text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzReader feeds arbitrary bytes through the Reader in every format: no
// panic, errors always name the source, and in Lines format the documents are
// exactly the non-blank lines.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"{\"id\":\"a\",\"text\":\"x\"}\n{bad\n",
		"line one\r\n\r\nline two",
		"\x00binary",
		"\x1f\x8b\x08garbage",
		"\x28\xb5\x2f\xfdgarbage",
		"\ufeff{\"text\":\"bom\"}",
		"caf\xe9\n",
		"\xff\xfeh\x00i\x00\n\x00",       // UTF-16 LE
		"\xfe\xff\x00h\x00i\x00\r\x00\n", // UTF-16 BE
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{Auto, JSONL, Text, Lines} {
			r, err := OpenReader(bytes.NewReader(data), "in", Options{Format: format, MaxDocBytes: 1 << 16})
			if err != nil {
				t.Fatal(err)
			}
			var docs []Doc
			for i := 0; i < 10000; i++ {
				d, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					if !strings.HasPrefix(err.Error(), "in:") && !strings.HasPrefix(err.Error(), "in ") {
						t.Fatalf("format %v: error %q does not name the source", format, err)
					}
					continue
				}
				docs = append(docs, d)
			}
			r.Close()
			utf16 := bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) // decoded first
			if format != Lines || len(data) == 0 || data[0] == 0x1f || data[0] == 0x28 || utf16 || binaryReason(data[:min(len(data), sniffLen)], len(data) <= sniffLen) != "" {
				continue
			}
			var want []string
			for i, l := range strings.Split(string(data), "\n") {
				l = strings.TrimSuffix(l, "\r")
				if i == 0 {
					l = strings.TrimPrefix(l, "\ufeff")
				}
				if strings.TrimSpace(l) != "" && len(l) <= 1<<16 {
					want = append(want, l)
				}
			}
			if len(docs) != len(want) {
				t.Fatalf("Lines: got %d docs, want %d", len(docs), len(want))
			}
			for i := range want {
				if docs[i].Text != want[i] {
					t.Fatalf("Lines doc %d: got %q, want %q", i, docs[i].Text, want[i])
				}
			}
		}
	})
}
