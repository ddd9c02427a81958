package dedup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/outfile"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/simhash"
)

// outputs are the run's optional output files (nil when not asked for).
type outputs struct {
	output, duplicates, clusters, summary *outfile.File
	dir                                   *shardDir // OutputDir
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
	if r.opt.OutputDir != "" {
		d, err := newShardDir(r.opt.OutputDir)
		if err != nil {
			o.abort()
			return nil, fmt.Errorf("dedup: creating %s: %w", r.opt.OutputDir, err)
		}
		o.dir = d
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
	if o.dir != nil {
		o.dir.abort()
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
	if o.dir != nil {
		if err := o.dir.commit(); err != nil {
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
	DupID  string `json:"dup_id" parquet:"dup_id"`
	KeptID string `json:"kept_id" parquet:"kept_id"`
	// Distance and Similarity compare the two SimHash fingerprints (absent for
	// rule.MethodMinHash).
	Distance   *int     `json:"distance,omitempty" parquet:"distance,optional"`
	Similarity *float64 `json:"similarity,omitempty" parquet:"similarity,optional"`
	// Jaccard or Cosine: the verification measure between the two documents
	// (absent without verification). With a sampled sketch it is an estimate.
	Jaccard *float64 `json:"jaccard,omitempty" parquet:"jaccard,optional"`
	Cosine  *float64 `json:"cosine,omitempty" parquet:"cosine,optional"`
	// Exact is true when both have the same token sequence.
	Exact bool `json:"exact,omitempty" parquet:"exact"`
	// Index is true when the kept document is in the index snapshot
	// (incremental mode); KeptID is then its stored id.
	Index bool `json:"index,omitempty" parquet:"index"`
}

// Cluster is one line of the clusters file. Under ClusterGreedy it is a kept
// document and the documents removed in its favour; under ClusterComponents a
// connected component of verified pairs, of which one is kept.
type Cluster struct {
	KeptID string   `json:"kept_id" parquet:"kept_id"`
	Size   int      `json:"size" parquet:"size"`
	IDs    []string `json:"ids" parquet:"ids,list"` // the kept document first, then the removed ones in input order (components: members in input order)
	// IndexID is the stored document (incremental mode) the members were
	// removed in favour of; then no member is kept and KeptID is empty.
	IndexID string `json:"index_id,omitempty" parquet:"index_id,optional"`
}

// duplicate describes removed document i.
func (r *runner) duplicate(i int) Duplicate {
	fi := r.feat(i)
	var kf rule.Features
	dup := Duplicate{DupID: r.id(i)}
	if k := int(r.keeper[i]); k >= 0 {
		kf = r.feat(k)
		dup.KeptID = r.id(k)
	} else {
		m := r.stored[i]
		kf, _ = r.kept.Get(m.ID)
		dup.KeptID, dup.Index = m.ID, true
	}
	dup.Exact = fi.Exact == kf.Exact
	if r.opt.Method == rule.MethodSimHash {
		dist := simhash.Distance(fi.FP, kf.FP)
		sim := simhash.Similarity(dist, 64)
		dup.Distance, dup.Similarity = &dist, &sim
	}
	switch r.opt.Verify {
	case rule.VerifyJaccard:
		j := r.rule.Score(&kf, &fi)
		dup.Jaccard = &j
	case rule.VerifyCosine:
		c := r.rule.Score(&kf, &fi)
		dup.Cosine = &c
	}
	return dup
}

// writeReports writes the duplicates and clusters files.
func (r *runner) writeReports(o *outputs) error {
	n := r.d.len()
	if o.duplicates != nil {
		enc := newRecords[Duplicate](o.duplicates, r.opt.ReportFormat)
		for i := range n {
			if r.removed(i) {
				if err := enc.write(r.duplicate(i)); err != nil {
					return err
				}
			}
		}
		if err := enc.close(); err != nil {
			return err
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
		groups[s].IDs = append(groups[s].IDs, r.id(i))
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
				add("c"+strconv.Itoa(r.uf.Find(i)), r.id(k), "", i)
			}
		case k != i:
			add("k"+strconv.Itoa(k), r.id(k), "", i)
		}
	}
	enc := newRecords[Cluster](o.clusters, r.opt.ReportFormat)
	for _, c := range groups {
		if c.IndexID == "" && r.opt.Cluster == ClusterGreedy {
			// The kept document leads its cluster.
			c.IDs = append([]string{c.KeptID}, c.IDs...)
		}
		c.Size = len(c.IDs)
		if err := enc.write(c); err != nil {
			return err
		}
	}
	return enc.close()
}

// records writes report records as JSON lines or as Parquet rows.
type records[T any] struct {
	enc  *json.Encoder
	pw   *parquet.GenericWriter[T]
	rows []T
}

func newRecords[T any](w io.Writer, format string) *records[T] {
	if format == ReportParquet {
		return &records[T]{pw: parquet.NewGenericWriter[T](w, parquet.Compression(&parquet.Zstd))}
	}
	return &records[T]{enc: json.NewEncoder(w)}
}

func (e *records[T]) write(v T) error {
	if e.enc != nil {
		return e.enc.Encode(v)
	}
	e.rows = append(e.rows, v)
	if len(e.rows) < 1024 {
		return nil
	}
	return e.flush()
}

func (e *records[T]) flush() error {
	_, err := e.pw.Write(e.rows)
	clear(e.rows)
	e.rows = e.rows[:0]
	return err
}

func (e *records[T]) close() error {
	if e.pw == nil {
		return nil
	}
	if err := e.flush(); err != nil {
		return err
	}
	return e.pw.Close()
}

// writeKeptIDs writes the ids of the kept documents, one per line: the output
// for Text input, where each document is a file whose id is its path.
func (r *runner) writeKeptIDs(w io.Writer) error {
	for i := range r.d.len() {
		if r.removed(i) {
			continue
		}
		if _, err := io.WriteString(w, r.id(i)+"\n"); err != nil {
			return err
		}
	}
	return nil
}
