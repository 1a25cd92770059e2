# skillweave — the two commands of the README, plus the pieces they are made of.
VENV    ?= .venv
PYTHON  ?= python3
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed-stamp

.PHONY: install lint test demo bench soak clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)  ## create .venv and install skillweave with its dev tools

lint: install  ## ruff and the import-layer contracts
	$(BIN)/ruff check .
	$(BIN)/lint-imports

test: lint  ## lint, then the whole test suite
	$(BIN)/python -m pytest

demo: install  ## the main job on the embedded default stack
	$(BIN)/skillweave demo

bench: install  ## benchmarks; results go to docs/BENCHMARKS.md by hand
	$(BIN)/python bench/skills_bench.py
	$(BIN)/python bench/selection_bench.py
	$(BIN)/python bench/sandbox_bench.py
	$(BIN)/python bench/environments_bench.py
	$(BIN)/python bench/kubernetes_bench.py

soak: install  ## the reliability suite at full scale (chaos, load, length); prints its figures
	SKILLWEAVE_SOAK=1 $(BIN)/python -m pytest tests/reliability -q --timeout=3600

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .import_linter_cache
