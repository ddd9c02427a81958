package redisreplica

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/redisclient"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// Defaults of Options.
const (
	DefaultPrefix   = "nd:"
	DefaultTimeout  = time.Second
	DefaultRetries  = 3
	DefaultLockTTL  = 5 * time.Second
	DefaultLockWait = 10 * time.Second
)

// Format names the key layout (REDIS.md); another is refused.
const Format = "neardup-redis 3"

// Options configures a Store. The zero value means the defaults, written on
// each field.
type Options struct {
	// Dedup are the decision options (zero value: the rule's defaults); they
	// must be the service's (server.Options.Dedup).
	Dedup rule.Options
	// Settings names the decision settings stored features depend on, given
	// Dedup as normalised by EnsureDefaults (direct mode's method included);
	// every server on one index must name the same, and Open refuses
	// another. Required: the service passes server.Settings.
	Settings func(rule.Options) string
	// Plan is the table layout of the shared index; every server on one
	// Redis must use the same, and Open refuses another. Nil means Layout,
	// or when that is empty too the planner's choice for ExpectedDocs at the
	// rule's QueryK (index.Choose).
	Plan *index.Plan
	// Layout names a plan as index.ParseLayout does ("blocks:12:14").
	Layout string
	// ExpectedDocs is what the default plan is chosen for (default 1<<20).
	ExpectedDocs int
	// Prefix starts every key (default DefaultPrefix), so that several
	// indexes can share one Redis.
	Prefix string
	// Timeout bounds each dial, read and write (default DefaultTimeout).
	Timeout time.Duration
	// Retries is how often a command failing on the network is retried, with
	// backoff from 8 ms to 512 ms (default DefaultRetries; -1: none).
	Retries int
	// LockTTL is how long the write lock lives if its holder dies (default
	// DefaultLockTTL); LockWait how long a write waits for it (default
	// DefaultLockWait).
	LockTTL, LockWait time.Duration
	// Direct makes every match read Redis (the table keys and document
	// hashes) instead of a local replica of the index that follows the
	// change log (default false: the replica; REDIS.md). Servers of both
	// modes can share one index.
	Direct bool
	// Logger receives the replica's rebuilds and anomalies; nil means none.
	Logger *slog.Logger

	// testBeforeCommit, when set, is called holding the write lock just
	// before a commit's round trip.
	testBeforeCommit func()
}

