package dedup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/outfile"
	"github.com/neardup/neardup/simhash"
)

// outputs are the run's optional output files (nil when not asked for).
type outputs struct {
	output, duplicates, clusters, summary *outfile.File
	done                                  bool
}

func (o *outputs) all() []*outfile.File {
	var fs []*outfile.File
	for _, f := range []*outfile.File{o.output, o.duplicates, o.clusters, o.summary} {
		if f != nil {
			fs = append(fs, f)
		}
	}
	return fs
}

func (r *runner) createOutputs() (*outputs, error) {
	o := &outputs{}
	for _, t := range []struct {
		path string
		dst  **outfile.File
	}{{r.opt.Output, &o.output}, {r.opt.Duplicates, &o.duplicates}, {r.opt.Clusters, &o.clusters}, {r.opt.SummaryJSON, &o.summary}} {
		if t.path == "" {
			continue
		}
		f, err := outfile.CreateOrStdout(t.path, r.opt.Stdout)
		if err != nil {
			o.abort()
			return nil, fmt.Errorf("dedup: creating %s: %w", t.path, err)
		}
		*t.dst = f
	}
	return o, nil
}

// abort removes the temporary files unless commit succeeded.
func (o *outputs) abort() {
	if o.done {
		return
	}
	for _, f := range o.all() {
		f.Abort()
	}
}

// commit renames every output into place (or flushes it, for a device, FIFO
// or standard output). Once the first rename happened the rest are attempted
// too, and the errors joined.
func (o *outputs) commit() error {
	var errs []error
	for _, f := range o.all() {
		if err := f.Commit(); err != nil {
			errs = append(errs, fmt.Errorf("dedup: %w", err))
		}
	}
	o.done = true
	return errors.Join(errs...)
}

