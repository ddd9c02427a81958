package keptfiles

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/rule"
)

// The kept-set file of neardup before this package (LEGACY-FORMAT.md,
// version 1), at LegacyPath: magic, version, the settings,
// the document count, each document's id (uvarint length and bytes) and
// record (rule.Features.AppendBinary) in priority order, and a CRC-32C
// (Castagnoli, little-endian) of all the bytes before it. Load converts it
// into a kept set directory, once, and removes it.
const (
	legacyMagic   = "NDKEPT\r\n"
	legacyVersion = 1
)

// readLegacy reads the kept-set file b, made with settings, calling fn with
// each document in priority order. The checksum is checked before anything
// is parsed.
func readLegacy(b []byte, settings string, fn func(id string, f rule.Features) error) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	if len(b) < len(legacyMagic)+4 || string(b[:len(legacyMagic)]) != legacyMagic {
		return bad("not a kept-set file")
	}
	body := b[:len(b)-4]
	if binary.LittleEndian.Uint32(b[len(body):]) != crc32.Checksum(body, castagnoli) {
		return bad("checksum mismatch: the file is damaged")
	}
	r := body[len(legacyMagic):]
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(r)
		if n <= 0 {
			return 0, false
		}
		r = r[n:]
		return v, true
	}
	str := func(empty bool) (string, bool) {
		n, ok := uvarint()
		if !ok || n > index.MaxIDBytes || n > uint64(len(r)) || (n == 0 && !empty) {
			return "", false
		}
		s := string(r[:n])
		r = r[n:]
		return s, true
	}
	if v, ok := uvarint(); !ok || v != legacyVersion {
		return bad("version %d, this build reads %d", v, legacyVersion)
	}
	got, ok := str(true)
	if !ok {
		return bad("settings")
	}
	if got != settings {
		return fmt.Errorf("%w: made with %q, this run uses %q", ErrFormat, got, settings)
	}
	n, ok := uvarint()
	if !ok || n > uint64(len(r)) {
		return bad("document count")
	}
	for i := range n {
		id, ok := str(false)
		if !ok {
			return bad("document %d: bad id", i)
		}
		var f rule.Features
		w, err := (*rule.Arena)(nil).DecodeFeatures(&f, r)
		if err != nil {
			return bad("document %d: %v", i, err)
		}
		r = r[w:]
		if err := fn(id, f); err != nil {
			return err
		}
	}
	if len(r) != 0 {
		return bad("%d bytes after the last document", len(r))
	}
	return nil
}

// convertLegacy converts the kept-set file of the snapshot at path
// (LegacyPath) into a kept set directory (Dir), and removes the file once
// the directory is saved. It returns an error wrapping fs.ErrNotExist when
// there is no such file. The snapshot at path is left as it is: it holds
// the same documents.
func convertLegacy(path string, rl *rule.Rule, settings string) error {
	lpath := LegacyPath(path)
	b, err := os.ReadFile(lpath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fmt.Errorf("keptfiles: %w", err)
	}
	k, err := newSet(path, rl, settings)
	if err != nil {
		return err
	}
	k.noPublish = true
	err = readLegacy(b, settings, k.Add)
	if err == nil {
		err = k.Save()
	}
	err = errors.Join(err, k.Close())
	if err != nil {
		return fmt.Errorf("keptfiles: converting %s: %w", lpath, err)
	}
	return os.Remove(lpath)
}
