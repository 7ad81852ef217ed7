# The two commands in the README. Each creates .venv on first use and
# installs what it needs; later runs reuse it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench fuzz clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

# tf-keras (Keras 2, which verify runs Keras 2 code on) without its
# dependencies: its metadata asks for the `tensorflow` distribution, and the
# tests run on `tensorflow-cpu`.
$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	$(BIN)/python -m pip install -q --no-deps tf-keras==2.21.0
	touch $(VENV)/.installed $@

# Show every rule firing on examples/, then the fixes as a diff (nothing is
# written). Exit code 1 means "findings", which is the point of the demo;
# 2 (an error) fails. Then the story of examples/eager_tutorial.py: the diff
# one `fix --unsafe-fixes` makes, `verify` proving it (the original eagerly
# against the migrated script traced), and its train step timed before and
# after. It installs what `make test` installs (one TensorFlow for both).
demo: $(VENV)/.installed-dev
	$(BIN)/tfrewrite check --no-cache examples/; test $$? -le 1
	$(BIN)/tfrewrite fix --diff examples/; test $$? -le 1
	@echo; echo "== examples/eager_tutorial.py: one 'tfrewrite fix --unsafe-fixes' (as a diff)"
	$(BIN)/tfrewrite fix --diff --unsafe-fixes examples/eager_tutorial.py; test $$? -le 1
	@echo; echo "== verify: the original run eagerly against the migrated script traced"
	cd examples && ../$(BIN)/tfrewrite verify --no-cache --unsafe-fixes --no-xla --jobs 1 eager_tutorial.py
	@echo; echo "== the train step before (eager) and after (traced)"
	$(BIN)/python benchmarks/train_step_payoff.py --example-only --steps 24

# Fast tests in parallel; TensorFlow tests in one process (TensorFlow is
# imported once); then the wheel built and installed into a fresh virtualenv.
test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q -m "not tensorflow and not packaging" -n 2 -p no:cacheprovider
	$(BIN)/python -m pytest -q -m tensorflow -p no:cacheprovider
	$(BIN)/python -m pytest -q -m packaging -p no:cacheprovider

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks codemods scripts

# Throughput on the keras sources (BENCH_ARGS="--corpus DIR --cli-only" for
# another tree, or only the command-line timings), then the hazard-dense
# generated files and the language server's latency through an LSP session.
bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/throughput.py $(BENCH_ARGS)
	$(BIN)/python benchmarks/dense_findings.py --losses 14,67,200
	$(BIN)/python benchmarks/server_latency.py --losses 14,67 --clean 14 --edits 3

# The fuzz tests with many more examples (the suite runs a few hundred).
fuzz: $(VENV)/.installed-dev
	TFREWRITE_FUZZ_EXAMPLES=3000 $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_fuzz.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
