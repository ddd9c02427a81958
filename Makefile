# neardup: `make test` is the README's test command and what .ci/run runs.
GO ?= go

.PHONY: build test test-tools race bench fmt vet

build:
	$(GO) build -o bin/neardup ./cmd/neardup

# The whole suite, then the concurrent packages again under the race
# detector (-short skips the largest corpus there).
test: test-tools
	$(GO) test -count=1 ./...
	$(GO) test -race -short -count=1 ./index ./dedup ./corpus ./features ./server ./cmd/neardup/command
	cd beam && $(GO) test -count=1 ./...

# The tests that need these tools skip without them (CI fails instead); say
# so here, where the skip would otherwise pass unnoticed.
test-tools:
	@command -v redis-server >/dev/null || echo "make test: redis-server not found: the Redis store tests are skipped (apt-get install redis-server)"
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || echo "make test: chromium not found: the web page test is skipped (apt-get install chromium)"

race:
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...
	cd beam && $(GO) vet ./...
