package index

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// A Plan is a table layout for finding every fingerprint within K bits
// (Manku, Jain, Das Sarma 2007, section 3.1). The 64 bits are split into
// contiguous blocks; each table is keyed by a subset of the blocks. Two
// fingerprints within K bits differ in at most K blocks, so if every set of K
// blocks misses the key blocks of at least one table, the two agree exactly on
// that table's key: searching each table for the query's key finds them all.
//
// A Plan is a value; it is safe to share.
type Plan struct {
	// K is the largest Hamming distance the plan answers exactly.
	K int
	// Blocks are the block widths in bits, most significant block first. They
	// sum to 64.
	Blocks []int
	// Tables lists, for each table, the indices of the blocks that form its key,
	// in ascending order.
	Tables [][]int
}

// BlockPlan returns the plan that splits 64 bits into the given number of
// blocks of near-equal width (wider blocks first) and keeps one table for each
// choice of blocks-k key blocks: C(blocks, k) tables. It is the family of
// layouts in section 3.1.1 of the paper. blocks must exceed k.
func BlockPlan(k, blocks int) (Plan, error) {
	if k < 0 || blocks <= k || blocks > 64 {
		return Plan{}, fmt.Errorf("index: block plan needs 0 <= k < blocks <= 64, got k=%d blocks=%d", k, blocks)
	}
	p := Plan{K: k, Blocks: make([]int, blocks)}
	for i := range p.Blocks {
		p.Blocks[i] = 64 / blocks
		if i < 64%blocks {
			p.Blocks[i]++
		}
	}
	choose(blocks, blocks-k, func(c []int) { p.Tables = append(p.Tables, append([]int(nil), c...)) })
	return p, nil
}

// choose calls f with every t-subset of 0..n-1 in lexicographic order; f must
// not keep the slice.
func choose(n, t int, f func([]int)) {
	c := make([]int, t)
	var rec func(start, i int)
	rec = func(start, i int) {
		if i == t {
			f(c)
			return
		}
		for j := start; j <= n-(t-i); j++ {
			c[i] = j
			rec(j+1, i+1)
		}
	}
	rec(0, 0)
}

// Named layouts.
var (
	// Seeds4x16 is the layout of seeds 002, 003 and 004: four 16-bit blocks,
	// one table per block, exact for k <= 3.
	Seeds4x16 = mustPlan(BlockPlan(3, 4))
	// Manku20 is the paper's 20-table layout for k = 3: six blocks of 11, 11,
	// 11, 11, 10 and 10 bits, one table for each choice of three of them.
	Manku20 = mustPlan(BlockPlan(3, 6))
)

func mustPlan(p Plan, err error) Plan {
	if err != nil {
		panic(err)
	}
	return p
}

// ErrPlan is returned, wrapped, by Plan.Validate.
var ErrPlan = errors.New("index: invalid plan")

// checkBlocks checks that the blocks are positive and cover 64 bits.
func (p Plan) checkBlocks() error {
	sum := 0
	for _, w := range p.Blocks {
		if w <= 0 {
			return fmt.Errorf("%w: block width %d", ErrPlan, w)
		}
		sum += w
	}
	if sum != 64 || len(p.Blocks) > 64 {
		return fmt.Errorf("%w: blocks %v cover %d bits, want 64", ErrPlan, p.Blocks, sum)
	}
	return nil
}

// Validate checks that the blocks cover 64 bits and that the tables find every
// pair within K bits.
func (p Plan) Validate() error {
	if p.K < 0 {
		return fmt.Errorf("%w: negative k %d", ErrPlan, p.K)
	}
	if err := p.checkBlocks(); err != nil {
		return err
	}
	if len(p.Tables) == 0 {
		return fmt.Errorf("%w: no tables", ErrPlan)
	}
	keys := make([]uint64, len(p.Tables)) // each table's key blocks as a bit set of block indices
	for t, tab := range p.Tables {
		if len(tab) == 0 {
			return fmt.Errorf("%w: table %d has no key blocks", ErrPlan, t)
		}
		for i, b := range tab {
			if b < 0 || b >= len(p.Blocks) || (i > 0 && b <= tab[i-1]) {
				return fmt.Errorf("%w: table %d key blocks %v not ascending block indices", ErrPlan, t, tab)
			}
			keys[t] |= 1 << uint(b)
		}
	}
	// Exactness: every set D of at most K blocks (the blocks two fingerprints
	// within K bits can differ in) must leave some table's key untouched. It is
	// enough to check the sets of exactly min(K, blocks) blocks.
	d := min(p.K, len(p.Blocks))
	var bad []int
	choose(len(p.Blocks), d, func(c []int) {
		if bad != nil {
			return
		}
		var set uint64
		for _, b := range c {
			set |= 1 << uint(b)
		}
		for _, k := range keys {
			if k&set == 0 {
				return
			}
		}
		bad = append([]int(nil), c...)
	})
	if bad != nil {
		return fmt.Errorf("%w: fingerprints differing in blocks %v agree on no table's key, so k=%d is not exact", ErrPlan, bad, p.K)
	}
	return nil
}

