package keptmem

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/outfile"
	"github.com/neardup/neardup/rule"
)

// ErrFormat is wrapped by the errors of reading a kept-set file that is not
// one, is damaged, or was made with other settings.
var ErrFormat = errors.New("keptmem: bad kept-set file")

// Path is the kept-set file that goes with the index snapshot at indexPath.
func Path(indexPath string) string { return indexPath + ".kept" }

// Files reads and writes the kept set of incremental runs of dedup.Run
// (dedup.Options.KeptFiles): the index snapshot at a path, in package
// index's format, which 'neardup index query' reads, and the kept-set file
// beside it (Path; FORMAT.md), which holds what verification needs of each
// document. The zero value is ready to use; it holds nothing.
type Files struct{}

// Load reads the kept-set file of the snapshot at path, made with settings
// (the batch's: its features' options and versions), into a new Set. A
// snapshot without its kept-set file (one made by 'neardup index build')
// cannot be verified against and is an error wrapping rule.ErrOptions;
// when neither file exists the error wraps fs.ErrNotExist.
func (Files) Load(path string, rl *rule.Rule, settings string, _ bool) (rule.KeptSet, error) {
	kpath := Path(path)
	f, err := os.Open(kpath)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(path); serr == nil {
			return nil, fmt.Errorf("%w: %s has no kept-set file %s: its documents cannot be verified against; "+
				"rebuild it with 'neardup dedup --index %s --update-index' over the documents it holds",
				rule.ErrOptions, path, kpath, path)
		}
		return nil, fmt.Errorf("keptmem: index %s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("keptmem: loading kept set: %w", err)
	}
	defer f.Close()
	k, err := readKept(f, rl, settings)
	if err != nil {
		return nil, fmt.Errorf("keptmem: loading %s: %w", kpath, err)
	}
	if _, err := os.Stat(path); err != nil {
		// %v: a missing snapshot beside its kept-set file is not a
		// missing snapshot (fs.ErrNotExist) but a broken one.
		return nil, fmt.Errorf("keptmem: kept set %s without its index: %v", kpath, err)
	}
	return &fileSet{k, path, settings}, nil
}

// New returns an empty Set for the rule rl, to be saved at path.
func (Files) New(path string, rl *rule.Rule, settings string) (rule.KeptSet, error) {
	k, err := New(rl, 1)
	if err != nil {
		return nil, err
	}
	return &fileSet{k, path, settings}, nil
}

// fileSet is a Set that Files returned, with where it saves.
type fileSet struct {
	*Set
	path, settings string
}

// Close does nothing: the set is in memory.
func (Files) Close(rule.KeptSet) error { return nil }

// Save writes k, which Load or New returned, as the snapshot at its path
// and its kept-set file, each to a temporary file renamed into place
// (internal/outfile; a path that is not a regular file is written in
// place). The kept-set file is renamed first; both name the same
// documents.
func (Files) Save(k rule.KeptSet) error {
	fk, ok := k.(*fileSet)
	if !ok {
		return fmt.Errorf("keptmem: cannot save a %T, only a set Files returned", k)
	}
	s, path, settings := fk.Set, fk.path, fk.settings
	err := outfile.WriteFile(Path(path), nil, func(w io.Writer) error {
		return s.writeTo(w, settings)
	})
	if err != nil {
		return fmt.Errorf("keptmem: writing kept set: %w", err)
	}
	if err := s.Index().SaveFile(path); err != nil {
		return fmt.Errorf("keptmem: saving index: %w", err)
	}
	return nil
}

// The kept-set file (FORMAT.md): magic, version, the settings the sets were
// made with, the documents in priority order, and a CRC-32C of all of it.
const (
	keptMagic   = "NDKEPT\r\n"
	keptVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// writeTo writes the set in priority order.
func (k *Set) writeTo(w io.Writer, settings string) error {
	k.mu.RLock()
	if k.fpOnly > 0 {
		k.mu.RUnlock()
		return fmt.Errorf("keptmem: the kept set holds %d fingerprint-only documents, which a kept-set file cannot record", k.fpOnly)
	}
	docs := make([]keptDoc, 0, k.live)
	for i := range k.docs.n {
		if d := k.docs.at(uint32(i)); d.live {
			docs = append(docs, *d)
		}
	}
	k.mu.RUnlock()

	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	var b []byte
	b = append(b, keptMagic...)
	b = binary.AppendUvarint(b, keptVersion)
	b = appendString(b, settings)
	b = binary.AppendUvarint(b, uint64(len(docs)))
	for _, d := range docs {
		b = appendString(b, d.id)
		b, _ = d.f.AppendBinary(b)
		if len(b) >= 64<<10 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if _, err := bw.Write(b); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return binary.Write(w, binary.LittleEndian, crc.Sum32())
}

// readKept reads a kept-set file made with the same settings. The file is
// read whole and its checksum checked before it is parsed; it is smaller than
// the set it holds (delta-coded sketches).
func readKept(r io.Reader, rl *rule.Rule, settings string) (*Set, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	all, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if len(all) < len(keptMagic)+4 || string(all[:len(keptMagic)]) != keptMagic {
		return nil, bad("not a kept-set file")
	}
	body := all[:len(all)-4]
	if binary.LittleEndian.Uint32(all[len(body):]) != crc32.Checksum(body, castagnoli) {
		return nil, bad("checksum mismatch: the file is damaged")
	}
	br := &reader{b: body, i: len(keptMagic)}
	v, err := br.uvarint()
	if err != nil || v != keptVersion {
		return nil, bad("version %d, this build reads %d", v, keptVersion)
	}
	got, err := br.string()
	if err != nil {
		return nil, bad("%v", err)
	}
	if got != settings {
		return nil, fmt.Errorf("%w: made with %q, this run uses %q", ErrFormat, got, settings)
	}
	n, err := br.uvarint()
	if err != nil || n > uint64(len(body)) {
		return nil, bad("document count")
	}
	k, err := New(rl, int(n))
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, n)
	fs := make([]rule.Features, 0, n)
	for i := uint64(0); i < n; i++ {
		id, err := br.string()
		if err != nil {
			return nil, bad("document %d: %v", i, err)
		}
		var f rule.Features
		w, err := (*rule.Arena)(nil).DecodeFeatures(&f, br.b[br.i:])
		if err != nil {
			return nil, bad("document %d: %v", i, err)
		}
		br.i += w
		ids = append(ids, id)
		fs = append(fs, f)
	}
	if br.i != len(body) {
		return nil, bad("%d bytes after the last document", len(body)-br.i)
	}
	if err := k.AddBulk(ids, fs); err != nil {
		if errors.Is(err, index.ErrDuplicateID) {
			return nil, bad("%v", err)
		}
		return nil, err
	}
	return k, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// reader reads the fields of a kept-set file.
type reader struct {
	b []byte
	i int
}

// uvarint reads an unsigned varint.
func (r *reader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	r.i += n
	return v, nil
}

// string reads a uvarint length and that many bytes.
func (r *reader) string() (string, error) {
	n, err := r.uvarint()
	if err != nil || n > index.MaxIDBytes {
		return "", fmt.Errorf("bad string length")
	}
	if n > uint64(len(r.b)-r.i) {
		return "", io.ErrUnexpectedEOF
	}
	s := string(r.b[r.i : r.i+int(n)])
	r.i += int(n)
	return s, nil
}
