package hugepage

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestAdvise advises a fresh 64 MB array, writes it, and reads back from
// /proc/self/smaps that its mapping is advised (VmFlags "hg") and, where the
// kernel gives huge pages to advised memory, that they back it. A small
// array is left alone.
func TestAdvise(t *testing.T) {
	small := make([]byte, MinBytes-1)
	Advise(small) // nothing to check but that it does not fail
	b := make([]uint64, 8<<20)
	Advise(b)
	for i := range b {
		b[i] = uint64(i)
	}
	if runtime.GOOS != "linux" {
		t.Skip("advice is Linux's only")
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(mode), "[madvise]") && !strings.Contains(string(mode), "[always]") {
		t.Skipf("transparent huge pages off here (%q)", mode)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	addr := uintptr(unsafe.Pointer(&b[len(b)/2]))
	flags, huge := "", ""
	in := false
	for line := range strings.Lines(string(smaps)) {
		if lo, hi, ok := mappingRange(line); ok {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			flags = line
		}
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			huge = strings.TrimSpace(strings.TrimPrefix(line, "AnonHugePages:"))
		}
	}
	if !strings.Contains(flags, " hg") {
		t.Fatalf("the array's mapping is not advised: %q", flags)
	}
	t.Logf("AnonHugePages of its mapping: %s", huge)
}

// mappingRange reads the address range that starts a mapping's line of
// smaps ("7f12a000-7f12c000 rw-p ..."); ok is false on the other lines.
func mappingRange(line string) (lo, hi uintptr, ok bool) {
	r, _, _ := strings.Cut(line, " ")
	a, b, ok := strings.Cut(r, "-")
	if !ok {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(a, 16, 64)
	y, err2 := strconv.ParseUint(b, 16, 64)
	return uintptr(x), uintptr(y), err1 == nil && err2 == nil
}
