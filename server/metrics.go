package server

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/neardup/neardup/keptset"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the service's Prometheus metrics, registered on the registry
// passed in Options (unregistered, and so never exported, without one).
type metrics struct {
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	routes      sync.Map // routeKey -> *routeMetrics: the vectors' children, found once
	storeErrors prometheus.Counter
	commitOps   prometheus.Histogram
}

func newMetrics(reg *prometheus.Registry, s *Server) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "neardup_http_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "neardup_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"route"}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_store_errors_total", Help: "Store writes that failed (the request changed nothing).",
		}),
		commitOps: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "neardup_store_commit_batch_size", Help: "Writes per group commit of the embedded store.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 13),
		}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.latency, m.storeErrors, m.commitOps,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "neardup_index_documents", Help: "Documents in the index (NaN while a shared store does not answer).",
			}, func() float64 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				n, err := s.Len(ctx)
				if err != nil {
					return math.NaN()
				}
				return float64(n)
			}),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "neardup_index_sketch_bytes", Help: "Bytes of shingle sets held for verification.",
			}, func() float64 { return float64(s.sketchBytes()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "neardup_index_key_bytes", Help: "Bytes of the kept set's candidate-key tables and fingerprint index (mapped parts and the delta; embedded store).",
			}, func() float64 {
				st := s.keptStats()
				return float64(st.PartBytes + st.DeltaBytes)
			}),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "neardup_keptset_matches_total", Help: "Matches of the kept set since start-up (embedded store).",
			}, func() float64 { return float64(s.keptStats().Matches) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "neardup_keptset_candidates_examined_total", Help: "Candidates the kept set's matches read and tested since start-up: over neardup_keptset_matches_total, the record reads a match costs.",
			}, func() float64 { return float64(s.keptStats().Examined) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "neardup_keptset_candidates_prefiltered_total", Help: "Candidates the kept set's prefilter ruled out since start-up, before their records were read (not in neardup_keptset_candidates_examined_total).",
			}, func() float64 { return float64(s.keptStats().Prefiltered) }),
		)
		if mc, ok := s.shared.(matchCounter); ok {
			count := func(pick func(m, e, p uint64) uint64) func() float64 {
				return func() float64 { return float64(pick(mc.MatchCounts())) }
			}
			reg.MustRegister(
				prometheus.NewCounterFunc(prometheus.CounterOpts{
					Name: "neardup_shared_store_matches_total", Help: "Matches of this server on the shared store since start-up (searches, and add_if_new's decisions; the stateless Redis index).",
				}, count(func(m, _, _ uint64) uint64 { return m })),
				prometheus.NewCounterFunc(prometheus.CounterOpts{
					Name: "neardup_shared_store_candidates_examined_total", Help: "Candidates whose records this server's matches read from the shared store since start-up: over neardup_shared_store_matches_total, the record reads a match costs.",
				}, count(func(_, e, _ uint64) uint64 { return e })),
				prometheus.NewCounterFunc(prometheus.CounterOpts{
					Name: "neardup_shared_store_candidates_prefiltered_total", Help: "Candidates this server's matches ruled out with the prefilter since start-up, before reading their records from the shared store (not in neardup_shared_store_candidates_examined_total).",
				}, count(func(_, _, p uint64) uint64 { return p })),
			)
		}
	}
	return m
}

// matchCounter is a shared store that counts what its matches read
// (redisstore.Store): the matches since it was opened, the candidates whose
// records they read, and those the prefilter ruled out before a read.
type matchCounter interface {
	MatchCounts() (matches, examined, prefiltered uint64)
}

// keptStats returns the kept set's figures, zero before it is ready or
// without one.
func (s *Server) keptStats() keptset.Stats {
	if !s.Ready() || s.big == nil { // s.big is set before ready
		return keptset.Stats{}
	}
	return s.big.Stats()
}

type routeKey struct {
	route  string
	status int
}

// routeMetrics are a route's and status's children of the request metrics.
type routeMetrics struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// route returns the request metrics of route and status: a vector's
// WithLabelValues hashes the labels and takes a lock on every call.
func (m *metrics) route(route string, status int) *routeMetrics {
	k := routeKey{route, status}
	if v, ok := m.routes.Load(k); ok {
		return v.(*routeMetrics)
	}
	v, _ := m.routes.LoadOrStore(k, &routeMetrics{
		requests: m.requests.WithLabelValues(route, strconv.Itoa(status)),
		latency:  m.latency.WithLabelValues(route),
	})
	return v.(*routeMetrics)
}

// sketchBytes returns the bytes of shingle sets held in memory: a shared
// store's replica's (the embedded store's kept set holds none: they are
// read from the store).
func (s *Server) sketchBytes() int64 {
	if r, ok := s.shared.(interface{ SketchBytes() int64 }); ok {
		return r.SketchBytes()
	}
	return 0
}

// observeCommit records a group commit of ops operations.
func (s *Server) observeCommit(ops int, err error) {
	s.met.commitOps.Observe(float64(ops))
	if err != nil {
		s.met.storeErrors.Inc()
	}
}
