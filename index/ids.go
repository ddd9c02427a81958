package index

import (
	"strings"
	"unsafe"

	"github.com/neardup/neardup/simhash"
)

// MaxIDBytes is the longest id an Index accepts.
const MaxIDBytes = 1<<16 - 1

// MaxItems is the most ids an Index can hold between compactions: internal ids
// are 32 bits and one value is reserved.
const MaxItems = 1<<32 - 2

// idStore maps compact internal ids (iids, 0, 1, 2, ... in order of
// insertion) to the user's string ids and back, in 4 bytes of offset and
// about 7 of hash table per id (5-byte slots at a load of 0.7) plus the id
// bytes, instead of the ~70 bytes per entry of a map[string]uint32 holding
// separately allocated strings.
//
// The ids sit back to back in one byte arena, in iid order, so id i spans
// start(i)..start(i+1). start is a 32-bit offset from the base of i's chunk of
// 65536 ids (a chunk holds at most 65536 * MaxIDBytes < 4 GiB).
//
// The reverse map is an open-addressing hash table with linear probing whose
// slots hold iids, plus a parallel array of one-byte tags (0 empty, 1
// deleted, 2..255 a hash fragment). Probes scan the tags, which are
// contiguous, and only touch the arena when a tag matches (1 in 254 for
// unrelated ids) — the layout of SwissTable (Kulukundis, CppCon 2017),
// without SIMD.
//
// idStore is not safe for concurrent use; Index guards it. Its idView is
// append-only, so a copy of it (Index versions keep one) stays valid and
// unchanging while the store grows.
type idStore struct {
	idView

	tags    []uint8
	slots   []uint32
	used    int // slots with a live entry
	deleted int // slots with tag 1
}

// An idView maps iids to ids. The arena and offsets only grow (truncate
// drops ids that were never published), so a copy of the three slice
// headers is an immutable view of the ids up to its count, safe to read
// while the store appends past it.
type idView struct {
	arena []byte
	offs  []uint32 // per iid: start minus bases[iid>>16]
	bases []uint64 // per chunk of 65536 iids: arena offset of its first id
}

const (
	tagEmpty   = 0
	tagDeleted = 1
)

func (s *idView) count() int { return len(s.offs) }

func (s *idView) start(i uint32) uint64 { return s.bases[i>>16] + uint64(s.offs[i]) }

// id returns the bytes of id i; they alias the arena and are valid until the
// next append.
func (s *idView) id(i uint32) []byte {
	e := uint64(len(s.arena))
	if int(i)+1 < len(s.offs) {
		e = s.start(i + 1)
	}
	return s.arena[s.start(i):e]
}

