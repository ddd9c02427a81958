// Command neardup-gen writes a web-like corpus of any size with planted
// duplicates (package internal/webgen), and checks a dedup's removals
// against them:
//
//	neardup-gen -n 1000000 -seed 1 [-hot 0.2] -out web.jsonl.zst
//	neardup dedup web.jsonl.zst --duplicates dups.jsonl
//	neardup-gen check -corpus web.jsonl.zst -duplicates dups.jsonl [-threshold 0.8] [-json]
//	neardup-gen check -n 100000000 -seed 1 -duplicates dups.jsonl   # the corpus made again, not read
//
// -sites N makes a fraction (-site-share, 0.8) of the documents pages of N
// sites, each wrapped in its site's template (header, menu, notices,
// footer), so that pages per site, and the dedup's candidates per document,
// grow with -n; -short F gives that fraction of documents a short body (80
// to 400 bytes). -profile names a set of these: -profile crawl is -sites
// 2000 -site-share 0.8, -profile crawl-short adds -short 0.3, and flags
// given beside them override them:
//
//	neardup-gen -n 300000 -profile crawl -out crawl.jsonl
//
// The corpus is made from the sentences of the repository's English corpora
// (-corpora, default NEARDUP_CORPORA or testdata/corpora of the
// repository) and is the same bytes for the same seed and flags, whatever
// -workers.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "neardup-gen:", err)
		os.Exit(1)
	}
}

// run dispatches to a subcommand: "check", or generation.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "check" {
		return runCheck(ctx, args[1:], stdout, stderr)
	}
	return runGen(ctx, args, stdout, stderr)
}
