# neardup: `make test` is the README's test command and what .ci/run runs.
GO ?= go

.PHONY: build test race bench fmt vet

build:
	$(GO) build -o bin/neardup ./cmd/neardup

test:
	$(GO) test -count=1 ./...

race:
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...
