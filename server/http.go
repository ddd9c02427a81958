package server

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"net/http"
	"os"
	"path"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/measure"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
)

// Handler returns the HTTP API (/v1, see openapi.yaml), the health and
// metrics endpoints and the web page at /.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/documents", s.handleAdd)
	mux.HandleFunc("POST /v1/documents:batch", s.handleBatch)
	mux.HandleFunc("GET /v1/documents/{id}", s.read(s.handleGet))
	mux.HandleFunc("DELETE /v1/documents/{id}", s.write(s.handleDelete))
	mux.HandleFunc("POST /v1/search", s.read(s.handleSearch))
	mux.HandleFunc("POST /v1/fingerprint", s.read(s.handleFingerprint))
	mux.HandleFunc("POST /v1/compare", s.read(s.handleCompare))
	mux.HandleFunc("GET /v1/stats", s.read(s.handleStats))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		respond(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := s.CheckReady(r.Context()); err != nil {
			s.respondError(w, r, err)
			return
		}
		respond(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	if s.opt.Registry != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(s.opt.Registry, promhttp.HandlerOpts{Registry: s.opt.Registry}))
	}
	s.registerPage(mux)
	return s.instrument(s.routeErrors(mux))
}

// Errors of requests that match no route.
var (
	errNoRoute = errors.New("server: no such route")
	errMethod  = errors.New("server: method not allowed on this route")
)

// routeErrors answers requests that match no pattern of mux with the API's
// JSON error body (404 not_found, or 405 method_not_allowed with the Allow
// header the mux computes) instead of the mux's plain text.
func (s *Server) routeErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != cleanPath(r.URL.Path) {
			// The mux would redirect to the cleaned path (GET
			// /v1/documents/.. to /v1/): no route of the API has such a
			// path, so it is not found, in JSON, without a Location.
			s.respondError(w, r, fmt.Errorf("%w: %s %s", errNoRoute, r.Method, r.URL.Path))
			return
		}
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// Let the mux decide between 404 and 405 (and set Allow), but keep
		// its body out.
		probe := &headerProbe{header: w.Header()}
		mux.ServeHTTP(probe, r)
		w.Header().Del("Content-Type")
		w.Header().Del("X-Content-Type-Options")
		err := fmt.Errorf("%w: %s %s", errNoRoute, r.Method, r.URL.Path)
		if probe.status == http.StatusMethodNotAllowed {
			err = fmt.Errorf("%w: %s %s (allowed: %s)", errMethod, r.Method, r.URL.Path, w.Header().Get("Allow"))
		}
		s.respondError(w, r, err)
	})
}

// cleanPath is p as http.ServeMux cleans it before matching (path.Clean,
// keeping a trailing slash); the mux redirects a request whose path differs.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// headerProbe is a ResponseWriter that shares the real header map and
// records the status, discarding the body.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header { return p.header }

func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }

func (p *headerProbe) WriteHeader(code int) { p.status = code }

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// instrument logs every request and counts it by route pattern and status.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		d := time.Since(t0)
		route := r.Pattern // set by the mux on r
		if route == "" {
			route = "unmatched"
		}
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		m := s.met.route(route, sw.status)
		m.requests.Inc()
		m.latency.Observe(d.Seconds())
		if s.log.Enabled(r.Context(), slog.LevelInfo) { // the arguments cost allocations
			// Attributes rather than alternating arguments: no value boxed in
			// an interface, no slice of them (a few us of each request).
			s.log.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("method", r.Method),
				slog.String("path", r.URL.Path), slog.String("route", route), slog.Int("status", sw.status),
				slog.Float64("ms", float64(d.Microseconds())/1000), slog.String("remote", r.RemoteAddr))
		}
	})
}

// authorized reports whether r carries the bearer token, when one is set.
func (s *Server) authorized(r *http.Request, write bool) bool {
	if s.opt.Token == "" || (!write && !s.opt.TokenReads) {
		return true
	}
	// RFC 7235 section 2.1: the scheme is case-insensitive and one or more
	// spaces separate it from the credentials.
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	got = strings.TrimLeft(got, " ")
	return ok && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(got), []byte(s.opt.Token)) == 1
}

