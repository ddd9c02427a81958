package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/keptset"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redisstore"
)

type importCmd struct {
	dedupCmd
	data, engine, store string
	redis               redisFlags
	dataWasAbsent       bool
}

func newImportCommand() *cobra.Command {
	var f importCmd
	c := &cobra.Command{
		Use:   "import --data DIR [flags] [FILE|DIR|-]...",
		Short: "Load a corpus into a new data directory of 'neardup serve', deduplicated at batch speed",
		Long: `Load an existing corpus into a new data directory for 'neardup serve': the
documents 'neardup dedup' keeps (same flags, same defaults, same verdicts:
keep-first in input order) are stored in the order they were read, as if
posted one by one with mode add_if_new, and the service's kept set
(DATA/keptset) is written beside them, so that 'neardup serve --data DIR'
starts in seconds on them. The removed documents are not stored;
--duplicates names them as in 'neardup dedup'. With --store redis://... (or
redis-cluster://...) the documents go into a new shared Redis index instead,
the one 'neardup serve --store' opens (store/redisstore/REDIS.md).

The directory must be new or empty; a failed import removes what it wrote
there. The decision flags must be
the ones 'neardup serve' will run with (the store records them and refuses
others). --engine pebble (default) writes a thousand documents to a WAL sync;
bbolt one transaction each group.`,
		Example: `  neardup import --data ./neardup-data crawl.jsonl.zst
  neardup serve --data ./neardup-data
  neardup import --store redis://127.0.0.1:6379/0 crawl.jsonl.zst
  neardup serve --store redis://127.0.0.1:6379/0`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error { return f.run(c, args) },
	}
	f.registerFlags(c.Flags())
	fs := c.Flags()
	fs.StringVar(&f.data, "data", "./neardup-data", "new data directory of 'neardup serve' to load")
	fs.StringVar(&f.engine, "engine", store.DefaultEngine, "embedded store: pebble or bbolt")
	fs.StringVar(&f.store, "store", "", "load a new shared Redis index instead of --data: redis://host:port/db or redis-cluster://host:port,... (its key prefix must hold no index yet)")
	fs.StringVar(&f.redis.prefix, "redis-prefix", redisstore.DefaultPrefix, "prefix of every key of the index, so that several indexes share one Redis")
	fs.IntVar(&f.redis.capacity, "redis-capacity", redisstore.DefaultCapacity, "documents the new Redis index's buckets are sized for (store/redisstore/REDIS.md, \"Sizing\")")
	return c
}

// importBatch is the number of records written together.
const importBatch = 1024

