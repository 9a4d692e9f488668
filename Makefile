# CPQ Portal: the front door. `make` (or `make help`) lists the targets; `make test` is what CI runs.
# Every target documents itself with a `## ` comment on its rule line.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Tool versions, pinned. staticcheck 2026.2.2 is the first release line that knows Go 1.26;
# govulncheck v1.9.0 needs a golang.org/x/telemetry version the module proxy refuses, v1.8.0 does not.
STATICCHECK_VERSION := v0.8.2
GOVULNCHECK_VERSION := v1.8.0
DEADCODE_VERSION := v0.39.0

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

# Packages whose unit tests also run under the race detector: the ones that share state between
# requests. The race detector doubles test time on 2 cores, so not everything gets it.
# The race step's handlers tests mostly wait, they do not compute: 124 CPU-s user+sys in 312 s
# (2026-11-29, load about 10), most of the wait in the two fault sweeps (TestFaultsUpstreamOnEveryGETRoute
# 82 s alone without the race detector on 3 CPU-s), which waited out a 10 s bound per fault case
# (faults_upstream_test.go, recordWait, since fixed). make test of 2026-11-30 (beside another
# helper's tests, load 2-13): the race step 132 s, of which handlers 119 s; 308 s and about 230 s
# in the quiet run of 2026-11-29.
RACE_PKGS_RE := /internal/(auth|session|handlers)(/|$$)
# RACE_SKIP are the tests of those packages that run once without the race detector instead: the
# sweeps that send the same handlers every hostile name, every field length, every language or a
# zip bomb. They check what a page says, not who touches what when; the handlers' code paths they
# drive run under the race detector in the other tests of the package (journeys, round trips,
# faults with concurrent requests, live notices, batches). Each test still runs once. Measured
# (2026-11-29, test binaries built beforehand, /usr/bin/time): these four take 104.7 CPU-s under
# the race detector, 12.0 without (x8.7); the build of the plain test binary costs about 34 CPU-s,
# so `make unit` spends about 60 CPU-s less.
# Four more of the same kind (2026-11-29, each alone, test binaries built beforehand, /usr/bin/time
# user+sys, race / without): every field and query with hidden characters and the spec's headers on
# every call after a crawl (both 52.0 / 9.7 CPU-s), every form value at its edges (56.0 / 10.2), the
# pseudo-locale crawl (27.9 / 4.9): 111 CPU-s less. Each drives requests one at a time; the crawl
# itself stays under the race detector in the concurrent fault sweeps (TestFaultsUpstreamOnEveryGETRoute,
# TestFaultsMutationsAreNeverRetried).
# Two more (2026-11-29, each alone, test binaries built beforehand, user+sys, race / without): every
# hostile path parameter on every route (21.7 / 2.3 CPU-s) and an oversized body on every
# state-changing route (10.6 / 1.1): one request at a time, the routes reached under the race
# detector by the crawl and the fault sweeps above; 29 CPU-s less.
# And the XSS crawl itself (2026-11-29, alone, test binaries built beforehand, user+sys at load
# 15-18, race / without: 20.8 / 4.9 CPU-s, 61 / 11 s): one client, one request at a time; the crawl
# stays under the race detector in TestFaultsMutationsAreNeverRetried, which crawls every page
# before its concurrent mutations.
RACE_SKIP := ^(TestHostileXSSStaysEscapedOnEveryPage|TestHostileNamesAreIsolatedOnEveryPage|TestNoFieldCutsWhatWasTyped|TestBatchArchiveZipBombIsAClear4xx|TestBatchNotKnownSaysWhyInEveryLanguage|TestHostileHiddenCharactersAreRefusedInEveryFormAndQuery|TestEveryUpstreamCallFollowsTheSpecHeaderRules|TestHostileFormValuesAnswer4xxNever5xx|TestPseudoLocaleLeavesNoUntranslatedText|TestHostilePathParametersReachTheV2APIOnlyAsOneEscapedSegment|TestHostileBodiesAreBoundedPerRoute)$$
RACE_SKIP_PKGS := ./internal/handlers/
# UNIT_PARALLEL: how many test binaries the step without the race detector runs at once (go test
# -p; the default is the number of cores, 2 here). That step left a core idle much of the time: the
# packages that take longest mostly wait (PostgreSQL stopped and started, replicas killed, leases
# run out, one test after another): jobs 74 s and signwatch 70 s of 2026-11-29's quiet run used
# 21.2 and 4.6 CPU-s (each alone, /usr/bin/time), and the whole step about 243 CPU-s in 212 s
# (1.15 cores of 2). With 4 their waits overlap other packages' work: the step at -p 4 passed in
# 232 s beside other work (load 3-8, 214 CPU-s), as long as at -p 2 on the quiet machine; a quiet
# run was not measured (make test of 2026-11-30, load 4-12: 201 s). The race step keeps go's
# default: its handlers' tests at -parallel 4 (2026-11-29, a machine at load 15) timed out where
# the v2 API's faults should answer 502 (504s, client timeouts), i.e. load-sensitive.
UNIT_PARALLEL ?= 4