// EnsureDefaults replaces zero fields by their defaults.
func (o *Options) EnsureDefaults() {
	if o.Direct && o.Dedup.Method == "" {
		// Direct mode matches through the SimHash fingerprint tables: its
		// method is simhash unless asked otherwise (and then refused).
		o.Dedup.Method = rule.MethodSimHash
	}
	o.Dedup.EnsureDefaults()
	if o.ExpectedDocs == 0 {
		o.ExpectedDocs = 1 << 20
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.LockTTL == 0 {
		o.LockTTL = DefaultLockTTL
	}
	if o.LockWait == 0 {
		o.LockWait = DefaultLockWait
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Store keeps the index in Redis or a Redis Cluster, shared by every
// server that opens the same address and prefix: it is the store and the
// set the service matches against (server.SharedStore). By default it
// matches against a local replica of the index that follows the change log
// kept in Redis; with Options.Direct every match reads Redis. The layout,
// both modes and why they are safe are in REDIS.md. It is safe for
// concurrent use.
type Store struct {
	c       redis.UniversalClient
	cluster bool
	minhash bool // MethodMinHash (replica mode only): no fingerprints, no table entries
	rule    *rule.Rule
	plan    index.Plan
	masks   []uint64 // per table: the key bits of unpermuted fingerprints
	opt     Options
	log     *slog.Logger
	p       string   // key prefix
	rep     *replica // nil in direct mode
	closed  atomic.Bool
	nonce   string        // this store's part of lock tokens
	tokens  atomic.Uint64 // the other part

	// The keys of one hash slot (REDIS.md): the write lock, the change log,
	// the sequence counter, the count of committed writes, the document count.
	lockKey, logKey, seqKey, doneKey, countKey string
}

// Open connects to addr: "redis://host:port/db" for one server (see
// redis.ParseURL for its options), or "redis-cluster://host1:port,host2:port"
// for a Redis Cluster. It checks that the index there, if any, was made with
// the same settings and plan, and records them when there is none.
func Open(ctx context.Context, addr string, opt Options) (*Store, error) {
	opt.EnsureDefaults()
	if opt.Settings == nil {
		return nil, fmt.Errorf("%w: Options.Settings is required", rule.ErrOptions)
	}
	rl, err := rule.NewRule(opt.Dedup)
	if err != nil {
		return nil, err
	}
	if m := opt.Dedup.Method; opt.Direct && m != "" && m != rule.MethodSimHash {
		return nil, fmt.Errorf("%w: direct mode reads SimHash fingerprint tables: use method simhash, or the replica", rule.ErrOptions)
	}
	plan, err := choosePlan(&opt, rl)
	if err != nil {
		return nil, err
	}
	c, err := redisclient.Dial(addr, redisclient.Options{Timeout: opt.Timeout, Retries: opt.Retries})
	if err != nil {
		return nil, fmt.Errorf("redisreplica: %w", err)
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	_, cluster := c.(*redis.ClusterClient)
	s := &Store{c: c, cluster: cluster, minhash: opt.Dedup.Method == rule.MethodMinHash, rule: rl, plan: plan, opt: opt, log: opt.Logger, p: opt.Prefix,
		nonce: hex.EncodeToString(nonce[:])}
	// {P} is a hash tag: Redis Cluster hashes only what is between the
	// braces, so these keys share a slot (and a master), and the scripts
	// that touch several of them are legal there.
	slot := s.p + "{" + s.p + "}"
	s.lockKey, s.logKey, s.seqKey, s.doneKey, s.countKey = slot+"lock", slot+"log", slot+"seq", slot+"done", slot+"count"
	for t := range plan.Tables {
		s.masks = append(s.masks, plan.KeyMask(t))
	}
	if err := s.checkMeta(ctx); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if !opt.Direct {
		s.rep = newReplica(s)
	}
	return s, nil
}

// choosePlan returns the plan of opt: given, named, or chosen for
// ExpectedDocs at the rule's QueryK.
func choosePlan(opt *Options, rl *rule.Rule) (index.Plan, error) {
	var p index.Plan
	switch {
	case opt.Plan != nil:
		p = *opt.Plan
	case opt.Layout != "" && opt.Layout != "auto":
		var err error
		if p, err = index.ParseLayout(opt.Layout); err != nil {
			return p, err
		}
	default:
		c, err := index.Choose(opt.ExpectedDocs, rl.QueryK(), 0)
		if err != nil {
			return p, err
		}
		p = c.Plan
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	if p.K < rl.QueryK() {
		return p, fmt.Errorf("%w: plan %v answers k=%d, the rule needs %d", index.ErrPlan, p, p.K, rl.QueryK())
	}
	return p, nil
}

// Plan returns the table layout of the shared index.
func (s *Store) Plan() index.Plan { return s.plan }

// checkMeta records the format, settings and plan in the meta hash, or
// checks them against what is there.
func (s *Store) checkMeta(ctx context.Context) error {
	want := map[string]string{"format": Format, "settings": s.opt.Settings(s.opt.Dedup), "plan": s.plan.String()}
	key := s.p + "meta"
	for f, v := range want {
		if err := s.c.HSetNX(ctx, key, f, v).Err(); err != nil {
			return unavailable(err)
		}
	}
	got, err := s.c.HGetAll(ctx, key).Result()
	if err != nil {
		return unavailable(err)
	}
	for f, v := range want {
		if got[f] != v {
			return fmt.Errorf("%w: redis index %q has %s %q, this server uses %q", store.ErrStoreFormat, s.p, f, got[f], v)
		}
	}
	return nil
}

// existsError adds store.ErrExists to the keptmem.Set's error for an id already
// present.
func existsError(err error) error {
	if errors.Is(err, index.ErrDuplicateID) {
		return fmt.Errorf("%w: %w", store.ErrExists, err)
	}
	return err
}

// unavailable wraps a Redis error: the store could not be reached or
// failed, so the request is answered 503.
func unavailable(err error) error { return redisclient.Unavailable(err) }

// Keys (REDIS.md).
func (s *Store) docKey(id string) string { return s.p + "d:" + id }

func (s *Store) tableKey(t int, fp uint64) string {
	return s.p + "t:" + strconv.Itoa(t) + ":" + strconv.FormatUint(fp&s.masks[t], 16)
}

func (s *Store) exactKey(h uint64) string { return s.p + "x:" + strconv.FormatUint(h, 16) }

// member is a table entry: the fingerprint (8 bytes big-endian) and the id.
func member(fp uint64, id string) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], fp)
	return string(b[:]) + id
}

func (s *Store) check() error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

// Ping implements server.SharedStore: every master must answer.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		return unavailable(cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			return c.Ping(ctx).Err()
		}))
	}
	return unavailable(s.c.Ping(ctx).Err())
}

