// Command neardup-beam runs "neardup dedup" as an Apache Beam pipeline:
//
//	neardup-beam dedup --output kept.jsonl --duplicates dups.jsonl crawl.jsonl.zst
//	neardup-beam dedup --runner flink --endpoint localhost:8099 --environment_type LOOPBACK ...
//
// See package github.com/neardup/neardup/beam/pipeline and the README.
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "neardup-beam:", err)
		os.Exit(1)
	}
}