# Nested Go modules (own go.mod, so their dependencies stay out of the portal's go.sum) are
# linted and tested too; tools/ only pins programs to build (Dex, oauth2-proxy, Mailpit) and has nothing to test.
SUBMODULES = $(shell find . -mindepth 2 -name go.mod -not -path './.cache/*' -not -path './tools/*' -printf '%h\n' | sort)

# Targets of `make e2e` / `make conformance` against a real v2 API (empty: the simulator).
V2_API_URL ?=
V2_API_TOKEN ?=
SIM_ADDR ?= 127.0.0.1:8081
SIM_FLAGS ?= -admin

.PHONY: help run sim test deps generate generate-check i18n lint unit e2e conformance bench soak fuzz screenshots build docker-check clean

help: ## Show this list of targets
	@echo "CPQ Portal. Usage: make <target>"
	@echo
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-15s %s\n", $$1, $$2}'
	@echo
	@echo "Variables: V2_API_URL, V2_API_TOKEN (e2e, conformance), SIM_ADDR, SIM_FLAGS (sim), VERSION (build)."

run: ## Run the portal in demo mode (embedded sign-in and v2 simulator); honours PORTAL_* variables
	go run ./cmd/portal -demo

sim: ## Run the v2 API simulator standalone on SIM_ADDR (default 127.0.0.1:8081), with SIM_FLAGS (default -admin: the control API the browser tests drive signers with)
	go run ./cmd/v2sim -addr $(SIM_ADDR) $(SIM_FLAGS)

# The steps of `make test`, in order (each a make target with its variables).
# No fuzzing: every fuzz target's seeds (f.Add) and its testdata/fuzz corpus already run as plain
# tests in `make unit`, and `make fuzz` (10 s a target) is the search, run on its own. The brief
# fuzzing make test used to do (2,000 inputs a target) cost 4m12s of the quiet run of 2026-11-29
# (27m09s in all): the 13 instrumented test binaries' builds and the baseline coverage of the
# cached corpus, not the 2,000 inputs (the handlers' binary alone about 108 CPU-s to build, one of
# its targets 37 CPU-s to run). 2,000 random inputs a target is a sample that differs run to run,
# a weak gate for every change; an input fuzzing finds goes into testdata/fuzz, which make unit
# then runs every time.
TEST_STEPS = deps generate-check i18n lint docker-check "unit DEPS_DONE=1" "e2e DEPS_DONE=1"

test: ## Everything CI runs: deps, generate-check, lint, docker-check, unit tests (every fuzz target's seed corpus too), browser tests; prints each step's duration and the total at its end
	@start=$$(date +%s); took=""; step=""; \
	summary() { rc=$$?; printf '%b' "$$took"; [ $$rc -eq 0 ] || printf 'test: %-45s FAILED\n' "$$step"; t=$$(( $$(date +%s) - start )); \
		printf 'test: total %dm%02ds (%s)\n' $$((t / 60)) $$((t % 60)) "$$([ $$rc -eq 0 ] && echo passed || echo FAILED)"; }; \
	trap summary EXIT; \
	for step in $(TEST_STEPS); do \
		s=$$(date +%s); \
		$(MAKE) --no-print-directory $$step; \
		t=$$(( $$(date +%s) - s )); took+=$$(printf 'test: %-45s %dm%02ds\\n' "$$step" $$((t / 60)) $$((t % 60))); \
	done

deps: ## Install what is missing: chromium, redis-server (apt), Playwright driver (npm), Dex, Mailpit
	@if [ -z "$(DEPS_DONE)" ]; then scripts/ensure-deps.sh; fi

generate: ## Generate Go code from templ templates
	go tool templ generate

i18n: ## Check the message catalogues: every key used in code is in all five languages, none unused, same placeholders
	go run ./cmd/i18ncheck

generate-check: ## Fail when generated code is stale or not committed
	@scripts/generate-check.sh

