package server

import (
	"cmp"
	"embed"
	"io/fs"
	"net/http"
	"slices"
)

// The web page: plain files embedded in the binary, no build step, nothing
// fetched from elsewhere.
//
//go:embed web
var webFiles embed.FS

func (s *Server) registerPage(mux *http.ServeMux) {
	sub, _ := fs.Sub(webFiles, "web") // the directory is embedded above
	files := http.FileServerFS(sub)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		http.ServeFileFS(w, r, sub, "index.html")
	})
	mux.Handle("GET /web/", http.StripPrefix("/web/", files))
}

func sortFeatures(fs []featureJSON) {
	slices.SortStableFunc(fs, func(a, b featureJSON) int { return cmp.Compare(b.Weight, a.Weight) })
}
