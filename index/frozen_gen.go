package index

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
)

// SyntheticSource returns a Source of n generated fingerprints, the
// benchmarks' (BenchmarkFrozen, 'neardup index gen'): 90% random, 10%
// near-copies of one of the 4,096 before them with 1 to 6 bits flipped,
// made as a stream so that a billion need no memory. Every Scan yields the
// same items (the generator is seeded by n); ids are positions.
func SyntheticSource(n int) Source { return syntheticSource(n) }

type syntheticSource int

func (g syntheticSource) Scan(fn func(fps, ids []uint64) error) error {
	n := int(g)
	r := rand.New(rand.NewPCG(uint64(n), 43))
	var ring [4096]uint64
	fps := make([]uint64, 0, 1<<14)
	ids := make([]uint64, 1<<14)
	for i := 0; i < n; i++ {
		var x uint64
		if i > 0 && r.IntN(10) == 0 {
			x = ring[r.IntN(min(i, len(ring)))]
			var m uint64
			for want := 1 + r.IntN(6); bits.OnesCount64(m) < want; {
				m |= 1 << (r.Uint64() & 63)
			}
			x ^= m
		} else {
			x = r.Uint64()
		}
		ring[i%len(ring)] = x
		fps = append(fps, x)
		if len(fps) == cap(fps) || i == n-1 {
			first := uint64(i + 1 - len(fps))
			for j := range fps {
				ids[j] = first + uint64(j)
			}
			if err := fn(fps, ids[:len(fps)]); err != nil {
				return err
			}
			fps = fps[:0]
		}
	}
	return nil
}

// WriteRaw writes the Source's fingerprints to w as little-endian 8-byte
// values, the input of FileSource and ReaderSource, and returns how many.
func WriteRaw(w io.Writer, src Source) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var n int64
	var b []byte
	err := src.Scan(func(fps, _ []uint64) error {
		b = b[:0]
		for _, x := range fps {
			b = binary.LittleEndian.AppendUint64(b, x)
		}
		n += int64(len(fps))
		_, err := bw.Write(b)
		return err
	})
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// ReaderSource returns a Source reading little-endian 8-byte fingerprints
// from r, once (BuildFrozen reads its Source once); the id of each is its
// position. name labels errors.
func ReaderSource(r io.Reader, name string) Source { return readerSource{r, name} }

type readerSource struct {
	r    io.Reader
	name string
}

func (s readerSource) Scan(fn func(fps, ids []uint64) error) error {
	r := bufio.NewReaderSize(s.r, 1<<20)
	buf := make([]byte, 8<<13)
	fps := make([]uint64, 0, 1<<13)
	ids := make([]uint64, 1<<13)
	pos := uint64(0)
	for {
		m, err := io.ReadFull(r, buf)
		if m%8 != 0 {
			return fmt.Errorf("index: %s: length is not a multiple of 8 bytes", s.name)
		}
		fps = fps[:0]
		for i := 0; i < m; i += 8 {
			fps = append(fps, binary.LittleEndian.Uint64(buf[i:]))
		}
		for i := range fps {
			ids[i] = pos + uint64(i)
		}
		pos += uint64(len(fps))
		if len(fps) > 0 {
			if err := fn(fps, ids[:len(fps)]); err != nil {
				return err
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// FileSource returns a Source reading a file of little-endian 8-byte
// fingerprints; the id of each is its position in the file.
func FileSource(path string) Source { return fileSource(path) }

type fileSource string

func (p fileSource) Scan(fn func(fps, ids []uint64) error) error {
	f, err := os.Open(string(p))
	if err != nil {
		return err
	}
	defer f.Close()
	return readerSource{f, string(p)}.Scan(fn)
}
