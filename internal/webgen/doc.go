// Package webgen generates web-like corpora of any size, deterministically
// and without downloaded data, with planted duplicates whose exact Jaccard
// similarity is known, and checks a dedup's removals against them.
//
//	pool, err := webgen.LoadPool(prose, gitdocs, spdx) // the shared corpora's sentences
//	g, err := webgen.New(pool, webgen.Options{Seed: 1})
//	err = g.Write(ctx, w, 0, 1_000_000, 0) // JSON lines, byte-identical for any worker count
//
// A document is 300 bytes to 2 KB of real sentences (three at least) drawn
// at random from the pool (the distinct sentences of the shared English
// corpora), so two documents share almost nothing. Of all documents (Options):
//
//   - 10% are near-copies of an earlier original, chosen uniformly among all
//     earlier originals (at 10M documents the original is typically millions
//     of documents back), with words replaced, inserted or deleted until the
//     exact word 5-shingle Jaccard to the original (eval's ground truth, the
//     tokenisation dedup verifies with) lies in [0.80, 0.95]; a tenth of them
//     are controls in [0.50, 0.80), which a dedup at 0.8 must keep;
//   - 2% are exact copies of an earlier original;
//   - 30% carry one of 2,000 shared boilerplate paragraphs (200 to 600 bytes
//     of pool sentences) at the start or the end, and, with Options.Hot, a
//     given fraction carry one hot paragraph of 200 to 300 bytes (the
//     hot-key test).
//
// Copies inherit their original's paragraphs, so the fractions hold over all
// documents.
//
// # Sites and short bodies
//
// Real crawls hold what makes a dedup's work grow with the corpus: pages of
// one site share its template, and the sites are many fewer than the pages.
// With Options.Sites, a fraction SiteShare (0.8) of documents are pages of
// one of Sites sites, site floor(Sites·u²) for u uniform (a power law: the
// biggest of 2,000 sites holds 2.2% of the pages, the top 1% of sites 10%,
// the top quarter half; site.go says why not Zipf). A site's template,
// made from (seed, site), is a header (name and tagline, 40-150 bytes), a
// menu of 10-30 labels, a breadcrumb with the page's section and title, a
// date, the site's usual 1-3 of its 3-6 notices (cookies, newsletter,
// legal, ...; 80-300 bytes each), and after the body a view counter and a
// footer (copyright, address, 10-20 links; 150-500 bytes): 700 to 1,450
// bytes a page (10th to 90th percentile). Pages of a site differ in the
// breadcrumb, date and views, on one page in four in a menu item and on one
// in three in a notice. The number of sites is fixed, so pages per site, and
// the same-site pairs that LSH makes candidates (24 bands of 6 rows: 0.017
// at J 0.3, 0.31 at 0.5), grow with the corpus. Options.ShortShare makes
// that fraction of bodies short: one to three sentences, 80-400 bytes, no
// shared paragraph. Of pairs of pages of one site in the crawl-short profile
// (TestSitePairJaccard, seed 1, first 20,000 documents) the Jaccard is
// 0.12 / 0.24 / 0.40 / 0.65 at the 10th percentile, median, 90th and
// maximum, 0.43 at the median when both bodies are short; 10% of the pairs
// are at 0.4 or more. neardup dedup at its defaults then makes 1.18
// candidates per document of the first 100K documents (1.05 rejected), 3.40
// of the first 300K (3.21 rejected), against 0.11 on the default corpus.
// Near-copies and exact copies of a page copy the whole page, template
// included. Short bodies of one sentence repeat by chance, and pages of a
// site with such bodies, or with a template that outweighs them, reach the
// threshold: Check reports those removals among the unplanted ones at
// J >= threshold, which are legitimate (74 at 300K in the crawl-short
// profile, all of them short bodies sharing sentences).
//
// Profile names option sets, so that a benchmark command stays short:
// "crawl" is Sites 2000 and SiteShare 0.8 (neardup-gen -profile crawl):
// 0.20 candidates per document at 100K, 0.41 at 300K, the growth the corpus
// of issue 32 showed (0.25 at 100K, 1.55 at 1M, 14 at 10M); "crawl-short"
// adds ShortShare 0.3. With neither sites nor short bodies, no draw of the
// default corpus moves: its bytes for every seed are what they were before
// these options (TestGolden).
//
// Every document is a pure function of (pool, options, document number): its
// random decisions come from PCG streams seeded by the seed, the number and
// the decision's tag. A copy regenerates its original on demand, so
// generation runs in parallel chunks and memory does not grow with the
// corpus. Each copy's JSON line carries the truth:
//
//	{"id":"d0000000123","text":"...","planted":{"of":"d0000000042","kind":"near","jaccard":0.8312}}
//
// Check reads such a corpus and dedup's duplicates file and reports recall of
// the planted near-copies, exact copies removed, controls wrongly removed,
// and removals whose recomputed Jaccard is below the threshold;
// CheckGenerated gives the same report without reading the corpus, making
// again the documents it needs from their numbers, in memory that does not
// hold their texts (a check of 10^8 documents). Removals it
// cannot blame on the dedup are counted apart: documents removed that are
// no planted copy, at a recomputed J >= threshold; controls removed for
// another document at J >= threshold; and near-copies kept whose original
// was removed, unlike the document kept for it (left out of recall, since
// keep-first compares a document with kept ones only).
package webgen