func (s *Server) guard(write bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r, write) {
			s.respondError(w, r, errUnauthorized)
			return
		}
		h(w, r)
	}
}

func (s *Server) read(h http.HandlerFunc) http.HandlerFunc  { return s.guard(false, h) }
func (s *Server) write(h http.HandlerFunc) http.HandlerFunc { return s.guard(true, h) }

type docRequest struct {
	ID   string          `json:"id"`
	Text *string         `json:"text"`
	Meta json.RawMessage `json:"meta"`
	Mode string          `json:"mode"`
}

// doc validates the request, before anything is touched.
func (q *docRequest) doc(defaultMode string) (Doc, error) {
	mode := q.Mode
	if mode == "" {
		mode = defaultMode
	}
	switch mode {
	case ModeAdd, ModeCheck, ModeAddIfNew:
	default:
		return Doc{}, badRequest("invalid_argument", "mode %q (want add, check or add_if_new)", q.Mode)
	}
	if q.Text == nil || strings.TrimSpace(*q.Text) == "" {
		return Doc{}, badRequest("invalid_argument", "text is missing or empty")
	}
	if q.ID == "" && mode != ModeCheck {
		return Doc{}, badRequest("invalid_argument", "id is missing or empty")
	}
	if len(q.ID) > index.MaxIDBytes {
		return Doc{}, badRequest("invalid_argument", "id is %d bytes, at most %d", len(q.ID), index.MaxIDBytes)
	}
	meta := q.Meta
	if bytes.Equal(bytes.TrimSpace(meta), []byte("null")) {
		meta = nil
	}
	if len(meta) > 0 {
		if meta = bytes.TrimSpace(meta); meta[0] != '{' {
			return Doc{}, badRequest("invalid_argument", "meta must be a JSON object")
		}
		var c bytes.Buffer
		if err := json.Compact(&c, meta); err != nil {
			return Doc{}, badRequest("invalid_json", "meta: %v", err)
		}
		meta = c.Bytes()
	}
	return Doc{ID: q.ID, Text: *q.Text, Meta: meta, Mode: mode}, nil
}

type dupJSON struct {
	ID         string   `json:"id"`
	Distance   int      `json:"distance"`
	Similarity float64  `json:"similarity"`
	Jaccard    *float64 `json:"jaccard,omitempty"`
	Exact      bool     `json:"exact,omitempty"`
	// Verified is false for a match against a fingerprint-only document
	// (from the start-up snapshot): only the fingerprint distance was
	// tested.
	Verified bool `json:"verified"`
}

type docResponse struct {
	ID          string `json:"id,omitempty"`
	Fingerprint string `json:"fingerprint"`
	Stored      bool   `json:"stored"`
	exactOnlyJSON
	Duplicates []dupJSON `json:"duplicates"`
}

// exactOnlyJSON marks, in a reply, a text without features (punctuation or
// stopwords only: fingerprint 0, like every such text), which the rule
// matches against exact copies only (rule.Rule.ExactOnly).
type exactOnlyJSON struct {
	ExactOnly bool   `json:"exact_only,omitempty"`
	Note      string `json:"note,omitempty"`
}

// noteExactOnly is the note of an exact-only text.
const noteExactOnly = "no features: matches exact copies only"

func exactOnly(b bool) exactOnlyJSON {
	if !b {
		return exactOnlyJSON{}
	}
	return exactOnlyJSON{ExactOnly: true, Note: noteExactOnly}
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func fpString(fp uint64) string { return simhash.Fingerprint(fp).String() }

func matchesJSON(ms []rule.KeptMatch) []dupJSON {
	out := make([]dupJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, dupJSON{ID: m.ID, Distance: m.Distance, Similarity: simhash.Similarity(m.Distance, 64),
			Jaccard: finite(m.Score), Exact: m.Exact, Verified: !m.Unverified})
	}
	return out
}

