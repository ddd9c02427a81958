// A throwaway module (testdata: the go command ignores it) that measures
// parquet-go against arrow-go reading the text and id columns; see
// BENCHMARKS.md, "Parquet (issue 23)". Run go mod tidy first.
module pqbench

go 1.26.0

require (
	github.com/apache/arrow-go/v18 v18.8.0
	github.com/klauspost/compress v1.20.3
	github.com/parquet-go/parquet-go v0.32.0
)
