# Every target bootstraps its own virtual environment from constraints.txt (pinned, tested set).
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv demo test lint fuzz bench clean clean-kernels

$(STAMP): pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/pitboss demo --folder demo

.PHONY: demo-surveillance
demo-surveillance: $(STAMP)
	$(BIN)/pitboss demo --surveillance --folder demo/surveillance

lint: $(STAMP)
	$(BIN)/ruff check .

# the suite on both cores (pytest-xdist); a file's tests stay in one process (--dist loadfile), so that its
# module fixtures (an audited night, a Dask cluster) are built once. `pytest tests/test_x.py` stays one process.
TEST_WORKERS ?= 2
test: lint
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile

# every variant of tests/fuzzing.py's catalogue (more rows, cuts and flipped bytes each), not the sample
fuzz: $(STAMP)
	PITBOSS_FUZZ_VARIANTS=all $(BIN)/pytest tests/test_fuzz.py

bench: $(STAMP)
	$(BIN)/python -m bench
	$(BIN)/python -m bench.surveillance_power
	$(BIN)/python -m bench.surveillance_history --out bench/results/surveillance_history.json
	$(BIN)/python -m bench.surveillance_scale --sizes 1M,10M

clean: clean-kernels
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache

# numba's compiled kernels (engine.kernels: a kernel's cache does not see a helper kernel's file change)
clean-kernels:
	find engine -name '*.nbi' -delete -o -name '*.nbc' -delete
