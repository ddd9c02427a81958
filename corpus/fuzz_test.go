package corpus

import (
	"bytes"
	"encoding/json"
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
