package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/internal/redisclient"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
	"github.com/neardup/neardup/store"
)

// Format names the key layout (REDIS.md); another is refused.
const Format = "neardup-redis 5"

// oldFormats are the layouts this version no longer reads, and what they
// were: an index of one is refused with a line saying how to re-import it.
var oldFormats = map[string]string{
	"neardup-redis 3": "the replica layout (--redis-replica, --redis-direct, --method simhash), removed in issue 34",
	"neardup-redis 4": "the stateless layout before fingerprint search (no block keys)",
}

// Defaults of Options.
const (
	DefaultPrefix     = "nd:"
	DefaultCapacity   = 1 << 24
	DefaultTimeout    = time.Second
	DefaultRetries    = 3
	DefaultPendingTTL = 10 * time.Second
	DefaultPoolSize   = 128
)

// Layout limits.
const (
	seqBytes   = 5 // a band entry's sequence number: 2^40 documents ever added
	remBytes   = 2 // a band entry's tag: 16 more bits of its key
	maxSeq     = 1<<(8*seqBytes) - 1
	recordBits = 4 // 16 records to a record hash
	seqBlock   = 64
)

// Options configures a Store. The zero value means the defaults, written on
// each field.
type Options struct {
	// Dedup are the decision options (zero value: the rule's defaults). They
	// must give a rule with LSH bands (MethodMinHash, the default).
	Dedup rule.Options
	// Settings names the decision settings; every server on one index must
	// give the same (the service passes server.Settings(Dedup)). Required:
	// Open refuses an empty one.
	Settings string
	// Prefix starts every key (default DefaultPrefix), so that several
	// indexes can share one Redis.
	Prefix string
	// Capacity is the number of documents the band buckets are sized for
	// when the index is created (default DefaultCapacity): about 48 entries
	// to a bucket there. An index grown far past it stays correct, with
	// larger buckets (REDIS.md, "Sizing"). Ignored for an existing index.
	Capacity int
	// Timeout bounds each dial, read and write (default DefaultTimeout).
	Timeout time.Duration
	// Retries is how often a command failing on the network is retried,
	// with backoff from 8 ms to 512 ms (default DefaultRetries; -1: none).
	Retries int
	// PoolSize is the connections per Redis server (default DefaultPoolSize).
	PoolSize int
	// PendingTTL is how long an addition may stay undecided before other
	// servers take it for dead (its server crashed or hung) and cancel it
	// (default DefaultPendingTTL).
	PendingTTL time.Duration
	// WaitReplicas, when positive, makes every write wait until that many
	// replicas of each master hold it (Redis's WAIT, bounded by Timeout)
	// before it is acknowledged, so that a failover loses nothing
	// acknowledged; a write they do not acknowledge in time answers
	// store.ErrUnavailable. Zero (the default): no wait.
	WaitReplicas int
	// Logger receives anomalies; nil means none.
	Logger *slog.Logger

	// directMax, a test hook, replaces the constant directMax when not
	// zero (-1: the prefilters of every candidate set are read first).
	directMax int
}

