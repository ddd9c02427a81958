package webgen

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// A site is the template its pages share, made in New from stream (seed,
// site number, tagSite). A page is
//
//	header                  name and tagline, 40 to 150 bytes
//	menu                    10 to 30 labels of 1 to 3 words; the page's section in brackets
//	breadcrumb              Home > section > the page's title
//	date line               in the site's format
//	notices                 the site's usual 1 to 3 of its 3 to 6 (cookies, newsletter, legal, ...)
//	body                    as any document's
//	view counter            "1,234 views"
//	footer                  copyright, address, 10 to 20 links: 150 to 500 bytes
//
// one part a line. What varies from page to page of a site is what varies on
// real pages: the section and title, the date, the count of views, on one
// page in four one menu item shown in place of another (a sale, an event),
// and on one page in three one of the other notices in place of the last
// usual one. Most of the template is the same on every page, as on real
// sites: the Jaccard of two pages of a site is set by the template's size
// against their bodies' (TestSitePairJaccard).
type site struct {
	name    string
	header  string
	menu    []string // "Home" first
	spare   []string // labels a page may show in place of a menu item
	notices []string // the first usual show on every page, bar one in three
	usual   int
	footer  string
	date    uint8 // the site's date format, an index into dateFormats
}

// page is what planPage decided about a document.
type page struct {
	short bool
	site  int // -1: not a page of a site
	views int
}

// planPage decides, from r (stream (seed, document, tagPage)), whether a
// document's body is short and of which site, if any, it is a page. The
// site is floor(Sites·u²) for u uniform in [0, 1): site k gets a share
// sqrt((k+1)/S) - sqrt(k/S) ≈ 1/(2·sqrt(k·S)) of the pages, a power law
// with a few big sites and a long tail. At S = 2,000 the biggest site holds
// 2.2% of the pages (1/sqrt(S)), the top 1% of sites 10% (sqrt(0.01)), the
// top quarter half, and the sum of squared shares, which sets the same-site
// pairs a page has, is about ln(S)/(4S) + 1/S = 0.0015: a page of the crawl
// profile has 0.0015 · 0.8n pages of its site before and after it (120 at
// n = 100K). A Zipf law with s = 1 would give the biggest site 12% of the
// pages and 16 times as many same-site pairs, mostly inside a few sites:
// quadratic work that would show one site's cost more than the corpus's.
func (g *Generator) planPage(r *rand.Rand) page {
	pg := page{site: -1}
	pg.short = r.Float64() < g.opt.ShortShare
	if len(g.sites) > 0 && r.Float64() < g.opt.SiteShare {
		u := r.Float64()
		pg.site = int(float64(len(g.sites)) * u * u)
		// Views, log-uniform in 10 .. 10^6.
		pg.views = int(10 * math.Exp(r.Float64()*math.Log(1e5)))
	}
	return pg
}

// appendHead appends the template above a page's body: header, menu,
// breadcrumb, date and notices, drawing the page's variations from r.
func (g *Generator) appendHead(dst []byte, pg *page, r *rand.Rand) []byte {
	st := &g.sites[pg.site]
	dst = append(dst, st.header...)
	dst = append(dst, '\n')
	sec := 1 + r.IntN(len(st.menu)-1)
	swap := -1
	var spare string
	if r.IntN(4) == 0 {
		swap = 1 + r.IntN(len(st.menu)-1)
		spare = st.spare[r.IntN(len(st.spare))]
	}
	for k, label := range st.menu {
		if k > 0 {
			dst = append(dst, " | "...)
		}
		switch k {
		case sec:
			dst = append(dst, '[')
			dst = append(dst, label...)
			dst = append(dst, ']')
		case swap:
			dst = append(dst, spare...)
		default:
			dst = append(dst, label...)
		}
	}
	dst = append(dst, "\nHome > "...)
	dst = append(dst, st.menu[sec]...)
	dst = append(dst, " > "...)
	for k := range 3 + r.IntN(6) {
		if k > 0 {
			dst = append(dst, ' ')
		}
		dst = appendTitle(dst, g.word(r))
	}
	dst = append(dst, '\n')
	dst = appendDate(dst, st.date, r)
	dst = append(dst, '\n')
	// The usual notices; on one page in three another of the site's in
	// place of the last.
	last := st.notices[st.usual-1]
	if rest := st.notices[st.usual:]; len(rest) > 0 && r.IntN(3) == 0 {
		last = rest[r.IntN(len(rest))]
	}
	for _, n := range st.notices[:st.usual-1] {
		dst = append(dst, n...)
		dst = append(dst, '\n')
	}
	dst = append(dst, last...)
	return append(dst, '\n')
}

