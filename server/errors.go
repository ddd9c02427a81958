package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/store"
)

// requestError is a request the service refuses as malformed (400): code is
// stable for clients, msg says what was wrong.
type requestError struct{ code, msg string }

func (e *requestError) Error() string { return e.code + ": " + e.msg }

func badRequest(code, format string, args ...any) error {
	return &requestError{code: code, msg: fmt.Sprintf(format, args...)}
}

// ErrNotReady is returned while the index is still being loaded.
var ErrNotReady = errors.New("server: index not loaded yet")

// errUnauthorized is a request without the bearer token it needs.
var errUnauthorized = errors.New("server: missing or wrong bearer token")

// httpStatus maps an error to its HTTP status and stable error code: the one
// place where errors become statuses.
func httpStatus(err error) (int, string) {
	var re *requestError
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &re):
		return http.StatusBadRequest, re.code
	case errors.As(err, &mb):
		return http.StatusRequestEntityTooLarge, "body_too_large"
	case errors.Is(err, errUnauthorized):
		return http.StatusUnauthorized, "unauthorized"
	case errors.Is(err, store.ErrNotFound), errors.Is(err, errNoRoute):
		return http.StatusNotFound, "not_found"
	case errors.Is(err, errMethod):
		return http.StatusMethodNotAllowed, "method_not_allowed"
	case errors.Is(err, store.ErrExists):
		return http.StatusConflict, "already_exists"
	case errors.Is(err, index.ErrDistance), errors.Is(err, index.ErrBadID):
		return http.StatusBadRequest, "invalid_argument"
	case errors.Is(err, ErrNotReady):
		return http.StatusServiceUnavailable, "not_ready"
	case errors.Is(err, store.ErrStore), errors.Is(err, store.ErrClosed), errors.Is(err, store.ErrUnavailable):
		return http.StatusServiceUnavailable, "unavailable"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "cancelled"
	case errors.Is(err, errors.ErrUnsupported):
		return http.StatusNotImplemented, "not_implemented"
	}
	return http.StatusInternalServerError, "internal"
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// respondError writes err as {"error": {"code", "message"}} with its status.
func (s *Server) respondError(w http.ResponseWriter, r *http.Request, err error) {
	status, code := httpStatus(err)
	msg := err.Error()
	if status == http.StatusInternalServerError {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if re := (*requestError)(nil); errors.As(err, &re) {
		msg = re.msg
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="neardup"`)
	}
	respond(w, status, errorBody{errorDetail{Code: code, Message: msg}})
}

// The values of respond's headers, shared by every response (net/http
// copies them when it writes the header): Header.Set allocated both again
// for every request.
var (
	contentTypeJSON = []string{"application/json; charset=utf-8"}
	noSniff         = []string{"nosniff"}
)

func respond(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h["Content-Type"] = contentTypeJSON[:1:1] // full: an append copies
	h["X-Content-Type-Options"] = noSniff[:1:1]
	w.WriteHeader(status)
	if a, ok := v.(jsonAppender); ok {
		bp := replyPool.Get().(*[]byte)
		b := append(a.appendJSON((*bp)[:0]), '\n')
		_, _ = w.Write(b) // as below
		if cap(b) <= 1<<16 {
			*bp = b
			replyPool.Put(bp)
		}
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client may be gone; nothing to do about it
}
