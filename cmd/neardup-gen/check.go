package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/neardup/neardup/internal/webgen"
)

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("neardup-gen check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	corpus := fs.String("corpus", "", "the generated corpus (.zst: zstd); or, instead, the flags that generated it (-n, -seed, -profile, ...): the documents are made again, which needs no memory for their texts (10^8 documents)")
	dups := fs.String("duplicates", "", "the dedup's --duplicates file (.zst: zstd)")
	gf := addGenFlags(fs, 0)
	var opt webgen.CheckOptions
	fs.Float64Var(&opt.Threshold, "threshold", 0.8, "the dedup's Jaccard threshold")
	fs.IntVar(&opt.Examples, "examples", 20, "unplanted and false removals to list (negative: none)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*corpus == "") == (*gf.n == 0) || *dups == "" || fs.NArg() > 0 {
		return errors.New("usage: neardup-gen check (-corpus FILE | -n N [-seed S] [-profile P] [generation flags]) -duplicates FILE [-threshold 0.8] [-json]")
	}
	dr, err := open(*dups)
	if err != nil {
		return err
	}
	defer dr.Close()
	var rep webgen.Report
	if *corpus != "" {
		cr, err := open(*corpus)
		if err != nil {
			return err
		}
		defer cr.Close()
		if rep, err = webgen.Check(ctx, cr, dr, opt); err != nil {
			return err
		}
	} else {
		g, _, err := gf.generator(fs, args)
		if err != nil {
			return err
		}
		if rep, err = webgen.CheckGenerated(ctx, g, *gf.n, dr, opt, *gf.workers); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteText(stdout)
}

// open opens path for reading, through zstd when it ends in .zst.
func open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, ".zst") {
		return f, nil
	}
	zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<31))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return zstdFile{zr, f}, nil
}

type zstdFile struct {
	*zstd.Decoder
	f *os.File
}

func (z zstdFile) Close() error {
	z.Decoder.Close()
	return z.f.Close()
}
