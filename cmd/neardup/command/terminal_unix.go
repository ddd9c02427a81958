//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package command

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminalFile asks the terminal driver for f's settings, as isatty(3)
// does: only a terminal has them.
func isTerminalFile(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlReadTermios)
	return err == nil
}
