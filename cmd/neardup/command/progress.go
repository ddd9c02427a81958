package command

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// isTerminal reports whether w is a character device (a terminal), the only
// place a progress bar belongs: redirected stderr gets plain messages.
func isTerminal(w io.Writer) bool {
	if l, ok := w.(*lockedWriter); ok {
		w = l.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressPoll returns the work done so far: input bytes (as stored, so that
// they compare with the total) and documents.
type progressPoll func() (bytes, docs int64)

// progress draws a bar of input bytes with document count, rate and ETA on a
// terminal. A nil *progress is valid and draws nothing, so callers need no
// checks. Safe for concurrent use.
type progress struct {
	p    *mpb.Progress
	bar  *mpb.Bar
	poll progressPoll
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
	docs atomic.Int64 // last polled document count, for the decorator
}

// startProgress shows progress on w if w is a terminal, else returns nil.
// total is the input size in bytes, 0 when unknown (stdin): then a counter is
// shown without a bar.
func startProgress(w io.Writer, label string, total int64, poll progressPoll) *progress {
	if !isTerminal(w) {
		return nil
	}
	return newProgress(w, label, total, poll, 150*time.Millisecond)
}

func newProgress(w io.Writer, label string, total int64, poll progressPoll, every time.Duration) *progress {
	pr := &progress{
		p:    mpb.New(mpb.WithOutput(w), mpb.WithRefreshRate(every), mpb.WithAutoRefresh()),
		poll: poll,
		stop: make(chan struct{}),
	}
	docsDecor := decor.Any(func(decor.Statistics) string {
		return fmt.Sprintf("%d docs", pr.docs.Load())
	}, decor.WC{W: 11})
	prepend := mpb.PrependDecorators(
		decor.Name(label+" ", decor.WC{C: decor.DindentRight}),
		decor.CountersKibiByte("% .1f/% .1f", decor.WC{W: 19}),
	)
	if total > 0 {
		pr.bar = pr.p.AddBar(total, mpb.BarWidth(30), prepend, mpb.AppendDecorators(
			docsDecor,
			decor.AverageSpeed(decor.SizeB1024(0), "% .1f", decor.WC{W: 13}),
			decor.Name(" ETA "),
			decor.AverageETA(decor.ET_STYLE_GO),
		))
	} else {
		pr.bar = pr.p.AddSpinner(0, mpb.PrependDecorators(
			decor.Name(label+" ", decor.WC{C: decor.DindentRight}),
			decor.CurrentKibiByte("% .1f", decor.WC{W: 12}),
		), mpb.AppendDecorators(docsDecor, decor.AverageSpeed(decor.SizeB1024(0), " % .1f", decor.WC{W: 14})))
	}
	pr.wg.Add(1)
	go func() {
		defer pr.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			b, d := pr.poll()
			pr.docs.Store(d)
			if total > 0 {
				b = min(b, total-1) // completion is Stop's to declare
			}
			pr.bar.SetCurrent(b)
			select {
			case <-pr.stop:
				return
			case <-t.C:
			}
		}
	}()
	return pr
}

// Log returns where messages should go while the bar is shown: above it.
func (pr *progress) Log(w io.Writer) io.Writer {
	if pr == nil {
		return w
	}
	return pr.p
}

// Stop completes the bar with the final figures and waits until it is drawn.
func (pr *progress) Stop() {
	if pr == nil {
		return
	}
	pr.once.Do(func() {
		close(pr.stop)
		pr.wg.Wait()
		b, d := pr.poll()
		pr.docs.Store(d)
		pr.bar.SetCurrent(b)
		pr.bar.SetTotal(-1, true)
		pr.p.Wait()
	})
}
