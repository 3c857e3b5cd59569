#!/usr/bin/env bash
# Idempotent set-up for effstats on a Debian machine (as root): R, the Python stack from Debian,
# gsDesign from CRAN, and a .venv with effstats installed editable. A second run takes seconds.
# Elsewhere it prints the manual steps and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MIN_GSDESIGN=${EFFSTATS_MIN_GSDESIGN:-3.4.0}

manual() {
  cat >&2 <<'MSG'
effstats setup: this script automates Debian (as root) only. On this machine do it by hand:
  1. Python >= 3.11:   python3 -m venv .venv && .venv/bin/pip install -e '.[r,dev,jupyter,dask]' --config-settings editable_mode=compat
  2. R >= 4.1:         install R from your platform's usual source
  3. gsDesign:         Rscript -e 'install.packages("gsDesign")'
  4. Check:            .venv/bin/python -c "import effstats; effstats.show_versions()"
  5. Jupyter kernel:   .venv/bin/python -m ipykernel install --prefix .venv --name effstats
  6. make docs:        .venv/bin/pip install -e '.[docs]' (and Chromium for tests/test_docs.py)
MSG
  exit 2
}

can_apt() { [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }

export DEBIAN_FRONTEND=noninteractive
# python3-notebook: `make lab`; python3-nbconvert + libjs-katex (math, inlined): the HTML reports;
# chromium: the browser tests/test_reports.py and tests/test_docs.py open them in;
# python3-sphinx, -numpydoc, -pydata-sphinx-theme, -nbsphinx, -myst-parser: `make docs`.
# python3-jsonschema: manifest.json and state.json are checked against their schemas on load.
# python3-flake8: `make lint`.
# libopenblas0-serial: numpy and R then use OpenBLAS instead of Debian's reference BLAS,
# 3-5x faster PCA/SVD/IRT; the single-threaded build, because effstats parallelises above BLAS (forests, notebooks).
PY_PKGS="libopenblas0-serial python3-numpy python3-scipy python3-pandas python3-statsmodels python3-matplotlib python3-sklearn
 python3-rpy2 python3-pytest python3-hypothesis python3-nbclient python3-nbformat python3-ipykernel
 python3-tqdm python3-pytest-xdist python3-venv python3-pip python3-setuptools python3-wheel python3-dask python3-jupyter-client
 python3-distributed python3-zarr python3-notebook python3-nbconvert chromium libjs-katex
 python3-sphinx python3-numpydoc python3-pydata-sphinx-theme python3-nbsphinx python3-myst-parser python3-jsonschema
 python3-flake8"
R_PKGS="r-base-core r-base-dev r-cran-dplyr r-cran-ggplot2 r-cran-tidyr r-cran-tibble r-cran-xtable
 r-cran-rlang r-cran-curl r-cran-sass r-cran-bslib r-cran-rmarkdown r-cran-htmlwidgets r-cran-htmltools
 r-cran-commonmark r-cran-markdown r-cran-xml2 r-cran-scales r-cran-magrittr r-cran-glue r-cran-base64enc
 r-cran-bitops r-cran-fontawesome r-cran-jsonlite r-cran-knitr r-cran-v8 r-cran-rpact libuv1-dev"

missing=""
if [ -f /etc/debian_version ]; then
  # one dpkg-query for all packages: a second run of this script takes seconds
  # dpkg-query exits 1 when some package is unknown to dpkg (the normal case on a fresh machine)
  installed=$({ dpkg-query -W -f='${Package} ${Status}\n' $PY_PKGS $R_PKGS 2>/dev/null || true; } | awk '/ok installed/ {print $1}')
  for p in $PY_PKGS $R_PKGS; do
    echo "$installed" | grep -qx "$p" || missing="$missing $p"
  done
elif ! /usr/bin/env python3 -c "import numpy, scipy, pandas, sklearn, statsmodels, rpy2" 2>/dev/null; then
  manual
fi
if [ -n "$missing" ]; then
  can_apt || manual
  echo "effstats setup: apt-get install$missing"
  apt-get update -qq
  # r-cran-v8 needs Debian's own nodejs; a third-party nodejs (if present) blocks it.
  if echo "$missing" | grep -q r-cran-v8; then
    deb_node=$(apt-cache madison nodejs | awk '/debian/ {print $3; exit}')
    inst_node=$(dpkg-query -W -f='${Version}' nodejs 2>/dev/null || true)
    if [ -n "$deb_node" ] && [ "$inst_node" != "$deb_node" ]; then
      apt-get install -y -qq --allow-downgrades "nodejs=$deb_node" >/dev/null
    fi
  fi
  apt-get install -y -qq $missing >/dev/null
fi

# gsDesign from CRAN (the machine's configured repository) unless a recent enough one is installed.
command -v Rscript >/dev/null || manual
if ! Rscript -e "quit(status = !(requireNamespace('gsDesign', quietly = TRUE) && packageVersion('gsDesign') >= '$MIN_GSDESIGN'))" >/dev/null 2>&1; then
  [ -w "$(Rscript -e 'cat(.libPaths()[1])')" ] || manual
  echo "effstats setup: installing gsDesign from CRAN (a few minutes)"
  Rscript -e "r <- getOption('repos'); if (is.null(r) || identical(unname(r['CRAN']), '@CRAN@')) stop('no CRAN repository is configured: set options(repos=...) in Rprofile.site'); install.packages('gsDesign', Ncpus = 2); if (!requireNamespace('gsDesign', quietly = TRUE)) quit(status = 1)"
fi

PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv --system-site-packages .venv
fi
# (re)install editable unless the venv, run from outside the checkout with no PYTHONPATH, imports this
# checkout's effstats and has the `effstats` command calling its entry point, effstats._entry (from the root the
# checkout itself would be imported).
# editable_mode=compat: a .pth puts the checkout on sys.path, so a folder named effstats in the working directory
# (the clone itself, seen from its parent, where users often start Jupyter) cannot shadow the package as an empty
# namespace package, as it does with setuptools' default import-hook install ('no attribute ResponseMatrix').
VENV_PY="$ROOT/.venv/bin/python"
if ! (cd / && env -u PYTHONPATH "$VENV_PY" -c "import effstats, sys; sys.exit(not effstats.__file__.startswith('$ROOT/'))" 2>/dev/null) \
   || ! grep -qxF "$ROOT" .venv/lib/python3*/site-packages/__editable__.effstats-*.pth 2>/dev/null \
   || ! grep -qF "from effstats._entry import main" .venv/bin/effstats 2>/dev/null; then
  echo "effstats setup: installing effstats (editable) into .venv"
  "$VENV_PY" -m pip install -q --no-deps --no-build-isolation --no-index -e . --config-settings editable_mode=compat >/dev/null
  (cd / && env -u PYTHONPATH "$VENV_PY" -c "import effstats") || { echo "effstats setup: effstats is not importable from outside the checkout" >&2; exit 1; }
fi

# The venv as Jupyter kernels in its own data folder (.venv/share/jupyter/kernels), which Jupyter run from the venv
# (make lab, the notebook runner, the tests) searches before Debian's /usr/share/jupyter: "effstats" by name, and
# "python3" (as pip would write in a venv) so notebooks saved with the default kernel also import effstats.
# PYDEVD_DISABLE_FILE_VALIDATION silences ipykernel's debugger warning about frozen modules in every notebook.
for kernel in effstats python3; do
  kjson=".venv/share/jupyter/kernels/$kernel/kernel.json"
  if ! { grep -qF "\"$VENV_PY\"" "$kjson" && grep -qF PYDEVD_DISABLE_FILE_VALIDATION "$kjson"; } 2>/dev/null; then
    display="Python (effstats)"; [ "$kernel" = python3 ] && display="Python 3 (effstats venv)"
    PYDEVD_DISABLE_FILE_VALIDATION=1 "$VENV_PY" -m ipykernel install --prefix "$ROOT/.venv" --name "$kernel" \
      --display-name "$display" --env PYDEVD_DISABLE_FILE_VALIDATION 1 >/dev/null
    echo "effstats setup: registered the Jupyter kernel \"$kernel\" ($kjson)"
  fi
done
# (distutils from the standard library, where Python has one: Debian 12's joblib imports it with scikit-learn, and
# setuptools' shim would import the whole of setuptools for it, ~0.5 CPU s of every make target's set-up)
distutils=$("$VENV_PY" -c 'import sys; print("stdlib" if sys.version_info < (3, 12) else "local")')
(cd / && env -u PYTHONPATH SETUPTOOLS_USE_DISTUTILS="$distutils" "$VENV_PY" -c "import effstats; effstats.show_versions()")
# which BLAS numpy and R load (Debian picks by priority: a threaded OpenBLAS, if present, wins over the serial one;
# the Makefile sets OPENBLAS_NUM_THREADS=1 either way)
if command -v update-alternatives >/dev/null; then
  blas=$(update-alternatives --query "libblas.so.3-$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)" 2>/dev/null | awk '/^Value:/ {print $2}')
  [ -n "$blas" ] && printf '%14s: %s\n' "BLAS" "$blas"
fi
# the CPU, so that timings printed after set-up (make demo, benchmarks) say what they ran on
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null)
if [ -n "$cpu" ]; then
  grep -qw avx512f /proc/cpuinfo && cpu="$cpu, AVX-512" || cpu="$cpu, no AVX-512"
  printf '%14s: %s (%s cores)\n' "CPU" "$cpu" "$(nproc 2>/dev/null || echo '?')"
fi
# the per-item predictions the notebooks read (not shipped): say where they were found, or how to point to them
(cd / && env -u PYTHONPATH "$VENV_PY" - <<'PYEOF'
try:
    from effstats.datasets.predictions import data_root
    print(f"{'predictions':>14}: {data_root()}")
except FileNotFoundError:
    print(f"{'predictions':>14}: NOT FOUND - make demo needs them: put them in shared/data/predictions beside the "
          "checkout or set EFFSTATS_DATA (README, Data)")
PYEOF
)