func (o *Options) ensureDefaults() {
	o.Dedup.EnsureDefaults()
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Capacity <= 0 {
		o.Capacity = DefaultCapacity
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.PoolSize == 0 {
		o.PoolSize = DefaultPoolSize
	}
	if o.PendingTTL == 0 {
		o.PendingTTL = DefaultPendingTTL
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.directMax == 0 {
		o.directMax = directMax
	}
}

// Store is the index and the documents in Redis or a Redis Cluster, shared
// by every server that opens the same address and prefix, holding nothing
// of the index itself (REDIS.md). It is safe for concurrent use.
type Store struct {
	c    redis.UniversalClient
	rule *rule.Rule
	nb   int // bands per document (minhash)
	// simhash: the candidate keys are the exact key and the prefix
	// filter's (rule.Rule.CandidateKeys), not band keys.
	simhash bool
	bander  *rule.Bander // recomputes the band keys of packed records (minhash)
	cluster bool         // a Redis Cluster: a script takes the keys of one slot
	opt     Options
	log     *slog.Logger
	p       string
	bbits   uint // band bucket bits
	ibits   uint // id bucket bits

	seqKey, countKey string

	seqMu          sync.Mutex
	seqNext, seqHi uint64 // this server's block of sequence numbers: [seqNext, seqHi)

	g      *group // the pipelines of the requests' round trips
	fence  fences
	closed atomic.Bool
	metaOK atomic.Bool // the meta hash was seen since the last failure (ensureMeta)
	gc     *collector

	// prefilter: the rule has one (Jaccard verification), so records keep
	// theirs and candidates are prefiltered before their records are read.
	prefilter bool
	directMax int // Options.directMax
	// The matches since Open (MatchAll's, and add_if_new's decisions), the
	// candidates whose records they read, and those the prefilter ruled
	// out before.
	matches, examined, prefiltered atomic.Uint64
}

// Open connects to addr: "redis://host:port/db" for one server (see
// redis.ParseURL for its options), or "redis-cluster://host1:port,host2:port"
// for a Redis Cluster. It checks that the index there, if any, was made with
// the same format and settings, and records them (and the bucket sizes
// chosen for opt.Capacity) when there is none.
func Open(ctx context.Context, addr string, opt Options) (*Store, error) {
	opt.ensureDefaults()
	rl, err := rule.NewRule(opt.Dedup)
	if err != nil {
		return nil, err
	}
	if rl.Bands() == 0 && opt.Dedup.Verify != rule.VerifyJaccard {
		return nil, fmt.Errorf("%w: the Redis index finds --method simhash candidates by the prefix filter of the shingle sets, which needs --verify jaccard (not %q)", rule.ErrOptions, opt.Dedup.Verify)
	}
	if opt.Settings == "" {
		// An index recorded without them could not be checked by any
		// server: refuse before dialling.
		return nil, fmt.Errorf("%w: redisstore: Options.Settings is empty (the service passes server.Settings)", rule.ErrOptions)
	}
	c, err := dial(addr, opt)
	if err != nil {
		return nil, err
	}
	s := &Store{c: c, rule: rl, nb: rl.Bands(), simhash: rl.Bands() == 0, opt: opt, log: opt.Logger, p: opt.Prefix,
		g: &group{c: c, timeout: opt.Timeout}, prefilter: opt.Dedup.Verify == rule.VerifyJaccard, directMax: opt.directMax}
	_, s.cluster = c.(*redis.ClusterClient)
	if s.bander, err = rule.NewBander(opt.Dedup); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	slot := s.p + "{" + s.p + "}"
	s.seqKey, s.countKey = slot+"seq", slot+"count"
	if err := s.checkMeta(ctx); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	s.gc = newCollector(s)
	return s, nil
}

func dial(addr string, opt Options) (redis.UniversalClient, error) {
	c, err := redisclient.Dial(addr, redisclient.Options{Timeout: opt.Timeout, Retries: opt.Retries, PoolSize: opt.PoolSize})
	if err != nil {
		return nil, fmt.Errorf("redisstore: %w", err)
	}
	return c, nil
}

// bucketBits returns the bits of the band buckets' and the id buckets'
// numbers for capacity documents of nb bands: 24 to 48 band entries and
// 16 to 32 ids to a bucket at capacity, so that buckets stay in Redis's
// compact encoding (listpack, up to hash-max-listpack-entries: 128 by
// default) with room to grow, and a lookup scans few entries.
func bucketBits(capacity, nb int) (band, id uint) {
	if nb == 0 {
		nb = simhashKeysPerDoc
	}
	b := uint(bits.Len64(uint64(capacity * nb / 48)))
	i := uint(bits.Len64(uint64(capacity / 32)))
	return min(max(b, 4), 40), min(max(i, 4), 40)
}

// checkMeta records the format, settings and bucket bits in the meta hash,
// or checks them against what is there; the bucket bits come from the
// index, whatever this server's Capacity.
func (s *Store) checkMeta(ctx context.Context) error {
	b, i := bucketBits(s.opt.Capacity, s.nb)
	if s.bbits != 0 {
		b, i = s.bbits, s.ibits // the index's own, recorded again after a loss
	}
	key := s.p + "meta"
	// An index of an older layout is refused before anything is written
	// into its meta hash.
	old, err := s.c.HGet(ctx, key, "format").Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return unavailable(err)
	}
	if what, ok := oldFormats[old]; ok {
		return fmt.Errorf("%w: redis index %q has format %q, %s, which this version does not read: load the documents again with 'neardup import --store ADDR --redis-prefix NEW' (or delete the index's keys first)",
			store.ErrStoreFormat, s.p, old, what)
	}
	want := map[string]string{"format": Format, "settings": s.opt.Settings}
	set := map[string]string{"format": Format, "settings": s.opt.Settings,
		"bandbits": strconv.Itoa(int(b)), "idbits": strconv.Itoa(int(i))}
	pipe := s.c.Pipeline()
	for f, v := range set {
		pipe.HSetNX(ctx, key, f, v)
	}
	all := pipe.HGetAll(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil {
		return unavailable(err)
	}
	got := all.Val()
	for f, v := range want {
		if got[f] != v {
			return fmt.Errorf("%w: redis index %q has %s %q, this server uses %q", store.ErrStoreFormat, s.p, f, got[f], v)
		}
	}
	bb, err1 := strconv.Atoi(got["bandbits"])
	ib, err2 := strconv.Atoi(got["idbits"])
	if err1 != nil || err2 != nil || bb < 1 || bb > 40 || ib < 1 || ib > 40 {
		return fmt.Errorf("%w: redis index %q: bad bucket bits %q, %q", store.ErrStoreFormat, s.p, got["bandbits"], got["idbits"])
	}
	if s.bbits != 0 && (uint(bb) != s.bbits || uint(ib) != s.ibits) {
		return fmt.Errorf("%w: redis index %q: bucket bits changed under this server (%d, %d; it uses %d, %d)", store.ErrStoreFormat, s.p, bb, ib, s.bbits, s.ibits)
	}
	s.bbits, s.ibits = uint(bb), uint(ib)
	s.metaOK.Store(true)
	return nil
}

// ensureMeta checks the meta hash again before a write that follows a
// failure: a Redis that came back empty (no persistence) gets this index's
// layout recorded again before anything is written, so that a server
// started later cannot record another.
func (s *Store) ensureMeta(ctx context.Context) error {
	if s.metaOK.Load() {
		return nil
	}
	return s.checkMeta(ctx)
}

// failed notes err: after an unavailable store, the next write checks the
// meta hash first and takes a new block of sequence numbers (a Redis that
// came back empty starts its counter again: the old block could collide
// with another server's new ones).
func (s *Store) failed(err error) error {
	if errors.Is(err, store.ErrUnavailable) {
		s.metaOK.Store(false)
		s.seqMu.Lock()
		s.seqNext, s.seqHi = 0, 0
		s.seqMu.Unlock()
	}
	return err
}

// unavailable wraps a Redis error as store.ErrUnavailable (503).
func unavailable(err error) error { return redisclient.Unavailable(err) }

func (s *Store) check() error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

// Keys and members (REDIS.md).

// bandKey returns the bucket (a hash) of candidate key k, and k's field
// in it: 16 more bits of the key (below the bucket's), the tag. The
// field's value is the sequence numbers of the documents with a key of
// that bucket and tag, seqBytes each, big-endian.
func (s *Store) bandKey(k uint64) (bucket, tag string) {
	var b [remBytes]byte
	binary.BigEndian.PutUint16(b[:], uint16(k>>(64-s.bbits-8*remBytes)))
	return s.p + "b:" + strconv.FormatUint(k>>(64-s.bbits), 16), string(b[:])
}

func seqString(seq uint64) string {
	var b [seqBytes]byte
	putSeq(b[:], seq)
	return string(b[:])
}

func putSeq(b []byte, seq uint64) {
	for i := seqBytes - 1; i >= 0; i-- {
		b[i] = byte(seq)
		seq >>= 8
	}
}

// seqsOfValue appends the sequence numbers of a bucket field's value.
func seqsOfValue(dst []uint64, v string) []uint64 {
	for ; len(v) >= seqBytes; v = v[seqBytes:] {
		var seq uint64
		for i := range seqBytes {
			seq = seq<<8 | uint64(v[i])
		}
		dst = append(dst, seq)
	}
	return dst
}

// recordKey returns the hash of seq's record and its two fields: the
// record and its state. The record's prefilter is the field preField(rec).
func (s *Store) recordKey(seq uint64) (key, rec, state string) {
	n := strconv.FormatUint(seq&(1<<recordBits-1), 10)
	return s.p + "r:" + strconv.FormatUint(seq>>recordBits, 16), n, "s" + n
}

// preField returns the field of the prefilter of the record in field rec:
// written in the same command as the record and deleted with it, so that
// no record of this layout lacks it and none outlives its record. Records
// written before it was kept have none: their prefilter is unknown.
func preField(rec string) string { return "p" + rec }

// preBytes is the size of an encoded prefilter.
const preBytes = 8 * len(rule.Prefilter{})

// encodePrefilter returns the value of f's prefilter field: the prefilter
// that decoding f's record gives (rule.Features.Prefilter, a function of
// the shingle set), its words little-endian; "" when it is unknown, or
// when the rule has no prefilter (no Jaccard verification), which then
// costs no memory.
func (s *Store) encodePrefilter(f *rule.Features) string {
	if !s.prefilter {
		return ""
	}
	p := f.Prefilter()
	if !p.Known() {
		return ""
	}
	b := make([]byte, 0, preBytes)
	for _, w := range p {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return string(b)
}

// decodePrefilter returns the prefilter of a prefilter field's value; the
// zero (unknown) Prefilter, which rules nothing out, for a missing or
// malformed one.
func decodePrefilter(v string) rule.Prefilter {
	var p rule.Prefilter
	if len(v) != preBytes {
		return p
	}
	for i := range p {
		p[i] = binary.LittleEndian.Uint64([]byte(v[8*i : 8*i+8]))
	}
	return p
}

func (s *Store) idKey(id string) string {
	h := simhash.HashString64(id)
	return s.p + "i:" + strconv.FormatUint(h>>(64-s.ibits), 16)
}

// keys returns f's candidate keys: the rule's (rule.Rule.CandidateKeys),
// as the embedded kept set's.
func (s *Store) keys(f *rule.Features) []uint64 {
	return s.rule.CandidateKeys(make([]uint64, 0, s.nb), f)
}

// simhashKeysPerDoc is the candidate keys a document is taken to have
// under simhash when the buckets are sized: the exact key and the prefix
// of a 1 KB document's set (about 40 of ~200 hashes at threshold 0.8).
const simhashKeysPerDoc = 40

// wide reports a document this index cannot find candidates for: under
// simhash, a sampled shingle set (the prefix filter needs the exact set),
// which only a fingerprint search at the rule's QueryK would find.
func (s *Store) wide(f *rule.Features) error {
	if s.simhash && f.Sketch.Sampled() && !s.rule.ExactOnly(f) {
		return fmt.Errorf("%w: a sampled shingle set under --method simhash (the Redis index's prefix filter needs the exact set)", rule.ErrOptions)
	}
	return nil
}

// States of a record (the state field): absent while it is pending,
// committed, or cancelled (killed). A deleted record has no fields left.
const (
	stateCommitted = "c"
	stateKilled    = "k"
)
