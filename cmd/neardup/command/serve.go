package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/store"
)

type serveCmd struct {
	addr, data, engine, store       string
	snapshot                        string
	token                           string
	tokenReads                      bool
	redis                           redisFlags
	forceRecover                    bool
	opt                             rule.Options
	decision                        decisionFlags
	maxBody                         int64
	maxBatch                        int
	readTimeout, writeTimeout, idle time.Duration
	shutdownTimeout                 time.Duration
	logLevel                        string
	debugAddr                       string
}

func newServeCommand() *cobra.Command {
	var f serveCmd
	c := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Run the online near-duplicate service (HTTP JSON API and web page)",
		Long: `Run the online near-duplicate service: every document posted to
/v1/documents is checked against every document stored before it, with the
decision of 'neardup dedup' (same flags, same defaults), and stored durably
in --data when the mode says so (--engine: pebble for a new directory, or
bbolt; an existing directory keeps the engine that made it). With --store
redis://host:port/db or redis-cluster://host1:port,host2:port,... the index
lives in Redis (or a Redis Cluster) instead, shared by every 'neardup serve'
on it, so what one stores the others find. Under the default method the
servers hold nothing of the index, under either method: every request reads
the Redis keys it needs (fingerprint search included: seed 004's four 16-bit
block keys), a server starts at once, and writes settle per bucket with no
global lock (store/redisstore/REDIS.md; run Redis with the settings there, AOF
included). The API is described in server/openapi.yaml
and the README; a web page at / compares two texts and
searches the stored documents. /healthz, /readyz and /metrics (Prometheus)
are served beside it.

--snapshot FILE starts from an index snapshot ('neardup index build --out')
as well: its ids and fingerprints are loaded first, before the store's
documents, as fingerprint-only documents. They have no verification data, so
a new document matches one when the fingerprints are within --k (--k-short
for a short new document), and every such match is reported with "verified":
false. The snapshot records no profile: make its fingerprints with serve's
--profile (64 bits). Writes go to the store; the snapshot is read again at every start. A
deleted snapshot document is recorded in the store and stays deleted; an id
both in the snapshot and in the store stops start-up. With --snapshot the
method is simhash unless --method says otherwise (minhash refuses it: its
rule has no use for fingerprints); not with --store (a shared index).

Every flag can also be set with an environment variable NEARDUP_<FLAG>, upper
case with '-' as '_' (NEARDUP_ADDR, NEARDUP_DATA, NEARDUP_TOKEN, ...); a flag
on the command line wins. The first line on stdout is "listening on
http://HOST:PORT" (useful with --addr 127.0.0.1:0). SIGTERM or SIGINT stops
accepting connections, finishes the requests in flight and closes the store.

The store in --data is read once, into the index, before the server listens
(a shared --store loads while /readyz answers 503): a damaged file, a data
directory another server has open, or acknowledged writes missing (a damaged
or cut WAL) stop start-up with one line naming the file. --force-recover starts anyway on a store that lost writes, keeping what
is readable and logging how many documents were dropped. While the disk is
full, writes answer 503 and /readyz fails; both recover once there is room.`,
		Example: `  neardup serve --addr 127.0.0.1:8080 --data ./neardup-data
  neardup serve --data ./neardup-bbolt --engine bbolt
  NEARDUP_TOKEN=secret neardup serve --addr :8080
  neardup index build --from-text --profile en-words --out seen.ndx archive.jsonl.zst
  neardup serve --snapshot seen.ndx --data ./neardup-data
  neardup serve --store redis://127.0.0.1:6379/0
  neardup serve --store redis-cluster://10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000
  curl -s localhost:8080/v1/documents -d '{"id":"a","text":"hello world","mode":"add_if_new"}'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := envFlags(c.Flags()); err != nil {
				return usageError{err}
			}
			return f.run(c)
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on (port 0: any free port)")
	fs.StringVar(&f.data, "data", "./neardup-data", "directory of the durable store")
	fs.StringVar(&f.engine, "engine", "", "embedded store in --data: pebble or bbolt (default: the engine of the existing directory, pebble for a new one)")
	fs.BoolVar(&f.forceRecover, "force-recover", false, "start on a --data store that lost acknowledged writes (a damaged or cut WAL), keeping what is readable and logging how many documents were dropped")
	fs.StringVar(&f.store, "store", "", "shared store instead of --data: redis://host:port/db or redis-cluster://host:port,host:port,...")
	fs.StringVar(&f.snapshot, "snapshot", "", "index snapshot ('neardup index build --out') whose fingerprints are loaded first, as fingerprint-only documents (matches unverified)")
	f.redis.register(fs)
	fs.StringVar(&f.token, "token", "", "bearer token required for writes and deletes")
	fs.BoolVar(&f.tokenReads, "token-reads", false, "require --token for reads too")
	o := &f.opt
	f.decision.register(fs, o)
	fs.Int64Var(&f.maxBody, "max-body", server.DefaultMaxBodyBytes, "largest request body in bytes")
	fs.IntVar(&f.maxBatch, "max-batch", server.DefaultMaxBatch, "most documents in one batch request")
	fs.DurationVar(&f.readTimeout, "read-timeout", 30*time.Second, "HTTP read timeout")
	fs.DurationVar(&f.writeTimeout, "write-timeout", 30*time.Second, "HTTP write timeout")
	fs.DurationVar(&f.idle, "idle-timeout", 2*time.Minute, "HTTP keep-alive idle timeout")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 20*time.Second, "time given to requests in flight on SIGTERM")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error (request logs are info)")
	fs.StringVar(&f.debugAddr, "debug-addr", "", "serve Go's profiles (net/http/pprof) on this separate address, e.g. 127.0.0.1:6060 (off when empty)")
	return c
}

// modeFlags names the flags that only one kind of server reads: given to
// another, they would do nothing, so they are refused with what the server
// does instead (checkModeFlags).
var modeFlags = []struct {
	names []string
	// applies reports whether the flags do something for a server with this
	// store (shared: --store) and method; why says what to do otherwise.
	applies func(shared bool, method string) bool
	why     string
}{
	{[]string{"data", "engine", "force-recover"},
		func(shared bool, _ string) bool { return !shared },
		"it configures the embedded store in --data, and --store names a shared one"},
	{[]string{"redis-prefix", "redis-wait-replicas", "redis-capacity"},
		func(shared bool, _ string) bool { return shared },
		"it configures a shared Redis store, and there is no --store (the embedded store in --data is used)"},
	{[]string{"k", "k-short", "short-tokens"},
		func(_ bool, method string) bool { return method == rule.MethodSimHash },
		"it sets SimHash candidate distances, which --method minhash (the default) does not use: its candidates come from the bands --threshold sets (add --method simhash to use them)"},
}

// checkModeFlags refuses a flag given (on the command line or through
// NEARDUP_<NAME>) to a server that does not read it.
func (f *serveCmd) checkModeFlags(fs *pflag.FlagSet, method string) error {
	shared := f.store != ""
	for _, m := range modeFlags {
		if m.applies(shared, method) {
			continue
		}
		for _, name := range m.names {
			if fl := fs.Lookup(name); fl != nil && fl.Changed {
				return usagef("--%s does nothing here: %s", name, m.why)
			}
		}
	}
	return nil
}

// envFlags sets every flag not given on the command line from
// NEARDUP_<NAME> when that variable is set.
func envFlags(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Changed || err != nil || fl.Name == "help" {
			return
		}
		name := "NEARDUP_" + strings.ToUpper(strings.ReplaceAll(fl.Name, "-", "_"))
		if v := os.Getenv(name); v != "" {
			if e := fs.Set(fl.Name, v); e != nil {
				err = fmt.Errorf("%s: %w", name, e)
			}
		}
	})
	return err
}

func (f *serveCmd) run(c *cobra.Command) error {
	ctx := c.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return usagef("--log-level: %v", err)
	}
	logw := newFlushingWriter(c.ErrOrStderr(), 200*time.Millisecond)
	defer logw.Close()
	log := slog.New(slog.NewJSONHandler(logw, &slog.HandlerOptions{Level: level}))

	o := f.opt
	f.decision.apply(&o)
	if err := checkRemovedRedisFlags(c.Flags()); err != nil {
		return err
	}
	if f.snapshot != "" && !c.Flags().Changed("method") {
		// A snapshot holds SimHash fingerprints, which only the simhash
		// method matches on.
		o.Method = rule.MethodSimHash
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opt := server.Options{Dedup: o, MaxBodyBytes: f.maxBody, MaxBatch: f.maxBatch, Token: f.token,
		TokenReads: f.tokenReads, Logger: log, Registry: reg, Snapshot: f.snapshot}
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return usagef("%v", err)
	}
	if f.tokenReads && f.token == "" {
		return usagef("--token-reads needs --token")
	}
	if f.snapshot != "" && f.store != "" {
		return usagef("--snapshot loads into the server's own index; a shared --store has none (use --data)")
	}
	if err := f.checkModeFlags(c.Flags(), opt.Dedup.Method); err != nil {
		return err
	}

	var (
		st  store.Store
		err error
	)
	where := f.data
	switch {
	case f.store == "":
		settings := server.Settings(opt.Dedup)
		if f.engine, err = dataEngine(f.engine, f.data); err != nil {
			return err
		}
		switch f.engine {
		case store.EngineBolt:
			st, err = store.OpenBolt(f.data, store.BoltOptions{Settings: settings, Recover: f.forceRecover, Logger: log})
		case store.EnginePebble:
			st, err = store.OpenPebble(f.data, store.PebbleOptions{Settings: settings, Recover: f.forceRecover, Logger: log})
		default:
			return usagef("--engine %q: want %s or %s", f.engine, store.EngineBolt, store.EnginePebble)
		}
		if err != nil {
			return fmt.Errorf("--engine %s: %w", f.engine, err)
		}
		where = f.engine + " " + f.data
		opt.KeptDir = filepath.Join(f.data, "keptset")
	case strings.HasPrefix(f.store, "redis://"), strings.HasPrefix(f.store, "rediss://"), strings.HasPrefix(f.store, "redis-cluster://"):
		if st, err = f.redis.open(ctx, f.store, opt.Dedup, log); err != nil {
			return err
		}
		where = redactURL(f.store)
	default:
		return usagef("--store %q: want redis://host:port/db or redis-cluster://host:port,...", redactURL(f.store))
	}
	srv, err := server.New(st, opt)
	if err != nil {
		return errors.Join(err, st.Close())
	}
	// An embedded store is read once at start-up, by Load, which is also
	// where a damaged file is found (store/doc.go, "Damage"): before the
	// server listens, so that damage ends start-up with one line naming the
	// file, not after "listening on".
	loadErr := make(chan error, 1)
	if f.store == "" {
		if err := srv.Load(ctx); err != nil {
			return errors.Join(fmt.Errorf("loading the store: %w", err), srv.Close())
		}
		loadErr <- nil
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return errors.Join(err, srv.Close())
	}
	fmt.Fprintf(c.OutOrStdout(), "listening on http://%s\n", ln.Addr())
	log.Info("listening", "addr", ln.Addr().String(), "store", where)

	hs := &http.Server{Handler: srv.Handler(), ReadTimeout: f.readTimeout, ReadHeaderTimeout: f.readTimeout,
		WriteTimeout: f.writeTimeout, IdleTimeout: f.idle, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	if f.debugAddr != "" {
		dln, err := net.Listen("tcp", f.debugAddr)
		if err != nil {
			hs.Close()
			return errors.Join(fmt.Errorf("--debug-addr: %w", err), srv.Close())
		}
		ds := &http.Server{Handler: pprofMux(), ReadHeaderTimeout: f.readTimeout}
		defer ds.Close()
		go ds.Serve(dln)
		log.Info("profiles", "addr", dln.Addr().String())
	}
	if f.store != "" {
		go func() { loadErr <- srv.Load(ctx) }()
	}

	var runErr error
	select {
	case err := <-serveErr:
		runErr = err
	case err := <-loadErr:
		if err != nil {
			runErr = fmt.Errorf("loading the store: %w", err)
			break
		}
		select {
		case err := <-serveErr:
			runErr = err
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	runErr = errors.Join(runErr, hs.Shutdown(sctx), srv.Close())
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	return runErr
}

// flushingWriter buffers the log and writes it out every interval, when the
// buffer fills, and on Close: a request log line is then not a system call of
// its own on the request's path.
type flushingWriter struct {
	mu   sync.Mutex
	w    *bufio.Writer // guarded by mu
	stop chan struct{}
	done chan struct{}
}

func newFlushingWriter(w io.Writer, every time.Duration) *flushingWriter {
	f := &flushingWriter{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				f.mu.Lock()
				f.w.Flush()
				f.mu.Unlock()
			case <-f.stop:
				return
			}
		}
	}()
	return f
}

func (f *flushingWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.w.Write(p)
}

// Close stops the flushing and writes out what is buffered.
func (f *flushingWriter) Close() error {
	close(f.stop)
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.w.Flush()
}

// pprofMux serves net/http/pprof's handlers, on their usual paths.
func pprofMux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
}

// redactURL hides a password in a store address before it is logged.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// dataEngine returns the embedded engine to open dir with: the one asked
// for, else the one that made dir, else server.DefaultEngine.
func dataEngine(asked, dir string) (string, error) {
	if asked != "" {
		return asked, nil
	}
	e, err := store.DataEngine(dir)
	if err != nil || e != "" {
		return e, err
	}
	return store.DefaultEngine, nil
}
