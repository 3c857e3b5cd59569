"""Rules for the whole test suite: which tests are `slow` (make test-fast leaves them out; make test runs them).

A module whose every test is long says so itself (``pytestmark = pytest.mark.slow``); a test marked ``notebook``
is slow; and the long tests of otherwise quick modules are listed in ``SLOW_TESTS`` below, with what makes each
long (the longest in ``make test-fast --durations``). A listed test that is renamed drops out of the list: prefer
``@pytest.mark.slow`` in the test's own file. A Monte-Carlo check (an interval's coverage, an estimator's bias, a
guarantee over many orders) that takes more than about 5 CPU s on a 2-core machine without AVX-512 is slow: it runs
once in ``make test``, on this machine's stack, while the quick tests of the same estimators are shared between the
two stacks (``--share``, in the root conftest.py) and ``make test-all`` runs them on both.

The tests of an xdist group (``@pytest.mark.xdist_group``: one worker runs them all, in order) are collected first,
the longest groups (``LONG_GROUPS``) first of all, so that the other worker fills the time they take.
"""
import gc
import os
import signal
import time
from pathlib import Path

import pytest
from hypothesis import Phase, settings

# Hypothesis's target phase optimises what a test reports through hypothesis.target(), which no test here calls;
# without such a report it only shrinks the passing examples of its Pareto front so that the example database holds
# small ones for later runs (Hypothesis: "only marginally useful at present"), in test calls beyond max_examples on
# an empty database, as every fresh checkout has. The other phases run as by default: each test's max_examples
# generated examples, the database's failing examples replayed, a failure shrunk.
# A --hypothesis-profile given on the command line is loaded after this one.
settings.register_profile("effstats", phases=[p for p in settings.default.phases if p is not Phase.target])
settings.load_profile("effstats")

# The Ctrl-C tests send SIGINT to the commands they start and to the test process itself. A process started as a
# background job of a non-interactive shell (`make test &`, nohup) has SIGINT ignored and passes that on to the
# commands it starts: Python's own handler is put back here (in the session and in each xdist worker), so that those
# tests see what a Ctrl-C at a terminal does.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

SLOW_TESTS = {
    "tests/test_aipw.py::test_unbiased_and_covers_for_a_target_beyond_every_source": "Monte-Carlo bias and coverage",
    "tests/test_disco_defaults.py::test_defaults_beat_random_items_and_the_paper_setting_on_digits":
        "forests on digits",
    "tests/test_readme.py::test_readme_tour_executes": "the README tour as a script (500 digits classifiers)",
    "tests/test_readme.py::test_readme_other_python_blocks_run_as_written": "the README blocks, a Dask cluster",
    "tests/test_sequential_finite.py::test_validation_grid_has_finite_benchmark_cells_that_hold": "a validation grid",
    "tests/test_sequential_finite.py::test_exact_size_of_threshold_claims_on_a_binary_benchmark_with_fpc":
        "exact sizes by enumeration",
    "tests/test_sequential_finite.py::test_random_beta_spending_designs_match_gsdesign_where_it_gives_them":
        "random designs against gsDesign",
    "tests/test_sequential_user.py::test_a_rejected_zero_lies_outside_the_reported_interval": "Monte Carlo",
    "tests/test_aipw.py::test_cifar10_top_models_covered_at_100_of_400_items": "Monte-Carlo coverage on CIFAR-10",
    "tests/test_sequential_finite.py::test_hundreds_of_looks_with_fpc_spend_alpha_stop_and_cover":
        "Monte-Carlo runs of hundreds of looks",
    "tests/test_stratified_aipw.py::test_interval_covers_near_one_and_for_a_random_guesser": "Monte-Carlo coverage",
    "tests/test_stratified_aipw.py::test_cifar10_top_models_samples_with_one_or_two_wrong_items_are_covered":
        "Monte-Carlo coverage on CIFAR-10",
    "tests/test_stratified_minority_limit.py::test_stratified_aipw_covers_samples_with_two_to_five_wrong_items":
        "Monte-Carlo coverage",
    "tests/test_sequential_correction.py::test_estimate_at_a_fixed_look_is_unbiased": "Monte-Carlo bias",
    "tests/test_sequential_correction.py::test_repeated_intervals_of_a_run_under_way_cover_together":
        "Monte-Carlo coverage of repeated intervals",
    "tests/test_disco_inputs.py::test_collapsed_stratum_keeps_coverage_when_its_missingness_is_at_random":
        "Monte-Carlo coverage",
    "tests/test_disco_user.py::test_random_direct_interval_covers_on_cifar10": "Monte-Carlo coverage on CIFAR-10",
    "tests/test_disco.py::test_signatures_beat_random_direct_on_simulated_benchmark": "repeated simulated benchmarks",
    "tests/test_flash_newcomer.py::test_imagenet_newcomer_leader_over_100_orders": "100 orders of ImageNet models",
    "tests/test_flash_newcomer.py::test_helm_and_mmlu_newcomer_leader_over_100_orders": "100 orders of models",
    "tests/test_flash_newcomer.py::test_newcomer_stops_only_when_its_own_bound_excludes_the_top":
        "orders of ImageNet models",
    "tests/test_reliability_flash.py::test_guarantee_holds_on_helm_over_orders": "orders of HELM models",
}


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects
def pytest_collection_modifyitems(config, items):
    for item in items:
        # a parametrised test is listed once, without its parameters
        test_id = item.nodeid.split("[", 1)[0]
        if item.get_closest_marker("notebook") is not None or test_id in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


