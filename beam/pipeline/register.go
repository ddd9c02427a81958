package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Every DoFn, function, emitter and iterator is registered so that workers
// in other processes (Flink, Spark, Dataflow, prism in loopback) find them
// by name, and run without reflection.
func init() {
	register.DoFn3x1[context.Context, inputFile, func(Doc), error](&readFn{})
	register.DoFn5x1[context.Context, Doc, func(uint64, []byte), func(DocFeatures), func(bandEntry), error](&featuresFn{})
	register.DoFn3x0[bandEntry, int, func(string, Entry)](&keysFn{})
	register.DoFn3x0[string, int, func(string, int)](&hotFn{})
	register.DoFn4x0[string, Entry, func(*string, *int) bool, func(string, Entry)](&splitFn{})
	register.DoFn4x1[string, func(*Entry) bool, int, func(Pair), error](&pairsFn{})
	register.DoFn3x1[uint64, func(*uint64) bool, func(*uint64) bool, error](&checkFn{})
	register.DoFn6x1[context.Context, uint64, func(*DocFeatures) bool, func(*Pair) bool, func(Line), func(Line), error](&decideFn{})
	register.DoFn3x1[context.Context, []byte, func(*Line) bool, error](&writeFn{})

	register.Function2x1[context.Context, Pair, Pair](countPairs)
	register.Function2x2[string, Entry, string, int](keyOne)
	register.Function1x1[bandEntry, int](bandEntryOne)
	register.Function1x2[Pair, uint64, uint64](pairEdge)
	register.Function3x0[uint64, uint64, func(uint64, uint64)](bothWays)
	register.Function2x2[uint64, uint64, uint64, uint64](largerFirst)
	register.Function3x0[uint64, func(*uint64) bool, func(uint64, uint64)](largeStar)
	register.Function3x0[uint64, func(*uint64) bool, func(uint64, uint64)](smallStar)
	register.Function2x2[uint64, func(*uint64) bool, uint64, uint64](label)
	register.Function3x2[context.Context, uint64, uint64, uint64, uint64](countCenter)
	register.Function4x0[uint64, func(*uint64) bool, func(*uint64) bool, func(uint64, uint64)](edgeLabel)
	register.Function6x1[uint64, func(*uint64) bool, func(*DocFeatures) bool, func(*Pair) bool, func(uint64, DocFeatures), func(uint64, Pair), error](toComponent)
	register.Function1x2[Pair, uint64, Pair](pairByA)
	register.Function1x2[DocFeatures, uint64, DocFeatures](featByPos)
	register.Function4x0[uint64, func(*[]byte) bool, func(*int) bool, func(Line)](keptLine)
	register.Function1x2[Line, uint64, int](removedPos)

	register.Emitter1[Doc]()
	register.Emitter2[uint64, []byte]()
	register.Emitter1[DocFeatures]()
	register.Emitter1[bandEntry]()
	register.Emitter2[string, Entry]()
	register.Emitter2[string, int]()
	register.Emitter1[Pair]()
	register.Emitter2[uint64, uint64]()
	register.Emitter2[uint64, DocFeatures]()
	register.Emitter2[uint64, Pair]()
	register.Emitter1[Line]()
	register.Iter1[Entry]()
	register.Iter1[uint64]()
	register.Iter1[DocFeatures]()
	register.Iter1[Pair]()
	register.Iter1[Line]()
	register.Iter1[[]byte]()
	register.Iter1[int]()
	register.Iter2[string, int]()
}
