package store

import (
	"context"
	"errors"

	"github.com/neardup/neardup/rule"
)

// SeqRecords reads a Store's records by seq: what a kept set at scale
// (keptset.Records) reads the verification data of its candidates from.
// The service's embedded stores and the incremental batch runs' kept set
// (package keptfiles) both give it their store.
type SeqRecords struct{ Store Store }

// Record returns the id and features of the live document seq; ok is false
// when no stored record has that seq.
func (r SeqRecords) Record(ctx context.Context, seq uint64) (id string, f rule.Features, ok bool, err error) {
	rec, err := r.Store.GetSeq(ctx, seq)
	if errors.Is(err, ErrNotFound) {
		return "", rule.Features{}, false, nil
	}
	if err != nil {
		return "", rule.Features{}, false, err
	}
	return rec.ID, rec.Features, true, nil
}

// LoadFrom calls fn for every stored record whose seq is from or more, in
// ascending seq order.
func (r SeqRecords) LoadFrom(ctx context.Context, from uint64, fn func(seq uint64, id string, f *rule.Features) error) error {
	return r.Store.LoadFrom(ctx, from, func(rec Record) error { return fn(rec.Seq, rec.ID, &rec.Features) })
}
