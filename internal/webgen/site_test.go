package webgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

var crawl = Options{Seed: 1, Sites: 2000, SiteShare: 0.8, ShortShare: 0.3}

func TestProfile(t *testing.T) {
	if p, err := Profile("crawl"); err != nil || p != (Options{Sites: 2000, SiteShare: 0.8}) {
		t.Errorf("Profile(crawl) = %+v, %v", p, err)
	}
	if p, err := Profile("crawl-short"); err != nil || p != (Options{Sites: 2000, SiteShare: 0.8, ShortShare: 0.3}) {
		t.Errorf("Profile(crawl-short) = %+v, %v", p, err)
	}
	if p, err := Profile("default"); err != nil || p != (Options{}) {
		t.Errorf("Profile(default) = %+v, %v, want the zero Options", p, err)
	}
	if _, err := Profile("crawl2"); err == nil {
		t.Errorf("Profile(crawl2): no error")
	}
}

func TestSiteOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{Sites: -1},
		{Sites: MaxSites + 1},
		{SiteShare: 0.5}, // without Sites
		{Sites: 10, SiteShare: 1.5},
		{ShortShare: 1.1},
	} {
		if _, err := New(testPool(t), o); err == nil {
			t.Errorf("New(%+v): no error", o)
		}
	}
	o := Options{Sites: 10}
	o.EnsureDefaults()
	if o.SiteShare != 0.8 {
		t.Errorf("Sites 10: SiteShare %v after EnsureDefaults, want 0.8", o.SiteShare)
	}
	o = Options{Sites: 10, SiteShare: -1}
	o.EnsureDefaults()
	if o.SiteShare != 0 {
		t.Errorf("SiteShare -1: %v after EnsureDefaults, want 0", o.SiteShare)
	}
}

// pageOf returns what planPage decided for document i.
func pageOf(g *Generator, i int64, s *Scratch) page {
	s.seed(g.opt.Seed, uint64(i), tagPage)
	return g.planPage(s.r)
}

// TestSiteShares checks the fractions of pages and short bodies and the
// skew of pages over sites (planPage's comment).
func TestSiteShares(t *testing.T) {
	g, err := New(testPool(t), crawl)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200000
	s := NewScratch()
	perSite := make([]int, crawl.Sites)
	var pages, short int
	for i := range int64(n) {
		pg := pageOf(g, i, s)
		if pg.short {
			short++
		}
		if pg.site >= 0 {
			pages++
			perSite[pg.site]++
		}
	}
	top := func(frac float64) float64 {
		k, sum := int(frac*float64(len(perSite))), 0
		for _, c := range perSite[:k] {
			sum += c
		}
		return float64(sum) / float64(pages)
	}
	var sq float64
	for _, c := range perSite {
		sq += float64(c) * float64(c-1)
	}
	for _, c := range []struct {
		what      string
		got       float64
		want, tol float64
	}{
		{"pages of a site", float64(pages) / n, 0.8, 0.005},
		{"short bodies", float64(short) / n, 0.3, 0.005},
		{"biggest site's share", float64(perSite[0]) / float64(pages), 1 / math.Sqrt(2000), 0.003},
		{"top 1% of sites' share", top(0.01), 0.1, 0.005},
		{"top 25% of sites' share", top(0.25), 0.5, 0.01},
		// Other pages of its site per page, per page of the corpus.
		{"same-site pairs per page / pages", sq / float64(pages) / float64(pages), 0.0015, 0.0002},
	} {
		if math.Abs(c.got-c.want) > c.tol {
			t.Errorf("%s: %.4f, want %.4f ± %.4f", c.what, c.got, c.want, c.tol)
		}
	}
	if slices.Min(perSite) == 0 {
		t.Errorf("a site without pages in %d documents", n)
	}
}

// TestSiteTemplates checks the parts' sizes against the ranges of site.go.
func TestSiteTemplates(t *testing.T) {
	g, err := New(testPool(t), crawl)
	if err != nil {
		t.Fatal(err)
	}
	for k, st := range g.sites {
		footer := len(st.footer)
		notices := len(st.notices)
		switch {
		case len(st.header) < 40 || len(st.header) > 150:
			t.Errorf("site %d: header of %d bytes, want 40 to 150: %q", k, len(st.header), st.header)
		case len(st.menu) < 10 || len(st.menu) > 30:
			t.Errorf("site %d: menu of %d labels, want 10 to 30", k, len(st.menu))
		case notices < 3 || notices > 6:
			t.Errorf("site %d: %d notices, want 3 to 6", k, notices)
		case footer < 150 || footer > 500:
			t.Errorf("site %d: footer of %d bytes, want 150 to 500: %q", k, footer, st.footer)
		}
		for _, n := range st.notices {
			if len(n) < 80 || len(n) > 300 {
				t.Errorf("site %d: notice of %d bytes, want 80 to 300: %q", k, len(n), n)
			}
		}
		for _, l := range st.menu {
			if w := len(strings.Fields(l)); w < 1 || w > 3 {
				t.Errorf("site %d: menu label %q", k, l)
			}
		}
		if !strings.Contains(st.footer, st.name) || !strings.HasPrefix(st.header, st.name) {
			t.Errorf("site %d: name %q not in header %q and footer", k, st.name, st.header)
		}
	}
}

