package pipeline

import (
	"context"
	"reflect"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Bytes shuffled. Prism reports no shuffle volume, so with
// Options.CountShuffle each DoFn that emits into a GroupByKey or
// CoGroupByKey encodes every element it emits once more with the coder Beam
// infers for its key and value types (beam.NewElementEncoder) and adds the
// bytes to the counters shuffle_bytes (all stages) and shuffle_bytes_STAGE.
// The runner's own framing (window, timestamp, pane, lengths: a few bytes
// an element) is not counted.

var shuffleTotal = beam.NewCounter("neardup", "shuffle_bytes")

// shuffleCounter counts encoded bytes when On. Its zero value counts
// nothing; it is safe for concurrent use.
type shuffleCounter struct{ On bool }

var (
	stageCounters sync.Map // stage name -> beam.Counter
	encoders      sync.Map // reflect.Type -> beam.ElementEncoder
)

func (c shuffleCounter) add(ctx context.Context, stage string, k, v any) {
	if !c.On {
		return
	}
	n := encodedLen(k) + encodedLen(v)
	shuffleTotal.Inc(ctx, n)
	sc, ok := stageCounters.Load(stage)
	if !ok {
		sc, _ = stageCounters.LoadOrStore(stage, beam.NewCounter("neardup", "shuffle_bytes_"+stage))
	}
	sc.(beam.Counter).Inc(ctx, n)
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

func encodedLen(v any) int64 {
	t := reflect.TypeOf(v)
	e, ok := encoders.Load(t)
	if !ok {
		e, _ = encoders.LoadOrStore(t, beam.NewElementEncoder(t))
	}
	var w countingWriter
	if err := e.(beam.ElementEncoder).Encode(v, &w); err != nil {
		panic(err) // types Beam cannot encode never reach a shuffle
	}
	return w.n
}

// countU64Fn passes KV<uint64, uint64> elements on, counting their bytes
// under Stage: for shuffles fed by plain functions.
type countU64Fn struct {
	Stage   string
	Shuffle shuffleCounter
}

func (f *countU64Fn) ProcessElement(ctx context.Context, k, v uint64, emit func(uint64, uint64)) {
	f.Shuffle.add(ctx, f.Stage, k, v)
	emit(k, v)
}

// countU64 returns c, counted under stage when sh is on.
func countU64(s beam.Scope, sh shuffleCounter, stage string, c beam.PCollection) beam.PCollection {
	if !sh.On {
		return c
	}
	return beam.ParDo(s, &countU64Fn{Stage: stage, Shuffle: sh}, c)
}

// countEdgeFn passes KV<uint64, starEdge> elements on, counting their bytes
// under Stage.
type countEdgeFn struct {
	Stage   string
	Shuffle shuffleCounter
}

func (f *countEdgeFn) ProcessElement(ctx context.Context, k uint64, e starEdge, emit func(uint64, starEdge)) {
	f.Shuffle.add(ctx, f.Stage, k, e)
	emit(k, e)
}
