"""Rules for everything pytest collects (tests/, the docstring examples in effstats/, the user guide in docs/).

Tests that call R through rpy2 are marked ``needs_r`` (``pytestmark = pytest.mark.needs_r`` for a whole module; the
examples of ``effstats.rbridge`` are marked here). Where :mod:`effstats.rbridge` cannot start R (no rpy2, no R, as
for a user who never installs the ``r`` extra) they skip, with the reason; the native computations they compare
against are tested without R and still run. Where R starts, they all run.
"""
from __future__ import annotations

import functools
import gc
import tempfile
import zlib

import pytest

# docstring examples that call R
_R_DOCTEST_MODULES = ("effstats/rbridge.py::", "effstats/sequential/gsdesign.py::")

# the conftest files hold no examples: --doctest-modules would import them again as modules, and pytest 8 refuses
# two of them with one name ("import file mismatch" for tests/conftest.py and docs/conftest.py)
collect_ignore = ["conftest.py", "tests/conftest.py", "docs/conftest.py"]


@functools.lru_cache(maxsize=None)
def r_unavailable() -> str | None:
    """Why effstats.rbridge cannot start R here, or None when it can (asked once, at the first test that needs R)."""
    try:
        from effstats import rbridge

        rbridge.r_package("base")
    except Exception as exc:  # rpy2 missing (RPackageMissing), or R itself failing to start (rpy2's own errors)
        return f"needs R through rpy2, which does not start here: {type(exc).__name__}: {exc}"
    return None


def pytest_addoption(parser):
    parser.addoption(
        "--share", metavar="K/N", default=None,
        help="run the K-th of N fixed shares of the quick tests; the slow ones, those that need R and the docstring "
             "examples run in every share (make test: 1/2 on this machine's stack, 2/2 on Debian 13's)")


def _share(config) -> tuple[int, int] | None:
    value = config.getoption("share")
    if value is None:
        return None
    k, sep, n = value.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise pytest.UsageError(f"--share: expected K/N with 1 <= K <= N (e.g. 1/2), got {value!r}")
    return int(k), int(n)


def pytest_configure(config):
    _share(config)  # a bad --share stops the run before the collection


def share_key(item) -> str:
    """What decides a quick test's share: its xdist group's name (a group runs whole, on one stack, with the module
    fixtures it shares) or its node id. CRC-32 of it, not ``hash()``: the same share in every process and on both
    stacks."""
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return "group:" + str(mark.args[0] if mark.args else mark.kwargs.get("name"))
    return item.nodeid


def in_every_share(item) -> bool:
    """The tests that run in every share: the slow ones (deselected on Debian 13 by ``-m "not slow"``, so they run
    once, here), those that need R (they skip where R does not start) and the docstring examples (cheap, and they are
    what users copy, on either stack)."""
    return (isinstance(item, pytest.DoctestItem) or item.get_closest_marker("slow") is not None
            or item.get_closest_marker("needs_r") is not None)


# after tests/conftest.py marks its slow tests (tryfirst there)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(_R_DOCTEST_MODULES):
            item.add_marker(pytest.mark.needs_r)
    share = _share(config)
    if share is None:
        return
    k, n = share
    keep, drop = [], []
    for item in items:
        mine = in_every_share(item) or zlib.crc32(share_key(item).encode()) % n == k - 1
        (keep if mine else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_runtest_setup(item):
    if item.get_closest_marker("needs_r") is not None:
        reason = r_unavailable()
        if reason is not None:
            pytest.skip(reason)


@pytest.fixture(autouse=True)
def _examples_scratch(request):
    """An example's ``tempfile.mkdtemp()`` folder goes under the test's own temporary directory, which pytest prunes:
    the examples show users ``mkdtemp()``, which leaves its folder behind, and every test run runs them again."""
    if isinstance(request.node, pytest.DoctestItem):
        request.getfixturevalue("monkeypatch").setattr(tempfile, "tempdir", str(request.getfixturevalue("tmp_path")))


# Collecting imports every module of the suite and of effstats, and each import adds objects that live to the end:
# the garbage collector's full passes, set off by that growth, walked the whole growing heap again and again. They
# wait until the collection is done; then what is alive is frozen (gc.freeze: full passes while the tests run skip
# the modules and the collected tests, which live to the end anyway).
gc.disable()


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()
    gc.enable()
