package command

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the bar's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProgressNotOnPipes(t *testing.T) {
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is not a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) {
		t.Error("a pipe is not a terminal")
	}
	if p := startProgress(w, "x", 10, func() (int64, int64) { return 0, 0 }); p != nil {
		t.Error("progress started on a pipe")
	}
	var p *progress // nil is a valid no-op
	p.Stop()
	if p.Log(w) != w {
		t.Error("nil progress should log to w")
	}
}

func TestProgressDraws(t *testing.T) {
	for _, total := range []int64{1000, 0} {
		var buf syncBuffer
		var mu sync.Mutex
		done := int64(0)
		p := newProgress(&buf, "work", total, func() (int64, int64) {
			mu.Lock()
			defer mu.Unlock()
			return done, done / 10
		}, 5*time.Millisecond)
		for i := range 10 {
			mu.Lock()
			done = int64(i+1) * 100
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
		p.Log(&buf).Write([]byte("a message\n"))
		p.Stop()
		p.Stop() // idempotent
		out := buf.String()
		if !strings.Contains(out, "work") || !strings.Contains(out, "100 docs") || !strings.Contains(out, "a message") {
			t.Errorf("total %d: output %q", total, out)
		}
	}
}

func TestIsTerminalUnwraps(t *testing.T) {
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no terminal:", err)
	}
	defer tty.Close()
	if !isTerminal(tty) || !isTerminal(&lockedWriter{w: tty}) {
		t.Error("a terminal, bare or wrapped, should count as one")
	}
}