// Sync implements server.SharedStore: in replica mode it brings the replica to the
// head of the change log (reading the whole log the first time); in direct
// mode it checks that Redis answers.
func (s *Store) Sync(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	if s.rep != nil {
		return s.rep.sync(ctx)
	}
	return s.Ping(ctx)
}

// SketchBytes returns the bytes of shingle sets the replica holds (0 in
// direct mode, or before the replica is loaded).
func (s *Store) SketchBytes() int64 {
	if s.rep == nil {
		return 0
	}
	if k := s.rep.kept.Load(); k != nil {
		return k.SketchBytes()
	}
	return 0
}

// Close implements store.Store.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if s.rep != nil {
		s.rep.close()
	}
	return s.c.Close()
}

// Len implements server.Set: the replica's size, or the counter kept beside the
// documents.
func (s *Store) Len(ctx context.Context) (int, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	if s.rep != nil {
		return s.rep.len(ctx)
	}
	n, err := s.c.Get(ctx, s.countKey).Int()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, unavailable(err)
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, id string) (store.Record, error) {
	if err := s.check(); err != nil {
		return store.Record{}, err
	}
	if s.rep != nil {
		return s.rep.get(ctx, id)
	}
	vs, err := s.c.HMGet(ctx, s.docKey(id), "seq", "f", "m").Result()
	if err != nil {
		return store.Record{}, unavailable(err)
	}
	r, ok, err := decodeDoc(id, vs)
	if err == nil && !ok {
		err = fmt.Errorf("%w: %q", store.ErrNotFound, id)
	}
	return r, err
}

// decodeDoc decodes the fields seq, f and optionally m of a document hash;
// ok is false when the hash does not exist.
func decodeDoc(id string, vs []any) (store.Record, bool, error) {
	seqS, _ := vs[0].(string)
	fS, _ := vs[1].(string)
	if seqS == "" || fS == "" {
		return store.Record{}, false, nil
	}
	seq, err := strconv.ParseUint(seqS, 10, 64)
	if err != nil {
		return store.Record{}, false, fmt.Errorf("%w: document %q: seq %q", store.ErrStoreFormat, id, seqS)
	}
	r := store.Record{Seq: seq, ID: id}
	if err := r.Features.UnmarshalBinary([]byte(fS)); err != nil {
		return store.Record{}, false, fmt.Errorf("%w: document %q: %w", store.ErrStoreFormat, id, err)
	}
	if len(vs) > 2 {
		if m, _ := vs[2].(string); m != "" {
			r.Meta = []byte(m)
		}
	}
	return r, true, nil
}

