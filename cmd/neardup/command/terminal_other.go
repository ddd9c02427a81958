//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package command

import "os"

// isTerminalFile falls back to "a character device" where there is no
// termios to ask.
func isTerminalFile(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
