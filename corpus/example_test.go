package corpus_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/corpus"
)

func ExampleOpenReader() {
	in := `{"id": "a", "text": "first document", "lang": "en"}
{"id": 2, "text": "second"}
{"text": "no id"}
`
	r, err := corpus.OpenReader(strings.NewReader(in), "docs.jsonl", corpus.Options{})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	for {
		doc, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s\t%s\n", doc.ID, doc.Text)
	}
	// Output:
	// a	first document
	// 2	second
	// docs.jsonl:3	no id
}

func ExampleOptions_skipBad() {
	in := "{\"text\": \"good\"}\n{\"text\": oops}\n{\"text\": \"also good\"}\n"
	r, _ := corpus.OpenReader(strings.NewReader(in), "docs.jsonl", corpus.Options{
		SkipBad: true,
		OnBad:   func(err error) { fmt.Println("skipped:", err) },
	})
	for {
		doc, err := r.Next()
		if err != nil {
			break
		}
		fmt.Println(doc.Text)
	}
	// Output:
	// good
	// skipped: docs.jsonl:2: corpus: malformed line: unexpected 'o' at byte 10
	// also good
}

func ExampleParseFormat() {
	f, _ := corpus.ParseFormat("lines")
	fmt.Println(f == corpus.Lines, f)
	// Output: true lines
}

func ExampleOpen() {
	// A directory is walked in sorted order; d.bin is binary and skipped.
	r, err := corpus.Open([]string{"testdata/docs"}, corpus.Options{
		OnBad: func(err error) { fmt.Println("skipped:", err) },
	})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	for {
		doc, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s | %s | raw %d bytes\n", doc.ID, strings.TrimSpace(doc.Text), len(doc.Raw))
	}
	// Output:
	// news-1 | Markets rallied on Monday. | raw 68 bytes
	// 2 | 股市周一上涨。 | raw 56 bytes
	// testdata/docs/b.txt | A plain text file is one document. | raw 0 bytes
	// testdata/docs/c.txt.gz | Compressed files are read transparently. | raw 0 bytes
	// skipped: testdata/docs/d.bin: corpus: binary file skipped (NUL byte at offset 0)
}

// A Parquet dataset with the text in a nested column. Files are named
// paths in practice (corpus.Open); any io.ReaderAt with a Size method reads
// through OpenReader.
func ExampleOpenReader_parquet() {
	type row struct {
		URL string `parquet:"url"`
		Doc struct {
			ID   int64  `parquet:"id"`
			Body string `parquet:"body"`
		} `parquet:"doc"`
	}
	var rows [2]row
	rows[0].URL, rows[0].Doc.ID, rows[0].Doc.Body = "https://a.example", 7, "first document"
	rows[1].URL, rows[1].Doc.ID, rows[1].Doc.Body = "https://b.example", 8, "second"
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows[:]); err != nil {
		panic(err)
	}
	r, err := corpus.OpenReader(bytes.NewReader(buf.Bytes()), "part-0.parquet", corpus.Options{
		IDField: "doc.id", TextField: "doc.body",
	})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	for {
		doc, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s\t%s\t%s:%d\n", doc.ID, doc.Text, doc.Source, doc.Line)
	}
	// Output:
	// 7	first document	part-0.parquet:1
	// 8	second	part-0.parquet:2
}
