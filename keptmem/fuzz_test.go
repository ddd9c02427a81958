package keptmem

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/rule"
)

// FuzzReadKept: any bytes given as a kept-set file load or fail with an
// error, never a panic, and a file that loads writes back to one that loads
// to the same documents. The settings are taken from the file itself, so
// that mutations reach the records behind the header check.
func FuzzReadKept(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.kept"))
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(keptMagic))
	rules := map[string]*rule.Rule{}
	for _, m := range []string{rule.MethodSimHash, rule.MethodMinHash} {
		r, err := rule.NewRule(rule.Options{Method: m})
		if err != nil {
			f.Fatal(err)
		}
		rules[m] = r
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		settings := fileSettings(b)
		rl := rules[rule.MethodSimHash]
		if strings.HasPrefix(settings, "method="+rule.MethodMinHash) {
			rl = rules[rule.MethodMinHash]
		}
		k, err := readKept(bytes.NewReader(b), rl, settings)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := k.writeTo(&out, settings); err != nil {
			t.Fatal(err)
		}
		k2, err := readKept(&out, rl, settings)
		if err != nil {
			t.Fatalf("a loaded set wrote a file that does not load: %v", err)
		}
		if k2.Len() != k.Len() {
			t.Fatalf("%d documents written, %d read back", k.Len(), k2.Len())
		}
	})
}

// fileSettings returns the settings string of a kept-set file's header, or
// "" when there is none.
func fileSettings(b []byte) string {
	if len(b) < len(keptMagic) {
		return ""
	}
	b = b[len(keptMagic):]
	_, n := binary.Uvarint(b)
	if n <= 0 {
		return ""
	}
	b = b[n:]
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return ""
	}
	return string(b[n : n+int(l)])
}
