package redisreplica

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// The change log (REDIS.md): a Redis stream holding every addition and
// deletion in commit order, which replicas follow.

// Entries read per round trip: logChunk when following the log, rebuildChunk
// when reading it whole.
const (
	logChunk     = 1000
	rebuildChunk = 10000
)

// streamID is the id of a stream entry, milliseconds-sequence. The zero
// value stands for "before the first entry".
type streamID struct{ ms, seq uint64 }

func parseStreamID(s string) (streamID, error) {
	a, b, ok := strings.Cut(s, "-")
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return streamID{}, fmt.Errorf("bad stream id %q", s)
	}
	return streamID{ms, seq}, nil
}

func (id streamID) String() string {
	return strconv.FormatUint(id.ms, 10) + "-" + strconv.FormatUint(id.seq, 10)
}

func (id streamID) zero() bool { return id == streamID{} }

// next is the smallest id after id.
func (id streamID) next() streamID {
	if id.seq == ^uint64(0) {
		return streamID{id.ms + 1, 0}
	}
	return streamID{id.ms, id.seq + 1}
}

// logEntry is one decoded log entry.
type logEntry struct {
	id  streamID
	del bool
	doc string
	seq uint64
	f   rule.Features // additions only
}

func decodeEntry(m redis.XMessage) (logEntry, error) {
	id, err := parseStreamID(m.ID)
	if err != nil {
		return logEntry{}, fmt.Errorf("%w: log: %w", store.ErrStoreFormat, err)
	}
	str := func(k string) string { v, _ := m.Values[k].(string); return v }
	e := logEntry{id: id, doc: str("id")}
	bad := func(what string) error {
		return fmt.Errorf("%w: log entry %s (%q): %s", store.ErrStoreFormat, m.ID, e.doc, what)
	}
	if e.seq, err = strconv.ParseUint(str("seq"), 10, 64); err != nil {
		return e, bad("seq")
	}
	switch str("op") {
	case "del":
		e.del = true
	case "add":
		if err := e.f.UnmarshalBinary([]byte(str("f"))); err != nil {
			return e, bad(err.Error())
		}
	default:
		return e, bad("op " + str("op"))
	}
	return e, nil
}

// readLog queues on c the read of the log from "from": the entry from
// itself and the logChunk entries after it, or the first logChunk entries
// when from is zero. The first entry returned tells whether the log still
// holds from (replica.applyReadLocked).
func (s *Store) readLog(ctx context.Context, c redis.Cmdable, from streamID) *redis.XMessageSliceCmd {
	if from.zero() {
		return c.XRangeN(ctx, s.logKey, "-", "+", logChunk)
	}
	return c.XRangeN(ctx, s.logKey, from.String(), "+", logChunk+1)
}
