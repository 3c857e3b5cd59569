"""The audit computed by two processes equals the audit computed by one, file for file; the forked child's result is
used only when the child ran to its end without a warning, else the work is done again in the calling process."""
from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from effstats._shared import _child_python, _Forked
from effstats.datasets import load_helm, load_helm_lite
from effstats.reliability import audit

forks = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin",
                           reason="the audit forks on POSIX systems but macOS only")


def _children_faults() -> int:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt


@forks
@pytest.mark.parametrize("load", [load_helm, load_helm_lite])
def test_audit_in_two_processes_writes_the_same_report_as_in_one(load, tmp_path):
    """HELM (16 scenarios, 196 missing cells: weighted τ of incomplete resamples through scipy in the child) and
    HELM Lite: every table and every file of the report (CSV, Markdown, HTML, PNG) byte for byte."""
    one = audit(load(), tmp_path / "one", n_boot=400, progress=False, n_jobs=1)
    before = _children_faults()
    two = audit(load(), tmp_path / "two", n_boot=400, progress=False, n_jobs=2)
    assert _children_faults() > before  # a child process ran (and was waited for)
    for name in ("scores", "reliability", "scenarios", "efficiency_scenarios", "clones", "removals"):
        pd.testing.assert_frame_equal(getattr(one, name), getattr(two, name), check_exact=True)
    assert list(one.reliability.objective) == ["kendall", "weighted_tau", "best_model", "model_quality"]
    assert one.recommendations == two.recommendations and one.notes == two.notes
    files = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "two").iterdir())
    assert {"report.md", "report.html", "rank_intervals.png", "efficiency_scenarios.png"} <= set(files)
    for f in files:
        assert (tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes(), f


@forks
def test_audit_by_default_forks_only_a_large_resampling(monkeypatch):
    """n_jobs=None on two cores: HELM Lite at 200 resamples (91 models x 10 scenarios: 1.8e5 cells, a fraction of a
    CPU second) in this process; the same audit is shared with a child where the bar is set below its size, and an
    explicit n_jobs=2 shares it whatever the size."""
    from effstats.reliability import _report

    started = []

    def spied(fn, fork=True):
        started.append(fork)
        return _Forked(fn, fork)

    monkeypatch.setattr(_report, "_Forked", spied)
    monkeypatch.setattr(_report, "_cpus", lambda: 2)
    one = audit(load_helm_lite(), n_boot=200, progress=False)
    monkeypatch.setattr(_report, "_FORK_CELLS", 200 * 91 * 10)
    two = audit(load_helm_lite(), n_boot=200, progress=False)
    monkeypatch.setattr(_report, "_FORK_CELLS", 200 * 91 * 10 + 1)
    three = audit(load_helm_lite(), n_boot=200, progress=False, n_jobs=2)
    assert started == [False, True, True]
    pd.testing.assert_frame_equal(one.reliability, two.reliability, check_exact=True)
    pd.testing.assert_frame_equal(one.reliability, three.reliability, check_exact=True)


def test_audit_n_jobs_is_checked():
    with pytest.raises(ValueError, match="n_jobs"):
        audit(load_helm_lite(), n_boot=50, progress=False, n_jobs=0)


@forks
def test_forked_result_comes_from_the_child():
    here = os.getpid()
    with _Forked(os.getpid) as pending:
        pid = pending()
    assert pid != here
    with _Forked(os.getpid, fork=False) as pending:
        assert pending() == here


@forks
def test_a_child_that_fails_or_warns_is_not_trusted():
    """An exception, a warning shown or a killed child: the work runs again here, with what it raises and warns."""
    here = os.getpid()

    def fails_there():
        if os.getpid() != here:
            raise ZeroDivisionError
        return "here"

    def killed_there():
        if os.getpid() != here:
            os.kill(os.getpid(), signal.SIGKILL)
        return "here"

    for fn in (fails_there, killed_there):
        with _Forked(fn) as pending:
            assert pending() == "here"

    def warns():
        warnings.warn(f"from {os.getpid()}", UserWarning)
        return os.getpid()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _Forked(warns) as pending:
            assert pending() == here
    assert [str(w.message) for w in caught] == [f"from {here}"]  # the child's own warning is not passed on

    with warnings.catch_warnings():  # a warning the caller's filters hide does not count
        warnings.simplefilter("ignore")
        with _Forked(warns) as pending:
            assert pending() != here

    with pytest.raises(ValueError, match="bad"):
        with _Forked(lambda: int("bad")) as pending:
            pending()


@forks
def test_leaving_the_block_ends_a_running_child():
    t = time.perf_counter()
    with pytest.raises(KeyError):
        with _Forked(lambda: time.sleep(60)) as pending:
            pid = pending.pid
            raise KeyError  # the caller's own work fails before asking for the result
    assert time.perf_counter() - t < 30
    with pytest.raises(ChildProcessError):  # killed and waited for: no process left behind
        os.waitpid(pid, os.WNOHANG)


def _ended(pid: int) -> bool:
    """The process ``pid`` is gone or a zombie (left to whichever process adopted it to wait for)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@forks
def test_a_ctrl_c_during_the_fork_ends_the_child(monkeypatch):
    real, pids = os.fork, []

    def fork():
        pid = real()
        if pid:  # Ctrl-C pressed during the fork: pending while SIGINT is blocked, raised as it is unblocked
            pids.append(pid)
            os.kill(os.getpid(), signal.SIGINT)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    try:
        with pytest.raises(KeyboardInterrupt):
            with _Forked(lambda: time.sleep(60)):
                pass
        with pytest.raises(ChildProcessError):  # killed and waited for by _Forked itself
            os.waitpid(pids[0], os.WNOHANG)
    finally:
        with contextlib.suppress(OSError):
            os.kill(pids[0], signal.SIGKILL)
            os.waitpid(pids[0], 0)


@forks
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel ends the child with its parent on Linux")
def test_a_child_ends_with_its_parent_killed():
    code = ("import time; from effstats._shared import _Forked\n"
            "with _Forked(lambda: time.sleep(60)) as pending:\n"
            "    print(pending.pid, flush=True); time.sleep(60)")
    parent = subprocess.Popen(_child_python(code), stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    try:
        parent.terminate()  # SIGTERM: no Python code of the parent's runs
        parent.wait(30)
        t = time.perf_counter()
        while not _ended(child) and time.perf_counter() - t < 10:
            time.sleep(0.05)
        assert _ended(child)
    finally:
        parent.kill()
        parent.stdout.close()
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)


@forks
def test_a_large_result_comes_back_whole():
    """More than a pipe's buffer: the child writes while the caller reads."""
    with _Forked(lambda: np.arange(3_000_000, dtype=float)) as pending:
        np.testing.assert_array_equal(pending(), np.arange(3_000_000, dtype=float))


def test_main_with_arguments_leaves_the_callers_garbage_collector_alone(tmp_path):
    """Only the command's own process (main() reading sys.argv) skips the collection at exit."""
    import gc

    from effstats.cli import main

    table = tmp_path / "board.csv"
    table.write_text("model,A,B,C\nx,0.9,0.8,0.7\ny,0.5,0.6,0.4\nz,0.1,0.3,0.2\n")
    gc.unfreeze()  # what the suite's collection left alive is frozen (conftest.py): from none, a freeze shows
    frozen = gc.get_freeze_count()
    assert main(["audit", str(table), "--out", str(tmp_path / "report"), "--n-boot", "20", "--no-progress"]) == 0
    assert gc.get_freeze_count() == frozen
    assert (tmp_path / "report" / "report.md").is_file()


@forks
def test_no_child_to_be_had_computes_here(monkeypatch):
    """fork() failing (no memory or process left for a child): the work runs in this process, no descriptor leaks."""
    import errno

    def no_fork():
        raise OSError(errno.ENOMEM, "Cannot allocate memory")

    monkeypatch.setattr(os, "fork", no_fork)
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    with _Forked(os.getpid) as pending:
        assert pending.pid is None
        assert pending() == os.getpid()
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before
