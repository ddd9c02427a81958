package corpus

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/internal/testcorpora"
)

// writeFile writes data under dir and returns the path.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll reads every document and collects the OnBad reports.
func readAll(t testing.TB, paths []string, opt Options) (docs []Doc, bad []error, err error) {
	t.Helper()
	opt.OnBad = func(err error) { bad = append(bad, err) }
	r, err := Open(paths, opt)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	for {
		d, err := r.Next()
		if err == io.EOF {
			return docs, bad, nil
		}
		if err != nil {
			return docs, bad, err
		}
		docs = append(docs, d)
	}
}

func ids(docs []Doc) string {
	var s []string
	for _, d := range docs {
		s = append(s, d.ID)
	}
	return strings.Join(s, ",")
}

func TestJSONL(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"id": "a", "text": "hello", "group": {"x": [1, 2]}}`,
		`{"id": 42, "text": "number id"}`,
		`{"text": "no id"}`,
		`{"id": null, "text": "null id"}`,
		``,
		`   `,
		`{"id": -1.5e3, "text": "esc\u00e9\n\"q\" \ud83d\ude00 \ud800 tail", "n": null}`,
		"{\"id\":\"b\",\"text\":\"bad utf8 \xff here\"}",
		`{"text": "dup key last wins", "text": "second", "id": "c"}`,
	}
	p := writeFile(t, dir, "in.jsonl", []byte(strings.Join(lines, "\n")+"\n"))
	docs, bad, err := readAll(t, []string{p}, Options{})
	if err != nil || len(bad) > 0 {
		t.Fatalf("err %v, bad %v", err, bad)
	}
	want := []Doc{
		{ID: "a", Text: "hello", Line: 1},
		{ID: "42", Text: "number id", Line: 2},
		{ID: p + ":3", Text: "no id", Line: 3},
		{ID: p + ":4", Text: "null id", Line: 4},
		{ID: "-1.5e3", Text: "esc\u00e9\n\"q\" \U0001F600 \uFFFD tail", Line: 7},
		{ID: "b", Text: "bad utf8 \xff here", Line: 8},
		{ID: "c", Text: "second", Line: 9},
	}
	if len(docs) != len(want) {
		t.Fatalf("got %d docs (%s), want %d", len(docs), ids(docs), len(want))
	}
	for i, w := range want {
		g := docs[i]
		if g.ID != w.ID || g.Text != w.Text || g.Line != w.Line || g.Source != p {
			t.Errorf("doc %d: got %+v, want %+v", i, g, w)
		}
		if string(g.Raw) != lines[w.Line-1] {
			t.Errorf("doc %d: Raw %q, want the line %q untouched", i, g.Raw, lines[w.Line-1])
		}
	}
}

func TestJSONLFields(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "in.ndjson", []byte("{\"doc\":\"x1\",\"body\":\"one\",\"text\":7}\r\n{\"doc\":\"x2\",\"body\":\"two\"}\r\n"))
	docs, _, err := readAll(t, []string{p}, Options{IDField: "doc", TextField: "body"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(docs); got != "x1,x2" || docs[1].Text != "two" || bytes.HasSuffix(docs[0].Raw, []byte("\r")) {
		t.Fatalf("got %s %q %q", got, docs[1].Text, docs[0].Raw)
	}
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		line, want string
	}{
		{`{"id": "a", "text": "x"`, "unexpected end"},
		{`not json`, "not a JSON object"},
		{`["text", "x"]`, "not a JSON object"},
		{`{"id": "a"}`, `no text field "text"`},
		{`{"id": "a", "text": 3}`, "not a string"},
		{`{"id": true, "text": "x"}`, "neither a string nor a number"},
		{`{"id": "a", "text": "x"} extra`, "trailing data"},
		{`{"id": "a", "text": "x\q"}`, "invalid escape"},
		{`{"id": 01, "text": "x"}`, "want ',' or '}'"},
		{`{"id": "a", "text": "x", }`, "want a quoted key"},
		{"{\"text\": \"tab\there\"}", "control character"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		p := writeFile(t, dir, "bad.jsonl", []byte("{\"text\": \"ok\"}\n"+tt.line+"\n{\"text\": \"after\"}\n"))
		docs, _, err := readAll(t, []string{p}, Options{})
		var e *Error
		if !errors.Is(err, ErrMalformed) || !errors.As(err, &e) || e.Line != 2 || e.Source != p {
			t.Errorf("%s: got err %v, want ErrMalformed at line 2", tt.line, err)
			continue
		}
		if !strings.Contains(err.Error(), p+":2:") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: message %q should name %s:2 and say %q", tt.line, err, p, tt.want)
		}
		if len(docs) != 1 {
			t.Errorf("%s: got %d docs before the error, want 1", tt.line, len(docs))
		}
		docs, bad, err := readAll(t, []string{p}, Options{SkipBad: true})
		if err != nil || len(docs) != 2 || len(bad) != 1 || !errors.Is(bad[0], ErrMalformed) {
			t.Errorf("%s: SkipBad: err %v, docs %d, bad %v; want 2 docs and one report", tt.line, err, len(docs), bad)
		}
	}
}

func TestReaderGoesOnAfterMalformed(t *testing.T) {
	r, err := OpenReader(strings.NewReader("{\"text\":\"a\"}\n{oops\n{\"text\":\"b\"}\n"), "s.jsonl", Options{Format: JSONL})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			got = append(got, "err:"+err.Error()[:len("s.jsonl:2")])
			continue
		}
		got = append(got, d.Text)
	}
	if strings.Join(got, "|") != "a|err:s.jsonl:2|b" {
		t.Fatalf("got %q", got)
	}
}

func TestTextDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "b.txt", []byte("bee"))
	writeFile(t, dir, "a.txt", []byte("ay"))
	writeFile(t, dir, "sub/c.md", []byte("sea"))
	writeFile(t, dir, ".hidden", []byte("no"))
	writeFile(t, dir, ".git/objects", []byte("no"))
	writeFile(t, dir, "empty.txt", nil)
	writeFile(t, dir, "bin.dat", []byte("ab\x00cd"))
	writeFile(t, dir, "latin1.txt", []byte("caf\xe9 au lait, cr\xe8me br\xfbl\xe9e"))
	docs, bad, err := readAll(t, []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	j := func(n string) string { return filepath.Join(dir, n) }
	want := strings.Join([]string{j("a.txt"), j("b.txt"), j("empty.txt"), j("latin1.txt"), j("sub/c.md")}, ",")
	if got := ids(docs); got != want {
		t.Fatalf("ids\n got %s\nwant %s", got, want)
	}
	if docs[0].Text != "ay" || docs[2].Text != "" || docs[3].Text != "caf\xe9 au lait, cr\xe8me br\xfbl\xe9e" || docs[0].Raw != nil {
		t.Errorf("texts: %q", []string{docs[0].Text, docs[2].Text, docs[3].Text})
	}
	if len(bad) != 1 || !errors.Is(bad[0], ErrBinary) || !strings.Contains(bad[0].Error(), "bin.dat") {
		t.Errorf("bad = %v, want bin.dat reported as binary", bad)
	}
}

func TestBinaryDetection(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		bin  bool
	}{
		{"empty", nil, false},
		{"ascii", []byte("hello world\n"), false},
		{"chinese", []byte(strings.Repeat("北京天安门", 3000)), false},
		{"nul", []byte("abc\x00"), true},
		// Not starting with ff fe: that is a UTF-16 byte order mark.
		{"random high bytes", bytes.Repeat([]byte{0x80, 0xff, 0xfe, 'a'}, 100), true},
		{"UTF-16 mark, then binary", append([]byte{0xff, 0xfe}, bytes.Repeat([]byte{1, 0, 0, 0}, 100)...), true},
		{"a few bad bytes", []byte("mostly text \xff\xfe but not all"), false},
		// A multi-byte rune cut at the 8 KiB sample boundary is not "invalid".
		{"cut rune", []byte(strings.Repeat("a", sniffLen-1) + "北京"), false},
	}
	for _, tt := range tests {
		r, err := OpenReader(bytes.NewReader(tt.data), tt.name, Options{Format: Text})
		if err != nil {
			t.Fatal(err)
		}
		var bad []error
		r.opt.OnBad = func(err error) { bad = append(bad, err) }
		d, err := r.Next()
		if tt.bin {
			if err != io.EOF || len(bad) != 1 || !errors.Is(bad[0], ErrBinary) {
				t.Errorf("%s: got %v, %v; want skipped as binary", tt.name, err, bad)
			}
		} else if err != nil || d.Text != string(tt.data) {
			t.Errorf("%s: got err %v, %d bytes; want the text back", tt.name, err, len(d.Text))
		}
	}
}

func TestLines(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "l.txt", []byte("\ufefffirst\r\n\nsecond\n  \nthird"))
	docs, _, err := readAll(t, []string{p}, Options{Format: Lines})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, fmt.Sprintf("%s=%s", d.ID, d.Text))
	}
	want := p + ":1=first|" + p + ":3=second|" + p + ":5=third"
	if strings.Join(got, "|") != want {
		t.Fatalf("got %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestCompressed(t *testing.T) {
	dir := t.TempDir()
	content := "{\"id\":\"1\",\"text\":\"one\"}\n{\"id\":\"2\",\"text\":\"two\"}\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(content))
	zw.Close()
	// A second gzip member: concatenated .gz files are one stream.
	zw = gzip.NewWriter(&gz)
	zw.Write([]byte("{\"id\":\"3\",\"text\":\"three\"}\n"))
	zw.Close()
	pg := writeFile(t, dir, "a.jsonl.gz", gz.Bytes())

	var zs bytes.Buffer
	enc, err := zstd.NewWriter(&zs, zstd.WithWindowSize(1<<27)) // as zstd --long=27
	if err != nil {
		t.Fatal(err)
	}
	enc.Write([]byte(strings.Repeat(content, 3)))
	enc.Close()
	pz := writeFile(t, dir, "b.jsonl.zst", zs.Bytes())
	// Compression is found by magic bytes, not by the name.
	pt := writeFile(t, dir, "c.txt", gz.Bytes())

	docs, bad, err := readAll(t, []string{pg, pz, pt}, Options{})
	if err != nil || len(bad) != 0 {
		t.Fatal(err, bad)
	}
	if got := ids(docs); got != "1,2,3,1,2,1,2,1,2,"+pt {
		t.Fatalf("ids %s", got)
	}
	if docs[len(docs)-1].Text != content+"{\"id\":\"3\",\"text\":\"three\"}\n" {
		t.Errorf("gzip text file: %q", docs[len(docs)-1].Text)
	}
	r, _ := Open([]string{pg, pz}, Options{})
	if r.Size() != int64(gz.Len()+zs.Len()) {
		t.Errorf("Size %d, want %d", r.Size(), gz.Len()+zs.Len())
	}
	for _, err := r.Next(); err == nil; _, err = r.Next() {
	}
	if r.Consumed() != r.Size() {
		t.Errorf("Consumed %d, want %d", r.Consumed(), r.Size())
	}
}

func TestCorruptCompressed(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "x.jsonl.gz", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1, 2, 3})
	_, _, err := readAll(t, []string{p}, Options{})
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("got %v, want an error naming %s", err, p)
	}
}

func TestStdin(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"{\"id\":\"s\",\"text\":\"json\"}\n", "s=json"},
		{"  \n{\"text\":\"json\"}\n", "-:2=json"},
		{"plain text\nof two lines", "-=plain text\nof two lines"},
	}
	for _, tt := range tests {
		docs, _, err := readAll(t, []string{"-"}, Options{Stdin: strings.NewReader(tt.in)})
		if err != nil || len(docs) != 1 {
			t.Fatalf("%q: err %v, %d docs", tt.in, err, len(docs))
		}
		if got := docs[0].ID + "=" + docs[0].Text; got != tt.want || docs[0].Source != "-" {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open([]string{"/no/such/file"}, Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v", err)
	}
	if _, err := Open(nil, Options{MaxDocBytes: -1}); !errors.Is(err, ErrOptions) {
		t.Errorf("negative MaxDocBytes: got %v", err)
	}
	if _, err := Open(nil, Options{Format: 9}); !errors.Is(err, ErrOptions) {
		t.Errorf("bad format: got %v", err)
	}
	if _, err := ParseFormat("xml"); !errors.Is(err, ErrOptions) {
		t.Errorf("ParseFormat(xml): got %v", err)
	}
	for _, f := range []Format{Auto, JSONL, Text, Lines} {
		if g, err := ParseFormat(f.String()); g != f || err != nil {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), g, err)
		}
	}
}

func TestTooLarge(t *testing.T) {
	big := strings.Repeat("x", 1000)
	in := "{\"text\":\"small\"}\n{\"text\":\"" + big + "\"}\n{\"text\":\"after\"}\n"
	r, _ := OpenReader(strings.NewReader(in), "t.jsonl", Options{Format: JSONL, MaxDocBytes: 100})
	r.Next()
	_, err := r.Next()
	var e *Error
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &e) || e.Line != 2 {
		t.Fatalf("got %v, want ErrTooLarge at line 2", err)
	}
	if d, err := r.Next(); err != nil || d.Text != "after" {
		t.Fatalf("after a too-large line: %v %q", err, d.Text)
	}
	// Larger than the read buffer, with SkipBad.
	huge := strings.Repeat("y", 3*bufSize)
	var bad []error
	r, _ = OpenReader(strings.NewReader(huge+"\nshort\n"), "t", Options{Format: Lines, MaxDocBytes: bufSize, SkipBad: true,
		OnBad: func(err error) { bad = append(bad, err) }})
	if d, err := r.Next(); err != nil || d.Text != "short" || d.Line != 2 || len(bad) != 1 {
		t.Fatalf("got %q %v, bad %v", d.Text, err, bad)
	}
	r, _ = OpenReader(strings.NewReader(huge), "t", Options{Format: Text, MaxDocBytes: bufSize})
	if _, err := r.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("text: got %v", err)
	}
}

// testHugeLine reads one JSONL line of n bytes of text plus small lines
// around it, through a file so that nothing is held but the reader's buffers.
func testHugeLine(t *testing.T, n int) {
	dir := t.TempDir()
	p := filepath.Join(dir, "huge.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"id\":\"before\",\"text\":\"b\"}\n{\"id\":\"huge\",\"text\":\"")
	chunk := []byte(strings.Repeat("lorem ipsum 北京 ", 4096))
	for w := 0; w < n; w += len(chunk) {
		f.Write(chunk[:min(len(chunk), n-w)])
	}
	f.WriteString("\"}\n{\"id\":\"after\",\"text\":\"a\"}\n")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	docs, _, err := readAll(t, []string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ids(docs) != "before,huge,after" || len(docs[1].Text) != n || docs[1].Line != 2 {
		t.Fatalf("got %s, huge text %d bytes; want %d", ids(docs), len(docs[1].Text), n)
	}
	if !strings.HasPrefix(docs[1].Text, "lorem ipsum 北京 lorem") {
		t.Errorf("huge text starts %q", docs[1].Text[:40])
	}
}

func TestHugeLine10MB(t *testing.T) { testHugeLine(t, 10<<20) }

// TestHugeLine1GB reads a 1 GB single line; it needs about 3 GB of disk and
// memory and runs only with NEARDUP_HUGE=1.
func TestHugeLine1GB(t *testing.T) {
	if os.Getenv("NEARDUP_HUGE") == "" {
		t.Skip("set NEARDUP_HUGE=1 to read a 1 GB line")
	}
	testHugeLine(t, 1<<30-100)
}

// TestSharedCorpora reads the small shared corpora (zstd with a long window)
// and checks the document counts their README gives.
func TestSharedCorpora(t *testing.T) {
	for name, want := range map[string]int{"en_spdx": 728, "zh_fortunes": 5671, "en_prose": 374} {
		p := testcorpora.Path(t, name)
		docs, bad, err := readAll(t, []string{p}, Options{})
		if err != nil || len(bad) > 0 {
			t.Fatalf("%s: %v %v", name, err, bad)
		}
		seen := map[string]bool{}
		for _, d := range docs {
			if d.Text == "" || seen[d.ID] {
				t.Errorf("%s: doc %q empty or repeated", name, d.ID)
			}
			seen[d.ID] = true
		}
		if len(docs) != want {
			t.Errorf("%s: %d docs, want %d", name, len(docs), want)
		}
	}
}

// TestNoRaw: with NoRaw the texts are those of the default reader, escapes
// decoded, and Raw is nil.
func TestNoRaw(t *testing.T) {
	in := `{"id":"a","text":"line one\nline two \u00e9\ud83d\ude00 \"q\" \\ end"}
{"text":"plain","id":7}
{"id":"c","text":"tab\there","x":"\n"}
`
	var want []Doc
	r, err := OpenReader(strings.NewReader(in), "t", Options{Format: JSONL})
	if err != nil {
		t.Fatal(err)
	}
	for d, err := r.Next(); err == nil; d, err = r.Next() {
		want = append(want, d)
	}
	r, _ = OpenReader(strings.NewReader(in), "t", Options{Format: JSONL, NoRaw: true})
	for i := 0; ; i++ {
		d, err := r.Next()
		if err == io.EOF {
			if i != len(want) || i != 3 {
				t.Fatalf("NoRaw read %d documents, default %d, want 3", i, len(want))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.Raw != nil || d.Text != want[i].Text || d.ID != want[i].ID || d.Line != want[i].Line {
			t.Errorf("doc %d: got %q %q raw %q, want %q %q and no raw", i, d.ID, d.Text, d.Raw, want[i].ID, want[i].Text)
		}
	}
	if want[0].Text != "line one\nline two é😀 \"q\" \\ end" {
		t.Errorf("default text %q", want[0].Text)
	}
}

// TestDanglingSymlink walks a directory holding a symbolic link whose target
// is gone: with SkipBad it is reported to OnBad and the other files are read;
// without, Open fails naming the link.
func TestDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", []byte("ay"))
	writeFile(t, dir, "c.txt", []byte("sea"))
	link := filepath.Join(dir, "b.txt")
	if err := os.Symlink("gone.txt", link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	docs, bad, err := readAll(t, []string{dir}, Options{SkipBad: true})
	if err != nil {
		t.Fatalf("SkipBad: %v, want the link skipped", err)
	}
	if got, want := ids(docs), filepath.Join(dir, "a.txt")+","+filepath.Join(dir, "c.txt"); got != want {
		t.Errorf("ids %s, want %s", got, want)
	}
	if len(bad) != 1 || !errors.Is(bad[0], ErrBrokenLink) || !strings.Contains(bad[0].Error(), link) {
		t.Errorf("bad = %v, want %s reported as a broken link", bad, link)
	}

	_, err = Open([]string{dir}, Options{})
	if !errors.Is(err, ErrBrokenLink) || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "gone.txt") {
		t.Errorf("without SkipBad: %v, want an error naming %s and its target", err, link)
	}
}

// TestUTF16 reads text and JSONL written in UTF-16 with a byte order mark,
// little and big endian: they are decoded to UTF-8, not skipped as binary.
func TestUTF16(t *testing.T) {
	encode := func(s string, big bool) []byte {
		var b []byte
		put := func(u uint16) {
			if big {
				b = append(b, byte(u>>8), byte(u))
			} else {
				b = append(b, byte(u), byte(u>>8))
			}
		}
		put(0xfeff)
		for _, u := range utf16.Encode([]rune(s)) {
			put(u)
		}
		return b
	}
	const text = "héllo wörld, 北京 𝄞\nsecond line\n"
	const line = `{"id":"x","text":"北京 𝄞 café"}`
	dir := t.TempDir()
	for _, big := range []bool{false, true} {
		name := map[bool]string{false: "le", true: "be"}[big]
		txt := writeFile(t, dir, name+".txt", encode(text, big))
		jsonl := writeFile(t, dir, name+".jsonl", encode(line+"\n", big))
		docs, bad, err := readAll(t, []string{txt, jsonl}, Options{})
		if err != nil || len(bad) != 0 {
			t.Fatalf("%s: %v, bad %v; want both files read", name, err, bad)
		}
		if len(docs) != 2 || docs[0].Text != text || docs[1].Text != "北京 𝄞 café" || string(docs[1].Raw) != line {
			t.Errorf("%s: got %+v, want the text %q and the line %s decoded to UTF-8", name, docs, text, line)
		}
	}
}

// TestEmptyStdin reads an empty standard input: no document, in any format
// (an empty file given by name stays a document of its own in Text format).
func TestEmptyStdin(t *testing.T) {
	for _, f := range []Format{Auto, Text, JSONL, Lines} {
		docs, bad, err := readAll(t, []string{"-"}, Options{Format: f, Stdin: strings.NewReader("")})
		if err != nil || len(docs) != 0 || len(bad) != 0 {
			t.Errorf("%v: %d docs %+v, bad %v, err %v; want none", f, len(docs), docs, bad, err)
		}
	}
}
