// Throwaway: converts a shared corpus to Parquet and times reading the text
// and id columns of it with parquet-go and with arrow-go.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"runtime"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
)

type doc struct {
	ID    string `json:"id" parquet:"id"`
	Text  string `json:"text" parquet:"text"`
	Group string `json:"group" parquet:"group"`
}

func convert(in, out string, perGroup int64, repeat int) {
	of, _ := os.Create(out)
	w := parquet.NewGenericWriter[doc](of, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(perGroup))
	for r := range repeat {
		f, err := os.Open(in)
		if err != nil {
			log.Fatal(err)
		}
		zr, _ := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<31))
		dec := json.NewDecoder(bufio.NewReader(zr))
		for {
			var d doc
			if err := dec.Decode(&d); err == io.EOF {
				break
			} else if err != nil {
				log.Fatal(err)
			}
			if r > 0 {
				d.ID = fmt.Sprint(d.ID, "-", r)
			}
			w.Write([]doc{d})
		}
		zr.Close()
		f.Close()
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	of.Close()
}

// parquetGo reads id and text page by page, as neardup's corpus does.
func parquetGo(path string) (n int, bytes int64) {
	f, _ := os.Open(path)
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		log.Fatal(err)
	}
	idc, _ := pf.Schema().Lookup("id")
	tc, _ := pf.Schema().Lookup("text")
	buf := make([]parquet.Value, 256)
	for _, rg := range pf.RowGroups() {
		for _, ci := range []int{idc.ColumnIndex, tc.ColumnIndex} {
			pages := rg.ColumnChunks()[ci].Pages()
			for {
				p, err := pages.ReadPage()
				if err == io.EOF {
					break
				}
				vr := p.Values()
				for {
					k, err := vr.ReadValues(buf)
					for _, v := range buf[:k] {
						s := string(v.ByteArray())
						if ci == tc.ColumnIndex {
							n++
							bytes += int64(len(s))
						}
					}
					if err == io.EOF {
						break
					}
				}
				parquet.Release(p)
			}
			pages.Close()
		}
	}
	return n, bytes
}

// arrowGo reads id and text row group by row group through pqarrow.
func arrowGo(path string) (n int, bytes int64) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		log.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 256}, memory.DefaultAllocator)
	if err != nil {
		log.Fatal(err)
	}
	sc := rdr.MetaData().Schema
	cols := []int{sc.ColumnIndexByName("id"), sc.ColumnIndexByName("text")}
	for g := 0; g < rdr.NumRowGroups(); g++ {
		tbl, err := fr.ReadRowGroups(context.Background(), cols, []int{g})
		if err != nil {
			log.Fatal(err)
		}
		for _, chunk := range tbl.Column(1).Data().Chunks() {
			a := chunk.(*array.String)
			for i := 0; i < a.Len(); i++ {
				s := string([]byte(a.Value(i))) // a copy, as the corpus reader makes
				n++
				bytes += int64(len(s))
			}
		}
		tbl.Release()
	}
	return n, bytes
}

func main() {
	conv := flag.String("convert", "", "jsonl.zst to convert")
	out := flag.String("o", "", "parquet output")
	group := flag.Int64("group", 10000, "rows per row group")
	repeat := flag.Int("repeat", 1, "write the corpus this many times")
	lib := flag.String("read", "", "parquet-go or arrow-go")
	rounds := flag.Int("n", 5, "rounds")
	rich := flag.String("rich", "", "write a small file with nested, nullable, list, binary and timestamp columns")
	insp := flag.Bool("inspect", false, "print each file's schema and rows as arrow-go reads them")
	flag.Parse()
	if *rich != "" {
		writeRich(*rich)
		return
	}
	if *insp {
		for _, p := range flag.Args() {
			inspect(p)
		}
		return
	}
	if *conv != "" {
		convert(*conv, *out, *group, *repeat)
		return
	}
	for _, path := range flag.Args() {
		for range *rounds {
			runtime.GC()
			ru0 := cpu()
			start := time.Now()
			var n int
			var b int64
			if *lib == "arrow-go" {
				n, b = arrowGo(path)
			} else {
				n, b = parquetGo(path)
			}
			wall := time.Since(start)
			ru1 := cpu()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			fmt.Printf("%s %s: %d docs %.1f MB wall %.3fs cpu %.3fs %.0f MB/s(cpu) sys-mem %d MB\n", *lib, path, n, float64(b)/1e6,
				wall.Seconds(), (ru1 - ru0).Seconds(), float64(b)/1e6/(ru1-ru0).Seconds(), ms.Sys>>20)
		}
	}
}
