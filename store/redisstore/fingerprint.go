package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"math/bits"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/store"
)

// Fingerprint search (REDIS.md, "Fingerprint blocks"): seed 004's layout.
// A fingerprint is cut into fpBlocks blocks of fpBlockBits bits, and each
// block value is a key in Redis whose value lists the documents that have
// it: two fingerprints within 3 bits agree on at least one of the four
// blocks (pigeonhole), so a query at k <= 3 reads four keys. Within k bits
// they agree on one block up to k/4 bits, which a query at larger k probes
// (every value within k/4 bits of each block of the query): exact at any
// k, dearer past 3.
const (
	fpBlocks    = 4
	fpBlockBits = 64 / fpBlocks
	fpRestBytes = (64 - fpBlockBits) / 8 // the other 48 bits of the fingerprint
	fpEntry     = fpRestBytes + seqBytes // one entry: 11 bytes
)

// Scripts of the block keys: each takes one key on a cluster, where a
// document's four are on different slots, and all four on one Redis,
// which saves three script calls an addition.
var (
	// addFP appends the entry ARGV[n] to the block key KEYS[n], for each
	// n, unless it is there (a retried call). The value is written again
	// whole (SET), not APPENDed: APPEND leaves room to grow, up to as much
	// again.
	addFP = redis.NewScript(`
for n = 1, #KEYS do
  local v = redis.call('GET', KEYS[n]) or ''
  local e = ARGV[n]
  local i, there = 1, false
  while true do
    local p = string.find(v, e, i, true)
    if not p then break end
    if (p - 1) % 11 == 0 then there = true; break end
    i = p + 1
  end
  if not there then redis.call('SET', KEYS[n], v .. e) end
end
return 1`)
	// dropFP removes the entry ARGV[n] from the block key KEYS[n], for
	// each n, and a key left empty.
	dropFP = redis.NewScript(`
for n = 1, #KEYS do
  local v = redis.call('GET', KEYS[n])
  local e = ARGV[n]
  local i = 1
  while v do
    local p = string.find(v, e, i, true)
    if not p then break end
    if (p - 1) % 11 == 0 then
      if #v == 11 then
        redis.call('DEL', KEYS[n])
      else
        redis.call('SET', KEYS[n], string.sub(v, 1, p - 1) .. string.sub(v, p + 11))
      end
      break
    end
    i = p + 1
  end
end
return 1`)
)

// fpShift returns the shift of block t's bits in a fingerprint (block 0
// is the most significant).
func fpShift(t int) uint { return uint(64 - fpBlockBits*(t+1)) }

// fpBlock returns block t of fp.
func fpBlock(fp uint64, t int) uint16 { return uint16(fp >> fpShift(t)) }

// blockKey returns the key of value v of block t: P f<t><4 hex digits>.
func (s *Store) blockKey(t int, v uint16) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(s.p)+6)
	b = append(b, s.p...)
	b = append(b, 'f', byte('0'+t), hex[v>>12], hex[v>>8&15], hex[v>>4&15], hex[v&15])
	return string(b)
}

// fpRest returns fp without block t: the 48 other bits, in order.
func fpRest(fp uint64, t int) uint64 {
	sh := fpShift(t)
	lo := fp & (1<<sh - 1)
	hi := fp >> sh >> fpBlockBits
	return hi<<sh | lo
}

// fpJoin returns the fingerprint whose block t is v and whose other bits
// are rest (fpRest's inverse).
func fpJoin(v uint16, rest uint64, t int) uint64 {
	sh := fpShift(t)
	lo := rest & (1<<sh - 1)
	hi := rest >> sh
	return hi<<sh<<fpBlockBits | uint64(v)<<sh | lo
}

// fpEntryOf returns the entry of seq (fingerprint fp) under block t: the
// other 48 bits of fp, then seq, big-endian.
func fpEntryOf(fp uint64, t int, seq uint64) string {
	var b [fpEntry]byte
	r := fpRest(fp, t)
	for i := fpRestBytes - 1; i >= 0; i-- {
		b[i] = byte(r)
		r >>= 8
	}
	putSeq(b[fpRestBytes:], seq)
	return string(b[:])
}

// fpCalls returns the script calls that add (or, with drop, remove) the
// block entries of seq, fingerprint fp.
func (s *Store) fpCalls(seq, fp uint64, drop bool) []call {
	sc := addFP
	if drop {
		sc = dropFP
	}
	out := make([]call, fpBlocks)
	for t := range fpBlocks {
		out[t] = call{sc: sc, keys: []string{s.blockKey(t, fpBlock(fp, t))}, args: []any{fpEntryOf(fp, t, seq)}}
	}
	if s.cluster {
		return out
	}
	one := call{sc: sc}
	for _, c := range out {
		one.keys = append(one.keys, c.keys...)
		one.args = append(one.args, c.args...)
	}
	return []call{one}
}

