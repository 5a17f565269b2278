# The one entry point for people and CI. `make help` lists the targets.
# uv comes from PATH, or is installed with pip into .tools/ when missing.

UV ?= $(or $(shell command -v uv 2>/dev/null),$(CURDIR)/.tools/bin/uv)
RUN := $(UV) run --frozen
export UV_PYTHON_DOWNLOADS := never
# Compiled bytecode in the venv: servers start in a fraction of the time without it when
# PYTHONDONTWRITEBYTECODE is set, as it is on some machines.
export UV_COMPILE_BYTECODE := 1

.DEFAULT_GOAL := help

.PHONY: help
help:  ## Show the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(CURDIR)/.tools/bin/uv:
	python3 -m venv .tools
	.tools/bin/python -m pip install --quiet "uv>=0.8"

# uv compiles what it installs into the venv, but not the workspace's own sources (installed
# editable): compileall does, or with PYTHONDONTWRITEBYTECODE every start compiles them again
# (some 30% more start-up work for mcp-everything).
.PHONY: install
install: $(UV)  ## Install uv if missing, then every package and the dev tools into .venv
	$(UV) sync --frozen --all-packages
	$(RUN) python -m compileall -q shared/src servers/*/src

PORT ?= 8000

# A token of its own unless MCPKIT_AUTH_TOKEN gives one: without, any program on this machine
# could read and write the checkout through the server (its .git/hooks, its .venv).
.PHONY: run
run: install  ## Serve this directory with mcp-fs over HTTP on 127.0.0.1:$(PORT) behind a token; prints how to connect
	@token="$${MCPKIT_AUTH_TOKEN:-$$($(RUN) python -c 'import secrets; print(secrets.token_hex(32))')}"; \
	printf 'Clients send this token; set it where you start them:\n  export MCPKIT_AUTH_TOKEN=%s\n' "$$token"; \
	MCPKIT_AUTH_TOKEN="$$token" $(RUN) mcp-fs "$(CURDIR)" --transport http --port $(PORT)

.PHONY: lint
lint: install  ## ruff (lint + format check) and pyright strict
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	$(RUN) pyright

.PHONY: fix
fix: install  ## Apply ruff's fixes and formatting
	$(RUN) ruff check --fix .
	$(RUN) ruff format .

.PHONY: test
test: lint toolchain  ## Everything CI checks: lint, types, all tests (conformance too), wheels that install on their own
	$(RUN) pytest
	$(MAKE) smoke

.PHONY: toolchain
toolchain:  ## Install Node >= 22 (if the machine's is older) and the pinned conformance suite, once
	python3 tests/conformance/toolchain.py

.PHONY: conformance
conformance: install toolchain  ## Only the official MCP conformance suite, against each server over HTTP
	$(RUN) pytest -m conformance

.PHONY: bench
bench: install  ## Measure mcp-everything beside floor servers over stdio and HTTP, then bench-fs, bench-sqlite, bench-git and bench-web (figures only)
	$(RUN) python bench/stdio_bench.py \
		--server "floor=$(CURDIR)/.venv/bin/python bench/floor_echo.py" \
		--server "everything=$(CURDIR)/.venv/bin/mcp-everything" \
		--call echo '{"text": "hello"}' --hol long_running_operation '{"duration": 1, "steps": 2}'
	$(RUN) python bench/http_bench.py \
		--server "floor=$(CURDIR)/.venv/bin/python bench/floor_http.py --port {port}" \
		--server "everything=$(CURDIR)/.venv/bin/mcp-everything --transport http --port {port}" \
		--call echo '{"text": "hello"}' --clients 50
	$(MAKE) bench-fs
	$(MAKE) bench-sqlite
	$(MAKE) bench-git
	$(MAKE) bench-web

# The reference filesystem server, from npm, pinned; it runs on the machine's node.
FS_REFERENCE_VERSION := 2026.8.31
FS_REFERENCE := $(CURDIR)/.tools/fs-reference
FS_FIXTURES := $(CURDIR)/.bench/fs-fixtures

$(FS_REFERENCE)/installed-$(FS_REFERENCE_VERSION):
	@command -v npm >/dev/null || { echo "bench-fs: npm not found; install Node.js >= 18 with npm to measure the reference server" >&2; exit 1; }
	rm -rf $(FS_REFERENCE)
	npm install --prefix $(FS_REFERENCE) --no-audit --no-fund --save-exact \
		@modelcontextprotocol/server-filesystem@$(FS_REFERENCE_VERSION)
	touch $@

$(FS_FIXTURES)/made: bench/fs_fixtures.py | install
	$(RUN) python bench/fs_fixtures.py --force $(FS_FIXTURES)
	touch $@

.PHONY: bench-fs
bench-fs: install $(FS_REFERENCE)/installed-$(FS_REFERENCE_VERSION) $(FS_FIXTURES)/made  ## mcp-fs beside the npm reference server and grep -r, against the bars of issue 4
	$(RUN) python bench/fs_bench.py $(FS_FIXTURES) --reference-prefix $(FS_REFERENCE)

# The archived reference SQLite server, from PyPI, pinned, in a venv of its own: it needs mcp<2,
# which the workspace's dev tools (mcp>=1.27, any major) must not be held to. It runs on the
# workspace's Python, so that the two servers differ in their code only.
SQLITE_REFERENCE_VERSION := 2025.4.25
SQLITE_REFERENCE := $(CURDIR)/.tools/sqlite-reference
SQLITE_FIXTURES := $(CURDIR)/.bench/sqlite-fixtures

$(SQLITE_REFERENCE)/installed-$(SQLITE_REFERENCE_VERSION): | install
	rm -rf $(SQLITE_REFERENCE)
	$(UV) venv --quiet --python $(CURDIR)/.venv/bin/python $(SQLITE_REFERENCE)
	$(UV) pip install --quiet --python $(SQLITE_REFERENCE)/bin/python \
		mcp-server-sqlite==$(SQLITE_REFERENCE_VERSION) "mcp<2"
	touch $@

$(SQLITE_FIXTURES)/made: bench/sqlite_fixtures.py | install
	$(RUN) python bench/sqlite_fixtures.py --force $(SQLITE_FIXTURES)
	touch $@

.PHONY: bench-sqlite
bench-sqlite: install $(SQLITE_REFERENCE)/installed-$(SQLITE_REFERENCE_VERSION) $(SQLITE_FIXTURES)/made  ## mcp-sqlite beside the PyPI reference server and a bare sqlite3 floor, against the issue's bars
	$(RUN) python bench/sqlite_bench.py $(SQLITE_FIXTURES)/bench.db --reference-venv $(SQLITE_REFERENCE)

GIT_REFERENCE_VERSION := 2026.10.19
GIT_REFERENCE := $(CURDIR)/.tools/git-reference

$(GIT_REFERENCE)/installed-$(GIT_REFERENCE_VERSION): | install
	rm -rf $(GIT_REFERENCE)
	$(UV) venv --quiet --python $(CURDIR)/.venv/bin/python $(GIT_REFERENCE)
	$(UV) pip install --quiet --python $(GIT_REFERENCE)/bin/python \
		mcp-server-git==$(GIT_REFERENCE_VERSION)
	touch $@

.PHONY: bench-git
bench-git: install $(GIT_REFERENCE)/installed-$(GIT_REFERENCE_VERSION)  ## mcp-git beside the PyPI reference server and git run directly, on a 300-commit repository
	$(RUN) python bench/git_bench.py --reference $(GIT_REFERENCE)/bin/mcp-server-git

WEB_REFERENCE_VERSION := 2026.10.24
WEB_REFERENCE := $(CURDIR)/.tools/web-reference

$(WEB_REFERENCE)/installed-$(WEB_REFERENCE_VERSION): | install
	rm -rf $(WEB_REFERENCE)
	$(UV) venv --quiet --python $(CURDIR)/.venv/bin/python $(WEB_REFERENCE)
	$(UV) pip install --quiet --python $(WEB_REFERENCE)/bin/python \
		mcp-server-fetch==$(WEB_REFERENCE_VERSION)
	touch $@

.PHONY: bench-web
bench-web: install $(WEB_REFERENCE)/installed-$(WEB_REFERENCE_VERSION)  ## mcp-web beside the PyPI reference fetch server and a urllib floor, on a 30 KiB page from loopback
	$(RUN) python bench/web_bench.py --reference $(WEB_REFERENCE)/bin/mcp-server-fetch

SOAK_DURATION ?= 600
SOAK_ARGS ?=

.PHONY: soak
soak: install  ## Memory under sustained load: each server's mixes over stdio and HTTP for SOAK_DURATION s each (figures only); SOAK_ARGS="--case fs/write --transport http" picks some
	cd bench && $(RUN) python soak.py --duration $(SOAK_DURATION) $(SOAK_ARGS)

# readme-renderer is what `twine check` renders with; it is not in the lock: uv brings it.
.PHONY: build
build: install  ## Build every package's wheel and sdist, each server's server.json and .mcpb into dist/, then check them as PyPI would
	rm -rf dist
	$(UV) build --all-packages --no-sources -o dist
	$(RUN) python packaging/registry.py dist
	$(RUN) python packaging/bundles.py dist
	$(RUN) --with 'readme-renderer[md]==46.0' python packaging/check_dists.py dist

.PHONY: bundles
bundles: install  ## Build each server's .mcpb bundle (Claude Desktop one-click install) into dist/
	$(RUN) python packaging/bundles.py dist

DOCKER_SERVERS ?= $(notdir $(wildcard servers/*))

.PHONY: docker
docker:  ## Build an image per server (mcpkit-<name>: slim, non-root, stdio) where a Docker daemon runs
	@docker info >/dev/null 2>&1 || { echo "docker: no Docker daemon here (tests/packaging/test_docker.py checks the Dockerfile's shape instead)" >&2; exit 1; }
	for server in $(DOCKER_SERVERS); do \
		DOCKER_BUILDKIT=1 docker build -f packaging/docker/Dockerfile --build-arg SERVER=$$server \
			-t mcpkit-$$server . || exit 1; \
	done

.PHONY: smoke
smoke: build  ## Install each server's wheel alone into a fresh venv and start it
	UV=$(UV) $(RUN) python packaging/smoke.py dist
