package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/keptset"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// The kept set of an embedded store, under every method and with a
// snapshot, is a keptset.Set: the candidate keys in memory (parts mapped
// from Options.KeptDir), the verification data read from the store for the
// few candidates, and the snapshot's fingerprint-only documents beside them.
// The decision is the batch's (the service's tests compare the service with
// the batch under each method); the memory is the keys' (~145 bytes a
// document under MethodMinHash, BENCHMARKS.md for MethodSimHash) whatever
// the texts' lengths, and start-up maps the parts instead of reading every
// record.

// scaledSet is the Set interface over a keptset.Set (the server's reads:
// matches and Len).
type scaledSet struct{ ks *keptset.Set }

func (s scaledSet) Match(ctx context.Context, f *rule.Features) (rule.KeptMatch, bool, error) {
	return s.ks.Match(ctx, f)
}

func (s scaledSet) MatchAll(ctx context.Context, f *rule.Features, limit int) ([]rule.KeptMatch, error) {
	return s.ks.MatchAll(ctx, f, limit)
}

func (s scaledSet) Len(context.Context) (int, error) { return s.ks.Len(), nil }

// Writes go through the Server (beginScaled, deleteScaled), which orders
// them with the store's; these complete the interface.
func (s scaledSet) AddIfNew(context.Context, store.Record) (rule.KeptMatch, bool, error) {
	return rule.KeptMatch{}, false, errors.ErrUnsupported
}
func (s scaledSet) Add(context.Context, store.Record) error { return errors.ErrUnsupported }
func (s scaledSet) Remove(context.Context, string) (bool, error) {
	return false, errors.ErrUnsupported
}
func (s scaledSet) Get(context.Context, string) (store.Record, error) {
	return store.Record{}, errors.ErrUnsupported
}

// loadScaled opens the kept set over the store, with the snapshot's
// documents snap ahead of the store's (wmu held).
func (s *Server) loadScaled(ctx context.Context, snap keptset.FingerprintDocs) error {
	t0 := time.Now()
	ks, err := keptset.Open(ctx, s.rule, store.SeqRecords{Store: s.store}, keptset.Options{
		Dir: s.opt.KeptDir, Settings: Settings(s.opt.Dedup), Logger: s.log, FingerprintOnly: snap,
	})
	if err != nil {
		return fmt.Errorf("server: loading the kept set: %w", err)
	}
	s.big, s.set = ks, scaledSet{ks}
	s.seq = ks.Next()
	s.ready.Store(true)
	st := ks.Stats()
	s.log.Info("index loaded", "documents", st.Docs, "snapshot_documents", st.FingerprintOnly, "parts", st.Parts,
		"replayed", st.DeltaDocs, "part_bytes", st.PartBytes, "seconds", time.Since(t0).Seconds())
	return nil
}

// idStored reports whether id is stored, or being stored, or a live
// snapshot document's (wmu held).
func (s *Server) idStored(ctx context.Context, id string) (bool, error) {
	if s.big.PendingID(id) {
		return true, nil
	}
	if _, ok := s.big.FingerprintOnly(id); ok {
		return true, nil
	}
	return s.storeHas(ctx, id)
}

// storeHas reports whether the store holds id.
func (s *Server) storeHas(ctx context.Context, id string) (bool, error) {
	if h, ok := s.store.(interface {
		Has(context.Context, string) (bool, error)
	}); ok {
		return h.Has(ctx, id) // an engine that checks an id without reading its record (pebble)
	}
	_, err := s.store.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// beginScaled is begin's decision under a keptset.Set: the match, then,
// under wmu, the id's check, then the set and the store's queue. An
// add_if_new matches outside wmu first (its candidates' records may be read
// from disk) and under it only against the documents added meanwhile
// (keptset.Set.MatchFrom): the same verdict as a match under the lock.
func (s *Server) beginScaled(ctx context.Context, d Doc, f rule.Features, res Result) (Result, func() error, error) {
	// declined reports whether f duplicates a document of seq from and
	// above (res then names it), and the set's next.
	declined := func(from uint64) (bool, uint64, error) {
		m, dup, next, err := s.big.MatchFrom(ctx, &f, from)
		if dup {
			res.Duplicates = []rule.KeptMatch{m}
		}
		return dup, next, err
	}
	var next uint64
	if d.Mode == ModeAddIfNew {
		dup, n, err := declined(0)
		if err != nil || dup {
			return res, nil, err
		}
		next = n
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if d.Mode == ModeAddIfNew {
		if dup, _, err := declined(next); err != nil || dup {
			return res, nil, err
		}
	}
	if ok, err := s.idStored(ctx, d.ID); err != nil || ok {
		if err == nil {
			err = fmt.Errorf("%w: %q", store.ErrExists, d.ID)
		}
		return res, nil, err
	}
	if d.Mode != ModeAddIfNew {
		ms, err := s.big.MatchAll(ctx, &f, s.opt.MaxDuplicates)
		if err != nil {
			return res, nil, err
		}
		res.Duplicates = ms
	}
	seq := s.seq
	if err := s.big.Add(seq, d.ID, f); err != nil {
		return res, nil, err
	}
	s.seq++
	rec := store.Record{Seq: seq, ID: d.ID, Features: f, Meta: d.Meta}
	put := s.queuePut(context.WithoutCancel(ctx), rec)
	return res, func() error {
		err := put()
		if err != nil {
			s.big.Remove(seq)
		} else {
			s.big.Written(seq)
		}
		return err
	}, nil
}

// deleteScaled removes id from the store, then from the set.
func (s *Server) deleteScaled(ctx context.Context, id string) error {
	rec, err := s.store.Get(ctx, id)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	wait := s.queueDelete(ctx, id)
	s.wmu.Unlock()
	if err := wait(); err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.met.storeErrors.Inc()
		}
		return err
	}
	_, err = s.big.Remove(rec.Seq)
	return err
}

// searchFingerprintScaled answers a fingerprint search from the set's
// fingerprint index, naming each hit from the set (which reads the id from
// its part's file), or from the store for a part that keeps no ids.
func (s *Server) searchFingerprintScaled(ctx context.Context, fp uint64, k, limit int) ([]index.Match, error) {
	hits, err := s.big.QueryFingerprint(fp, k, 0)
	if err != nil {
		return nil, err
	}
	// An engine that reads a record's id alone (pebble) saves decoding
	// its shingle set.
	getID := func(seq uint64) (string, error) {
		rec, err := s.store.GetSeq(ctx, seq)
		return rec.ID, err
	}
	if r, ok := s.store.(interface {
		GetID(context.Context, uint64) (string, error)
	}); ok {
		getID = func(seq uint64) (string, error) { return r.GetID(ctx, seq) }
	}
	var out []index.Match
	for _, h := range hits {
		if h.Pending {
			continue // not yet in the store
		}
		if h.FingerprintOnly {
			out = append(out, index.Match{ID: h.ID, Fingerprint: h.FP, Distance: h.Distance})
			if limit > 0 && len(out) == limit {
				break
			}
			continue
		}
		id, known, err := s.big.ID(h.Seq)
		if err == nil && !known {
			id, err = getID(h.Seq)
		}
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted since the query
		}
		if err != nil {
			return nil, err
		}
		out = append(out, index.Match{ID: id, Fingerprint: h.FP, Distance: h.Distance})
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}
