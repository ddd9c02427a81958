package keptfiles_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/keptfiles"
)

// Two daily batches: the second is deduplicated against what the first
// kept, in the kept set beside the snapshot seen.idx.
func Example() {
	dir, _ := os.MkdirTemp("", "keptfiles")
	defer os.RemoveAll(dir)
	text := "the quick brown fox jumps over the lazy dog while the cat sleeps on a warm mat by the door"
	day1 := filepath.Join(dir, "day1.jsonl")
	day2 := filepath.Join(dir, "day2.jsonl")
	os.WriteFile(day1, []byte(`{"id":"a","text":"`+text+`"}`+"\n"), 0o644)
	os.WriteFile(day2, []byte(`{"id":"b","text":"`+text+`"}`+"\n"+`{"id":"c","text":"something else entirely, about the weather in spring"}`+"\n"), 0o644)

	opt := dedup.Options{KeptFiles: keptfiles.Files{}, Index: filepath.Join(dir, "seen.idx"), UpdateIndex: true}
	for _, day := range []string{day1, day2} {
		sum, err := dedup.Run(context.Background(), []string{day}, opt)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %d kept, %d removed in favour of earlier runs, %d in the set\n",
			filepath.Base(day), sum.Kept, sum.IndexDuplicates, sum.IndexSize)
	}
	// Output:
	// day1.jsonl: 1 kept, 0 removed in favour of earlier runs, 1 in the set
	// day2.jsonl: 1 kept, 1 removed in favour of earlier runs, 2 in the set
}
