# The README's two commands: `make reproduce` and `make test`. Both set everything up on a fresh clone.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
# every command below runs with the CPU code paths pinned (essence/data/pinning.py: BLAS kernels, numpy's SIMD
# dispatch, torch's CPU capability, threads), so its numbers are the same on any x86-64 machine with AVX2
PINNED := $(PY) -m essence.data.pinning run --

.PHONY: env data test reproduce results clean browser

## env: create/update .venv with the pinned dependencies (idempotent)
env:
	@PYTHON=$(PYTHON) scripts/setup-env.sh

## data: link ../shared/data into the ignored data/ cache and verify every file's checksum
data: env
	@$(PY) -m essence.cli data --link

## test: the whole test suite (installs Debian's chromium for the browser test when absent)
test: env data browser
	$(PINNED) $(PY) -m pytest -q

## browser: headless Chromium for tests/test_browser.py (skipped with a message where it cannot be installed)
browser:
	@command -v chromium >/dev/null 2>&1 || scripts/install-chromium.sh

## reproduce: execute every notebook with papermill, regenerate figures/ and build/html/
reproduce: env data
	$(PINNED) $(PY) scripts/reproduce.py

## results: rerun every study under benchmarks/ that writes a table in results/, then docs/results.md and the README's tables
results: env data
	$(PINNED) $(PY) scripts/results_doc.py --regenerate

clean:
	rm -rf build .pytest_cache