lint: ## gofmt, go vet, staticcheck, deadcode, govulncheck (notice only when its database is unreachable)
	@echo "lint: gofmt"
	@unformatted=$$(find . -path ./.cache -prune -o -path ./.git -prune -o -name '*.go' -type f -print0 | xargs -0 gofmt -l); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	@for m in . $(SUBMODULES); do echo "lint: go vet ($$m)"; (cd "$$m" && go vet ./...); done
	@for m in . $(SUBMODULES); do echo "lint: staticcheck $(STATICCHECK_VERSION) ($$m)"; \
		(cd "$$m" && go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...); done
	@# deadcode -test: a function no program and no test reaches is dead; a test seam kept for the
	@# tests (an option, a test provider's method) is not.
	@for m in . $(SUBMODULES); do echo "lint: deadcode $(DEADCODE_VERSION) ($$m)"; \
		dead=$$(cd "$$m" && go run golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION) -test ./...) || exit 1; \
		if [ -n "$$dead" ]; then echo "$$dead"; exit 1; fi; done
	@for m in . $(SUBMODULES); do echo "lint: govulncheck $(GOVULNCHECK_VERSION) ($$m)"; \
		(cd "$$m" && GOVULNCHECK_VERSION=$(GOVULNCHECK_VERSION) "$(CURDIR)/scripts/vulncheck.sh"); done

# unit is hermetic: the conformance package inside it runs against the in-process simulator even
# when V2_API_URL is set in the environment (that is what `make conformance` is for).
unit: deps ## Unit and package tests of every module on a throwaway PostgreSQL (race detector on auth, session, handlers but RACE_SKIP; postgresql, redis-server and Dex installed when missing); not e2e
	@unset V2_API_URL V2_API_TOKEN; \
	pkgs=$$(go list ./... | grep -v '/e2e$$'); \
	race=$$(grep -E '$(RACE_PKGS_RE)' <<<"$$pkgs" || true); \
	rest=$$(grep -vE '$(RACE_PKGS_RE)' <<<"$$pkgs" || true); \
	echo "unit: go test -count=1 (all but e2e)"; SECONDS=0; \
	scripts/with-postgres.sh go test -count=1 -timeout 20m -p $(UNIT_PARALLEL) $$rest; \
	echo "unit: without the race detector: $${SECONDS}s"; \
	if [ -n "$$race" ]; then \
		echo "unit: go test -count=1 -race -skip '$(RACE_SKIP)'" $$race; SECONDS=0; \
		scripts/with-postgres.sh go test -count=1 -timeout 20m -race -skip '$(RACE_SKIP)' $$race; \
		echo "unit: under the race detector: $${SECONDS}s"; \
		echo "unit: go test -count=1 -run '$(RACE_SKIP)' $(RACE_SKIP_PKGS) (without the race detector)"; SECONDS=0; \
		scripts/with-postgres.sh go test -count=1 -timeout 20m -run '$(RACE_SKIP)' $(RACE_SKIP_PKGS); \
		echo "unit: the sweeps without the race detector: $${SECONDS}s"; \
	fi
	@for m in $(SUBMODULES); do echo "unit: go test -count=1 ($$m)"; (cd "$$m" && go test -count=1 ./...); done

# E2E_LANE2: the browser tests (top-level names) that run in a second go test process beside the
# others (scripts/e2e-lanes.sh: its own portal and Chromium, so the lanes share no data). One
# process ran one test at a time on less than half a core of 2 (2026-11-29, quiet: 711 s). Measured
# 2026-11-29 beside another helper's tests: one process 13m25s (load 10-12, 367 CPU-s user+sys),
# the two lanes 8m46s (load 15-20; lane 1 513 s, lane 2 479 s); 2026-11-30: 6m28s in make test
# (load 2-13), make e2e alone 5m39s (load 4-13, 273 CPU-s user+sys). Lane 2 held 332 s of the one
# process's 660 s of tests (i18n 88, the leak crawl 71, a11y 35, import 34, handover 31, batch 28,
# concurrent tabs 22, work lists 23). A new test lands in lane 1. E2E_LANES=1, or a V2_API_URL
# (whose data both lanes would share), runs them in one process.
E2E_LANE2 := ^Test(I18n|LeakCrawl|A11y|CustomerImport|Handover|BatchArchive|Concurrent|Work)
E2E_LANES ?= 2