func (f *importCmd) run(c *cobra.Command, args []string) (err error) {
	ctx := c.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if f.opt.Index != "" || f.opt.UpdateIndex {
		return usagef("--index: import loads a service's data directory, not an index snapshot")
	}
	// The options as dedup.run will make them, for the store's settings.
	o := f.opt
	f.decision.apply(&o.Options)
	if f.noVerify {
		o.Verify = rule.VerifyNone
	}
	// The service keeps what the keep-first rule keeps in arrival order:
	// the store of another policy would not hold the service's documents.
	policy := o
	policy.EnsureDefaults()
	if policy.Cluster != dedup.ClusterGreedy || policy.Keep != dedup.KeepFirst {
		return usagef("%v: the service applies the keep-first rule in arrival order", dedup.ErrOptions)
	}
	sopt := server.Options{Dedup: o.Options}
	sopt.EnsureDefaults()
	if err := sopt.Validate(); err != nil {
		return usagef("%v", err)
	}
	settings := server.Settings(sopt.Dedup)
	rl, err := rule.NewRule(sopt.Dedup)
	if err != nil {
		return usagef("%v", err)
	}

	var (
		st    store.Store
		w     *keptset.Writer
		where string
		drop  func() error // a failed import's clean-up of a Redis index
	)
	if f.store != "" {
		rs, err := redisstore.Open(ctx, f.store, redisstore.Options{Dedup: sopt.Dedup, Settings: settings, Capacity: f.redis.capacity, Prefix: f.redis.prefix})
		if err != nil {
			return fmt.Errorf("--store %s: %w", redactURL(f.store), err)
		}
		if empty, err := rs.Empty(ctx); err != nil || !empty {
			return errors.Join(err, rs.Close(), fmt.Errorf("--store %s: the index is not empty: import loads a new index (post further documents to 'neardup serve')", redactURL(f.store)))
		}
		// A failed import leaves the index as it found it: absent.
		drop = func() error { return rs.Drop(context.WithoutCancel(ctx)) }
		st, where = rs, redactURL(f.store)
	} else {
		if st, w, err = f.openData(settings, rl); err != nil {
			return err
		}
		where = f.data + " (" + f.engine + ")"
	}
	closed := false
	defer func() {
		if err != nil && drop != nil {
			err = errors.Join(err, drop())
		}
		if !closed {
			err = errors.Join(err, st.Close())
		}
		if err != nil && f.store == "" {
			// A failed import leaves the directory as it found it:
			// absent or empty.
			f.clearData()
		}
	}()

	// Records go to the store in batches, written by one goroutine while
	// the next batch is made.
	var stored atomic.Uint64
	batches := make(chan []store.Record, 2)
	written := make(chan error, 1)
	go func() {
		var werr error
		for recs := range batches {
			if werr == nil {
				werr = putBatch(ctx, st, recs)
				stored.Add(uint64(len(recs)))
			}
		}
		written <- werr
	}()
	var seq uint64
	batch := make([]store.Record, 0, importBatch)
	if !f.quiet && !f.jsonSummary {
		// The store is written after dedup's stages: say how far it is.
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			t := time.NewTicker(10 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					if n := stored.Load(); n > 0 {
						fmt.Fprintf(c.ErrOrStderr(), "neardup: import: %d documents stored\n", n)
					}
				}
			}
		}()
	}
	f.opt.OnKept = func(id string, _ int, feat rule.Features) error {
		feat.Sig = nil
		if w != nil {
			if err := w.Add(seq, id, &feat); err != nil {
				return err
			}
		}
		batch = append(batch, store.Record{Seq: seq, ID: id, Features: feat})
		seq++
		if len(batch) == importBatch {
			batches <- batch
			batch = make([]store.Record, 0, importBatch)
		}
		return nil
	}
	runErr := f.dedupCmd.run(c, args)
	if runErr == nil && len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	werr := <-written
	if err := errors.Join(runErr, werr); err != nil {
		return err
	}
	if w != nil {
		if err := w.Close(); err != nil {
			return err
		}
	}
	closed = true
	if err := st.Close(); err != nil {
		return err
	}
	if !f.quiet && !f.jsonSummary {
		serve := "--data " + f.data
		if f.store != "" {
			serve = "--store " + where
		}
		fmt.Fprintf(c.ErrOrStderr(), "neardup import: %d documents stored in %s; start the service with: neardup serve %s\n",
			seq, where, serve)
	}
	return nil
}

// openData opens the new data directory's store and kept-set writer; the
// directory must be absent or empty.
func (f *importCmd) openData(settings string, rl *rule.Rule) (st store.Store, w *keptset.Writer, err error) {
	if ents, err := os.ReadDir(f.data); err == nil && len(ents) > 0 {
		return nil, nil, fmt.Errorf("--data %s is not empty: import loads a new data directory (post further documents to 'neardup serve')", f.data)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("--data: %w", err)
	}
	_, statErr := os.Stat(f.data)
	f.dataWasAbsent = errors.Is(statErr, os.ErrNotExist)
	switch f.engine {
	case store.EnginePebble:
		st, err = store.OpenPebble(f.data, store.PebbleOptions{Settings: settings})
	case store.EngineBolt:
		st, err = store.OpenBolt(f.data, store.BoltOptions{Settings: settings})
	default:
		return nil, nil, usagef("--engine %q: want %s or %s", f.engine, store.EnginePebble, store.EngineBolt)
	}
	if err != nil {
		f.clearData()
		return nil, nil, fmt.Errorf("--data %s: %w", f.data, err)
	}
	if w, err = keptset.NewWriter(rl, keptset.Options{Dir: filepath.Join(f.data, "keptset"), Settings: settings}); err != nil {
		err = errors.Join(err, st.Close())
		f.clearData()
		return nil, nil, err
	}
	return st, w, nil
}

// clearData leaves the data directory as the import found it: absent or
// empty.
func (f *importCmd) clearData() {
	if f.dataWasAbsent {
		os.RemoveAll(f.data)
		return
	}
	ents, _ := os.ReadDir(f.data)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(f.data, e.Name()))
	}
}

// putBatch writes recs: one write where the store takes bulk writes
// (pebble), else queued writes that share their commits.
func putBatch(ctx context.Context, st store.Store, recs []store.Record) error {
	if b, ok := st.(interface {
		PutBulk(context.Context, []store.Record) error
	}); ok {
		return b.PutBulk(ctx, recs)
	}
	if q, ok := st.(queuer); ok {
		waits := make([]func() error, len(recs))
		for i := range recs {
			waits[i] = q.Queue(ctx, store.Op{Put: &recs[i]})
		}
		var err error
		for _, wait := range waits {
			err = errors.Join(err, wait())
		}
		return err
	}
	for _, r := range recs {
		if err := st.Put(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// queuer is a store that queues writes (store engines' Queue).
type queuer interface {
	Queue(ctx context.Context, op store.Op) func() error
}
