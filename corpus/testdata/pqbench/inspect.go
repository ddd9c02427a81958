package main

import (
	"context"
	"fmt"
	"log"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// inspect reads a whole Parquet file with arrow-go, an independent reader,
// and prints its Arrow schema and row count.
func inspect(path string) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	defer tbl.Release()
	fmt.Printf("%s: %d rows, %d row groups\n%s\n", path, tbl.NumRows(), rdr.NumRowGroups(), tbl.Schema())
}