// fpHit is a block entry within the query's distance.
type fpHit struct {
	seq, fp uint64
	d       int
}

// probes returns the values within r bits of v, v first.
func probes(dst []uint16, v uint16, r int) []uint16 {
	dst = append(dst, v)
	var rec func(from, left int, x uint16)
	rec = func(from, left int, x uint16) {
		for b := from; b < fpBlockBits; b++ {
			y := x ^ 1<<b
			dst = append(dst, y)
			if left > 1 {
				rec(b+1, left-1, y)
			}
		}
	}
	if r > 0 {
		rec(0, r, v)
	}
	return dst
}

// QueryFingerprint returns the stored documents whose fingerprints are
// within k bits of fp, nearest first, then in priority order, at most
// limit when limit > 0: one pipelined read of the block keys (four at
// k <= 3; every value within k/4 bits of each block beyond), then one of
// the hits' records and states, of which only committed ones count.
func (s *Store) QueryFingerprint(ctx context.Context, fp uint64, k, limit int) ([]index.Match, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if k < 0 || k > 32 {
		return nil, fmt.Errorf("%w: k=%d (0..32)", index.ErrDistance, k)
	}
	r := k / fpBlocks
	type probe struct {
		t int
		v uint16
	}
	var keys []string
	var ps []probe
	var vs []uint16
	for t := range fpBlocks {
		vs = probes(vs[:0], fpBlock(fp, t), r)
		for _, v := range vs {
			keys = append(keys, s.blockKey(t, v))
			ps = append(ps, probe{t, v})
		}
	}
	cmds := make([]*redis.StringCmd, len(keys))
	if err := s.g.do(ctx, func(pipe redis.Pipeliner) {
		for i, key := range keys {
			cmds[i] = pipe.Get(ctx, key)
		}
	}); err != nil {
		return nil, unavailable(err)
	}
	if err := errOf(cmds...); err != nil {
		return nil, err
	}
	var hits []fpHit
	for i, c := range cmds {
		v := c.Val()
		t, pv := ps[i].t, ps[i].v
		for ; len(v) >= fpEntry; v = v[fpEntry:] {
			var rest uint64
			for j := range fpRestBytes {
				rest = rest<<8 | uint64(v[j])
			}
			g := fpJoin(pv, rest, t)
			d := bits.OnesCount64(g ^ fp)
			if d > k {
				continue
			}
			var seq uint64
			for j := range seqBytes {
				seq = seq<<8 | uint64(v[fpRestBytes+j])
			}
			hits = append(hits, fpHit{seq: seq, fp: g, d: d})
		}
	}
	slices.SortFunc(hits, func(a, b fpHit) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.seq, b.seq)) })
	hits = slices.CompactFunc(hits, func(a, b fpHit) bool { return a.seq == b.seq })
	var out []index.Match
	const chunk = 64
	for len(hits) > 0 && (limit <= 0 || len(out) < limit) {
		n := len(hits)
		if limit > 0 {
			n = min(n, max(2*(limit-len(out)), chunk))
		}
		part := hits[:n]
		hits = hits[n:]
		cmds := make([]*redis.SliceCmd, len(part))
		if err := s.g.do(ctx, func(pipe redis.Pipeliner) {
			for i, h := range part {
				key, rf, sf := s.recordKey(h.seq)
				cmds[i] = pipe.HMGet(ctx, key, rf, sf)
			}
		}); err != nil {
			return nil, unavailable(err)
		}
		if err := errOf(cmds...); err != nil {
			return nil, err
		}
		for i, h := range part {
			vs := cmds[i].Val()
			b, _ := vs[0].(string)
			st, _ := vs[1].(string)
			if b == "" {
				s.gc.fpEntries(h.fp, h.seq)
				continue
			}
			if st == stateKilled {
				s.gc.record(h.seq)
				continue
			}
			id, fp, ok := recordHead(b)
			if !ok {
				return nil, fmt.Errorf("%w: redis record %d: bad head", store.ErrStoreFormat, h.seq)
			}
			if st != stateCommitted || fp != h.fp {
				continue
			}
			out = append(out, index.Match{ID: id, Fingerprint: h.fp, Distance: h.d})
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out, nil
}
