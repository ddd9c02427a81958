package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/neardup/neardup/internal/outfile"
	"github.com/neardup/neardup/internal/webgen"
)

// poolCorpora are the corpora (testdata/corpora) whose sentences make the documents.
var poolCorpora = []string{"en_prose", "en_gitdocs_dev", "en_spdx"}

// genFlags are the flags that say which corpus: the generation's, and a
// check's that makes the corpus again (check -n).
type genFlags struct {
	opt     webgen.Options
	n       *int64
	profile *string
	workers *int
	dir     *string
}

// addGenFlags defines the corpus flags on fs; n's default is nDefault.
func addGenFlags(fs *flag.FlagSet, nDefault int64) *genFlags {
	f := &genFlags{}
	opt := &f.opt
	f.n = fs.Int64("n", nDefault, "documents to write")
	fs.Uint64Var(&opt.Seed, "seed", 1, "the corpus: the same seed and flags give the same bytes")
	fs.Float64Var(&opt.Hot, "hot", 0, "fraction of documents carrying the one hot paragraph (0: none)")
	fs.IntVar(&opt.MeanBytes, "mean", 0, "mean body size in bytes (0: 1000; bodies uniform in 300 .. 2*mean-300)")
	fs.Float64Var(&opt.Near, "near", 0, "fraction of near-copies, controls included (0: 0.10; negative: none)")
	fs.Float64Var(&opt.Control, "control", 0, "share of the near-copies planted as controls at J in [0.5, 0.8) (0: 0.1; negative: none)")
	fs.Float64Var(&opt.Exact, "exact", 0, "fraction of exact copies (0: 0.02; negative: none)")
	fs.Float64Var(&opt.Boilerplate, "boilerplate", 0, "fraction of documents with a shared paragraph (0: 0.3; negative: none)")
	fs.IntVar(&opt.Paragraphs, "paragraphs", 0, "number of shared paragraphs (0: 2000)")
	fs.IntVar(&opt.Sites, "sites", 0, "number of web sites whose pages share the site's template: header, menu, notices, footer (0: none)")
	fs.Float64Var(&opt.SiteShare, "site-share", 0, "fraction of documents that are pages of a site, with -sites (0: 0.8)")
	fs.Float64Var(&opt.ShortShare, "short", 0, "fraction of documents with a short body: 1 to 3 sentences, 80 to 400 bytes (0: none)")
	f.profile = fs.String("profile", "", `named option set: "default", "crawl" (-sites 2000 -site-share 0.8) or "crawl-short" (the same and -short 0.3); other flags override its values`)
	f.workers = fs.Int("workers", 0, "generating goroutines (0: GOMAXPROCS); the output does not depend on it")
	f.dir = fs.String("corpora", "", "directory of the corpora (default: NEARDUP_CORPORA, else testdata/corpora of the repository)")
	return f
}

// generator applies -profile (the flags given win over it: args are parsed
// again onto its values), validates, and loads the pool.
func (f *genFlags) generator(fs *flag.FlagSet, args []string) (*webgen.Generator, *webgen.Pool, error) {
	if *f.profile != "" {
		p, err := webgen.Profile(*f.profile)
		if err != nil {
			return nil, nil, err
		}
		p.Seed = f.opt.Seed // -seed, given or not
		f.opt = p
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
	}
	if *f.n < 0 {
		return nil, nil, fmt.Errorf("-n %d: want at least 0", *f.n)
	}
	// Validate before the seconds of reading the pool (New does it again).
	valid := f.opt
	valid.EnsureDefaults()
	if err := valid.Validate(); err != nil {
		return nil, nil, err
	}
	pool, err := loadPool(*f.dir)
	if err != nil {
		return nil, nil, err
	}
	g, err := webgen.New(pool, f.opt)
	return g, pool, err
}

func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("neardup-gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := addGenFlags(fs, 1000)
	n, workers := f.n, f.workers
	out := fs.String("out", "-", `output file ("-": standard output); a .zst suffix compresses with zstd`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	start := time.Now()
	g, pool, err := f.generator(fs, args)
	if err != nil {
		return err
	}
	loaded := time.Now()
	var written int64
	err = outfile.WriteFile(*out, stdout, func(w io.Writer) error {
		if !strings.HasSuffix(*out, ".zst") {
			cw := &countWriter{w: w}
			err := g.Write(ctx, cw, 0, *n, *workers)
			written = cw.n
			return err
		}
		zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			return err
		}
		cw := &countWriter{w: zw}
		err = g.Write(ctx, cw, 0, *n, *workers)
		written = cw.n
		return errors.Join(err, zw.Close())
	})
	if err != nil {
		return err
	}
	d := time.Since(loaded)
	fmt.Fprintf(stderr, "neardup-gen: %d sentences read in %.1fs; %d documents, %d bytes (uncompressed) written in %.1fs (%.0f MB/s, %.0f docs/s)\n",
		pool.Len(), loaded.Sub(start).Seconds(), *n, written, d.Seconds(), float64(written)/1e6/d.Seconds(), float64(*n)/d.Seconds())
	return nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// loadPool reads the sentence pool from dir, or from the default directory.
func loadPool(dir string) (*webgen.Pool, error) {
	if dir == "" {
		dir = corporaDir()
	}
	var paths []string
	for _, name := range poolCorpora {
		p := filepath.Join(dir, name+".jsonl.zst")
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("corpus %s: %w (set -corpora or NEARDUP_CORPORA)", name, err)
		}
		paths = append(paths, p)
	}
	return webgen.LoadPool(paths...)
}

// corporaDir returns NEARDUP_CORPORA, else testdata/corpora in the
// directory holding go.mod above the working directory (the repository's
// copy of the corpora), else testdata/corpora under the working directory.
func corporaDir() string {
	if d := os.Getenv("NEARDUP_CORPORA"); d != "" {
		return d
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return filepath.Join(d, "testdata", "corpora")
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return filepath.Join("testdata", "corpora")
}
