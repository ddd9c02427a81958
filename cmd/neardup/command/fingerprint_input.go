package command

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/features"
)

// inputFlags are the flags of every command that reads a corpus
// (fingerprint, idf build; dedup may reuse them).
type inputFlags struct {
	format    string
	idField   string
	textField string
	skipBad   bool
}

func (f *inputFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.format, "format", "auto", "input format: auto (JSONL for .jsonl/.ndjson/.json, Parquet for .parquet or the PAR1 magic, WARC for .warc/.wet names or a WARC/1.x start, else one document per file), jsonl, text, lines, parquet or warc")
	fs.StringVar(&f.idField, "id-field", "id", "JSONL field, Parquet column (a.b for a nested one) or WARC header holding the document id (a string or number; missing -> file:line, file:row for Parquet; for WARC, id means WARC-Target-URI)")
	fs.StringVar(&f.textField, "text-field", "text", "JSONL field or Parquet column (a.b for a nested one) holding the document text")
	fs.BoolVar(&f.skipBad, "skip-bad", false, "skip malformed JSONL lines and oversized documents with a warning instead of stopping")
}

// inputStats counts what an input reader skipped, for the final summary.
type inputStats struct {
	bad    atomic.Int64 // malformed lines and oversized documents skipped
	binary atomic.Int64 // binary files skipped
}

// open opens the inputs named by args ("-" or none: stdin). Warnings about
// skipped input go to warn, which is looked up at each call so that it can
// be redirected above a progress bar once one is shown.
func (f *inputFlags) open(args []string, stdin io.Reader, warn func() io.Writer, st *inputStats) (*corpus.Reader, error) {
	format, err := corpus.ParseFormat(f.format)
	if err != nil {
		return nil, usagef("--format: %v", err)
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	if n := countStdin(args); n > 1 {
		return nil, usagef("standard input (-) given %d times", n)
	}
	opt := corpus.Options{
		Format:    format,
		IDField:   f.idField,
		TextField: f.textField,
		SkipBad:   f.skipBad,
		Stdin:     stdin,
		NoRaw:     true, // no command here needs the raw line: decode texts in place
		OnBad: func(err error) {
			if errors.Is(err, corpus.ErrBinary) {
				st.binary.Add(1)
			} else {
				st.bad.Add(1)
			}
			fmt.Fprintf(warn(), "neardup: warning: skipped %v\n", err)
		},
	}
	r, err := corpus.Open(args, opt)
	if errors.Is(err, corpus.ErrOptions) {
		return nil, usagef("%v", err)
	}
	return r, err
}

func countStdin(args []string) int {
	n := 0
	for _, a := range args {
		if a == "-" {
			n++
		}
	}
	return n
}

// profileFlags choose and configure the feature profile.
type profileFlags struct {
	profile string
	bits    int
	idf     string
}

func (f *profileFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.profile, "profile", "p", "default", "feature profile (see 'neardup fingerprint --help' for the list)")
	fs.IntVar(&f.bits, "bits", 64, "fingerprint width: 32, 64 or 128")
	fs.StringVar(&f.idf, "idf", "", "IDF table (from 'neardup idf build') for TF-IDF weights")
}

// load returns the configured profile. Unknown names and widths are usage
// errors (exit 2) whose message lists the valid choices.
func (f *profileFlags) load() (*features.Profile, error) {
	p, err := f.loadName()
	if err != nil {
		return nil, err
	}
	if f.bits != p.Bits() {
		if p, err = p.WithBits(f.bits); err != nil {
			return nil, usagef("--bits %d: %v", f.bits, err)
		}
	}
	if f.idf != "" {
		t, err := readIDFFile(f.idf)
		if err != nil {
			return nil, err
		}
		p = p.WithIDF(t)
	}
	return p, nil
}

// loadName looks the profile up by name only.
func (f *profileFlags) loadName() (*features.Profile, error) {
	p, err := features.Lookup(f.profile)
	if errors.Is(err, features.ErrUnknownProfile) {
		return nil, usagef("--profile: %v", err)
	}
	return p, err
}

func readIDFFile(name string) (*features.IDF, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--idf: %w", err)
	}
	defer fh.Close()
	t, err := features.ReadIDF(fh)
	if err != nil {
		return nil, fmt.Errorf("--idf %s: %w", name, err)
	}
	return t, nil
}

// listProfiles prints every profile with its description. It builds each
// profile (the zh ones load a dictionary), so --help lists only the names.
func listProfiles(w io.Writer) error {
	for _, name := range features.Names() {
		p, err := features.Lookup(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%-10s %s\n\n", name, wrap(p.Doc(), 66, strings.Repeat(" ", 11)))
	}
	return nil
}

// wrap breaks s into lines of at most width runes, indenting the following
// lines by indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		l := len([]rune(w))
		if i > 0 {
			if n+1+l > width {
				b.WriteString("\n" + indent)
				n = 0
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}

// lockedWriter serialises writes from several goroutines (the reader's
// warnings and the writer's) to one stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer // guarded by mu
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// workersFlag validates --workers: 0 means every core.
func workersFlag(n int) (int, error) {
	if n < 0 {
		return 0, usagef("--workers %d: must be 0 (all cores) or more", n)
	}
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return n, nil
}

// noArgsHelp makes a command group without a subcommand print its help.
func noArgsHelp(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unknown command %q for %q", args[0], c.CommandPath())
	}
	return c.Help()
}