// appendFoot appends the template below a page's body: the view counter and
// the footer.
func (g *Generator) appendFoot(dst []byte, pg *page) []byte {
	dst = append(dst, '\n')
	dst = appendGrouped(dst, pg.views)
	dst = append(dst, " views\n"...)
	return append(dst, g.sites[pg.site].footer...)
}

// newSite makes a site's template from r.
func (g *Generator) newSite(r *rand.Rand) site {
	var st site
	var b []byte
	b = appendTitle(b, g.word(r))
	if r.IntN(2) == 0 {
		b = append(b, ' ')
		b = appendTitle(b, g.word(r))
	}
	if r.IntN(3) > 0 {
		b = append(b, ' ')
		b = append(b, siteSuffixes[r.IntN(len(siteSuffixes))]...)
	}
	st.name = string(b)

	// Header: the name and a tagline of some words, 40 to 150 bytes.
	target := 40 + r.IntN(111)
	b = append(b, " - "...)
	b = append(b, taglines[r.IntN(len(taglines))]...)
	for k := 0; len(b) < target; k++ {
		w := g.word(r)
		if len(b)+2+len(w) > 150 {
			break
		}
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, ' ')
		b = append(b, w...)
	}
	st.header = string(b)

	// The site's heft, from a bare blog's (0) to a portal's (1): the
	// menu's labels, the usual notices and the footer's links grow with it
	// together, so that the templates spread (700 to 1,450 bytes a page from
	// the 10th to the 90th percentile, 1,080 the median) rather than bunch
	// at their middle, and with them the Jaccard of a site's pages.
	heft := r.Float64()
	scale := func(lo, hi int) int { return lo + int(heft*float64(hi-lo+1)) }

	// Menu: Home and 9 to 29 labels, half of them the usual ones, half the
	// site's own words.
	common := r.Perm(len(navLabels))
	label := func() string {
		if r.IntN(2) == 0 && len(common) > 0 {
			l := navLabels[common[0]]
			common = common[1:]
			return l
		}
		words := 1 // two times in three; 2 or 3 words otherwise
		switch r.IntN(6) {
		case 0:
			words = 2
		case 1:
			words = 3
		}
		var b []byte
		for k := range words {
			if k > 0 {
				b = append(b, ' ')
			}
			b = appendTitle(b, g.word(r))
		}
		return string(b)
	}
	st.menu = []string{"Home"}
	for range scale(9, 29) {
		st.menu = append(st.menu, label())
	}
	for range 3 {
		st.spare = append(st.spare, label())
	}

	// Notices: 3 to 6 of the kinds, each 80 to 300 bytes.
	for _, k := range r.Perm(len(noticeKinds))[:3+r.IntN(4)] {
		var b []byte
		if k == 0 {
			b = g.appendNoticeSentences(b, r)
		} else {
			t := noticeKinds[k]
			b = g.expand(b, t[r.IntN(len(t))], st.name, r)
		}
		st.notices = append(st.notices, string(b))
	}
	st.usual = scale(1, 3)

	// Footer: copyright, address and 10 to 20 links.
	b = b[:0]
	y1 := 1995 + r.IntN(26)
	b = append(b, "Copyright "...)
	b = strconv.AppendInt(b, int64(y1), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(max(y1+1, 2018+r.IntN(7))), 10)
	b = append(b, ' ')
	b = append(b, st.name...)
	b = append(b, ". All rights reserved.\n"...)
	b = strconv.AppendInt(b, int64(1+r.IntN(9999)), 10)
	b = append(b, ' ')
	b = appendTitle(b, g.word(r))
	b = append(b, ' ')
	b = append(b, streets[r.IntN(len(streets))]...)
	b = append(b, ", "...)
	b = appendTitle(b, g.word(r))
	b = append(b, towns[r.IntN(len(towns))]...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(10000+r.IntN(90000)), 10)
	if r.IntN(2) == 0 {
		b = append(b, " - Phone "...)
		b = strconv.AppendInt(b, int64(200+r.IntN(800)), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(1000000+r.IntN(9000000)), 10)
	}
	b = append(b, '\n')
	for k, l := range r.Perm(len(footerLinks))[:scale(10, 20)] {
		if k > 0 {
			b = append(b, " | "...)
		}
		b = append(b, footerLinks[l]...)
	}
	st.footer = string(b)
	st.date = uint8(r.IntN(len(dateFormats)))
	return st
}

