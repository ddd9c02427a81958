// Package redisstore keeps the service's index and documents in Redis or a
// Redis Cluster, shared by every 'neardup serve' that opens the same address
// and key prefix, with nothing of the index held by the servers: a server
// starts at once whatever the index size, and answers a match with two
// pipelined reads (the candidate keys' entries, then the candidates'
// records), or three when the candidates are more than two: their
// prefilters are read first (64 bytes each, beside their records), and the
// records of those that the rule's prefilter rules out, far below the
// threshold, are not read. The candidate keys are the rule's
// (rule.Rule.CandidateKeys: the LSH band keys of the default method, the
// exact and prefix keys under simhash), and the
// decision is rule.Rule's, in priority order, so the verdicts are neardup
// dedup's.
//
// Writes take no global lock: an addition writes itself pending, reads the
// buckets it wrote into, settles with the concurrent additions it finds
// there, and commits with one HSETNX on its own state field. Of two
// near-duplicates added at once through any servers, exactly one is
// stored; unrelated documents never wait on each other, and on a cluster
// the writes spread over the masters with the keys.
//
// Fingerprint search (QueryFingerprint) is seed 004's: each fingerprint's
// four 16-bit blocks are keys whose values list the documents with that
// block value and the rest of their fingerprints, written and removed with
// the band entries, read in one pipelined round trip.
//
// REDIS.md, beside this file, owns the key layout (format
// "neardup-redis 5"), the argument for atomicity, the memory per document
// and the Redis settings to run with. The older replica layout (format
// "neardup-redis 3", package redisreplica, removed in issue 34) is refused
// with a line saying how to load its documents again.
package redisstore
