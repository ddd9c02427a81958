package dedup

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/corpus"
)

// warcWriter writes the kept pages of WARC archives as a WARC archive: for
// each kept page, its response (or conversion) record and the records that
// belong with it (its request and metadata: WARC-Concurrent-To either way,
// WARC-Refers-To, the same WARC-Target-URI), and every warcinfo record, in
// the input's order and byte for byte as read. Into a .gz each record is
// its own gzip member, the input's member copied as stored when the record
// had one to itself; into a .zst, its own zstd frame; otherwise the records
// are written uncompressed. Records of removed pages, and records that
// belong with no page (images, redirects, logs), are left out.
type warcWriter struct {
	w    io.Writer
	mode int // warcAsInput, warcOutPlain, warcOutGzip or warcOutZstd
	gz   *gzip.Writer
	zstd *zstd.Encoder
	buf  []byte
}

const (
	warcAsInput  = iota // the input's gzip members where it had them, else uncompressed
	warcOutPlain        // uncompressed
	warcOutGzip         // a gzip member per record
	warcOutZstd         // a zstd frame per record
)

// newWARCWriter writes to w, compressed as a file called name would be
// ("": as the input was).
func newWARCWriter(w io.Writer, name string) (*warcWriter, error) {
	ww := &warcWriter{w: w}
	n := strings.ToLower(name)
	switch {
	case name == "" || name == "-":
		ww.mode = warcAsInput
	case strings.HasSuffix(n, ".gz"):
		ww.mode = warcOutGzip
	case strings.HasSuffix(n, ".zst"):
		ww.mode = warcOutZstd
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		ww.zstd = enc
	case strings.HasSuffix(n, ".warc") || strings.HasSuffix(n, ".wet"):
		ww.mode = warcOutPlain
	default:
		ww.mode = warcAsInput
	}
	return ww, nil
}

func (ww *warcWriter) write(d corpus.Doc, a *annotation) error {
	if a != nil {
		return fmt.Errorf("%w: %s is a WARC record: only JSONL and Parquet documents can be annotated", ErrOptions, where(d))
	}
	for i := range d.Records {
		r := &d.Records[i]
		if r.Page || r.Linked || r.Type == "warcinfo" {
			if err := ww.record(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// skip takes the records of a removed page: of them only warcinfo records
// are written.
func (ww *warcWriter) skip(d corpus.Doc) error {
	for i := range d.Records {
		if r := &d.Records[i]; r.Type == "warcinfo" {
			if err := ww.record(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (ww *warcWriter) record(r *corpus.WARCRecord) error {
	mode := ww.mode
	if mode == warcAsInput {
		mode = warcOutPlain
		if r.Member != nil {
			mode = warcOutGzip
		}
	}
	var err error
	switch mode {
	case warcOutGzip:
		if r.Member != nil {
			_, err = ww.w.Write(r.Member)
			return err
		}
		var b bytes.Buffer
		if ww.gz == nil {
			ww.gz = gzip.NewWriter(&b)
		} else {
			ww.gz.Reset(&b)
		}
		if _, err = ww.gz.Write(r.Bytes); err == nil {
			err = ww.gz.Close()
		}
		if err == nil {
			_, err = ww.w.Write(b.Bytes())
		}
	case warcOutZstd:
		ww.buf = ww.zstd.EncodeAll(r.Bytes, ww.buf[:0])
		_, err = ww.w.Write(ww.buf)
	default:
		_, err = ww.w.Write(r.Bytes)
	}
	return err
}

func (ww *warcWriter) close() error {
	if ww.zstd != nil {
		return ww.zstd.Close()
	}
	return nil
}
