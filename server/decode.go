package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/neardup/neardup/internal/jsonstr"
)

// Request bodies. decode is strict (see Server.decode) and most requests
// are one flat object of a few strings around a kilobyte of text, which
// encoding/json scans a byte at a time through its state machine. fastDecode
// reads exactly that shape — an object of known lower-case member names
// whose values are strings (any escape, decoded by jsonstr as encoding/json
// decodes it; decode has checked the UTF-8 already), non-negative integers
// or null — and gives up on anything else: nested values, escaped names,
// numbers with fractions or exponents, repeated or unknown names, any
// malformed input. encoding/json then decodes the body and writes the error
// messages, so the two agree on everything fastDecode accepts
// (FuzzFastDecode checks it) and fastDecode decides nothing else.

// fastTarget is a request type that fastDecode can fill: set stores one
// member and reports whether the name and the kind of value are its own.
type fastTarget interface {
	fastSet(name []byte, v fastValue) bool
}

// fastValue is one member's value: a string, a non-negative integer, or null.
type fastValue struct {
	kind byte // 's', 'n' or '0' (null)
	s    string
	n    int
}

func (q *docRequest) fastSet(name []byte, v fastValue) bool {
	switch string(name) {
	case "id":
		return setString(&q.ID, v)
	case "text":
		return setStringPtr(&q.Text, v)
	case "mode":
		return setString(&q.Mode, v)
	}
	return false // meta is an object: encoding/json's business
}

func (q *searchRequest) fastSet(name []byte, v fastValue) bool {
	switch string(name) {
	case "text":
		return setStringPtr(&q.Text, v)
	case "fingerprint":
		return setString(&q.Fingerprint, v)
	case "k":
		switch v.kind {
		case 'n':
			q.K = &v.n
			return true
		case '0':
			q.K = nil
			return true
		}
	case "limit":
		switch v.kind {
		case 'n':
			q.Limit = &v.n
			return true
		case '0':
			q.Limit = nil
			return true
		}
	}
	return false
}

func setString(dst *string, v fastValue) bool {
	switch v.kind {
	case 's':
		*dst = v.s
		return true
	case '0':
		return true // encoding/json leaves a string unchanged on null
	}
	return false
}

func setStringPtr(dst **string, v fastValue) bool {
	switch v.kind {
	case 's':
		s := v.s
		*dst = &s
		return true
	case '0':
		*dst = nil
		return true
	}
	return false
}

// fastDecode fills t from data when data is the simple shape (see above) and
// reports whether it did; on false t may be partly filled and the caller
// must decode into a fresh value.
func fastDecode(data []byte, t fastTarget) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	var seen [8][]byte // member names, to give up on a repeated one
	nseen := 0
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		next, esc, err := jsonstr.Scan(data, i)
		if err != nil || esc {
			return false // an escaped name: rare, let encoding/json match it
		}
		name := data[i+1 : next-1]
		for _, s := range seen[:nseen] {
			if bytes.Equal(s, name) {
				return false
			}
		}
		if nseen == len(seen) {
			return false
		}
		seen[nseen] = name
		nseen++
		i = skipSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		if i >= len(data) {
			return false
		}
		var v fastValue
		switch c := data[i]; {
		case c == '"':
			next, esc, err := jsonstr.Scan(data, i)
			if err != nil {
				return false
			}
			raw := data[i+1 : next-1]
			if esc {
				v = fastValue{kind: 's', s: jsonstr.Unescape(raw)}
			} else {
				v = fastValue{kind: 's', s: string(raw)}
			}
			i = next
		case c >= '0' && c <= '9':
			j := i
			for j < len(data) && data[j] >= '0' && data[j] <= '9' {
				j++
			}
			if j < len(data) && (data[j] == '.' || data[j] == 'e' || data[j] == 'E') || (data[i] == '0' && j > i+1) {
				return false
			}
			n, err := strconv.Atoi(string(data[i:j]))
			if err != nil {
				return false
			}
			v, i = fastValue{kind: 'n', n: n}, j
		case c == 'n':
			if !bytes.HasPrefix(data[i:], []byte("null")) {
				return false
			}
			v, i = fastValue{kind: '0'}, i+4
		default:
			return false
		}
		if !t.fastSet(name, v) {
			return false
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// bodyPool holds request body buffers.
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// decode reads exactly one JSON value into v: the body is bounded, must be
// valid UTF-8 (encoding/json would replace bad bytes silently), must name
// only known fields, and must end after the value.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 {
			bodyPool.Put(buf)
		}
	}()
	if n := r.ContentLength; n > 0 && n <= s.opt.MaxBodyBytes {
		buf.Grow(int(n) + 1)
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.opt.MaxBodyBytes)); err != nil {
		if mb := (*http.MaxBytesError)(nil); errors.As(err, &mb) {
			return fmt.Errorf("the request body is larger than %d bytes, the server's limit (--max-body): %w", mb.Limit, err)
		}
		return err
	}
	data := buf.Bytes()
	if !utf8.Valid(data) {
		return badRequest("invalid_utf8", "the body is not valid UTF-8")
	}
	if t, ok := v.(fastTarget); ok {
		if fastDecode(data, t) {
			return nil
		}
		if err := resetTarget(v); err != nil {
			return err
		}
	}
	return strictDecode(data, v)
}

// resetTarget zeroes a request value that fastDecode may have partly filled.
func resetTarget(v any) error {
	switch q := v.(type) {
	case *docRequest:
		*q = docRequest{}
	case *searchRequest:
		*q = searchRequest{}
	default:
		return errors.New("server: decode: unknown request type")
	}
	return nil
}

// strictDecode is encoding/json with unknown fields and trailing data refused.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("invalid_json", "%v", err)
	}
	if err := dec.Decode(&struct{}{}); err != io.EOF {
		return badRequest("invalid_json", "data after the JSON value")
	}
	return nil
}
