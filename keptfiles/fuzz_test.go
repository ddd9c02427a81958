package keptfiles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/rule"
)

// FuzzReadLegacy: the reader of the old kept-set files never panics, and
// what it accepts decodes to documents with ids.
func FuzzReadLegacy(f *testing.F) {
	var settings string
	for _, name := range []string{"minhash-day1.kept", "simhash-day1.kept"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		settings = legacySettings(f, b)
		f.Add(b, settings)
	}
	f.Add([]byte(legacyMagic), settings)
	f.Fuzz(func(t *testing.T, b []byte, settings string) {
		readLegacy(b, settings, func(id string, _ rule.Features) error {
			if id == "" {
				t.Error("an empty id accepted")
			}
			return nil
		})
	})
}
