package command

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/internal/outfile"
)

func newIDFCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "idf",
		Short: "Learn inverse document frequencies from a corpus",
		Long: `Commands for IDF tables: the term weights that make TF-IDF features. A table
learned from your own corpus weighs its boilerplate down and its distinctive
words up; pass it to fingerprint, compare or dedup with --idf FILE.`,
		Args: cobra.ArbitraryArgs,
		RunE: noArgsHelp,
	}
	c.AddCommand(newIDFBuildCommand())
	return c
}

type idfBuildCmd struct {
	in      inputFlags
	profile string
	out     string
	workers int
}

func newIDFBuildCommand() *cobra.Command {
	var f idfBuildCmd
	c := &cobra.Command{
		Use:   "build [flags] [FILE|DIR|-]...",
		Short: "Build an IDF table from documents",
		Long: `Count in how many documents each term of the profile's tokenizer occurs and
write the table idf = ln((1+N)/(1+df)) + 1 (smoothed, as scikit-learn does),
in the text format of features.IDF:

  neardup-idf 1 docs=N
  term<TAB>idf
  ...

Inputs are read as by 'neardup fingerprint' (JSONL, text, lines, .gz, .zst,
directories, - for stdin). The table goes to --out, written to a temporary file
and renamed so that an interrupted run leaves no partial table (a device or
FIFO is written in place, never replaced), or to stdout (no --out, or -).`,
		Example: `  neardup idf build --out news.idf news.jsonl.zst
  neardup idf build --profile zh-words --text-field body laws/ > laws.idf
  neardup fingerprint --idf news.idf news.jsonl.zst`,
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c.Context(), args, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	f.in.register(fs)
	fs.StringVarP(&f.profile, "profile", "p", "default", "feature profile whose tokens are counted")
	fs.StringVarP(&f.out, "out", "o", "", "output file (default or -: stdout)")
	fs.IntVarP(&f.workers, "workers", "j", 0, "tokenizing goroutines (0: one per core)")
	return c
}

func (f *idfBuildCmd) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	pf := profileFlags{profile: f.profile}
	p, err := pf.loadName()
	if err != nil {
		return err
	}
	workers, err := workersFlag(f.workers)
	if err != nil {
		return err
	}
	stderr = &lockedWriter{w: stderr}
	var bar *progress
	var st inputStats
	r, err := f.in.open(args, stdin, func() io.Writer { return bar.Log(stderr) }, &st)
	if err != nil {
		return err
	}
	defer r.Close()
	var docs atomic.Int64
	bar = startProgress(stderr, "idf", r.Size(), func() (int64, int64) { return r.Consumed(), docs.Load() })
	defer bar.Stop()

	// One builder per worker, merged at the end: IDFBuilder is not safe for
	// concurrent use, and document frequencies simply add up.
	texts := make(chan string, 4*workers)
	builders := make([]*features.IDFBuilder, workers)
	var wg sync.WaitGroup
	for i := range builders {
		builders[i] = features.NewIDFBuilder(p)
		wg.Add(1)
		go func(b *features.IDFBuilder) {
			defer wg.Done()
			for t := range texts {
				b.Add(t)
				docs.Add(1)
			}
		}(builders[i])
	}
	var readErr error
	for {
		if err := ctx.Err(); err != nil {
			readErr = err
			break
		}
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		texts <- d.Text
	}
	close(texts)
	wg.Wait()
	bar.Stop()
	if readErr != nil {
		return readErr
	}
	b := builders[0]
	for _, o := range builders[1:] {
		b.Merge(o)
	}
	t := b.IDF()
	out := f.out
	if out == "" {
		out = outfile.Stdout
	}
	if err := outfile.WriteFile(out, stdout, func(w io.Writer) error { _, err := t.WriteTo(w); return err }); err != nil {
		return err
	}
	if out == outfile.Stdout {
		return nil
	}
	fmt.Fprintf(stderr, "neardup: wrote %s: %d terms from %d documents\n", f.out, t.Len(), b.Docs())
	return nil
}