# The xdist groups (one worker runs a group whole), longest first: the notebooks' FAST runs and the docs site built
# on them take minutes, the matrix of command-line cells about a minute.
LONG_GROUPS = ("notebooks", "matrix")


def _group(item) -> str | None:
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return None
    return mark.args[0] if mark.args else mark.kwargs.get("name")


class _GroupsFirst:
    """`--dist loadgroup` hands out work in the order of collection, a group where its first test is collected: a
    long group found late (test_docs.py sits mid-way) runs on one worker after the other has run out of work. The
    groups go first, longest first; the other tests, handed out one by one, then even out the two workers."""

    @pytest.hookimpl(trylast=True)  # after pytest's own reordering (by higher-scoped parameters) and deselection
    def pytest_collection_modifyitems(self, items):
        def rank(item):
            group = _group(item)
            if group is None:
                return len(LONG_GROUPS) + 1
            return LONG_GROUPS.index(group) if group in LONG_GROUPS else len(LONG_GROUPS)

        # stable: tests keep their order within a group and among the others (both workers sort alike)
        items.sort(key=rank)


def pytest_configure(config):
    config.pluginmanager.register(_GroupsFirst(), "effstats-xdist-groups-first")


# Modules whose tests hold sockets (a browser's or a Jupyter server's websockets, a Dask cluster's connections): what
# they leave unclosed in reference cycles is collected after each of their tests, so that its ResourceWarning is
# raised there and not in a later test that records the warnings of the code it calls.
SOCKET_MODULES = {"test_reports", "test_jupyter", "test_docs", "test_notebooks", "test_dask", "test_readme"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    if getattr(getattr(item, "module", None), "__name__", None) in SOCKET_MODULES:
        gc.collect()


@pytest.fixture(scope="module")
def parsed_logs_kept():
    """Each lm-eval samples file that a module's tests read in this process is parsed once per set of options.

    The loop's modules write their reference models' logs once (a module fixture) and run ``select``, ``estimate``
    and ``sequential`` on them in test after test; parsing every record of every file at each read would be much of
    those tests' CPU time. Here a file's parse (its records and its failed documents) is kept by its path, its stamp
    (size, modification and status-change times, inode: ``effstats.datasets._lm_eval_cache.stamp_of``, the library's
    own cache key) and the options, and a later read of the unchanged file takes it; a file modified in the last two
    seconds is parsed each time (a rewrite within one tick of the file system's clock can keep the stamp), as the
    library's cache does. Only the parse is kept: every read still chooses the files, runs and tasks, checks the
    documents across models and builds the matrix. The modules that test the parser and its cache (``test_harness``,
    ``test_lm_eval_*``) do not use this."""
    from effstats.datasets import _lm_eval_cache, harness

    real = harness._read_file_kept
    kept: dict = {}

    def read(f, metric, normalize, want_filter, arg, failed):
        stamp = _lm_eval_cache.stamp_of(f)
        if stamp is None or time.time_ns() - stamp[1] < _lm_eval_cache._SETTLED_NS:
            return real(f, metric, normalize, want_filter, arg, failed)
        key = (str(f), os.path.realpath(f), stamp, metric, bool(normalize), want_filter, arg)
        hit = kept.get(key)
        if hit is None:
            start = len(failed)
            recs = real(f, metric, normalize, want_filter, arg, failed)
            kept[key] = (recs, failed[start:])
        else:
            recs, bad = hit
            failed.extend(bad)
        return list(recs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(harness, "_read_file_kept", read)
        yield


@pytest.fixture
def ctrl_c_after_replacing(monkeypatch):
    """``ctrl_c_after_replacing(name)``: a real SIGINT right after ``os.replace`` puts a file called ``name`` in place,
    the moment a command's output is half renamed (``monkeypatch.undo()`` ends it)."""
    def arm(name: str) -> None:
        real = os.replace

        def replace(src, dst):
            real(src, dst)
            if Path(dst).name == name:
                os.kill(os.getpid(), signal.SIGINT)

        monkeypatch.setattr(os, "replace", replace)
    return arm
