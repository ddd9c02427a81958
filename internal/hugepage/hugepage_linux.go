package hugepage

import "syscall"

// advise calls madvise(MADV_HUGEPAGE) on [addr, addr+n); an error (a kernel
// without transparent huge pages) changes nothing and is ignored.
func advise(addr, n uintptr) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, n, syscall.MADV_HUGEPAGE)
}