e2e: deps ## Browser tests (Chromium; installs what is missing), in two processes at once (E2E_LANES=1: one); `make e2e V2_API_URL=http://host:port` runs them against that v2 API (one process)
	@if [ -n "$(V2_API_URL)" ] || [ "$(E2E_LANES)" = 1 ]; then \
		echo 'E2E_V2_API_URL="$(V2_API_URL)" scripts/with-postgres.sh go test -count=1 -timeout 45m -skip Soak ./e2e/...'; \
		E2E_V2_API_URL="$(V2_API_URL)" scripts/with-postgres.sh go test -count=1 -timeout 45m -skip Soak ./e2e/...; \
	else \
		echo "scripts/with-postgres.sh scripts/e2e-lanes.sh '$(E2E_LANE2)' -count=1 -timeout 45m"; \
		E2E_V2_API_URL= scripts/with-postgres.sh scripts/e2e-lanes.sh '$(E2E_LANE2)' -count=1 -timeout 45m; \
	fi

conformance: ## v2 conformance suite; `make conformance V2_API_URL=... V2_API_TOKEN=...` checks a real deployment
	@V2_API_URL="$(V2_API_URL)" V2_API_TOKEN="$(V2_API_TOKEN)" go test -count=1 ./conformance/...

bench: ## Measure the portal against a bare reverse proxy and oauth2-proxy (docs/performance.md); figures in bench/results.json
	@scripts/build-oauth2-proxy.sh
	go run ./bench/cmd/portalbench -out bench/results.json

soak: deps ## 100 simulated users for SOAK_DURATION (default 2m) against the demo portal (SOAK_V2_LATENCY=50ms: a v2 that answers like a real one); not part of `make test`
	SOAK=1 go test -v -count=1 -run '^TestSoak$$' -timeout 10m ./e2e/

FUZZTIME ?= 10s
# SLOW_FUZZ are the targets one input of which takes milliseconds, not microseconds (a whole offer
# PDF): they run for SLOW_FUZZTIME. An interesting input is minimised for at most 10 runs, not
# for a minute, so a brief run finds crashes instead of polishing its corpus.
SLOW_FUZZ = FuzzMakeNeverPanics
SLOW_FUZZTIME ?= $(FUZZTIME)
# FUZZ_PKGS are the packages whose fuzz targets run (default: every package but e2e).
FUZZ_PKGS ?= ./...
fuzz: ## Run every fuzz target for FUZZTIME (default 10s; each package's test binary built once, run once a target; SLOW_FUZZ for SLOW_FUZZTIME)
	@# A package's fuzz targets are found in its test files (no `go test -list`, which links every
	@# package's test binary), and its instrumented test binary is built once and run once per
	@# target in the package's directory (testdata/fuzz) with go test's own corpus cache, where
	@# `go test -fuzz` per target linked it again each time.
	@bin=$$(mktemp -d); trap 'rm -rf "$$bin"' EXIT; cache="$$(go env GOCACHE)/fuzz"; \
	go list -f '{{.ImportPath}} {{.Dir}} {{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}' $(FUZZ_PKGS) | grep -v '/e2e ' | \
	while read -r pkg dir files; do \
	  [ -n "$$files" ] || continue; \
	  targets=$$(cd "$$dir" && sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p' $$files); \
	  [ -n "$$targets" ] || continue; \
	  echo "fuzz: build $$pkg"; go test -c -fuzz=. -o "$$bin/fuzz.test" "$$pkg"; \
	  for f in $$targets; do \
	    budget=$(FUZZTIME); case " $(SLOW_FUZZ) " in *" $$f "*) budget=$(SLOW_FUZZTIME);; esac; \
	    echo "fuzz: $$pkg $$f ($$budget)"; \
	    (cd "$$dir" && "$$bin/fuzz.test" -test.run='^$$' -test.fuzz="^$$f\$$" -test.fuzztime=$$budget \
	      -test.fuzzminimizetime=10x -test.fuzzcachedir="$$cache/$$pkg" -test.timeout=10m -test.paniconexit0) || exit 1; \
	  done; done

screenshots: deps ## Browser tests that write docs/screenshots/<page>.png (1280x800) for the README
	SCREENSHOTS=1 go test -count=1 -timeout 10m -run 'TestScreenshots' ./e2e/...

build: ## Static binaries bin/portal and bin/v2sim, stamped with VERSION
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/portal ./cmd/portal
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/v2sim ./cmd/v2sim

docker-check: ## Replay the Dockerfile's build steps without Docker and check the binary is static
	@VERSION="$(VERSION)" scripts/docker-check.sh

clean: ## Remove build output and test artifacts (keeps .cache: the Playwright driver, Dex and oauth2-proxy)
	rm -rf bin e2e/artifacts
