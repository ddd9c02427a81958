// Package keptmem is the kept set held in memory: every kept document with
// its features (fingerprint, token-sequence hash, shingle set, band keys),
// in priority order, and the tables that find the candidates of a new
// document among them, so that it gets the verdict dedup.Run would give it
// after the same documents in one run.
//
//	r, err := rule.NewRule(opt)
//	k, err := keptmem.New(r, expected)
//	m, dup, err := k.AddIfNew("doc-9", ex.Extract(text)) // m names the kept document
//
// Callers hold one: incremental runs through Files (the set of earlier
// runs, loaded from and saved to the kept-set file; 'neardup dedup --index'
// passes keptfiles.Files{} instead, which converts these files), the online
// service over an embedded store under --method simhash or with a snapshot
// (package server), and the Redis replica (store/redisreplica). Its tables are the
// prefix filter (Jaccard under simhash), the LSH bands (minhash) and a
// Hamming index of the fingerprints (Set's doc has the reasons); a Loader
// adds a store's documents at start-up in bulk.
//
// It is a package of its own, beside the batch runner (dedup) rather than
// in it, because it is built on the decision's types (package rule: Rule,
// Features, KeptMatch) and serves more than the batch. The interfaces
// incremental mode needs, rule.KeptSet and dedup.KeptFiles, are satisfied
// by Set and Files without this package importing dedup; the command wires
// them in, so imports flow one way (keptmem imports rule, never dedup). It
// is not package keptset, the kept set at scale of the default service
// (keptset.Set: candidate keys only, in parts mapped from files,
// verification data read from the store), which makes the same decision
// another way.
//
// # Formats
//
// This package owns the kept-set file (FORMAT.md; Path names it beside its
// index snapshot): its header, its framing and its checksum. Inside it,
// each document's record is the rule's encoding of Features
// (rule.Features.AppendBinary), which the stores keep too; the index
// snapshot beside it is package index's format (index/FORMAT.md). Golden
// files in testdata, written by incremental runs, pin the file byte for
// byte.
package keptmem
