# effstats: `make demo` runs the analyses (bundled leaderboards and digits, the per-item predictions beside the checkout
# or in $EFFSTATS_DATA) and renders them as HTML reports, `make test` runs the tests (each once: half the quick ones on
# Debian 13's stack; `make test-fast`: all but those marked slow), `make docs` builds the documentation site into
# build/docs/. Each runs the idempotent set-up first (Debian as root: installs everything; elsewhere prints the steps).
PY ?= .venv/bin/python
PYTEST_ARGS ?=
# pytest arguments of the Debian 13 run (empty: -q -m "not slow" --share 2/2 in make test, -q -m "not slow" in
# make test-debian13 and make test-all)
DEBIAN13_ARGS ?=
# notebooks run at once by make demo (longest first): two where there are two cores or more (make demo JOBS=1: one)
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); if [ "$$n" -ge 2 ]; then echo 2; else echo 1; fi)
# e.g. make notebook NOTEBOOK_ARGS="--no-browser --ip=127.0.0.1 --port=8888" (LAB_ARGS: the same, for make lab)
LAB_ARGS ?=
NOTEBOOK_ARGS ?= $(LAB_ARGS)
# make docs: Sphinx's output, its warnings (the build fails on any: -W, nitpicky) and its cache
DOCS_OUT ?= build/docs
SPHINX_ARGS ?=
# what make lint (and make test, first) checks with flake8
LINT_PATHS = effstats tests benchmarks scripts docs/conf.py docs/conftest.py docs/cli_page.py docs/nb_markdown.py conftest.py
# one BLAS thread: effstats parallelises above BLAS (forests, simulate(), JOBS), and pip's numpy wheels bring a
# threaded OpenBLAS that would oversubscribe the cores (set OPENBLAS_NUM_THREADS=... to override)
OPENBLAS_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS
# glibc's malloc keeps freed memory for the next allocation instead of handing it back to the kernel at once: by
# default an array of a few MB is mapped afresh at each allocation and each of its pages faults again when first
# written, and on a virtual machine a page fault is dear (the simulations of the notebooks and tests allocate such
# arrays in loops). Up to 32 MB an allocation comes from the heap, and up to 1 GB freed at its top stays there; other
# allocators ignore these variables.
MALLOC_MMAP_THRESHOLD_ ?= 33554432
MALLOC_TRIM_THRESHOLD_ ?= 1073741824
MALLOC_TOP_PAD_ ?= 67108864
export MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_ MALLOC_TOP_PAD_
# the tests' Python processes write bytecode whatever PYTHONDONTWRITEBYTECODE says in the caller's environment: the
# processes that the tests start (the command line, notebook kernels, Dask and forked workers) each import effstats
# again, and without __pycache__/ (which git ignores) each compiles it again
TEST_ENV = env -u PYTHONDONTWRITEBYTECODE
# the processes of the tests on this machine's stack (not the Debian 13 run's) take distutils from Python's standard
# library: Debian 12's joblib imports distutils whenever scikit-learn is imported, and setuptools' distutils shim, on
# by default, then imports the whole of setuptools (pkg_resources, its vendored packages) for nothing, ~0.3-0.5 CPU s
# in every process that imports effstats' estimators (the command line, notebook kernels, Dask workers, Sphinx).
# Python 3.12 and later have no distutils of their own: there the shim stays on.
MAIN_TEST_ENV = $(TEST_ENV) $(shell $(PY) -c 'import sys; print("SETUPTOOLS_USE_DISTUTILS=stdlib" if sys.version_info < (3, 12) else "")' 2>/dev/null)
# the Debian 13 run's own session (util-linux; where there is none, e.g. macOS, it runs in make's)
SETSID := $(shell command -v setsid 2>/dev/null)
# Jupyter refuses to run as root unless told to
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: setup test test-all test-debian13 test-fast lint docs demo reports lab notebook bench clean
setup:
	@bash scripts/setup.sh

# every test but the exhaustive products (make test-all runs those too), each once, with make lint's flake8 beside it:
# on this machine's stack (Debian 12: the lower bounds pyproject.toml declares, R) the slow tests, those that need R,
# the doctests and half of the quick tests (--share 1/2, a fixed split by a CRC of each test's name or xdist group);
# beside it, on Debian 13's stack, the one pip users get (Python 3.13, numpy 2, pandas 2, zarr 3, no R), the other
# half of the quick tests and the doctests again (--share 2/2). A quick test runs on one stack or the other; make
# test-all runs every test on this stack and every quick one on Debian 13's as well.
# The Debian 13 run starts first and this stack's once the tool has copied the tree into its chroot (its "Debian 13
# stack:" line: the copy would otherwise race the bytecode this stack's processes write). It runs at a lower priority
# in a session of its own, so that it takes the moments when this stack's workers wait and then the cores this
# stack's end frees; its output follows flake8's, and make's end (or Ctrl-C) ends it.
# --dist loadgroup: tests marked xdist_group(name) share a worker (and their module fixtures). All three (the suite,
# flake8, the Debian 13 run) run; make test fails if any fails. flake8 (~11 CPU s, ~7 s on two idle cores) runs
# beside the suite at a low priority, so that it takes the moments when a worker waits (on a command, a kernel, a
# sleep) rather than holding up the start; raised to the normal priority when the suite ends (as root; elsewhere
# renice says no and it runs on at its own). Its findings follow the suite's summary, under its command line; its
# process ends with make's (a background job of a non-interactive shell ignores Ctrl-C).
test: setup
	@status=0; lint_log=$$(mktemp); d13_log=$$(mktemp); \
	trap 'kill $$lint_pid 2>/dev/null; kill -- -$$d13_pid 2>/dev/null; rm -f "$$lint_log" "$$d13_log"' EXIT; \
	trap 'exit 130' INT TERM; \
	nice -n 5 $(SETSID) $(TEST_ENV) bash scripts/test_debian13.sh $(or $(DEBIAN13_ARGS),-q -m "not slow" --share 2/2) \
		>"$$d13_log" 2>&1 & d13_pid=$$!; \
	while kill -0 $$d13_pid 2>/dev/null && ! grep -qE "^Debian 13 (stack:|run skipped)" "$$d13_log"; do \
		sleep 0.5; done; \
	nice -n 10 $(PY) -m flake8 -j 1 $(LINT_PATHS) >"$$lint_log" 2>&1 & lint_pid=$$!; \
	echo "$(PY) -m pytest -q -n 2 --dist loadgroup --durations=15 -m \"not exhaustive\" --share 1/2 $(PYTEST_ARGS)"; \
	$(MAIN_TEST_ENV) $(PY) -m pytest -q -n 2 --dist loadgroup --durations=15 -m "not exhaustive" --share 1/2 \
		$(PYTEST_ARGS) || status=1; \
	echo "$(PY) -m flake8 -j 1 $(LINT_PATHS)"; renice -n 0 -p $$lint_pid >/dev/null 2>&1; \
	wait $$lint_pid || status=1; cat "$$lint_log"; \
	renice -n 0 -g $$d13_pid >/dev/null 2>&1; wait $$d13_pid || status=1; cat "$$d13_log"; d13_pid=; \
	exit $$status

