package eval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/corpus"
)

// Errors returned by this package.
var (
	// ErrMalformed is returned for a JSONL line that is not a JSON object with a
	// string text field.
	ErrMalformed = errors.New("eval: malformed document")
	// ErrNoDocs is returned when an evaluation is asked for an empty corpus.
	ErrNoDocs = errors.New("eval: no documents")
	// ErrSetting is returned for an invalid setting or option.
	ErrSetting = errors.New("eval: invalid setting")
)

// Doc is one document of an evaluation corpus.
type Doc struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Group string `json:"group,omitempty"`
}

// ReadFile reads a JSON Lines corpus ({"id", "text", "group"} per line),
// decompressing it when the name ends in .zst. The corpora use a long zstd
// window, so the decoder accepts windows up to 2^31 bytes. A Parquet file
// (named .parquet, or starting with its magic bytes) is read with the columns
// id, text and group (optional) instead; a WARC or WET archive (named so,
// or starting with a WARC version line) gives its pages, by target URI.
func ReadFile(path string) ([]Doc, error) {
	if corpus.IsWARC(path) {
		return readWARC(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); strings.HasSuffix(path, ".parquet") || err == nil && string(magic[:]) == "PAR1" {
		return readParquet(path)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var r io.Reader = f
	if strings.HasSuffix(path, ".zst") {
		d, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<31), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer d.Close()
		r = d
	}
	docs, err := ReadJSONL(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return docs, nil
}

// readWARC reads the pages of a WARC or WET archive through package
// corpus (id: WARC-Target-URI).
func readWARC(path string) ([]Doc, error) {
	r, err := corpus.Open([]string{path}, corpus.Options{Format: corpus.WARC})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var docs []Doc
	for {
		d, err := r.Next()
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, Doc{ID: d.ID, Text: d.Text})
	}
}

// readParquet reads id and text through package corpus (ids may be numbers;
// a missing id becomes file:row) and the group column, when there is one,
// beside them.
func readParquet(path string) ([]Doc, error) {
	r, err := corpus.Open([]string{path}, corpus.Options{Format: corpus.Parquet})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var docs []Doc
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, Doc{ID: d.ID, Text: d.Text})
	}
	type group struct {
		Group *string `parquet:"group,optional"`
	}
	groups, err := parquet.ReadFile[group](path)
	if err != nil {
		return nil, fmt.Errorf("%s: group column: %w", path, err)
	}
	if len(groups) != len(docs) {
		return nil, fmt.Errorf("%s: %d groups for %d documents", path, len(groups), len(docs))
	}
	for i, g := range groups {
		if g.Group != nil {
			docs[i].Group = *g.Group
		}
	}
	return docs, nil
}

// ReadJSONL reads one document per line. Blank lines are skipped; a missing id
// becomes the line number.
func ReadJSONL(r io.Reader) ([]Doc, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var docs []Doc
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(b))) > 0 {
			var d struct {
				ID    json.RawMessage `json:"id"`
				Text  *string         `json:"text"`
				Group string          `json:"group"`
			}
			if jerr := json.Unmarshal(b, &d); jerr != nil {
				return nil, fmt.Errorf("line %d: %w: %v", line, ErrMalformed, jerr)
			}
			if d.Text == nil {
				return nil, fmt.Errorf("line %d: %w: no text field", line, ErrMalformed)
			}
			id := fmt.Sprint(line)
			if len(d.ID) > 0 && string(d.ID) != "null" {
				var s string
				if json.Unmarshal(d.ID, &s) == nil {
					id = s
				} else {
					id = string(d.ID) // a number, kept as written
				}
			}
			docs = append(docs, Doc{ID: id, Text: *d.Text, Group: d.Group})
		}
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
