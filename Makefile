# neardup: `make test` is the README's test command and what .ci/run runs.
GO ?= go

.PHONY: build test race bench fmt vet

build:
	$(GO) build -o bin/neardup ./cmd/neardup

# The whole suite, then the concurrent packages again under the race
# detector (-short skips the largest corpus there).
test:
	$(GO) test -count=1 ./...
	$(GO) test -race -short -count=1 ./index ./dedup ./corpus ./features ./server ./cmd/neardup/command
	cd beam && $(GO) test -count=1 ./...

race:
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...
	cd beam && $(GO) vet ./...
