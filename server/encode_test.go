package server

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// encodingJSON is what respond wrote before search replies appended their
// own JSON: the reference the appenders must equal byte for byte.
func encodingJSON(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

var jsonStrings = []string{"", "pre-12", "a\"b", `back\slash`, "tab\there", "nl\n", "\x00\x1f", "<html>&amp;",
	"é中文", "\u2028\u2029", "bad\xffutf8", "\x7f", strings1000()}

func strings1000() string { return string(bytes.Repeat([]byte("x"), 1000)) }

// TestSearchReplyJSON checks the search and document replies' own JSON
// against encoding/json's on random values, strings that need escaping
// among them.
func TestSearchReplyJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	floats := []float64{0, 1, 0.953125, 1.0 / 3, 1e-7, 2.5e-9, 1e21, 123456789.125, -0.5, math.SmallestNonzeroFloat64}
	pick := func() string { return jsonStrings[r.IntN(len(jsonStrings))] }
	for i := range 2000 {
		resp := searchResponse{Fingerprint: pick(), Verified: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			k := r.IntN(20) - 2
			resp.K = &k
		}
		if r.IntN(4) == 0 {
			resp.exactOnlyJSON = exactOnly(true)
		}
		if r.IntN(8) == 0 {
			resp.Note = pick()
		}
		if r.IntN(5) > 0 {
			resp.Results = []searchHit{}
			for range r.IntN(4) {
				h := searchHit{ID: pick(), Distance: r.IntN(70), Similarity: floats[r.IntN(len(floats))],
					Exact: r.IntN(3) == 0, Verified: r.IntN(2) == 0}
				if r.IntN(2) == 0 {
					h.Fingerprint = pick()
				}
				if r.IntN(2) == 0 {
					j := floats[r.IntN(len(floats))]
					h.Jaccard = &j
				}
				resp.Results = append(resp.Results, h)
			}
		}
		want := encodingJSON(t, resp)
		if got := resp.appendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, want)
		}

		doc := docResponse{Fingerprint: resp.Fingerprint, Stored: resp.Verified, exactOnlyJSON: resp.exactOnlyJSON}
		if r.IntN(2) == 0 {
			doc.ID = pick()
		}
		if resp.Results != nil {
			doc.Duplicates = []dupJSON{}
			for _, h := range resp.Results {
				doc.Duplicates = append(doc.Duplicates, dupJSON{ID: h.ID, Distance: h.Distance, Similarity: h.Similarity,
					Jaccard: h.Jaccard, Exact: h.Exact, Verified: h.Verified})
			}
		}
		want = encodingJSON(t, doc)
		if got := doc.appendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("case %d, document reply:\n got %s\nwant %s", i, got, want)
		}
	}
}

func FuzzSearchReplyJSON(f *testing.F) {
	for _, s := range jsonStrings {
		f.Add(s, 0.75, 3)
	}
	f.Fuzz(func(t *testing.T, s string, sim float64, d int) {
		if math.IsNaN(sim) || math.IsInf(sim, 0) {
			return // encoding/json refuses them; the service never has them
		}
		resp := searchResponse{Fingerprint: s, K: &d, Results: []searchHit{{ID: s, Fingerprint: s, Distance: d, Similarity: sim, Jaccard: &sim}}}
		if got, want := resp.appendJSON(nil), encodingJSON(t, resp); !bytes.Equal(got, want) {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}
