# neardup: `make test` is the README's test command and what .ci/run runs.
GO ?= go

.PHONY: build test test-tools test-plain test-race test-beam race bench fmt vet

build:
	$(GO) build -o bin/neardup ./cmd/neardup

# The whole suite, the concurrent packages again under the race detector
# (-short skips the largest corpus there), and the Beam module. The three
# passes run at once, each one's output printed whole when it ends: alone,
# each leaves a core idle for much of its run (Redis round trips, child
# processes, the race build, prism's stages), so on two cores running them
# together takes less time than one after the other. .ci/testtime gives
# each pass's and package's CPU and wall seconds (BENCHMARKS.md, issue 18).
test: test-tools
	$(MAKE) --no-print-directory -j3 --output-sync=target test-plain test-race test-beam

test-plain:
	$(GO) test -count=1 -timeout 30m ./...

test-race:
	$(GO) test -race -short -count=1 -timeout 30m ./index ./rule ./dedup ./corpus ./features ./keptset ./keptfiles ./store ./store/redisstore ./server ./cmd/neardup/command

test-beam:
	cd beam && $(GO) test -count=1 -timeout 30m ./...

# The tests that need these tools skip without them (CI fails instead); say
# so here, where the skip would otherwise pass unnoticed.
test-tools:
	@command -v redis-server >/dev/null || echo "make test: redis-server not found: the Redis store tests are skipped (apt-get install redis-server)"
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || echo "make test: chromium not found: the web page test is skipped (apt-get install chromium)"
	@command -v wget >/dev/null || echo "make test: wget not found: the WARC tests are skipped (apt-get install wget)"

race:
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...
	cd beam && $(GO) vet ./...