// view returns id i as a string that aliases the arena, without copying. The
// arena is append-only except for truncate (a failed bulk add, under the
// writer lock, of ids never published), so a view must not outlive the
// idView it was made from; use get to hand an id out.
func (s *idView) view(i uint32) string {
	b := s.id(i)
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// get returns a copy of id i.
func (s *idView) get(i uint32) string { return strings.Clone(s.view(i)) }

// appendID stores id under the next iid without touching the hash table.
func (s *idView) appendID(id string) uint32 {
	i := uint32(len(s.offs))
	if i&0xffff == 0 {
		s.bases = append(s.bases, uint64(len(s.arena)))
	}
	s.offs = append(s.offs, uint32(uint64(len(s.arena))-s.bases[i>>16]))
	s.arena = append(s.arena, id...)
	return i
}

// truncate drops the ids from iid n on (they must already be out of the hash
// table).
func (s *idView) truncate(n int) {
	if n >= len(s.offs) {
		return
	}
	s.arena = s.arena[:s.start(uint32(n))]
	s.offs = s.offs[:n]
	s.bases = s.bases[:(n+0xffff)>>16]
}

// hashID returns the 32-bit hash that picks id's home slot and its tag. It
// must agree with the inlined copy in insertRange.
func hashID(id string) (pos uint64, tag uint8) {
	h := simhash.HashString64(id)
	tag = uint8(h >> 56)
	if tag < 2 {
		tag += 2
	}
	return h & 0xffffffff, tag
}

// home maps the 32-bit hash to a slot (Lemire's multiply-shift range reduction).
func (s *idStore) home(pos uint64) int { return int(pos * uint64(len(s.slots)) >> 32) }

// lookup returns the iid of id and its slot.
func (s *idStore) lookup(id string) (iid uint32, slot int, ok bool) {
	return s.lookupIn(&s.idView, id)
}

// lookupIn is lookup with the ids of v, which may be an older view than the
// store's own: slots holding iids beyond v (added since) do not match.
func (s *idStore) lookupIn(v *idView, id string) (iid uint32, slot int, ok bool) {
	if len(s.slots) == 0 {
		return 0, -1, false
	}
	pos, tag := hashID(id)
	n := len(s.slots)
	for i := s.home(pos); ; {
		switch t := s.tags[i]; {
		case t == tagEmpty:
			return 0, -1, false
		case t == tag && int(s.slots[i]) < v.count() && v.view(s.slots[i]) == id:
			return s.slots[i], i, true
		}
		if i++; i == n {
			i = 0
		}
	}
}

// insert maps id to iid; it returns false, changing nothing, when id is
// already present.
func (s *idStore) insert(id string, iid uint32) bool {
	if s.needsRehash(1) {
		s.rehash(s.used + 1)
	}
	pos, tag := hashID(id)
	return s.insertHashed(id, iid, s.home(pos), tag)
}

func (s *idStore) insertHashed(id string, iid uint32, i int, tag uint8) bool {
	n := len(s.slots)
	free := -1
	for {
		switch t := s.tags[i]; {
		case t == tagEmpty:
			if free < 0 {
				free = i
			} else {
				s.deleted--
			}
			s.tags[free], s.slots[free] = tag, iid
			s.used++
			return true
		case t == tagDeleted:
			if free < 0 {
				free = i
			}
		case t == tag && s.view(s.slots[i]) == id:
			return false
		}
		if i++; i == n {
			i = 0
		}
	}
}

// remove deletes id and returns its iid.
func (s *idStore) remove(id string) (uint32, bool) {
	iid, slot, ok := s.lookup(id)
	if !ok {
		return 0, false
	}
	s.tags[slot] = tagDeleted
	s.used--
	s.deleted++
	return iid, true
}

// rehash resizes the table for at least live entries at a load of 0.7.
func (s *idStore) rehash(live int) {
	s.setTable(s.rehashed(live))
}

// needsRehash reports whether adding m entries would overfill the table.
func (s *idStore) needsRehash(m int) bool {
	return (s.used+s.deleted+m)*5 > len(s.slots)*4
}

// rehashed returns a copy of the table sized for at least live entries at a
// load of 0.7, leaving s unchanged, so that it can be built while readers
// use the old table and swapped in with setTable.
func (s *idStore) rehashed(live int) *idStore {
	n := max(16, live*10/7+1)
	t := &idStore{idView: s.idView, tags: make([]uint8, n), slots: make([]uint32, n)}
	for i, tg := range s.tags {
		if tg >= 2 {
			id := s.view(s.slots[i])
			pos, tag := hashID(id)
			t.insertHashed(id, s.slots[i], t.home(pos), tag)
		}
	}
	return t
}

// setTable installs the hash table of t (from rehashed).
func (s *idStore) setTable(t *idStore) {
	s.tags, s.slots, s.used, s.deleted = t.tags, t.slots, t.used, t.deleted
}

// insertRange adds ids first..count()-1 to the hash table in bulk. It hashes
// them in arena order, radix-sorts them by home slot and inserts them in slot
// order, so the table is written front to back instead of at random: at 10
// million ids this is several times faster than inserting one by one. On a
// duplicate it removes what it inserted and returns the offending id.
func (s *idStore) insertRange(first int) (dup string, ok bool) {
	m := s.count() - first
	if m <= 0 {
		return "", true
	}
	if m < 4096 {
		for i := first; i < s.count(); i++ {
			id := s.view(uint32(i))
			if !s.insert(id, uint32(i)) {
				s.removeRange(first, i)
				return strings.Clone(id), false
			}
		}
		return "", true
	}
	if s.needsRehash(m) {
		s.rehash(s.used + m)
	}
	keys := make([]uint64, m)
	vals := make([]uint32, m)
	start := s.start(uint32(first))
	for j := range m {
		i := first + j
		end := uint64(len(s.arena))
		if i+1 < s.count() {
			end = s.start(uint32(i + 1))
		}
		h := simhash.Hash64(s.arena[start:end])
		start = end
		tag := uint8(h >> 56)
		if tag < 2 {
			tag += 2
		}
		keys[j] = uint64(s.home(h&0xffffffff))<<8 | uint64(tag)
		vals[j] = uint32(i)
	}
	radixSortPairs(keys, vals, make([]uint64, m), make([]uint32, m))
	n := len(s.slots)
	for j, k := range keys {
		iid := vals[j]
		tag := uint8(k)
		free := -1
		for i := int(k >> 8); ; {
			t := s.tags[i]
			if t == tagEmpty {
				if free < 0 {
					free = i
				} else {
					s.deleted--
				}
				s.tags[free], s.slots[free] = tag, iid
				s.used++
				break
			}
			if t == tagDeleted {
				if free < 0 {
					free = i
				}
			} else if t == tag && s.view(s.slots[i]) == s.view(iid) {
				dup = strings.Clone(s.view(iid))
				for _, v := range vals[:j] {
					s.remove(s.view(v))
				}
				return dup, false
			}
			if i++; i == n {
				i = 0
			}
		}
	}
	return "", true
}

// removeRange removes ids first..end-1 from the hash table.
func (s *idStore) removeRange(first, end int) {
	for i := first; i < end; i++ {
		s.remove(s.view(uint32(i)))
	}
}

// bytes returns the memory the store holds.
func (s *idStore) bytes() int64 {
	return int64(cap(s.arena)) + 4*int64(cap(s.offs)) + 8*int64(cap(s.bases)) + 5*int64(len(s.slots))
}

// appendBytes is appendID for a byte slice.
func (s *idView) appendBytes(id []byte) uint32 {
	i := uint32(len(s.offs))
	if i&0xffff == 0 {
		s.bases = append(s.bases, uint64(len(s.arena)))
	}
	s.offs = append(s.offs, uint32(uint64(len(s.arena))-s.bases[i>>16]))
	s.arena = append(s.arena, id...)
	return i
}
