// Package hugepage asks the kernel to back large, long-lived arrays with
// transparent huge pages (2 MB) where it can.
//
// At start-up the service fills gigabytes of fresh memory (the shingle sets
// and the tables of every stored document), and each 4 KB page costs a page
// fault on its first write: on a virtual machine those faults were 40% of
// the CPU of a 10M-document start-up (BENCHMARKS.md). The Go runtime does not
// advise its heap for huge pages, and Linux's default policy ("madvise")
// gives them only to advised memory, so the arrays that hold most of those
// bytes are advised here, right after they are made and before they are
// written. It is only advice: where the kernel has no huge page to give, or
// transparent huge pages are off, or on another system, nothing changes.
package hugepage

import (
	"runtime"
	"unsafe"
)

// Size is the huge page size advised for: arrays whose 2 MB-aligned interior
// is empty are left alone.
const Size = 2 << 20

// MinBytes is the smallest array Advise advises: below it, at most one huge
// page would fit, and each advice splits the heap's mapping.
const MinBytes = 4 << 20

// Advise asks for huge pages under the whole pages of s's backing array
// (up to its capacity), when it holds MinBytes or more. Call it before s is
// written: pages written already keep their size.
func Advise[T any](s []T) {
	var zero T
	n := uintptr(cap(s)) * unsafe.Sizeof(zero)
	if n < MinBytes {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (start + Size - 1) &^ (Size - 1)
	hi := (start + n) &^ (Size - 1)
	if hi > lo {
		advise(lo, hi-lo)
	}
	runtime.KeepAlive(s)
}