func resultJSON(r Result) docResponse {
	return docResponse{ID: r.ID, Fingerprint: fpString(r.FP), Stored: r.Stored, exactOnlyJSON: exactOnly(r.ExactOnly),
		Duplicates: matchesJSON(r.Duplicates)}
}

func (s *Server) handleAdd(w http.ResponseWriter, r *http.Request) {
	var q docRequest
	if err := s.decode(w, r, &q); err != nil {
		s.respondError(w, r, err)
		return
	}
	d, err := q.doc(ModeAdd)
	if err == nil && !s.authorized(r, d.Mode != ModeCheck) {
		err = errUnauthorized
	}
	if err != nil {
		s.respondError(w, r, err)
		return
	}
	res, err := s.Add(r.Context(), d)
	if err != nil {
		s.respondError(w, r, err)
		return
	}
	status := http.StatusOK
	if res.Stored {
		status = http.StatusCreated
	}
	respond(w, status, resultJSON(res))
}

type batchRequest struct {
	Mode      string       `json:"mode"`
	Documents []docRequest `json:"documents"`
}

type batchItem struct {
	Status int `json:"status"`
	// ID is the document's (also of one refused with an error, so a
	// client can tell which); it shadows docResponse's.
	ID string `json:"id,omitempty"`
	*docResponse
	Error *errorDetail `json:"error,omitempty"`
}

// handleBatch decides on every document in order, as if each had been posted
// alone; a malformed batch is refused whole before anything is decided.
func (s *Server) handleBatch(w http.ResponseWriter, r *http.Request) {
	var q batchRequest
	if err := s.decode(w, r, &q); err != nil {
		s.respondError(w, r, err)
		return
	}
	if len(q.Documents) == 0 || len(q.Documents) > s.opt.MaxBatch {
		s.respondError(w, r, badRequest("invalid_argument", "%d documents: send 1 to %d", len(q.Documents), s.opt.MaxBatch))
		return
	}
	def := q.Mode
	if def == "" {
		def = ModeAdd
	}
	docs := make([]Doc, len(q.Documents))
	writes := false
	for i := range q.Documents {
		d, err := q.Documents[i].doc(def)
		if err != nil {
			var re *requestError
			errors.As(err, &re)
			s.respondError(w, r, badRequest(re.code, "document %d: %s", i, re.msg))
			return
		}
		docs[i] = d
		writes = writes || d.Mode != ModeCheck
	}
	if !s.authorized(r, writes) {
		s.respondError(w, r, errUnauthorized)
		return
	}
	out := make([]batchItem, len(docs))
	results, errs := s.AddBatch(r.Context(), docs)
	for i, res := range results {
		if err := errs[i]; err != nil {
			status, code := httpStatus(err)
			out[i] = batchItem{Status: status, ID: docs[i].ID, Error: &errorDetail{Code: code, Message: err.Error()}}
			continue
		}
		rj := resultJSON(res)
		out[i] = batchItem{Status: http.StatusOK, ID: docs[i].ID, docResponse: &rj}
		if res.Stored {
			out[i].Status = http.StatusCreated
		}
	}
	respond(w, http.StatusOK, map[string]any{"results": out})
}

type getResponse struct {
	ID          string          `json:"id"`
	Fingerprint string          `json:"fingerprint"`
	Seq         *uint64         `json:"seq,omitempty"`    // absent for a fingerprint-only document
	Tokens      *uint32         `json:"tokens,omitempty"` // absent for a fingerprint-only document
	Meta        json.RawMessage `json:"meta,omitempty"`
	// FingerprintOnly marks a document of the start-up snapshot: only its
	// fingerprint is known, no verification data (Note says so in words).
	FingerprintOnly bool `json:"fingerprint_only,omitempty"`
	// ExactOnly marks a text without features, which matches exact copies
	// only (Note says so in words).
	ExactOnly bool   `json:"exact_only,omitempty"`
	Note      string `json:"note,omitempty"`
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	rec, err := s.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.respondError(w, r, err)
		return
	}
	g := getResponse{ID: rec.ID, Fingerprint: fpString(rec.Features.FP), Meta: rec.Meta}
	if rec.Features.FingerprintOnly {
		g.FingerprintOnly = true
		g.Note = "fingerprint only, from the start-up snapshot: no verification data, so its matches are unverified"
	} else {
		g.Seq, g.Tokens = &rec.Seq, &rec.Features.Tokens
		if s.rule.ExactOnly(&rec.Features) {
			g.ExactOnly, g.Note = true, noteExactOnly
		}
	}
	respond(w, http.StatusOK, g)
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.Delete(r.Context(), id); err != nil {
		s.respondError(w, r, err)
		return
	}
	respond(w, http.StatusOK, map[string]any{"id": id, "deleted": true})
}

