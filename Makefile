# effstats: `make demo` runs the analyses on the bundled data, `make test` runs the tests.
# Both run the idempotent set-up first (Debian as root: installs everything; elsewhere prints the steps).
PY ?= .venv/bin/python
PYTEST_ARGS ?=

.PHONY: setup test demo bench notebooks clean
setup:
	@bash scripts/setup.sh

test: setup
	$(PY) -m pytest -q -n 2 --durations=15 $(PYTEST_ARGS)

demo: setup
	$(PY) scripts/run_notebooks.py --out build/notebooks
	@echo "figures and tables written to figures/:"; ls figures

bench: setup
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf build .pytest_cache .hypothesis