func (o *outputs) writeSummary(s Summary) error {
	if o.summary == nil {
		return nil
	}
	enc := json.NewEncoder(o.summary)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// Duplicate is one line of the duplicates file: a removed document and the
// document kept in its place.
type Duplicate struct {
	DupID  string `json:"dup_id"`
	KeptID string `json:"kept_id"`
	// Distance and Similarity compare the two SimHash fingerprints (absent for
	// MethodMinHash).
	Distance   *int     `json:"distance,omitempty"`
	Similarity *float64 `json:"similarity,omitempty"`
	// Jaccard or Cosine: the verification measure between the two documents
	// (absent without verification). With a sampled sketch it is an estimate.
	Jaccard *float64 `json:"jaccard,omitempty"`
	Cosine  *float64 `json:"cosine,omitempty"`
	// Exact is true when both have the same token sequence.
	Exact bool `json:"exact,omitempty"`
	// Index is true when the kept document is in the index snapshot
	// (incremental mode); KeptID is then its stored id.
	Index bool `json:"index,omitempty"`
}

// Cluster is one line of the clusters file. Under ClusterGreedy it is a kept
// document and the documents removed in its favour; under ClusterComponents a
// connected component of verified pairs, of which one is kept.
type Cluster struct {
	KeptID string   `json:"kept_id"`
	Size   int      `json:"size"`
	IDs    []string `json:"ids"` // the kept document first, then the removed ones in input order (components: members in input order)
	// IndexID is the stored document (incremental mode) the members were
	// removed in favour of; then no member is kept and KeptID is empty.
	IndexID string `json:"index_id,omitempty"`
}

// duplicate describes removed document i.
func (r *runner) duplicate(i int) Duplicate {
	d := r.d
	fi := r.feat(i)
	var kf Features
	dup := Duplicate{DupID: d.ids.get(i)}
	if k := int(r.keeper[i]); k >= 0 {
		kf = r.feat(k)
		dup.KeptID = d.ids.get(k)
	} else {
		m := r.stored[i]
		kf, _ = r.kept.Get(m.ID)
		dup.KeptID, dup.Index = m.ID, true
	}
	dup.Exact = fi.Exact == kf.Exact
	if r.opt.Method == MethodSimHash {
		dist := simhash.Distance(fi.FP, kf.FP)
		sim := simhash.Similarity(dist, 64)
		dup.Distance, dup.Similarity = &dist, &sim
	}
	switch r.opt.Verify {
	case VerifyJaccard:
		j := r.rule.Score(&kf, &fi)
		dup.Jaccard = &j
	case VerifyCosine:
		c := r.rule.Score(&kf, &fi)
		dup.Cosine = &c
	}
	return dup
}

// writeReports writes the duplicates and clusters files.
func (r *runner) writeReports(o *outputs) error {
	n := r.d.len()
	if o.duplicates != nil {
		enc := json.NewEncoder(o.duplicates)
		for i := range n {
			if r.removed(i) {
				if err := enc.Encode(r.duplicate(i)); err != nil {
					return err
				}
			}
		}
	}
	if o.clusters == nil {
		return nil
	}
	// Clusters: a kept document (or a stored one) and the documents removed
	// in its favour, in input order; under ClusterComponents, the components.
	slot := map[string]int{}
	var groups []Cluster
	add := func(key string, kept, index string, i int) {
		s, ok := slot[key]
		if !ok {
			s = len(groups)
			slot[key] = s
			groups = append(groups, Cluster{KeptID: kept, IndexID: index})
		}
		groups[s].IDs = append(groups[s].IDs, r.d.ids.get(i))
	}
	for i := range n {
		k := int(r.keeper[i])
		switch {
		case k < 0:
			id := r.stored[i].ID
			if r.opt.Cluster == ClusterComponents {
				add("c"+strconv.Itoa(r.uf.Find(i)), "", id, i)
			} else {
				add("s"+id, "", id, i)
			}
		case r.opt.Cluster == ClusterComponents:
			if r.uf.Size(i) > 1 {
				add("c"+strconv.Itoa(r.uf.Find(i)), r.d.ids.get(k), "", i)
			}
		case k != i:
			add("k"+strconv.Itoa(k), r.d.ids.get(k), "", i)
		}
	}
	enc := json.NewEncoder(o.clusters)
	for _, c := range groups {
		if c.IndexID == "" && r.opt.Cluster == ClusterGreedy {
			// The kept document leads its cluster.
			c.IDs = append([]string{c.KeptID}, c.IDs...)
		}
		c.Size = len(c.IDs)
		if err := enc.Encode(c); err != nil {
			return err
		}
	}
	return nil
}

// outputPass reads the input again and copies the kept documents: JSONL lines
// untouched; for Lines input the line; for Text input (a file per document)
// the file's path.
func (r *runner) outputPass(ctx context.Context, inputs []string, copt corpus.Options, w io.Writer) error {
	rd, err := corpus.Open(inputs, copt)
	if err != nil {
		return err
	}
	defer rd.Close()
	total := int64(r.d.len())
	var bytes int64
	for i := 0; ; i++ {
		doc, err := rd.Next()
		if err == io.EOF {
			if i != r.d.len() {
				return fmt.Errorf("%w: %d documents, first pass read %d", ErrInputChanged, i, r.d.len())
			}
			break
		}
		if err != nil {
			return err
		}
		if i >= r.d.len() || doc.ID != r.d.ids.get(i) {
			return fmt.Errorf("%w: %s", ErrInputChanged, where(doc))
		}
		bytes += int64(len(doc.Text))
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			r.progress(Progress{Stage: "output", Docs: int64(i), Bytes: bytes, TotalDocs: total,
				Stored: rd.Consumed(), TotalStored: rd.Size()})
		}
		if r.removed(i) {
			continue
		}
		switch {
		case doc.Raw != nil:
			_, err = w.Write(doc.Raw)
		case doc.Line > 0:
			_, err = io.WriteString(w, doc.Text)
		default:
			_, err = io.WriteString(w, doc.Source)
		}
		if err == nil {
			_, err = w.Write([]byte{'\n'})
		}
		if err != nil {
			return err
		}
	}
	r.progress(Progress{Stage: "output", Docs: total, Bytes: bytes, TotalDocs: total,
		Stored: rd.Consumed(), TotalStored: rd.Size(), Done: true})
	return nil
}

// writeKeptIDs writes the ids of the kept documents, one per line: the output
// for Text input, where each document is a file whose id is its path.
func (r *runner) writeKeptIDs(w io.Writer) error {
	for i := range r.d.len() {
		if r.removed(i) {
			continue
		}
		if _, err := io.WriteString(w, r.d.ids.get(i)+"\n"); err != nil {
			return err
		}
	}
	return nil
}
