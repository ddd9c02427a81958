package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Every DoFn, function, emitter and iterator is registered so that workers
// in other processes (Flink, Spark, Dataflow, prism in loopback) find them
// by name, and run without reflection.
func init() {
	register.Function4x1[context.Context, uint64, inputRange, func(int, lineCount), error](countLines)
	register.Function3x0[int, func(*lineCount) bool, func(uint64, int64)](lineBases)
	register.DoFn6x1[context.Context, uint64, inputRange, func(int, []byte), func(simEntry), func(int), error](&keysFn{})
	register.DoFn9x1[context.Context, uint64, func(*inputRange) bool, func(*[]byte) bool, func(*starEdge) bool, func(*int64) bool, func(uint64, docData), func(uint64, docData), func(uint64, docData), error](&dataFn{})
	register.DoFn6x1[context.Context, uint64, func(*inputRange) bool, func(*starEdge) bool, func(*int64) bool, func(uint64, docData), error](&componentDataFn{})
	register.DoFn4x0[context.Context, uint64, func(*uint64) bool, func(uint64, starEdge)](&directFn{})
	register.DoFn4x0[context.Context, simEntry, int, func(int, []byte)](&tableKeysFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(uint64, []byte), error](&starFn{})
	register.DoFn5x1[context.Context, uint64, func(*inputRange) bool, func(*[]byte) bool, func(int, []byte), error](&linkFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func(uint64, uint64), func(uint64, []byte), error](&centreFn{})
	register.DoFn5x1[context.Context, uint64, func(*docData) bool, func(*docData) bool, func(uint64, uint64), error](&verifyFn{})
	register.DoFn4x1[context.Context, int, func(*Pair) bool, func(uint64, uint64), error](&residualFn{})
	register.DoFn5x0[context.Context, uint64, uint64, func(*uint64, *uint64) bool, func(uint64, uint64)](&relabelFn{})
	register.DoFn4x0[context.Context, uint64, starEdge, func(uint64, starEdge)](&countEdgeFn{})
	register.DoFn5x1[context.Context, uint64, func(*docData) bool, func(uint64, Line), func(uint64, Line), error](&decideFn{})
	register.DoFn3x0[uint64, docData, func(uint64, docData)](&waveFn{})
	register.DoFn6x1[context.Context, uint64, func(*inputRange) bool, func(*Line) bool, func(*Line) bool, func(int, int), error](&writeRangeFn{})
	register.DoFn4x1[context.Context, int, func(*int) bool, func(*int) bool, error](&finishFn{})
	register.Function1x2[int, int, int](underZero)
	register.DoFn4x0[context.Context, uint64, uint64, func(uint64, uint64)](&countU64Fn{})

	register.DoFn4x0[context.Context, uint64, uint64, func(int, []byte)](&bothWaysFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(int, []byte), error](&edgeFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func(uint64, uint64), func(int, []byte), error](&labelFn{})
	register.Function3x1[int, func(*[]byte) bool, func(int, Pair), error](apartFn)
	register.Function1x2[inputRange, uint64, inputRange](rangeByIndex)
	register.Function2x2[uint64, uint64, uint64, starEdge](labelByRange)
	register.Function2x2[uint64, uint64, uint64, uint64](memberOf)
	register.Function3x0[uint64, Line, func(uint64, docData)](waveDone)

	register.Emitter2[int, lineCount]()
	register.Emitter2[uint64, int64]()
	register.Emitter1[simEntry]()
	register.Emitter1[int]()
	register.Emitter2[uint64, uint64]()
	register.Emitter2[uint64, docData]()
	register.Emitter2[int, Pair]()
	register.Emitter2[int, []byte]()
	register.Emitter2[int, int]()
	register.Emitter2[uint64, []byte]()
	register.Emitter2[uint64, Line]()
	register.Emitter2[uint64, starEdge]()
	register.Iter1[lineCount]()
	register.Iter1[int64]()
	register.Iter1[uint64]()
	register.Iter1[docData]()
	register.Iter1[Pair]()
	register.Iter1[Line]()
	register.Iter1[inputRange]()
	register.Iter1[starEdge]()
	register.Iter1[int]()
	register.Iter1[[]byte]()
	register.Iter2[uint64, uint64]()
}