// word returns a word of the pool's vocabulary drawn with r.
func (g *Generator) word(r *rand.Rand) string { return g.pool.words[r.IntN(len(g.pool.words))] }

// appendNoticeSentences appends a notice of pool sentences: a label and
// sentences up to 80 to 300 bytes in all.
func (g *Generator) appendNoticeSentences(dst []byte, r *rand.Rand) []byte {
	start := len(dst)
	dst = append(dst, noticeLabels[r.IntN(len(noticeLabels))]...)
	for tries := 0; len(dst)-start < 80 && tries < 100; tries++ {
		sent := g.pool.Sentence(r.IntN(g.pool.Len()))
		if len(dst)-start+1+len(sent) > 300 {
			continue
		}
		dst = append(dst, ' ')
		dst = append(dst, sent...)
	}
	return dst
}

// expand appends template t with "{name}" replaced by name, "{w}" by a
// word drawn with r, "{W}" by one capitalised and "{n}" by a number of one
// to three digits.
func (g *Generator) expand(dst []byte, t, name string, r *rand.Rand) []byte {
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			return append(dst, t...)
		}
		dst = append(dst, t[:i]...)
		j := strings.IndexByte(t[i:], '}') + i
		switch t[i+1 : j] {
		case "name":
			dst = append(dst, name...)
		case "w":
			dst = append(dst, g.word(r)...)
		case "W":
			dst = appendTitle(dst, g.word(r))
		case "n":
			dst = strconv.AppendInt(dst, int64(1+r.IntN(999)), 10)
		}
		t = t[j+1:]
	}
}

// appendTitle appends w (a lower-case word of the pool's vocabulary) with
// its first letter in upper case.
func appendTitle(dst []byte, w string) []byte {
	if w == "" {
		return dst
	}
	c := w[0]
	if 'a' <= c && c <= 'z' {
		c -= 'a' - 'A'
	}
	return append(append(dst, c), w[1:]...)
}

// appendGrouped appends n with its thousands separated by commas.
func appendGrouped(dst []byte, n int) []byte {
	var d [24]byte
	s := strconv.AppendInt(d[:0], int64(n), 10)
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, c)
	}
	return dst
}

var months = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

// dateFormats name the ways appendDate writes a page's date.
var dateFormats = [...]string{"Posted on March 3, 2019", "Published 2019-03-03", "3 March 2019", "Updated Mar 3, 2019 at 14:05"}

// appendDate appends a date between 2005 and 2024 drawn with r, in format f
// of dateFormats.
func appendDate(dst []byte, f uint8, r *rand.Rand) []byte {
	y, m, d := 2005+r.IntN(20), r.IntN(12), 1+r.IntN(28)
	pad := func(dst []byte, n int) []byte {
		if n < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(n), 10)
	}
	switch f {
	case 0:
		dst = append(dst, "Posted on "...)
		dst = append(dst, months[m]...)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(d), 10)
		dst = append(dst, ", "...)
		dst = strconv.AppendInt(dst, int64(y), 10)
	case 1:
		dst = append(dst, "Published "...)
		dst = strconv.AppendInt(dst, int64(y), 10)
		dst = append(dst, '-')
		dst = pad(dst, m+1)
		dst = append(dst, '-')
		dst = pad(dst, d)
	case 2:
		dst = strconv.AppendInt(dst, int64(d), 10)
		dst = append(dst, ' ')
		dst = append(dst, months[m]...)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(y), 10)
	default:
		dst = append(dst, "Updated "...)
		dst = append(dst, months[m][:3]...)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(d), 10)
		dst = append(dst, ", "...)
		dst = strconv.AppendInt(dst, int64(y), 10)
		dst = append(dst, " at "...)
		dst = pad(dst, r.IntN(24))
		dst = append(dst, ':')
		dst = pad(dst, r.IntN(60))
	}
	return dst
}

var siteSuffixes = []string{"Times", "Daily", "Review", "Journal", "Hub", "Forum", "Online", "Weekly", "Post",
	"Guide", "Store", "Central", "Network", "Magazine", "Blog", "Herald", "Gazette", "Shop", "Club", "Wiki"}

