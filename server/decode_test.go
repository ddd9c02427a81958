package server

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

var decodeSeeds = []string{
	`{"id":"a","text":"hello world","mode":"add_if_new"}`,
	` { "text" : "x\"y\\z\/\b\f\n\r\t" , "k" : 3 , "limit" : 10 } `,
	`{"text":null,"k":null,"limit":null,"fingerprint":null}`,
	`{"id":"a","id":"b"}`,
	`{"ID":"a","text":"t"}`,
	`{"id":"a","meta":{"t":1},"text":"t"}`,
	`{"text":"\u00e9t\u00e9"}`,
	`{"text":"\ud800"}`,
	`{"id":"\u0041\u00C9\u4e2d","text":"smile \ud83d\ude00, pair \uD83D\uDE00 end"}`,
	`{"text":"lone \udc00 low, reversed \ude00\ud83d, split \ud83d \ude00, \ud83d\n"}`,
	`{"text":"\ud83d\u0041\ud800\ud800\udc00","fingerprint":"\u0030\u0031"}`,
	`{"text":"nul \u0000 and \u001f and \u2028\u2029"}`,
	`{"text":"\u12"}`, `{"text":"\u12g4"}`, `{"text":"\uD83D\u"}`, `{"te\u0078t":"escaped name"}`,
	`{"k":1.5}`, `{"k":-1}`, `{"k":01}`, `{"k":99999999999999999999999}`, `{"k":"3"}`,
	`{"id":5}`, `{"text":"a"} x`, `{"text":"a"}{}`, `{"text":"a",}`, `{,}`, `{}`, ` {} `, `[]`, `"x"`,
	`{"text":"tab	in string"}`, `{"text":"unterminated}`, `{"text" "x"}`, `{"unknown":1}`, `{"text":"a"`,
	`{"text":"a\x"}`, `{"text":nul}`, `{"limit":7,"text":"é中文"}`, "",
}

// FuzzFastDecode checks that whatever fastDecode accepts, encoding/json
// accepts too, with the same result: fastDecode is only a faster way to the
// same values.
func FuzzFastDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !utf8.ValidString(body) {
			return // decode refuses it before either decoder runs
		}
		checkFast(t, body, func() fastTarget { return new(docRequest) })
		checkFast(t, body, func() fastTarget { return new(searchRequest) })
	})
}

func checkFast(t *testing.T, body string, fresh func() fastTarget) {
	fast := fresh()
	if !fastDecode([]byte(body), fast) {
		return
	}
	slow := fresh()
	if err := strictDecode([]byte(body), slow); err != nil {
		t.Fatalf("%q: fastDecode accepted what encoding/json refuses: %v", body, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q: fastDecode %+v, encoding/json %+v", body, fast, slow)
	}
}

// The fast path takes the requests clients send most; everything it gives
// up on still decodes (or fails) through encoding/json.
func TestFastDecodeTakesCommonRequests(t *testing.T) {
	for _, body := range []string{
		`{"id":"a","text":"hello world","mode":"add_if_new"}`,
		`{"text":"line\none \"quoted\""}`,
		`{"fingerprint":"00ff00ff00ff00ff","k":3,"limit":5}`,
		`{"text":"caf\u00e9 \ud83d\ude00"}`,
	} {
		if !fastDecode([]byte(body), new(docRequest)) && !fastDecode([]byte(body), new(searchRequest)) {
			t.Errorf("%q: not taken by the fast path", body)
		}
	}
	for _, body := range []string{`{"id":"a","meta":{"t":1},"text":"t"}`, `{"te\u0078t":"t"}`, `{"ID":"a"}`, `{"id":"a","id":"b"}`} {
		if fastDecode([]byte(body), new(docRequest)) {
			t.Errorf("%q: taken by the fast path", body)
		}
	}
	var q docRequest
	if !fastDecode([]byte(`{"id":"a","text":"x\ty\\"}`), &q) || q.ID != "a" || q.Text == nil || *q.Text != "x\ty\\" {
		t.Errorf("decoded %+v", q)
	}
	q = docRequest{}
	if !fastDecode([]byte(`{"id":"\u0041","text":"\u00e9\ud83d\ude00\ud800"}`), &q) || q.ID != "A" || q.Text == nil || *q.Text != "é😀\ufffd" {
		t.Errorf("decoded %+v", q)
	}
}