// String describes the plan in one line, for example
// "k=3 blocks=16,16,16,16 tables=4 key bits=16".
func (p Plan) String() string {
	ws := make([]string, len(p.Blocks))
	for i, w := range p.Blocks {
		ws[i] = fmt.Sprint(w)
	}
	lo, hi := 64, 0
	for t := range p.Tables {
		kb := p.KeyBits(t)
		lo, hi = min(lo, kb), max(hi, kb)
	}
	kb := fmt.Sprint(lo)
	if hi != lo {
		kb = fmt.Sprintf("%d-%d", lo, hi)
	}
	return fmt.Sprintf("k=%d blocks=%s tables=%d key bits=%s", p.K, strings.Join(ws, ","), len(p.Tables), kb)
}

// KeyBits returns the number of bits in table t's key.
func (p Plan) KeyBits(t int) int {
	n := 0
	for _, b := range p.Tables[t] {
		n += p.Blocks[b]
	}
	return n
}

// blockShift returns how far block b's least significant bit is from bit 0.
func (p Plan) blockShift(b int) int {
	s := 64
	for i := 0; i <= b; i++ {
		s -= p.Blocks[i]
	}
	return s
}

// KeyMask returns the mask of the bits of unpermuted fingerprints that form
// table t's key: two fingerprints agree on the key when (a^b)&mask == 0.
func (p Plan) KeyMask(t int) uint64 {
	var m uint64
	for _, b := range p.Tables[t] {
		m |= widthMask(p.Blocks[b]) << uint(p.blockShift(b))
	}
	return m
}

func widthMask(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(w) - 1
}

// A Permutation moves a table's key blocks to the most significant bits,
// keeping the order of the blocks within the key and within the rest. It
// preserves Hamming distance, so distances can be computed on permuted values.
type Permutation struct {
	moves []move // one per block
	key   int    // key bits
}

// move carries one block: ((x >> src) & mask) << dst.
type move struct {
	mask     uint64
	src, dst uint8
}

// Permutation returns the permutation for table t.
func (p Plan) Permutation(t int) Permutation {
	inKey := make([]bool, len(p.Blocks))
	for _, b := range p.Tables[t] {
		inKey[b] = true
	}
	order := append([]int(nil), p.Tables[t]...)
	for b := range p.Blocks {
		if !inKey[b] {
			order = append(order, b)
		}
	}
	perm := Permutation{key: p.KeyBits(t)}
	dst := 64
	for _, b := range order {
		w := p.Blocks[b]
		dst -= w
		perm.moves = append(perm.moves, move{mask: widthMask(w), src: uint8(p.blockShift(b)), dst: uint8(dst)})
	}
	return perm
}

// Apply returns x permuted.
func (m Permutation) Apply(x uint64) uint64 {
	var y uint64
	for _, mv := range m.moves {
		y |= (x >> mv.src & mv.mask) << mv.dst
	}
	return y
}

// Invert returns the unpermuted value of a permuted y.
func (m Permutation) Invert(y uint64) uint64 {
	var x uint64
	for _, mv := range m.moves {
		x |= (y >> mv.dst & mv.mask) << mv.src
	}
	return x
}

// KeyBits returns the number of leading bits of a permuted value that form the key.
func (m Permutation) KeyBits() int { return m.key }

// Key returns the key of a permuted value: its leading KeyBits bits.
func (m Permutation) Key(y uint64) uint64 {
	if m.key == 0 {
		return 0
	}
	return y >> uint(64-m.key)
}

// distance is the Hamming distance; permutations preserve it.
func distance(a, b uint64) int { return bits.OnesCount64(a ^ b) }