var taglines = []string{"News and views on", "Your guide to", "The home of", "Notes about", "Everything about",
	"Independent reporting on", "A community for people who love", "Reviews, tips and stories about",
	"Daily updates on", "Articles and resources on", "The best deals on", "Questions and answers about"}

var navLabels = []string{"News", "About", "About Us", "Contact", "Blog", "Shop", "Events", "Forum", "Help", "FAQ",
	"Search", "Log In", "Sign Up", "Register", "Archive", "Topics", "Reviews", "Videos", "Photos", "Podcasts",
	"Opinion", "Sports", "Business", "Technology", "Culture", "Travel", "Jobs", "Classifieds", "Deals", "Support",
	"Community", "Resources", "Downloads", "Pricing", "Careers", "Gallery", "Calendar", "Members", "Subscribe",
	"Donate", "Guides", "Tutorials", "Docs", "Local", "World", "Science", "Health", "Education", "Food", "Music",
	"Books", "Movies", "Games", "Weather", "Real Estate", "Cars", "My Account", "Cart", "New Arrivals", "Best Sellers"}

var footerLinks = []string{"About Us", "Contact", "Privacy Policy", "Terms of Use", "Cookie Policy",
	"Accessibility", "Careers", "Advertise", "Press", "Help Center", "Sitemap", "RSS", "Newsletter", "Corrections",
	"Code of Ethics", "Affiliates", "Gift Cards", "Returns", "Shipping", "Do Not Sell My Personal Information",
	"Contributors", "Licensing", "Archives", "Facebook", "Twitter", "Instagram", "YouTube", "LinkedIn", "Store",
	"Investor Relations", "Partners", "Feedback", "Terms and Conditions", "Legal Notice", "Site Map", "Mobile App"}

var streets = []string{"Street", "Road", "Avenue", "Lane", "Boulevard", "Drive", "Way", "Place", "Court", "Square"}

var towns = []string{"ton", "ville", "field", "burg", "ford", "port", "bridge", "wood", "dale", " City", " Springs"}

var noticeLabels = []string{"Notice:", "Update:", "Announcement:", "Please note:", "Editor's note:"}

// noticeKinds are the notices a site draws 3 to 6 of: kind 0 is pool
// sentences (appendNoticeSentences), the others templates for expand,
// one variant a site.
var noticeKinds = [][]string{
	nil,
	{ // cookies
		"We use cookies to give you the best experience on {name}. By continuing to browse the site you agree to our use of cookies. Read our Cookie Policy to learn more. Accept all | Manage preferences",
		"This website uses cookies and similar technologies to remember your settings, measure traffic and show you relevant {w} offers. You can change your choice at any time in Privacy Settings. OK",
		"{name} and our {n} partners store and access information on your device to personalise content and ads. Click Accept to consent or Reject to refuse. Accept | Reject | Learn more",
	},
	{ // newsletter
		"Subscribe to the {name} newsletter and get the latest {w} and {w} stories delivered to your inbox every week. Enter your email address. Sign up",
		"Never miss a story about {w}: join {n},000 readers who get our free weekly digest. No spam, unsubscribe at any time. Subscribe now",
		"Get our {W} Report in your inbox. The best of {name}, handpicked by our editors every morning. Your email | Sign me up",
	},
	{ // legal
		"{name} is not responsible for the content of external sites. Opinions expressed by contributors are their own and do not reflect the views of {name}.",
		"Disclaimer: the information on this page about {w} is provided for general purposes only and is not professional advice. Use it at your own risk.",
		"Some links on this page are affiliate links: {name} may earn a commission when you buy through them, at no extra cost to you. Learn more about how we review {w} products.",
	},
	{ // app
		"Get the {name} app for iPhone and Android. Read offline, save articles for later and get alerts about {w} and {w}. Download now",
		"Reading on mobile? Our new app makes following {W} and {W} easier than ever. Available free on the App Store and Google Play.",
	},
	{ // account
		"You have {n} free articles left this month. Subscribe to {name} for unlimited access to our {w} coverage, from just {n} cents a week. Already a member? Log in",
		"Create a free {name} account to comment, follow topics such as {w} and save your favourite pages. Register | Log in",
	},
	{ // community
		"Please keep comments civil and on topic. Posts about {w} that break the {name} community rules will be removed by our moderators. Read the rules",
		"Have a question about {w}? Ask the {name} community: {n} members are online now and ready to help. Start a new thread",
	},
}
