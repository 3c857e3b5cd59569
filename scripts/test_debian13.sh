#!/usr/bin/env bash
# The fast tests and the doctests on the stack a pip user gets today: Debian 13's Python 3.13, numpy 2.2,
# pandas 2.2, scipy 1.15, scikit-learn 1.4, statsmodels 0.14, dask 2024.12 and zarr 3, without R and rpy2 (so the
# needs_r tests skip, naming the reason). Runs ../shared/tools/debian13-test (a Debian 13 chroot made once with
# debootstrap; it copies this working tree in); that needs root on Debian: elsewhere this says it is skipped.
#
# Usage: scripts/test_debian13.sh [pytest arguments]   (default: -q -m "not slow": tests/, effstats/, docs/)
# Environment: DEBIAN13_TEST (the tool), DEBIAN13_ROOT (the chroot, default /var/tmp/debian13).
set -uo pipefail
cd "$(dirname "$0")/.."
tool=${DEBIAN13_TEST:-../shared/tools/debian13-test}
root=${DEBIAN13_ROOT:-/var/tmp/debian13}
if [ "$(id -u)" != 0 ] || [ ! -r /etc/debian_version ]; then
  echo "Debian 13 run skipped: it needs root on Debian (a chroot); make test ran the tests on this machine's stack"
  exit 0
fi
if [ ! -x "$tool" ]; then
  echo "Debian 13 run skipped: $tool is not there"
  exit 0
fi
[ $# -gt 0 ] || set -- -q -m "not slow"
# two workers, as on this machine: pytest-xdist into the chroot (once; the tool makes the chroot on its first run,
# which then runs on one worker). numpy and scipy on OpenBLAS (serial: one thread a process, as this machine's numpy
# and as pip's numpy wheels, which bring their own OpenBLAS), where the chroot's minimal install has only the
# reference BLAS and LAPACK, several times slower on the decompositions and products that the tests make. apt is asked
# once, for what is missing, and not at all when both are there.
workers=()
if [ -x "$root/usr/bin/apt-get" ]; then
  missing=()
  has_xdist() { chroot "$root" python3 -c "import xdist" 2>/dev/null; }
  has_xdist || missing+=(python3-pytest-xdist)
  compgen -G "$root/usr/lib/*/openblas-serial/libblas.so.3" >/dev/null || missing+=(libopenblas0-serial)
  if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive chroot "$root" sh -c \
      "{ apt-get update -q && apt-get install -y -q --no-install-recommends ${missing[*]}; } >/dev/null 2>&1" ||
      echo "Debian 13 run: apt could not install ${missing[*]} into $root"
  fi
  if [[ " ${missing[*]} " != *" python3-pytest-xdist "* ]] || has_xdist; then
    workers=(-n 2 --dist loadgroup)
  fi
fi
# the chroot's Python keeps its bytecode (and pytest its rewritten test modules) in one folder of the chroot that
# outlives the run: the tool copies the tree in afresh each time, without Python 3.13 bytecode, and each xdist worker
# would compile every effstats and test module again at collection. Bytecode is checked against its source's
# modification time and size, which the copy keeps, so an edited file is compiled again.
export PYTHONPYCACHEPREFIX=/var/cache/effstats-pycache
echo "Debian 13 run: $tool $* ${workers[*]}"
"$tool" "$@" "${workers[@]}"
