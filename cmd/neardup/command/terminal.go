package command

import (
	"io"
	"os"
)

// readsTerminal reports whether r is a terminal (not merely a character
// device: /dev/null is one too, and reading it is fine).
func readsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isTerminalFile(f)
}
