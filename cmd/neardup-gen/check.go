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
	corpus := fs.String("corpus", "", "the generated corpus (.zst: zstd)")
	dups := fs.String("duplicates", "", "the dedup's --duplicates file (.zst: zstd)")
	var opt webgen.CheckOptions
	fs.Float64Var(&opt.Threshold, "threshold", 0.8, "the dedup's Jaccard threshold")
	fs.IntVar(&opt.Examples, "examples", 20, "unplanted and false removals to list (negative: none)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *corpus == "" || *dups == "" || fs.NArg() > 0 {
		return errors.New("usage: neardup-gen check -corpus FILE -duplicates FILE [-threshold 0.8] [-json]")
	}
	cr, err := open(*corpus)
	if err != nil {
		return err
	}
	defer cr.Close()
	dr, err := open(*dups)
	if err != nil {
		return err
	}
	defer dr.Close()
	rep, err := webgen.Check(ctx, cr, dr, opt)
	if err != nil {
		return err
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