type searchRequest struct {
	Text        *string `json:"text"`
	Fingerprint string  `json:"fingerprint"`
	K           *int    `json:"k"`
	// Limit is nil when absent (DefaultSearchLimit); 0 is refused, not
	// taken for the default.
	Limit *int `json:"limit"`

	fp simhash.Fingerprint // Fingerprint parsed, by searchValid
}

type searchHit struct {
	ID          string   `json:"id"`
	Fingerprint string   `json:"fingerprint,omitempty"`
	Distance    int      `json:"distance"`
	Similarity  float64  `json:"similarity"`
	Jaccard     *float64 `json:"jaccard,omitempty"`
	Exact       bool     `json:"exact,omitempty"`
	Verified    bool     `json:"verified"` // as in dupJSON; false for every fingerprint search hit
}

type searchResponse struct {
	Fingerprint string `json:"fingerprint"`
	Verified    bool   `json:"verified"`
	K           *int   `json:"k,omitempty"`
	exactOnlyJSON
	Results []searchHit `json:"results"`
}

// handleSearch: by text, the stored documents the text duplicates under the
// rule (verified, but for fingerprint-only documents: the reply's verified is
// then false, and so is each such hit's); by fingerprint, the stored fingerprints within k bits,
// nearest first (nothing to verify without text).
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	var q searchRequest
	if err := s.decode(w, r, &q); err != nil {
		s.respondError(w, r, err)
		return
	}
	if err := s.searchValid(&q); err != nil {
		s.respondError(w, r, err)
		return
	}
	if q.Text != nil {
		res, err := s.Search(r.Context(), *q.Text, *q.Limit)
		if err != nil {
			s.respondError(w, r, err)
			return
		}
		hits := make([]searchHit, 0, len(res.Duplicates))
		all := true
		for _, d := range matchesJSON(res.Duplicates) {
			hits = append(hits, searchHit{ID: d.ID, Distance: d.Distance, Similarity: d.Similarity, Jaccard: d.Jaccard,
				Exact: d.Exact, Verified: d.Verified})
			all = all && d.Verified
		}
		respond(w, http.StatusOK, searchResponse{Fingerprint: fpString(res.FP), Verified: all,
			exactOnlyJSON: exactOnly(res.ExactOnly), Results: hits})
		return
	}
	fp := q.fp
	k := s.rule.QueryK()
	if q.K != nil {
		k = *q.K
	}
	ms, err := s.SearchFingerprint(r.Context(), uint64(fp), k, *q.Limit)
	if err != nil {
		s.respondError(w, r, err)
		return
	}
	hits := make([]searchHit, 0, len(ms))
	for _, m := range ms {
		hits = append(hits, searchHit{ID: m.ID, Fingerprint: fpString(m.Fingerprint), Distance: m.Distance,
			Similarity: simhash.Similarity(m.Distance, 64)})
	}
	respond(w, http.StatusOK, searchResponse{Fingerprint: fpString(uint64(fp)), Verified: false, K: &k, Results: hits})
}

