package main

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadResponse sends requests one after the other on one keep-alive
// connection, as a measured phase does, to a net/http server that answers
// with a Content-Length, in chunks, with no body and with an error: each
// status must come back and leave the connection at the next response.
func TestReadResponse(t *testing.T) {
	big := strings.Repeat("0123456789", 10000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/small":
			w.Write([]byte(`{"results":[]}`))
		case "/chunked": // larger than the server's buffer, flushed in pieces
			for i := 0; i < len(big); i += 3000 {
				w.Write([]byte(big[i:min(i+3000, len(big))]))
				w.(http.Flusher).Flush()
			}
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.Error(w, "no such thing", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 16<<10)
	for _, c := range []struct {
		path string
		want int
	}{{"/small", 200}, {"/chunked", 200}, {"/empty", 204}, {"/nothing", 404}, {"/small", 200}, {"/chunked", 200}} {
		if _, err := conn.Write(postRequest(nil, host, c.path, []byte(`{"text":"x"}`))); err != nil {
			t.Fatal(err)
		}
		code, err := readResponse(br)
		if err != nil || code != c.want {
			t.Fatalf("%s: status %d, %v; want %d", c.path, code, err, c.want)
		}
	}
	if br.Buffered() != 0 {
		t.Errorf("%d bytes left after the last response", br.Buffered())
	}
}

// TestReadResponseMalformed: what is not an HTTP/1.1 response is an error.
func TestReadResponseMalformed(t *testing.T) {
	for _, in := range []string{
		"", "HTTP/1.1 200 OK\r\n", "SMTP 220 hello\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\r\n", // no length on a kept-alive connection
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	} {
		if code, err := readResponse(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("%q: status %d, no error", in, code)
		}
	}
}

// TestDocsWorkload: -workload docs sends the file's documents, in order,
// and starts again from the first when they run out.
func TestDocsWorkload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"a","text":"first text"}`+"\n"+`{"id":"b","text":"second text"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := textSource(&config{workload: "docs", n: 0, pool: 10}, path)()
	for i, want := range []string{"first text", "second text", "first text"} {
		if got := src(nil); got != want {
			t.Fatalf("text %d = %q, want %q", i, got, want)
		}
	}
}
