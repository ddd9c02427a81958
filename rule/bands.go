package rule

import "github.com/neardup/neardup/minhash"

// A Bander computes the LSH band keys of a shingle set under the options
// it was made with (MethodMinHash), with the hasher and band shape that
// Extract uses: a store that keeps a document's exact shingle set can
// recompute its band keys from it instead of keeping them (192 bytes a
// document at 24 bands; store/redisstore does, and checks when it writes a
// record that the keys it will recompute are the document's). It is safe
// for concurrent use.
type Bander struct {
	h   *minhash.Hasher
	lsh *minhash.LSH
}

// NewBander returns the Bander of o (after defaults); nil when o's method
// has no bands.
func NewBander(o Options) (*Bander, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.lshBands()
	if o.Method != MethodMinHash || o.Bands == 0 {
		return nil, nil
	}
	return &Bander{h: o.hasher(), lsh: minhash.NewLSH(o.Bands, o.Rows)}, nil
}

// AppendBands appends the band keys of the set hashes (a Sketch's Hashes),
// with the hash 0 in the signed set too when zero is set: Extract signs
// the text's shingle hashes as its slice holds them after the set was
// sorted and deduplicated in place, which leaves zeros after the distinct
// hashes when the text repeats a shingle.
func (b *Bander) AppendBands(dst []uint64, hashes []uint32, zero bool) []uint64 {
	set := make([]uint64, 0, len(hashes)+1)
	for _, h := range hashes {
		set = append(set, uint64(h))
	}
	if zero {
		set = append(set, 0)
	}
	dst, _ = b.lsh.BandKeys(dst, b.h.Sign(nil, set)) // Sign returns Perms >= bands·rows values
	return dst
}