func (s *Server) searchValid(q *searchRequest) error {
	if (q.Text == nil) == (q.Fingerprint == "") {
		return badRequest("invalid_argument", "give either text or fingerprint")
	}
	if q.Text != nil && strings.TrimSpace(*q.Text) == "" {
		return badRequest("invalid_argument", "text is empty")
	}
	if q.Text != nil && q.K != nil {
		return badRequest("invalid_argument", "k applies to fingerprint search; text search uses the dedup rule")
	}
	if q.Fingerprint != "" {
		fp, err := simhash.Parse(q.Fingerprint)
		if err != nil {
			return badRequest("invalid_argument", "fingerprint: %v", err)
		}
		q.fp = fp
	}
	if q.K != nil && (*q.K < 0 || *q.K > s.rule.QueryK()) {
		return badRequest("invalid_argument", "k %d outside 0..%d", *q.K, s.rule.QueryK())
	}
	if q.Limit == nil {
		limit := DefaultSearchLimit
		q.Limit = &limit
	}
	if *q.Limit < 1 || *q.Limit > 1000 {
		return badRequest("invalid_argument", "limit %d outside 1..1000 (leave it out for %d)", *q.Limit, DefaultSearchLimit)
	}
	return nil
}

type textRequest struct {
	Text *string `json:"text"`
}

func (s *Server) handleFingerprint(w http.ResponseWriter, r *http.Request) {
	var q textRequest
	if err := s.decode(w, r, &q); err != nil {
		s.respondError(w, r, err)
		return
	}
	if q.Text == nil || strings.TrimSpace(*q.Text) == "" {
		s.respondError(w, r, badRequest("invalid_argument", "text is missing or empty"))
		return
	}
	f := s.extract(*q.Text)
	out := map[string]any{"fingerprint": fpString(f.FP), "bits": simhash.Bits(f.FP, 64),
		"tokens": f.Tokens, "empty": f.Empty, "profile": s.opt.Dedup.Profile}
	if s.rule.ExactOnly(&f) {
		out["exact_only"], out["note"] = true, noteExactOnly
	}
	respond(w, http.StatusOK, out)
}

type compareRequest struct {
	A *string `json:"a"`
	B *string `json:"b"`
}

type featureJSON struct {
	Text   string  `json:"text"`
	Weight float64 `json:"weight"`
}

type sideJSON struct {
	Fingerprint string `json:"fingerprint"`
	Bits        string `json:"bits"`
	Tokens      uint32 `json:"tokens"`
	exactOnlyJSON
	Features []featureJSON `json:"features"`
}

type compareResponse struct {
	A             sideJSON `json:"a"`
	B             sideJSON `json:"b"`
	Distance      int      `json:"distance"`
	Similarity    float64  `json:"similarity"`
	DifferingBits []int    `json:"differing_bits"`
	Cosine        *float64 `json:"cosine"`
	Jaccard       *float64 `json:"jaccard"`
	Duplicate     bool     `json:"duplicate"`
	K             int      `json:"k"`
	Threshold     float64  `json:"threshold"`
}

// handleCompare compares two texts: SimHash distance and the bits that
// differ (bit 0 is the least significant), the cosine of their weighted
// feature vectors, the Jaccard of their shingle sets, and the rule's verdict.
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	var q compareRequest
	if err := s.decode(w, r, &q); err != nil {
		s.respondError(w, r, err)
		return
	}
	if q.A == nil || q.B == nil || strings.TrimSpace(*q.A) == "" || strings.TrimSpace(*q.B) == "" {
		s.respondError(w, r, badRequest("invalid_argument", "a and b must both be non-empty texts"))
		return
	}
	fa, fb := s.extract(*q.A), s.extract(*q.B)
	va, sa := s.side(*q.A, &fa)
	vb, sb := s.side(*q.B, &fb)
	d := simhash.Distance(fa.FP, fb.FP)
	var diff []int
	for x := fa.FP ^ fb.FP; x != 0; x &= x - 1 {
		diff = append(diff, bits.TrailingZeros64(x))
	}
	respond(w, http.StatusOK, compareResponse{A: sa, B: sb, Distance: d, Similarity: simhash.Similarity(d, 64),
		DifferingBits: append([]int{}, diff...), Cosine: finite(measure.Cosine(va, vb)),
		Jaccard: finite(s.rule.Score(&fa, &fb)), Duplicate: s.rule.Duplicates(&fa, &fb),
		K: s.rule.PairK(&fa, &fb), Threshold: s.rule.Threshold()})
}

