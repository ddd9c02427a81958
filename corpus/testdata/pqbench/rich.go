package main

import (
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
)

type richMeta struct {
	Lang  string   `parquet:"lang"`
	Score *float64 `parquet:"score,optional"`
}

type richRow struct {
	ID    string    `parquet:"id"`
	URL   *string   `parquet:"url,optional"`
	Text  string    `parquet:"text"`
	Blob  []byte    `parquet:"blob,optional"`
	Tags  []string  `parquet:"tags,list"`
	Meta  richMeta  `parquet:"meta"`
	Count *int32    `parquet:"count,optional"`
	When  time.Time `parquet:"when,timestamp(millisecond)"`
}

// writeRich writes rows with nested, nullable, list, binary and timestamp
// columns, every third a copy of the one before.
func writeRich(path string) {
	var rows []richRow
	for i := range 30 {
		text := strings.Repeat(fmt.Sprintf("document %d has its own words here and there ", i/3*3), 20)
		if i%3 == 1 {
			text += " and one more"
		}
		s := float64(i) / 3
		u := fmt.Sprintf("https://e.example/%d", i)
		r := richRow{ID: fmt.Sprint("r", i), Text: text, Blob: []byte{0, byte(i), 0xff}, Tags: []string{"a", fmt.Sprint(i)},
			Meta: richMeta{Lang: "en", Score: &s}, URL: &u, When: time.Date(2024, 1, 1, 0, 0, i, 0, time.UTC)}
		if i%2 == 0 {
			r.URL, r.Meta.Score, r.Tags, r.Blob = nil, nil, nil, nil
		}
		rows = append(rows, r)
	}
	if err := parquet.WriteFile(path, rows, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(8)); err != nil {
		log.Fatal(err)
	}
}
