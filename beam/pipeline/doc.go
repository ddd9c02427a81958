// Package pipeline is "neardup dedup" as an Apache Beam pipeline: the same
// verdicts as dedup.Run (the keep-first rule of rule.Rule over documents in
// input order), computed by transforms that a runner spreads over machines.
// It runs in process on Beam's pure-Go prism runner and unchanged on Flink,
// Spark or Dataflow through their portable runners.
//
//	p, s := beam.NewPipelineWithRoot()
//	res, err := pipeline.Dedup(s, pipeline.Options{
//		Inputs: []string{"gs://bucket/crawl-*.jsonl"},
//		Output: "gs://bucket/kept.jsonl",
//	})
//	if err != nil { ... }
//	_ = res // the PCollections, for tests and further transforms
//	err = beamx.Run(ctx, p)
//
// # Why the verdicts are the batch's
//
// Let E be the graph of pairs (x, y) with Rule.Duplicates(x, y): candidates
// (a shared LSH band or token-sequence hash under MethodMinHash; fingerprints
// within Rule.PairK under MethodSimHash) that pass verification. Keep-first
// keeps y unless an earlier kept document is its E-neighbour, and names the
// first such: the verdicts depend on E alone, and no edge of E leaves a
// connected component of E. So any partition of the documents whose parts
// are unions of E's components (never splitting one) can be decided part
// by part, each with the batch's rule. The pipeline builds such parts from
// a few edges per document instead of all of E.
//
// Every edge of E joins two documents that share a candidate key (a band
// key, the token-sequence hash, or under MethodSimHash a key block of one of
// index.PlanJoin's tables). A bucket (the documents of one key) becomes a
// star on its least member c, and c checks each leaf y: if Duplicates(c, y)
// for every leaf, the star connects all the bucket's members and E has no
// more to say inside the bucket. If some leaf fails, an E-edge between two
// leaves may be what connects them, so the failing leaves are compared with
// the other leaves, except pairs already connected and pairs the centre
// rules out: Jaccard distance is a metric, so J(x, y) >= t implies
// |J(c, x) - J(c, y)| <= 1 - t (the centre is a pivot). What this finds
// connects, within each bucket, whatever E connects there; so its
// components are E's. A star too large to hold links its leaves to the centre
// unverified, which merges components but never splits one.
//
// The prefilter (rule.Rule.PrefilterRejects) comes before any of this, at
// each centre, on 64 bytes a document, before any features move.
// Rule.Duplicates applies it too, with the same fixed hash, so a pair it
// rejects is not in E (its Jaccard similarity is below the threshold,
// except with probability below 1e-9, and then the batch, applying the same
// test to the same pair, drops it as well). But a centre rejecting a leaf says nothing
// of the leaf's pairs with the other leaves: two near copies in a bucket
// whose least member is another page of their site's template are both
// rejected by the centre, and their E-edge is inside the bucket. So a leaf
// the centre rejects is tested with the prefilter against the centre's
// other leaves (of all its buckets), as verification does with Duplicates
// (pairs already connected skipped), and linked to those it passes with.
// Every E-edge of a bucket is then connected by the links left: through the
// centre when both ends pass against it, else by the test between them or a
// path found before it. A leaf joined to nothing has no E-edge within the
// star, and is neither linked nor sent to the centre; the leaves joined to
// something are, so both ends of every E-edge within the star reach a
// verified star's centre, and the checks above find it there (a centre no
// leaf passed against has no E-edge there, and its leaves are compared
// among themselves). A star whose failing leaves times its leaves pass
// MaxChecks keeps every link, as without the prefilter.
//
// The stars so prefiltered, unverified, are the candidate graph, coarser
// than E: its components are unions of E's, so they are such parts too.
// The links the prefilter drops are those that made them grow on pages
// sharing a template (J 0.3-0.6 within a site: a band of the template's
// minima is shared by about one page in twenty of the site). Verifying the
// stars costs each candidate's features a trip to each distinct centre it
// is a leaf of (about three on a corpus of versions, whose buckets have
// different least members) and one more to its component; a small candidate
// component is decided as a whole instead, its documents' features sent to
// it once. So the candidate components are computed first (16 bytes an
// edge), and only the documents of those larger than DirectComponent (4,096
// documents) take the verified stars; under MethodMinHash the candidate
// components seen so far are all small (the largest: 906 documents on
// en_gitdocs_dev, 15 on web 100K), but a corpus whose candidate graph
// grows a giant component keeps its bounded path.
//
// # Transforms, what each shuffles per document, and the largest state
//
// Sizes are per document; "features" is rule.Features.MarshalBinary (the
// token-sequence hash, counts, the shingle set at about 3 bytes a distinct
// shingle, 24 band keys of 8 bytes) with the id and the position. Prism's
// cost goes with the number of elements more than with their bytes, so
// small things travel in batches.
//
//  1. Read (Read, Keys): inputs are listed and cut into ranges: an
//     uncompressed JSONL or lines file in byte ranges of SplitBytes, a range
//     owning the lines that start in it (as Beam's textio); compressed files
//     and whole text files are one range. A document's position is
//     range<<40 | its line in the range: input order, known to every read
//     of the range without the ranges before it, so the keys read needs
//     no line counts. The reads that name documents (the data reads, 5
//     and 8) get the line ends of the file before their range (a count
//     per split range, summed on one worker: lineBases, 24 bytes a
//     range), so that ids ("file:line" for a document without one) are
//     the batch's; an error of the keys read counts its file's lines up
//     to it then. The rule's extractor (rule.NewRuleExtractor) runs in the read: text is
//     never shuffled. Per document it emits its 25 candidate keys (24 bands
//     and the token-sequence hash) as entries of 32 bits of key and the
//     position's difference from the batch's previous entry (a uvarint:
//     about 5 bytes an entry), batched per key partition (key mod KeyParts,
//     one partition per KeyPartBytes, 1 MiB, of input): about 125 bytes,
//     in a few large elements.
//     State: one document, and up to 8 MiB of key entries before a flush.
//  2. Stars (GroupByKey on the key partition): the partition's entries
//     are sorted; each bucket (key) of two or more documents makes one
//     starEdge per member (member, least member), in one batch per
//     member's range (two uvarints an edge). State: one partition, about
//     25 entries of 16 bytes (decoded) per document of KeyPartBytes of
//     input (~330 KB on web text), whatever the corpus size, and its star
//     edges.
//  3. Prefilter at the centres (CoGroupByKey on the range: the range, its
//     star edge batches; then GroupByKey on the centre's partition, as the
//     components' node partitions): the range's star edges are gathered,
//     the repeats dropped (a near copy meets the same centre in most of its
//     bands: 160K star edges, 12.6K distinct pairs on web 100K), the range
//     is read again and each member's prefilter computed (its features
//     extracted once more; a range without star edges is not read; under
//     MethodSimHash none, so nothing is rejected), and each member sent
//     with its prefilter once to each partition of its distinct centres
//     (64 bytes and a few: a uvarint of the member, one of each centre;
//     a centre is its own star's member, so its prefilter reaches its
//     partition too). A centre's partition applies the prefilter to each
//     star (centreFn; see above) and emits the links left (the candidate
//     graph, KV<a, b>, each once) and the star edges left (members joined
//     to something, and the centre when a leaf passed against it), in one
//     batch per member's range, for 5. State: the range's star edges, 16
//     bytes each decoded, at most 25 per document of the range; then one
//     partition's entries, about 100 bytes each decoded (one per member and
//     distinct centre in the partition), and a star's union-find, at most
//     MaxChecks prefilter pairs a star (about 5 ns each).
//  4. Candidate components (MethodMinHash; Components over the links, as
//     in 7, then GroupByKey on the label): each component of at most
//     DirectComponent documents sends its documents' labels to their
//     ranges; a larger one sends nothing. State: as in 7; one candidate
//     component's positions up to DirectComponent (8 bytes each).
//  5. Data to centres and components (CoGroupByKey on the range: the range,
//     its batches of star edges left by the prefilter, its labels of small
//     candidate components):
//     the range is read again and the features of each member extracted
//     once more; a member of a small candidate component sends them, with
//     its id and band keys, to its component (step 8) and nowhere else;
//     another sends them once to each distinct centre whose star kept it
//     as a leaf, and once to itself as a centre; a document in no bucket,
//     or whose every link the prefilter dropped, is read and sent nowhere. State: the range's star edges and labels, 16 bytes each, at
//     most 25 and one per document of the range.
//  6. Verify stars (CoGroupByKey on the centre: its features, its leaves'):
//     the checks above; emits edges KV<A, B>. State: the centre's features,
//     24 bytes and a decoded set per leaf, the sets held up to HoldBytes
//     (64 MiB), at most MaxChecks leaf pairs looked at; past either, the star
//     is linked unverified (metric coarsened_stars).
//  7. Components (Components): Rounds (3) large-star/small-star rounds over
//     the edges (Kiveris et al., SoCC 2014), then every edge whose ends
//     still have different labels gives a label pair, and one worker joins
//     those pairs with a union-find (at most MaxResidual, 4M, or the run
//     fails asking for more rounds); the roots go back as a side input.
//     The edges whose ends still have different labels are found in one
//     grouping: each node's label goes to itself and to its neighbours
//     above it in the graph the rounds left (which has the original's
//     components). The edges travel in batches per node partition (as the
//     keys: one partition per KeyPartBytes of input), each call applying
//     the step to every node of its partition, about 10 bytes an entry;
//     each round shuffles the edges about three times (both ways to the
//     large-star, once to the small-star). State: one partition's entries
//     (16 bytes each decoded; a node's neighbours among them), and up to
//     8 MiB of entries gathered for the next grouping; the residual
//     union-find (at most MaxResidual pairs); the roots side input (at
//     most 2·MaxResidual labels).
//  8. Decide (CoGroupByKey on the range: the range, its documents' labels;
//     then GroupByKey on the label): the range is read a third time and the
//     features of each document with a label extracted and sent to its
//     component; with the small candidate components' (step 5), the
//     batch's keep-first runs: documents in input
//     order, each compared in input order with the kept documents it is a
//     candidate of (rule.Rule.Duplicates), removed in favour of the first
//     it duplicates. State: the range's labels, 16 bytes each; one
//     component, at most DirectComponent (4,096) documents' features for a
//     candidate component, at most MaxComponent (262,144) for a component
//     of verified edges; a larger one fails the run with its least
//     position. The components are decided in Waves (one per 256 MiB of
//     input by default, at most 16): a wave groups the data of the
//     components whose label mixes to it, and its grouping waits for the
//     wave before it (whose keep-first's empty output is one of its
//     inputs), so that a runner holding a shuffle in
//     memory until its consumer has run (prism) holds one wave's grouped
//     data at a time, not the whole of the run's largest shuffle (on web
//     text, the features to the components: 252 bytes per document at 1M).
//  9. Write (CoGroupByKey on the range: the range, its duplicates and
//     clusters lines): the worker that writes a range sorts the range's own
//     output lines by position, writes its duplicates and clusters part,
//     reads the range again and writes the output line of every
//     document not removed. Parts are PATH-00000-of-00012 in input order;
//     unless Options.Parts, one worker then concatenates each output's parts
//     (streaming) into PATH, as dedup.Run writes it, after checking that
//     documents were read (a run without any fails, with ErrNoDocuments):
//     the ranges' document counts and the ranges written reach it grouped
//     under one key. State: one range's duplicates and clusters lines; the
//     finish, two ints per range.
//
// So a document in no bucket is shuffled as its keys (about 125 bytes); a
// document in buckets adds its star edges (about 10 bytes each), its
// prefilter once per partition of its distinct centres (about 55 bytes
// each, at most 25 times, about once for most: 13 bytes per document of web
// 100K, 27 of a crawl of site templates) and the links the prefilter leaves
// (their trips through the candidate components); then, unless the
// prefilter dropped every link it has, its features once, to its component,
// when its candidate component is small; in a larger one, its features once
// per distinct centre whose star kept it and once if it is a centre, and
// once more to its component when it is in an edge. Nothing grows with the
// corpus under MethodMinHash: the keys are fixed, the stars are linear in
// their buckets, the components decided are either small candidate
// components or those of verified pairs, and the candidates the prefilter
// rules out, which do grow with a site's pages, cost their prefilters, not
// their features. Reading a range five times (keys, prefilters of the
// bucket members, data to centres and components, data to components of
// verified edges, output; the features of a bucket's members extracted up
// to three times more) trades input bandwidth and CPU, which grow with
// workers, for shuffle, which does not: the prefilters sent from the keys
// read would cost 49 bytes for every document (web 100K: 473 bytes a
// document shuffled against 424 so).
//
// # Stages and side inputs on prism
//
// Prism fuses the DoFns between groupings into stages (80 before the
// issue-22 work on stages, 67 after it under MethodMinHash with one wave,
// before the prefilter step added its read and its centres' grouping) and
// runs each as a bundle. Its scheduling loop costs per stage and per pass,
// and while a stage that reads a side input runs a bundle, the loop passes
// again and again (the bundle holds the stage's input watermark back, so
// the stage looks ready and is put back each pass): a core spun for the
// length of the bundle, 2.6 of 14.3 CPU-s on en_gitdocs_dev when the keys
// read and the data reads took the line counts as a side input. So the
// long stages (the reads, the keep-first of a wave, the finish) take what
// they need through their groupings; only the relabelling after the
// components (a map lookup per node) and MethodSimHash's plan keys read a
// side input. Prism's cost per element and per key of a grouping is the
// other lever: the components' rounds took a third of the CPU at 1M with
// an element per edge, and take batches per node partition now (step 7).
//
// Under MethodSimHash the key blocks of index.PlanJoin's tables grow with
// the document count (92 tables at 9K documents, 1,820 at 1M), and a
// document is a leaf of up to one star per table, so its stars are not
// verified (that would send its features to each centre): the links
// themselves are the edges, the components those of the candidate graph
// (coarser than E's, so the verdicts are still the batch's), and only the
// decision reads features. It gives the same verdicts, and does not scale:
// MethodMinHash is the method for large corpora.
//
// # Differences from dedup.Run
//
// Only the keep-first rule with Jaccard verification (no --keep longest or
// field, no components clustering, no cosine, no index). Shingle sets are
// never sampled: the batch samples past its sketch budget (256 MiB), and then
// its verdicts can differ. Twins are not folded before the candidate stage:
// m copies of one text are one bucket, a star of m - 1 verified leaves.
// Duplicate ids are not checked.
//
// Metrics (namespace "neardup"): documents, bad_inputs, star_edges,
// candidate_links (distinct leaves of the stars' centres), prefiltered (of
// those, rejected by the centre's prefilter), prefilter_leaf_links (links
// between two leaves the prefilter passes), prefilter_checks,
// unshipped_leaves (joined to nothing: neither linked nor sent),
// prefilter_coarsened (stars kept whole past MaxChecks),
// candidate_components, candidate_residual_label_pairs, direct_documents,
// star_documents (of candidate components too large to decide directly),
// verifications, pivot_pruned, verified_edges, coarsened_stars, components,
// residual_label_pairs, removed; distributions candidate_component_size,
// star_leaves and component_size; with Options.CountShuffle, shuffle_bytes and
// shuffle_bytes_STAGE (shuffle.go).
package pipeline