// side returns the weighted feature vector of text and its description with
// its ten heaviest features.
func (s *Server) side(text string, f *rule.Features) (measure.Vector, sideJSON) {
	fs := s.profile.Features(text)
	terms := make([]measure.Term, 0, len(fs))
	for _, x := range fs {
		terms = append(terms, measure.Term{Key: x.Hash, Weight: x.Weight})
	}
	// Heaviest first, ties in text order.
	top := make([]featureJSON, 0, len(fs))
	for _, x := range fs {
		top = append(top, featureJSON{Text: x.Text, Weight: x.Weight})
	}
	sortFeatures(top)
	if len(top) > 10 {
		top = top[:10]
	}
	return measure.NewVector(terms), sideJSON{Fingerprint: fpString(f.FP), Bits: simhash.Bits(f.FP, 64),
		Tokens: f.Tokens, exactOnlyJSON: exactOnly(s.rule.ExactOnly(f)), Features: top}
}

// statsSettings is what /v1/stats reports of the decision settings: the
// method's own (MinHash's permutations, bands and rows; SimHash's
// distances), the verification's, and the profile, which makes the
// fingerprints a fingerprint search compares under either method.
func statsSettings(o rule.Options) map[string]any {
	o.EnsureDefaults()
	m := map[string]any{"method": o.Method, "profile": o.Profile, "verify": o.Verify,
		"threshold": o.Threshold, "shingle": o.Shingle}
	if o.Method == rule.MethodMinHash {
		bands, rows := o.LSHShape()
		m["perms"], m["bands"], m["rows"] = o.Perms, bands, rows
	} else {
		m["k"], m["k_short"], m["short_tokens"] = max(o.K, 0), max(o.KShort, 0), o.ShortTokens
	}
	return m
}

func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	n, err := s.Len(r.Context())
	if err != nil {
		s.respondError(w, r, err)
		return
	}
	sk := s.sketchBytes()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := map[string]any{
		"documents":    n,
		"ready":        s.Ready(),
		"sketch_bytes": sk,
		// Documents of the start-up snapshot: fingerprints only, no
		// verification data (counted in documents too).
		"fingerprint_only_documents": s.FingerprintOnly(),
		"heap_bytes":                 ms.HeapAlloc,
		"uptime_seconds":             time.Since(s.start).Seconds(),
		"settings":                   statsSettings(s.opt.Dedup),
	}
	if n > 0 {
		st["sketch_bytes_per_document"] = float64(sk) / float64(n)
		st["heap_bytes_per_document"] = float64(ms.HeapAlloc) / float64(n)
	}
	if s.big != nil {
		// The kept set's parts, which merges keep few (keptset's notes).
		ks := s.big.Stats()
		st["kept_set"] = map[string]any{"parts": ks.Parts, "part_bytes": ks.PartBytes, "delta_documents": ks.DeltaDocs,
			"merges": ks.Merges, "matches": ks.Matches, "candidates_examined": ks.Examined,
			"candidates_prefiltered": ks.Prefiltered,
			// --method simhash: candidates of prefix keys dropped on their
			// fingerprints before any read, and the documents found by
			// fingerprint distance (keptset's notes).
			"candidates_fingerprint_filtered": ks.FPFiltered, "fingerprint_index_documents": ks.Wide}
	}
	if mc, ok := s.shared.(matchCounter); ok { // the stateless Redis index
		m, e, p := mc.MatchCounts()
		st["shared_store"] = map[string]any{"matches": m, "candidates_examined": e, "candidates_prefiltered": p}
	}
	if b, ok := s.store.(interface{ Size() int64 }); ok { // BoltStore, PebbleStore
		size := b.Size()
		st["store_bytes"] = size
		if n > 0 {
			st["store_bytes_per_document"] = float64(size) / float64(n)
		}
	}
	if h, err := os.Hostname(); err == nil {
		st["host"] = h
	}
	respond(w, http.StatusOK, st)
}
