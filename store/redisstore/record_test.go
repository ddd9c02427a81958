package redisstore

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/rule"
)

// TestRecordRoundTrip: a packed record (version 2) decodes to the features
// it was made from, band keys included (recomputed, or kept when they
// cannot be), under either method; a version 1 record, as earlier versions
// wrote it, still decodes; and a cut record is an error, not a panic.
func TestRecordRoundTrip(t *testing.T) {
	for _, m := range []string{rule.MethodMinHash, rule.MethodSimHash} {
		t.Run(m, func(t *testing.T) {
			o := rule.Options{Method: m}
			bander, err := rule.NewBander(o)
			if err != nil {
				t.Fatal(err)
			}
			s := &Store{bander: bander, nb: 24}
			rec := extractorOf(t, o)
			now := time.UnixMilli(1_700_000_000_123)
			var packed, plain int
			for i := range 300 {
				words := strings.Fields(text(uint64(i), 5+i))
				if i%3 == 0 { // repeated shingles
					words = append(words, words...)
				}
				r := rec(fmt.Sprint("id-", i), strings.Join(words, " "))
				r.Meta = []byte(fmt.Sprintf(`{"n":%d}`, i))
				if i == 7 && len(r.Features.Bands) > 3 {
					r.Features.Bands[3]++ // bands no set gives back: kept in the record
				}
				b, err := s.encodeRecord(&r, now)
				if err != nil {
					t.Fatal(err)
				}
				if b[0] != recordV2 {
					t.Fatalf("record %d: version %d, want 2", i, b[0])
				}
				v1 := []byte{recordV1}
				v1 = binary.AppendUvarint(v1, uint64(now.UnixMilli()))
				v1 = binary.AppendUvarint(v1, uint64(len(r.ID)))
				v1 = append(v1, r.ID...)
				v1 = binary.AppendUvarint(v1, uint64(len(r.Meta)))
				v1 = append(v1, r.Meta...)
				if v1, err = r.Features.AppendBinary(v1); err != nil {
					t.Fatal(err)
				}
				packed += len(b)
				plain += len(v1)
				for _, enc := range [][]byte{b, v1} {
					got, at, err := s.decodeRecord(9, string(enc))
					if err != nil {
						t.Fatalf("record %d (version %d): %v", i, enc[0], err)
					}
					if !at.Equal(now) || got.Seq != 9 || got.ID != r.ID || string(got.Meta) != string(r.Meta) {
						t.Fatalf("record %d (version %d): %+v at %v", i, enc[0], got, at)
					}
					if id, fp, ok := recordHead(string(enc)); !ok || id != r.ID || fp != r.Features.FP {
						t.Fatalf("record %d (version %d): head %q %016x %v", i, enc[0], id, fp, ok)
					}
					g, w := &got.Features, &r.Features
					if g.FP != w.FP || g.Exact != w.Exact || g.Tokens != w.Tokens || g.Length != w.Length || g.Empty != w.Empty ||
						!slices.Equal(g.Sketch.Hashes(), w.Sketch.Hashes()) || !slices.Equal(g.Bands, w.Bands) || g.Pre != w.Pre {
						t.Fatalf("record %d (version %d): features differ:\n got %+v\nwant %+v", i, enc[0], g, w)
					}
				}
				for cut := range len(b) {
					if _, _, err := s.decodeRecord(9, string(b[:cut])); err == nil {
						t.Fatalf("record %d cut to %d of %d bytes: no error", i, cut, len(b))
					}
				}
			}
			t.Logf("%s: version 2 %.1f bytes a record, version 1 %.1f", m, float64(packed)/300, float64(plain)/300)
			if packed >= plain {
				t.Errorf("packed records (%d bytes) are not smaller than version 1's (%d)", packed, plain)
			}
		})
	}
}

// BenchmarkRecord measures encoding and decoding a record of a 1.3 KB
// document in both versions.
func BenchmarkRecord(b *testing.B) {
	bander, err := rule.NewBander(rule.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s := &Store{bander: bander, nb: 24}
	r := extractor(b)("doc-1", text(1, 200))
	now := time.Now()
	v2, _ := s.encodeRecord(&r, now)
	v1 := binary.AppendUvarint([]byte{recordV1}, uint64(now.UnixMilli()))
	v1 = binary.AppendUvarint(v1, uint64(len(r.ID)))
	v1 = append(v1, r.ID...)
	v1 = binary.AppendUvarint(v1, 0)
	v1, _ = r.Features.AppendBinary(v1)
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			s.encodeRecord(&r, now)
		}
	})
	for _, enc := range [][]byte{v1, v2} {
		b.Run(fmt.Sprintf("decode-v%d-%dB", enc[0], len(enc)), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := s.decodeRecord(1, string(enc)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
