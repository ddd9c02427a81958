package outfiletest

import "syscall"

// mknodNull makes the device 1:3, /dev/null on Linux; (1<<8)|3 is Linux's
// encoding of a device number with a small major and minor.
func mknodNull(path string) error { return syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3) }
