package pipeline_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/neardup/neardup/beam/pipeline"
)

// sharedPassage returns pages that share a site's template: each is the
// same 150 words followed by 100 words of its own, so that any two have a
// Jaccard similarity of about 0.41 on word 5-shingles (146 shared of about
// 354), and the LSH bands make many of them candidates (a band of the
// template's minima is shared by about one page in twenty). copies of the
// first pages follow, each with one of its own words changed: near
// duplicates (J about 0.96) that the batch removes.
func sharedPassage(pages, copies int) string {
	rng := rand.New(rand.NewPCG(22, 7))
	word := func() string { return fmt.Sprintf("w%d", rng.IntN(1_000_000)) }
	var tmpl []string
	for range 150 {
		tmpl = append(tmpl, word())
	}
	var sb strings.Builder
	line := func(id string, words []string) {
		b, _ := json.Marshal(map[string]string{"id": id, "text": strings.Join(words, " ")})
		sb.Write(append(b, '\n'))
	}
	var own [][]string
	for i := range pages {
		ws := append([]string(nil), tmpl...)
		for range 100 {
			ws = append(ws, word())
		}
		own = append(own, ws)
		line(fmt.Sprint("p", i), ws)
	}
	for i := range copies {
		ws := append([]string(nil), own[i]...)
		ws[200] = "changed"
		line(fmt.Sprint("copy", i), ws)
	}
	return sb.String()
}

// TestPrefilterSharedPassage: on pages that share a long passage, the
// prefilter at the stars' centres drops most candidate links before any
// features move, so that fewer documents are sent to their components (or,
// with every star verified, fewer leaves are verified) than there were
// candidate links, and the three files are still the batch's. (The
// template's pairs the prefilter passes, a few percent at J 0.41, still
// cost their verification.)
func TestPrefilterSharedPassage(t *testing.T) {
	const pages, copies = 300, 8
	in := writeFile(t, t.TempDir(), "passage.jsonl", sharedPassage(pages, copies))
	for _, direct := range []int{0, 1} { // the default, and every star verified
		t.Run(fmt.Sprint("direct=", direct), func(t *testing.T) {
			b, g, c := runBothMetrics(t, []string{in}, pipeline.Options{DirectComponent: direct})
			assertSame(t, b, g)
			if n := strings.Count(b[1], "\n"); n != copies {
				t.Errorf("batch removed %d documents, want the %d planted copies", n, copies)
			}
			links, pre := c["candidate_links"], c["prefiltered"]
			if links < pages/2 || pre*10 < links*8 || c["unshipped_leaves"] == 0 {
				t.Errorf("candidate_links %d, prefiltered %d, unshipped_leaves %d: want at least %d links, 80%% of them prefiltered, and leaves not sent",
					links, pre, c["unshipped_leaves"], pages/2)
			}
			// The documents whose features were sent (to their small
			// candidate component, or to their stars' centres): those
			// of the planted pairs and the few template pairs the
			// prefilter passes. Without it, every page of a candidate
			// link was.
			sent := c["direct_documents"] + c["star_documents"]
			if sent == 0 || sent*3 >= links {
				t.Errorf("features of %d documents sent: want some, and fewer than a third of the %d candidate links", sent, links)
			}
			if direct == 1 && (c["verifications"] == 0 || c["star_documents"] == 0) {
				t.Errorf("every star verified: verifications %d, star_documents %d, want both above 0", c["verifications"], c["star_documents"])
			}
		})
	}
}
