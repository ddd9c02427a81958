package features

import (
	"sort"
	"sync"
	"unicode/utf8"
	"unsafe"
)

//go:generate go run ./internal/t2sgen -in internal/t2sgen/TSCharacters.txt -out t2s_table.go

// Traditional-to-Simplified folding maps each Traditional Chinese character to
// its Simplified form, character by character, with the table of OpenCC's
// TSCharacters (Apache-2.0; see internal/t2sgen). It is the character stage of
// OpenCC's t2s conversion without its phrase stage, which is what
// near-duplicate detection needs: the same text in either script gives the
// same characters. A few characters have context-dependent forms (乾 is 干 in
// 乾燥 but stays in 乾隆); the table takes OpenCC's first candidate (干).

// t2sLow..t2sHigh is the block of the dense BMP table: every BMP key of the
// OpenCC table lies in CJK Extension A and the Unified Ideographs.
const (
	t2sLow  = 0x3400
	t2sHigh = 0xA000
)

var t2s struct {
	once  sync.Once
	dense []rune // dense[r-t2sLow] is the simplified form of r, 0 if none
	supp  []rune // sorted supplementary-plane keys
	suppT []rune // their simplified forms
}

func t2sInit() {
	t2s.dense = make([]rune, t2sHigh-t2sLow)
	to := t2sTo
	for _, f := range t2sFrom {
		s, size := utf8.DecodeRuneInString(to)
		to = to[size:]
		if f >= t2sLow && f < t2sHigh {
			t2s.dense[f-t2sLow] = s
			continue
		}
		t2s.supp = append(t2s.supp, f)
		t2s.suppT = append(t2s.suppT, s)
	}
}

// SimplifiedRune returns the Simplified form of r, or r itself when r is not a
// Traditional character of the table.
func SimplifiedRune(r rune) rune {
	if r < t2sLow {
		return r
	}
	t2s.once.Do(t2sInit)
	if r < t2sHigh {
		if s := t2s.dense[r-t2sLow]; s != 0 {
			return s
		}
		return r
	}
	if r < 0x20000 {
		return r
	}
	i := sort.Search(len(t2s.supp), func(i int) bool { return t2s.supp[i] >= r })
	if i < len(t2s.supp) && t2s.supp[i] == r {
		return t2s.suppT[i]
	}
	return r
}

// FoldTraditional returns s with Traditional Chinese characters replaced by
// their Simplified forms (so 簡體 and 简体 compare equal). Everything else,
// invalid UTF-8 included, is copied unchanged. When s holds no Traditional
// character, s itself is returned without allocating. Safe for concurrent use.
func FoldTraditional(s string) string {
	i := firstTraditional(s)
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	b = append(b, s[:i]...)
	return string(AppendFoldTraditional(b, s[i:]))
}

// AppendFoldTraditional appends FoldTraditional(s) to dst and returns the
// extended slice, for callers that reuse a buffer.
func AppendFoldTraditional(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0xE3 { // ASCII and runes below U+3000: never Traditional
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 { // invalid UTF-8: keep the byte
			dst = append(dst, c)
			i++
			continue
		}
		if sr := SimplifiedRune(r); sr != r {
			dst = utf8.AppendRune(dst, sr)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// FoldTraditionalBytes appends the Simplified form of src to dst and returns
// the extended slice. Its signature fits CleanOptions.Fold, so that the cleanup
// stage can fold scripts: CleanOptions{Fold: FoldTraditionalBytes}.
func FoldTraditionalBytes(dst, src []byte) []byte {
	// A read-only string view of src: AppendFoldTraditional does not keep it.
	return AppendFoldTraditional(dst, unsafe.String(unsafe.SliceData(src), len(src)))
}

// HasTraditional reports whether s contains a character that FoldTraditional
// would change.
func HasTraditional(s string) bool { return firstTraditional(s) >= 0 }

// firstTraditional returns the byte offset of the first Traditional character
// of s, or -1.
func firstTraditional(s string) int {
	for i := 0; i < len(s); {
		if s[i] < 0xE3 {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if size > 1 && SimplifiedRune(r) != r {
			return i
		}
		i += size
	}
	return -1
}
