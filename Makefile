# skillweave — the two commands of the README, plus the pieces they are made of.
#
# Installs come from lock files: every package, transitive and build ones included, pinned
# with its hashes, resolved for CPython 3.11 on Linux x86_64 (the one platform we run on).
#   requirements/lock-dev.txt         runtime + embeddings + dev tools (make install, test, demo)
#   requirements/lock-embeddings.txt  runtime + embeddings (.ci/check_extras)
#   requirements/lock.txt             runtime only (.ci/check_extras)
#   requirements/lock-bench.txt       runtime + the peers of the bench extra (make bench-peers)
# pyproject.toml keeps the supported ranges; `make lock` re-resolves after an edit there,
# `make upgrade-deps` moves every pin to the newest version those ranges allow.
VENV    ?= .venv
PYTHON  ?= python3
BIN     := $(VENV)/bin
LOCKED  := $(VENV)/.locked-stamp
STAMP   := $(VENV)/.installed-stamp
LOCK_DEV := requirements/lock-dev.txt
# The dev lock is resolved first; the others are constrained by it (-c), so every lock agrees.
# Index options stay out of the files: pip's own configuration on each machine says where to look.
PIP_COMPILE := CUSTOM_COMPILE_COMMAND="make lock" $(BIN)/pip-compile --quiet --generate-hashes \
	--allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links --no-emit-trusted-host

BENCH_VENV := .venv-bench

.PHONY: install lock upgrade-deps lint test test-fast demo bench bench-peers bench-scale soak e2e-llm clean

# The locked packages only (pip-compile among them), so `make lock` works while the lock no
# longer satisfies pyproject.toml.
$(LOCKED): $(LOCK_DEV)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK_DEV)
	touch $(LOCKED)

# The project itself: nothing more is resolved or downloaded (its build backend is locked too).
$(STAMP): $(LOCKED) pyproject.toml
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check \
		|| { echo "the lock misses a dependency of pyproject.toml: make lock" >&2; exit 1; }
	touch $(STAMP)

install: $(STAMP)  ## create .venv and install skillweave with its dev tools, from the lock

lock: $(LOCKED)  ## re-resolve the locks after editing pyproject's dependencies; other pins stay
	$(PIP_COMPILE) $(LOCK_ARGS) \
		--extra dev --build-deps-for editable --build-deps-for wheel -o $(LOCK_DEV) pyproject.toml
	$(PIP_COMPILE) --upgrade -c $(LOCK_DEV) \
		--build-deps-for wheel -o requirements/lock.txt pyproject.toml
	$(PIP_COMPILE) --upgrade -c $(LOCK_DEV) \
		--extra embeddings --build-deps-for wheel -o requirements/lock-embeddings.txt pyproject.toml
	$(PIP_COMPILE) --upgrade -c $(LOCK_DEV) \
		--extra bench --build-deps-for editable -o requirements/lock-bench.txt pyproject.toml

upgrade-deps:  ## the newest versions pyproject allows: rewrite the locks, reinstall, test
	$(MAKE) lock LOCK_ARGS=--upgrade
	$(MAKE) test

lint: install  ## ruff and the import-layer contracts
	$(BIN)/ruff check .
	$(BIN)/lint-imports

test: lint  ## lint, then the whole test suite
	$(BIN)/python -m pytest

test-fast: lint  ## lint, then the tests not marked slow: the inner loop, under 3 minutes
	$(BIN)/python -m pytest -m "not slow"

demo: install  ## the main run on the embedded default stack
	$(BIN)/skillweave demo

bench: install  ## benchmarks; results go to docs/BENCHMARKS.md by hand
	$(BIN)/python bench/skills_bench.py
	$(BIN)/python bench/selection_bench.py
	$(BIN)/python bench/sandbox_bench.py
	$(BIN)/python bench/environments_bench.py
	$(BIN)/python bench/kubernetes_bench.py

# The peers (pydantic-ai, the OpenAI Agents SDK) live in their own venv, never in .venv.
bench-peers:  ## skillweave against its peers on one Temporal dev server (docs/BENCHMARKS.md)
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --require-hashes -r requirements/lock-bench.txt
	$(BENCH_VENV)/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BENCH_VENV)/bin/python -m pip check
	$(BENCH_VENV)/bin/python bench/peers_bench.py

bench-scale:  ## many jobs at once on one worker, skillweave against its peers (docs/BENCHMARKS.md)
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --require-hashes -r requirements/lock-bench.txt
	$(BENCH_VENV)/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BENCH_VENV)/bin/python -m pip check
	$(BENCH_VENV)/bin/python bench/scale_bench.py

soak: install  ## the reliability suite at full scale (chaos, load, length); prints its figures
	SKILLWEAVE_SOAK=1 $(BIN)/python -m pytest tests/reliability -q --timeout=3600

# Opt-in, never part of `make test`: builds llama.cpp's server (10–20 minutes on two cores) and
# runs the demo run on a small GGUF model through it (e2e/llm.py says what it checks).
e2e-llm: install  ## the demo on a real small model behind llama.cpp's llama-server, built from source
	$(BIN)/python e2e/llm.py --work .e2e-llm

clean:
	rm -rf $(VENV) $(BENCH_VENV) .pytest_cache .ruff_cache .hypothesis .import_linter_cache .e2e-llm
