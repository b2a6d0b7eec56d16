# Airside. `make run` starts the portal with a demo catalogue; `make test` runs every test.
GO      ?= go
DB      ?= sqlite:data/airside.db
# Fuzz budgets are execution counts, not durations: with a duration, Go 1.26's
# fuzz coordinator can report "context deadline exceeded" at the deadline
# without any failing input (golang/go#75804, fixed in Go 1.27).
FUZZTIME ?= 100000x
# Where make test keeps the tests' artifacts (go test -artifacts): screenshots of
# every main page, per role, at 1400 and 390 px. CI keeps this folder.
ARTIFACTS ?= $(CURDIR)/artifacts
# package:target pairs of every fuzz test; make test runs each for FUZZTIME.
FUZZ = internal/election:FuzzElect internal/election:FuzzDecodeBallot internal/money:FuzzParsePrice \
       internal/money:FuzzParsePercent internal/fare:FuzzFormParse internal/fare:FuzzReadCSV internal/fare:FuzzFormulaGuard web:FuzzSafeNext \
       internal/gateway:FuzzChunkReader

.PHONY: run build test check hooks generate bench fuzz fuzz-run soak clean

## run: build, then start the whole loop on loopback: the portal on http://localhost:8080 (embedded SQLite in ./data,
##      demo seeded once), the reference gateway on http://127.0.0.1:8081/v1 and simulated customers sending through it
run:
	@echo "Building airside (the first build downloads and compiles the dependencies: a minute or two)..."
	@$(GO) build -o bin/airside ./cmd/airside
	@./bin/airside demo --database $(DB)

## build: the airside binary in ./bin
build:
	$(GO) build -o bin/airside ./cmd/airside

## test: formatting, vet, generated-code drift, every test (PostgreSQL, SQLite, Chromium) and short fuzz runs;
##       screenshots of every main page land in ./artifacts. The package budget is 30 minutes, not go test's 10:
##       cmd/airside builds the Docker image's binary and starts the demo on both databases, 4-5 minutes alone and
##       near 10 on two busy cores beside the other packages.
test: check
	@rm -rf $(ARTIFACTS) && mkdir -p $(ARTIFACTS)
	$(GO) test -count=1 -timeout 30m -artifacts -outputdir $(ARTIFACTS) ./...
	$(GO) test -race -count=1 ./internal/routing
	@$(MAKE) --no-print-directory fuzz-run

## check: no tracked file over 1 MB outside .large-files-allowed, gofmt, go vet, staticcheck, the import and threshold rules,
##        the fare field table and the threshold sentences, the OpenAPI document valid and the client generated from it
##        fresh, go.mod tidy, and templ output in sync with the .templ files
check: hooks
	@big=$$(git ls-files -z | xargs -0 -r stat -c '%s %n' 2>/dev/null | awk '$$1 > 1048576 {print $$2}' \
	  | grep -v -x -F -f .large-files-allowed || true); \
	if [ -n "$$big" ]; then echo "tracked files over 1 MB (a build output? if it belongs, add it to .large-files-allowed):"; echo "$$big"; exit 1; fi
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) test -count=1 ./internal/archrules
	$(GO) test -count=1 -run '^(TestEveryMessageIsKeyedByTheTable|TestProblemsFollowTheTable|TestFormOfValuesReadsEveryField|TestCSVColumnsAreTheTables)$$' ./internal/fare
	$(GO) test -count=1 -run '^(TestFareFormFollowsTheTable|TestEveryFormMessageHasItsPlace|TestThresholdSentencesCarryTheConstants)$$' ./templates
	$(GO) test -count=1 -run '^(TestOpenAPIDocument|TestOpenAPIDocumentHasNoStrayKeys|TestOpenAPIDocumentPassesOutsideValidators)$$' ./web
	@before=$$(sha256sum < internal/gatewayclient/client.gen.go); \
	(cd internal/gatewayclient && $(GO) generate ./...) >/dev/null 2>&1 || { echo "oapi-codegen failed"; exit 1; }; \
	after=$$(sha256sum < internal/gatewayclient/client.gen.go); \
	if [ "$$before" != "$$after" ]; then echo "the gateway client was stale (now regenerated from docs/openapi.yaml): commit internal/gatewayclient"; exit 1; fi
	@before=$$(cat go.mod go.sum | sha256sum); $(GO) mod tidy; after=$$(cat go.mod go.sum | sha256sum); \
	if [ "$$before" != "$$after" ]; then echo "go.mod/go.sum were not tidy (now tidied): commit them"; exit 1; fi
	@before=$$(cat templates/*_templ.go | sha256sum); \
	$(GO) tool templ generate >/dev/null 2>&1 || { echo "templ generate failed"; exit 1; }; \
	after=$$(cat templates/*_templ.go | sha256sum); \
	if [ "$$before" != "$$after" ]; then echo "generated templates were stale (now regenerated): commit templates/*_templ.go"; exit 1; fi

## hooks: point this clone's git hooks at .githooks (the pre-commit hook runs gofmt on the staged Go files, the
##        large-file rule and go vet); check, and so test, run it, so nobody has to find it. Outside a clone, nothing.
hooks:
	@if git rev-parse --git-dir >/dev/null 2>&1 && [ "$$(git config core.hooksPath)" != ".githooks" ]; then \
	  git config core.hooksPath .githooks && echo "git hooks: core.hooksPath set to .githooks (the pre-commit checks)"; fi

## generate: regenerate the templ components and the gateway client
generate:
	$(GO) tool templ generate
	cd internal/gatewayclient && $(GO) generate ./...

## bench: the engine, preview and gateway benchmarks (Redis needed), then the load test: a day of metrics for 500 listings, airside serve in
##        its own process, each endpoint and page for LOAD (default 5s) at CONCURRENCY (32), as ratios of /healthz; the
##        fleet's metric ingest as a share of a plain batched insert of the same rows (mark: at least 50 %)
LOAD ?= 5s
CONCURRENCY ?= 32
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/election ./internal/preview
	$(GO) test -run '^$$' -bench 'GatewayOverhead|GatewayAgainstReverseProxy|FleetStateOverhead|SpoolOverhead' -benchtime 2000x ./internal/gateway
	$(GO) run ./cmd/airside-load --duration $(LOAD) --concurrency $(CONCURRENCY)

## fuzz: long fuzz runs, 5 million executions per target (FUZZTIME=50000000x make fuzz for longer)
fuzz:
	$(MAKE) FUZZTIME=$(if $(filter 100000x,$(FUZZTIME)),5000000x,$(FUZZTIME)) fuzz-run
fuzz-run:
	@set -e; for t in $(FUZZ); do pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "fuzz $$name ($(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) ./$$pkg; done

## soak: the realistic mix for SOAK (default 2m), then the invariants
SOAK ?= 2m
soak:
	$(GO) run ./cmd/airside-soak --duration $(SOAK)

clean:
	rm -rf bin data artifacts
