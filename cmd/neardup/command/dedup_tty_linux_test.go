package command

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns the terminal end of a new pseudo-terminal, and its master.
func openPTY(t *testing.T) (tty, master *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skip("no pseudo-terminals here:", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skip("unlockpt:", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skip("ptsname:", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip("opening the terminal:", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty, master
}

// TestDedupNoInputOnTerminal runs dedup without arguments with a terminal on
// standard input: instead of waiting there for documents nobody announced,
// it exits 2 with a hint. "-" still reads the terminal, and a device that is
// not a terminal (/dev/null) is read as standard input.
func TestDedupNoInputOnTerminal(t *testing.T) {
	tty, _ := openPTY(t)
	done := make(chan struct{})
	var code int
	var stderr bytes.Buffer
	go func() {
		defer close(done)
		code = Main([]string{"dedup", "-q"}, tty, &bytes.Buffer{}, &stderr)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("dedup without input is still waiting on the terminal; want a usage hint")
	}
	if code != 2 || !strings.Contains(stderr.String(), "terminal") || !strings.Contains(stderr.String(), "neardup dedup --help") {
		t.Errorf("exit %d, stderr %q; want 2 and a hint naming the terminal and --help", code, stderr.String())
	}

	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	stderr.Reset()
	if code := Main([]string{"dedup"}, null, &bytes.Buffer{}, &stderr); code != 0 || !strings.Contains(stderr.String(), "0 docs read") {
		t.Errorf("stdin %s: exit %d, stderr %q; want 0 docs read", os.DevNull, code, stderr.String())
	}
}