// TestSitePairJaccard samples pairs of pages of one site of the crawl
// profile, uniformly among all such pairs of the first 20,000 documents
// (the pairs a dedup meets), and reports the spread of their exact Jaccard,
// the template's size, and the chance that the dedup's default LSH (24
// bands of 6 rows) makes a pair a candidate. go test -run SitePair -v
// prints the figures.
func TestSitePairJaccard(t *testing.T) {
	g, err := New(testPool(t), crawl)
	if err != nil {
		t.Fatal(err)
	}
	bare := *g // the same documents without their template
	bare.opt.Sites, bare.opt.SiteShare, bare.sites = 0, 0, nil
	const n = 20000
	s := NewScratch()
	type doc struct {
		text          string
		short         bool
		templateBytes int
	}
	bySite := make([][]doc, crawl.Sites)
	var templ []float64
	for i := range int64(n) {
		d := g.Doc(i, s)
		pg := pageOf(g, i, s)
		if d.Planted != nil || pg.site < 0 {
			continue
		}
		body := bare.appendOriginal(nil, i, s)
		dd := doc{text: d.Text, short: pg.short, templateBytes: len(d.Text) - len(body)}
		bySite[pg.site] = append(bySite[pg.site], dd)
		templ = append(templ, float64(dd.templateBytes))
	}
	cum := make([]int, len(bySite)) // pairs in sites 0..k
	total := 0
	for k, ds := range bySite {
		total += len(ds) * (len(ds) - 1) / 2
		cum[k] = total
	}
	r := rand.New(rand.NewPCG(1, 2))
	const samples = 3000
	var all []float64
	by := map[string][]float64{}
	var pCand float64
	for range samples {
		k, _ := slices.BinarySearch(cum, r.IntN(total)+1)
		ds := bySite[k]
		a := r.IntN(len(ds))
		b := r.IntN(len(ds) - 1)
		if b >= a {
			b++
		}
		j := TextJaccard(ds[a].text, ds[b].text)
		all = append(all, j)
		class := [...]string{"both long", "one short", "both short"}[btoi(ds[a].short)+btoi(ds[b].short)]
		by[class] = append(by[class], j)
		pCand += 1 - math.Pow(1-math.Pow(j, 6), 24)
	}
	q := func(xs []float64) string {
		slices.Sort(xs)
		at := func(p float64) float64 { return xs[int(p*float64(len(xs)-1))] }
		above := func(x float64) float64 {
			i, _ := slices.BinarySearch(xs, x)
			return float64(len(xs)-i) / float64(len(xs))
		}
		return fmt.Sprintf("n %4d  p10 %.3f p25 %.3f p50 %.3f p75 %.3f p90 %.3f p99 %.3f max %.3f  >=0.4 %.3f >=0.5 %.3f >=0.6 %.3f >=0.8 %.4f",
			len(xs), at(0.1), at(0.25), at(0.5), at(0.75), at(0.9), at(0.99), xs[len(xs)-1], above(0.4), above(0.5), above(0.6), above(0.8))
	}
	slices.Sort(templ)
	t.Logf("%d same-site pairs of original pages among %d documents; template bytes p10 %.0f p50 %.0f p90 %.0f",
		total, n, templ[len(templ)/10], templ[len(templ)/2], templ[len(templ)*9/10])
	t.Logf("all         %s", q(all))
	for _, c := range []string{"both long", "one short", "both short"} {
		t.Logf("%-11s %s", c, q(by[c]))
	}
	t.Logf("mean P(LSH 24x6 candidate) %.4f: %.2f candidates per page per 1,000 pages of its site", pCand/samples, pCand/samples*1000)
	med := all[len(all)/2]
	i, _ := slices.BinarySearch(all, 0.4)
	above := float64(len(all)-i) / float64(len(all))
	if med < 0.2 || med > 0.6 || above < 0.05 {
		t.Errorf("same-site Jaccard: median %.3f, %.3f at 0.4 or more; want a median in [0.2, 0.6] and 5%% at 0.4 or more", med, above)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