// Put implements store.Store: r is written with its own Seq, under the write
// lock, and appended to the change log like every write.
func (s *Store) Put(ctx context.Context, r store.Record) error {
	if err := s.check(); err != nil {
		return err
	}
	if s.rep != nil {
		return s.rep.submit(ctx, &redisOp{kind: opPut, rec: r}).err
	}
	return s.locked(ctx, func(ctx context.Context, token string, _ lockRead) error {
		return s.writeDirect(ctx, token, r)
	})
}

// writeDirect writes r (direct mode, holding the lock) unless its id is
// stored.
func (s *Store) writeDirect(ctx context.Context, token string, r store.Record) error {
	n, err := s.c.Exists(ctx, s.docKey(r.ID)).Result()
	if err != nil {
		return unavailable(err)
	}
	if n > 0 {
		return fmt.Errorf("%w: %q", store.ErrExists, r.ID)
	}
	_, err = s.commit(ctx, token, []change{{rec: r}})
	return err
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, id string) error {
	ok, err := s.Remove(ctx, id)
	if err == nil && !ok {
		err = fmt.Errorf("%w: %q", store.ErrNotFound, id)
	}
	return err
}

// GetSeq implements store.Store by a LoadFrom scan: Redis keeps no index by
// sequence number, and nothing reads one through a Store, which
// matches against its own index rather than an in-memory kept set.
func (s *Store) GetSeq(ctx context.Context, seq uint64) (store.Record, error) {
	var r store.Record
	first := errors.New("first record read")
	err := s.LoadFrom(ctx, seq, func(rec store.Record) error { r = rec; return first })
	switch {
	case errors.Is(err, first) && r.Seq == seq:
		return r, nil
	case err != nil && !errors.Is(err, first):
		return store.Record{}, err
	}
	return store.Record{}, fmt.Errorf("%w: seq %d", store.ErrNotFound, seq)
}

// Load implements store.Store: every document hash, in sequence order. On a
// cluster each master is scanned.
func (s *Store) Load(ctx context.Context, fn func(store.Record) error) error {
	return s.LoadFrom(ctx, 0, fn)
}

// LoadFrom implements store.Store: Load, which reads every document hash,
// calling fn from seq on.
func (s *Store) LoadFrom(ctx context.Context, seq uint64, fn func(store.Record) error) error {
	if err := s.check(); err != nil {
		return err
	}
	var (
		mu  sync.Mutex // guards ids: ForEachMaster scans the masters at once
		ids []string
	)
	scan := func(ctx context.Context, c redis.Cmdable) error {
		it := c.Scan(ctx, 0, s.p+"d:*", 1000).Iterator()
		var mine []string
		for it.Next(ctx) {
			mine = append(mine, strings.TrimPrefix(it.Val(), s.p+"d:"))
		}
		mu.Lock()
		ids = append(ids, mine...)
		mu.Unlock()
		return it.Err()
	}
	var err error
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	} else {
		err = scan(ctx, s.c)
	}
	if err != nil {
		return unavailable(err)
	}
	rs, err := s.fetch(ctx, ids)
	if err != nil {
		return err
	}
	rs = slices.DeleteFunc(rs, func(r store.Record) bool { return r.Seq < seq })
	slices.SortFunc(rs, func(a, b store.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	for i, r := range rs {
		if i%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// fetch reads the document hashes of ids in one pipeline (meta included);
// ids without one are left out.
func (s *Store) fetch(ctx context.Context, ids []string) ([]store.Record, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.c.Pipeline()
	cmds := make([]*redis.SliceCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HMGet(ctx, s.docKey(id), "seq", "f", "m")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, unavailable(err)
	}
	out := make([]store.Record, 0, len(ids))
	for i, c := range cmds {
		r, ok, err := decodeDoc(ids[i], c.Val())
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}
