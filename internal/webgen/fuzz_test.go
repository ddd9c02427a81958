package webgen

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzSentences(f *testing.F) {
	f.Add("Call me Ishmael, as the story goes on. Some years ago, never mind how long precisely, I went to sea.")
	f.Add("See e.g. the manual.\n\nMr. Smith went to Washington on a Tuesday morning!\n\n\n")
	f.Fuzz(func(t *testing.T, text string) {
		Sentences(text, func(s string) {
			if !utf8.ValidString(s) || len(s) < 30 || len(s) > 400 || s != strings.Join(strings.Fields(s), " ") {
				t.Errorf("sentence %q: want valid UTF-8 of 30 to 400 bytes, single-spaced", s)
			}
		})
	})
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("plain")
	f.Add("quote \" backslash \\ newline \n tab \t bell \x07 é 中")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // the pool holds valid UTF-8 only
		}
		var got string
		b := appendJSONString(nil, []byte(s))
		if err := json.Unmarshal(b, &got); err != nil || got != s {
			t.Errorf("%q encoded as %s decodes to %q, %v", s, b, got, err)
		}
	})
}
