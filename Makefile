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

.PHONY: install
install: $(UV)  ## Install uv if missing, then every package and the dev tools into .venv
	$(UV) sync --frozen --all-packages

.PHONY: run
run: install  ## Run mcp-everything over stdio (prints how to configure a host)
	$(RUN) mcp-everything

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
bench: install  ## Measure mcp-everything beside floor servers, over stdio and HTTP (figures, not pass/fail)
	$(RUN) python bench/stdio_bench.py \
		--server "floor=$(CURDIR)/.venv/bin/python bench/floor_echo.py" \
		--server "everything=$(CURDIR)/.venv/bin/mcp-everything" \
		--call echo '{"text": "hello"}' --hol long_running_operation '{"duration": 1, "steps": 2}'
	$(RUN) python bench/http_bench.py \
		--server "floor=$(CURDIR)/.venv/bin/python bench/floor_http.py --port {port}" \
		--server "everything=$(CURDIR)/.venv/bin/mcp-everything --transport http --port {port}" \
		--call echo '{"text": "hello"}' --clients 50

.PHONY: build
build: install  ## Build every package's wheel and sdist into dist/
	rm -rf dist
	$(UV) build --all-packages --no-sources -o dist

.PHONY: smoke
smoke: build  ## Install each server's wheel alone into a fresh venv and start it
	UV=$(UV) $(RUN) python packaging/smoke.py dist
