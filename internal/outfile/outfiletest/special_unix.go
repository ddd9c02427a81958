//go:build unix

package outfiletest

import (
	"os"
	"syscall"
)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// releaseReader opens the FIFO for writing without blocking and closes it: a
// reader waiting in open then sees end of file. With no reader the open fails
// (ENXIO), which is fine.
func releaseReader(path string) {
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}
