package features

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
)

// leonsimGolden is testdata/leonsim_golden.json, written by
// testdata/leonsim_ref.py, a re-implementation of the Python simhash
// package's default pipeline.
type leonsimGolden struct {
	Features []struct {
		Features [][2]any `json:"features"`
		Value    string   `json:"value"`
	} `json:"features"`
	Texts []struct {
		Text    string   `json:"text"`
		Value   string   `json:"value"`
		Windows []string `json:"windows"`
	} `json:"texts"`
}

func readLeonsimGolden(t *testing.T) leonsimGolden {
	t.Helper()
	b, err := os.ReadFile("testdata/leonsim_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g leonsimGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestLeonsimFeatureGolden(t *testing.T) {
	// The two values the issue quotes from the Python package's tests.
	aaa := LeonsimFingerprint([]Feature{{Text: "aaa", Weight: 1}, {Text: "bbb", Weight: 1}})
	if got, want := uint64(aaa), uint64(57087923692560392); got != want {
		t.Errorf("Simhash(['aaa','bbb']) = %d, want %d", got, want)
	}
	var feats []Feature
	for i := 0; i < 500; i++ {
		feats = append(feats, Feature{Text: strconv.Itoa(i), Weight: 1})
	}
	if got, want := uint64(LeonsimFingerprint(feats)), uint64(7984652473404407437); got != want {
		t.Errorf("Simhash(str(0..499)) = %d, want %d", got, want)
	}
	for _, g := range readLeonsimGolden(t).Features {
		var fs []Feature
		for _, f := range g.Features {
			fs = append(fs, Feature{Text: f[0].(string), Weight: f[1].(float64)})
		}
		if got := strconv.FormatUint(uint64(LeonsimFingerprint(fs)), 10); got != g.Value {
			t.Errorf("LeonsimFingerprint(%d features) = %s, want %s", len(fs), got, g.Value)
		}
	}
}

func TestLeonsimTextGolden(t *testing.T) {
	p, err := Lookup("leonsim")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range readLeonsimGolden(t).Texts {
		if got := strconv.FormatUint(uint64(p.Fingerprint(g.Text).Fingerprint), 10); got != g.Value {
			t.Errorf("leonsim %q = %s, want %s", g.Text, got, g.Value)
		}
		var got []string
		for _, tok := range p.Tokens(g.Text) {
			got = append(got, tok.Text)
		}
		if len(got) != len(g.Windows) {
			t.Errorf("leonsim windows of %q: got %q, want %q", g.Text, got, g.Windows)
			continue
		}
		for i := range got {
			if got[i] != g.Windows[i] {
				t.Errorf("leonsim windows of %q: got %q, want %q", g.Text, got, g.Windows)
				break
			}
		}
		// The explaining path gives the same fingerprint.
		if fp := LeonsimFingerprint(p.Features(g.Text)); strconv.FormatUint(uint64(fp), 10) != g.Value {
			t.Errorf("leonsim Features(%q) fingerprint = %d, want %s", g.Text, fp, g.Value)
		}
	}
}

func TestLeonsimEmpty(t *testing.T) {
	p, _ := Lookup("leonsim")
	r := p.Fingerprint("  ?! ")
	if !r.Empty {
		t.Errorf("Empty = false for a text without word characters")
	}
	if r.Fingerprint != LeonsimFingerprint([]Feature{{Text: "", Weight: 1}}) {
		t.Errorf("fingerprint of an empty text = %v, want Python's Simhash('') (the empty window)", r.Fingerprint)
	}
}

func TestLeonsimBits(t *testing.T) {
	p, _ := Lookup("leonsim")
	const text = "This is a test string for testing"
	r64 := p.Fingerprint(text)
	p128, err := p.WithBits(128)
	if err != nil {
		t.Fatal(err)
	}
	r128 := p128.Fingerprint(text)
	if r128.Bits != 128 || r128.Fingerprint128.Lo != uint64(r64.Fingerprint) {
		t.Errorf("128-bit low half %x, want the 64-bit value %x (Python f=128 uses the whole md5)", r128.Fingerprint128.Lo, uint64(r64.Fingerprint))
	}
	p32, _ := p.WithBits(32)
	if got, want := uint64(p32.Fingerprint(text).Fingerprint), uint64(r64.Fingerprint)&0xffffffff; got != want {
		t.Errorf("32-bit = %x, want the low half of the 64-bit value %x", got, want)
	}
}
