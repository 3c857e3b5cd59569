# effstats: `make demo` runs the analyses (bundled leaderboards and digits, the per-item predictions beside the checkout
# or in $EFFSTATS_DATA) and renders them as HTML reports, `make test` runs
# the tests. Both run the idempotent set-up first (Debian as root: installs everything; elsewhere prints the steps).
PY ?= .venv/bin/python
PYTEST_ARGS ?=
# notebooks run at once by make demo (longest first): two where there are two cores or more (make demo JOBS=1: one)
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); if [ "$$n" -ge 2 ]; then echo 2; else echo 1; fi)
# e.g. make lab LAB_ARGS="--no-browser --ip=127.0.0.1 --port=8888"
LAB_ARGS ?=
# one BLAS thread: effstats parallelises above BLAS (forests, simulate(), JOBS), and pip's numpy wheels bring a
# threaded OpenBLAS that would oversubscribe the cores (set OPENBLAS_NUM_THREADS=... to override)
OPENBLAS_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS
# Jupyter refuses to run as root unless told to
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: setup test demo reports lab notebook bench clean
setup:
	@bash scripts/setup.sh

# --dist loadgroup: tests marked xdist_group(name) share a worker (and their module fixtures)
test: setup
	$(PY) -m pytest -q -n 2 --dist loadgroup --durations=15 $(PYTEST_ARGS)

# every notebook in full (executed copies + timings in build/notebooks, figures and tables in figures/),
# then one self-contained HTML report per notebook and an index in build/reports/
# (a failing notebook is still rendered, up to its error, before make fails)
demo: setup
	@$(PY) scripts/run_notebooks.py --out build/notebooks --jobs $(JOBS); status=$$?; \
	$(PY) scripts/render_reports.py --notebooks build/notebooks --out build/reports || exit 1; \
	echo "figures and tables written to figures/; reports: build/reports/index.html"; exit $$status

# render the already-executed notebooks in build/notebooks again (no execution)
reports:
	$(PY) scripts/render_reports.py --notebooks build/notebooks --out build/reports

# Debian's Jupyter notebook server, run from the venv so it offers the "effstats" kernel (the default here)
lab: setup
	$(PY) -m notebook --notebook-dir=notebooks --MappingKernelManager.default_kernel_name=effstats $(ALLOW_ROOT) $(LAB_ARGS)

notebook: lab

bench: setup
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf build .pytest_cache .hypothesis
