package testcorpora_test

import (
	"io"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/testcorpora"
)

// Docs reads the corpora as package corpus does, though by its own means.
func TestDocsMatchCorpusReader(t *testing.T) {
	for _, name := range []string{"en_spdx", "zh_fortunes"} {
		docs := testcorpora.Docs(t, name)
		r, err := corpus.Open([]string{testcorpora.Path(t, name)}, corpus.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for i := 0; ; i++ {
			d, err := r.Next()
			if err == io.EOF {
				if i != len(docs) {
					t.Errorf("%s: Docs gives %d documents, corpus %d", name, len(docs), i)
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if i >= len(docs) || docs[i].ID != d.ID || docs[i].Text != d.Text {
				t.Fatalf("%s: document %d differs from corpus's %q", name, i, d.ID)
			}
		}
	}
}

func TestTexts(t *testing.T) {
	all := testcorpora.Texts(t, "en_spdx", -1, 0)
	if len(all) != len(testcorpora.Docs(t, "en_spdx")) {
		t.Errorf("Texts(-1, 0) gives %d texts, want every document", len(all))
	}
	long := testcorpora.Texts(t, "en_spdx", 40, 150)
	if len(long) != 40 {
		t.Fatalf("Texts(40, 150) gives %d texts, want 40", len(long))
	}
	j := 0
	for _, text := range all {
		if len(strings.Fields(text)) >= 150 && j < len(long) {
			if text != long[j] {
				t.Fatalf("Texts(40, 150)[%d] is not the next long text", j)
			}
			j++
		}
	}
}
