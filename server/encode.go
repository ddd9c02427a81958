package server

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"sync"
)

// jsonAppender is a response body that writes its own JSON: the bytes are
// the ones encoding/json's Encoder (SetEscapeHTML(false)) writes for the
// same value, without its reflection. Search and single-document replies
// take this path: they are the service's most frequent (a k = 3 fingerprint
// search spent about as long in encoding/json as in finding its hits).
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

var replyPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendJSONString appends s as a JSON string, as encoding/json quotes it
// without HTML escaping: control characters, '"', '\\', U+2028, U+2029 and
// invalid UTF-8 take encoding/json's own path, the rest is copied.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s) // a string always encodes
			return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONFloat appends f as encoding/json writes a float64 (it must be
// finite: the callers' values are).
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func (r searchResponse) appendJSON(b []byte) []byte {
	b = append(b, `{"fingerprint":`...)
	b = appendJSONString(b, r.Fingerprint)
	b = append(b, `,"verified":`...)
	b = strconv.AppendBool(b, r.Verified)
	if r.K != nil {
		b = append(b, `,"k":`...)
		b = strconv.AppendInt(b, int64(*r.K), 10)
	}
	if r.ExactOnly {
		b = append(b, `,"exact_only":true`...)
	}
	if r.Note != "" {
		b = append(b, `,"note":`...)
		b = appendJSONString(b, r.Note)
	}
	b = append(b, `,"results":`...)
	if r.Results == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Results {
			if i > 0 {
				b = append(b, ',')
			}
			b = r.Results[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func (h *searchHit) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, h.ID)
	if h.Fingerprint != "" {
		b = append(b, `,"fingerprint":`...)
		b = appendJSONString(b, h.Fingerprint)
	}
	b = append(b, `,"distance":`...)
	b = strconv.AppendInt(b, int64(h.Distance), 10)
	b = append(b, `,"similarity":`...)
	b = appendJSONFloat(b, h.Similarity)
	if h.Jaccard != nil {
		b = append(b, `,"jaccard":`...)
		b = appendJSONFloat(b, *h.Jaccard)
	}
	if h.Exact {
		b = append(b, `,"exact":true`...)
	}
	b = append(b, `,"verified":`...)
	b = strconv.AppendBool(b, h.Verified)
	return append(b, '}')
}

func (r docResponse) appendJSON(b []byte) []byte {
	b = append(b, '{')
	if r.ID != "" {
		b = append(b, `"id":`...)
		b = appendJSONString(b, r.ID)
		b = append(b, ',')
	}
	b = append(b, `"fingerprint":`...)
	b = appendJSONString(b, r.Fingerprint)
	b = append(b, `,"stored":`...)
	b = strconv.AppendBool(b, r.Stored)
	if r.ExactOnly {
		b = append(b, `,"exact_only":true`...)
	}
	if r.Note != "" {
		b = append(b, `,"note":`...)
		b = appendJSONString(b, r.Note)
	}
	b = append(b, `,"duplicates":`...)
	if r.Duplicates == nil {
		return append(b, "null}"...)
	}
	b = append(b, '[')
	for i, d := range r.Duplicates {
		if i > 0 {
			b = append(b, ',')
		}
		// dupJSON is searchHit without the fingerprint, its fields in the
		// same order.
		h := searchHit{ID: d.ID, Distance: d.Distance, Similarity: d.Similarity, Jaccard: d.Jaccard, Exact: d.Exact,
			Verified: d.Verified}
		b = h.appendJSON(b)
	}
	return append(b, "]}"...)
}