# the fast tests and doctests in a Debian 13 chroot (../shared/tools/debian13-test: as root on Debian, the chroot
# made once; elsewhere it says it is skipped), e.g. make test-debian13 DEBIAN13_ARGS="-q -x tests/test_irt.py"
test-debian13:
	@$(TEST_ENV) bash scripts/test_debian13.sh $(DEBIAN13_ARGS)

# flake8 (Debian's python3-flake8), configured in .flake8: lines of at most 120 characters, unused imports,
# undefined names
lint: setup
	$(PY) -m flake8 $(LINT_PATHS)

# everything make test runs, every quick test on both stacks, and the exhaustive products whose covering slices it
# runs (the loop's whole matrix of methods x inputs x options and the whole command-line bad-input campaign: about an
# hour on two cores)
test-all: setup
	@status=0; \
	$(MAIN_TEST_ENV) $(PY) -m pytest -q -n 2 --dist loadgroup --durations=15 $(PYTEST_ARGS) || status=1; \
	$(TEST_ENV) bash scripts/test_debian13.sh $(DEBIAN13_ARGS) || status=1; \
	exit $$status

# the unit tests and doctests: everything not marked slow (notebooks, the docs build, Jupyter, long simulations)
test-fast: setup
	$(MAIN_TEST_ENV) $(PY) -m pytest -q -n 2 --dist loadgroup --durations=10 -m "not slow" $(PYTEST_ARGS)

# the documentation site (Sphinx from Debian's packages; elsewhere pip install -e '.[docs]'): user guide, API
# reference from the docstrings, the notebooks as pages with their outputs (make demo's full runs in build/notebooks
# when newer than the notebook, else FAST-mode runs that scripts/docs_notebooks.py makes and keeps in
# build/docs-notebooks; it fails when a notebook does), performance page and changelog. Warnings are errors (-W, nitpicky cross-references);
# --keep-going reports them all, into $(DOCS_OUT)/warnings.txt as well; -E reads every page again, so that a warning
# is reported by every build, not only by the one after its page changed. Open $(DOCS_OUT)/index.html.
docs: setup
	@mkdir -p $(DOCS_OUT)
	$(PY) scripts/docs_notebooks.py --jobs $(JOBS)
	$(PY) -m sphinx -b html -E -n -W --keep-going -q -d build/docs-doctrees -w $(DOCS_OUT)/warnings.txt $(SPHINX_ARGS) docs $(DOCS_OUT)
	@echo "docs: $(DOCS_OUT)/index.html"

# every notebook in full (executed copies + timings in build/notebooks, figures and tables in figures/) and one
# self-contained HTML report per notebook with an index in build/reports/ (render_reports.py's pages): a finished
# notebook's page is rendered as soon as a lane has no notebook left to start, beside the notebooks still running
# (a failing notebook is still rendered, up to its error, before make fails; exit status 2: refused before
# any notebook ran, e.g. without nbconvert)
demo: setup
	@$(PY) scripts/run_notebooks.py --out build/notebooks --reports build/reports --jobs $(JOBS); status=$$?; \
	[ $$status = 2 ] || echo "figures and tables written to figures/; reports: build/reports/index.html"; \
	exit $$status

# render the already-executed notebooks in build/notebooks again (no execution)
reports:
	$(PY) scripts/render_reports.py --notebooks build/notebooks --out build/reports

# Debian's Jupyter Notebook 6 server (Debian packages no JupyterLab), run from the venv so it offers the "effstats"
# kernel (the default here); `make lab` is the same. Where JupyterLab is installed:
# .venv/bin/python -m jupyterlab --notebook-dir=notebooks (or register the kernel with another Jupyter:
# .venv/bin/python -m ipykernel install --user --name effstats)
notebook: setup
	$(PY) -m notebook --notebook-dir=notebooks --MappingKernelManager.default_kernel_name=effstats $(ALLOW_ROOT) $(NOTEBOOK_ARGS)

lab: notebook

bench: setup
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf build .pytest_cache .hypothesis docs/generated docs/notebooks/*.ipynb docs/_static/katex
