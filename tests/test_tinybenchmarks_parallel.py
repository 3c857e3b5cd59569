"""The joint IRT fit shares its passes over the items among worker processes (``n_jobs``): the fit must be the one
of a single process, exactly (each block of items is computed by the same code, and the blocks' sums are added up
in the same order), for IRT2PL and for TinyBenchmarks' estimates."""
import errno
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pytest

import effstats._items as items
import effstats._shared as shared
import effstats.irt._jml_blocks as jml_blocks
from effstats.datasets.simulate import simulate_responses
from effstats._shared import _scratch_dir
from effstats.exceptions import ConvergenceWarning
from effstats.irt import IRT2PL, TinyBenchmarks


@pytest.fixture
def processes_for_small_fits(monkeypatch):
    # the workers and the k-means process start from 2M cells; the test matrices are smaller
    monkeypatch.setattr(jml_blocks, "_PROCESS_CELLS", 0)
    monkeypatch.setattr(items, "_PROCESS_SIZE", 0)


@pytest.fixture
def workers(monkeypatch):
    """The _Workers of the fits run in the test."""
    started = []
    real = jml_blocks._Workers.__init__

    def spy(self, *args):
        started.append(self)
        real(self, *args)
    monkeypatch.setattr(jml_blocks._Workers, "__init__", spy)
    return started


@pytest.mark.filterwarnings("ignore:responses:UserWarning")
@pytest.mark.filterwarnings("ignore::effstats.exceptions.ConvergenceWarning")  # max_iter=40: a short fit suffices
@pytest.mark.parametrize("d, miss, dtype", [(2, 0.0, np.float32), (3, 0.1, np.float64), (5, 0.0, np.float64)])
def test_worker_processes_give_the_single_process_fit(processes_for_small_fits, workers, d, miss, dtype):
    Y = simulate_responses(40, 10_000, n_dims=min(d, 3), rng=d).values.astype(float)  # 7 blocks of items
    if miss:
        Y[np.random.default_rng(d).random(Y.shape) < miss] = np.nan
    fits = {}
    for n_jobs in (1, 2, 3):
        irt = IRT2PL(d, method="jml", tol=1e-5, max_iter=40, n_jobs=n_jobs)
        irt._sweep_dtype = dtype
        fits[n_jobs] = irt.fit(Y)
    assert fits[1].n_iter_ > 20
    for n_jobs in (2, 3):
        assert fits[n_jobs].n_iter_ == fits[1].n_iter_
        np.testing.assert_array_equal(fits[n_jobs].loss_curve_, fits[1].loss_curve_)
        for name in ("a_", "b_", "theta_"):
            np.testing.assert_array_equal(getattr(fits[n_jobs], name), getattr(fits[1], name))
    assert [len(w.ranges) for w in workers] == [2, 3]  # the caller's blocks and one range per worker
    assert all(w.file.closed for w in workers)  # the shared file (without a name) is closed


@pytest.mark.parametrize("dtype, weighted", [(np.float32, False), (np.float64, True)])
def test_a_pass_over_boolean_answers_is_the_pass_over_their_floats(dtype, weighted):
    # the passes read Y as booleans (a quarter of float32's bytes): every item step and sum is the one over the
    # answers as floats of the sweep dtype, bit for bit
    m, n, d = 30, 5000, 3  # 3 blocks of items
    rng = np.random.default_rng(7)
    Y = simulate_responses(m, n, n_dims=2, rng=3).values.astype(float)
    W = (rng.random((m, n)) > 0.1).astype(float) if weighted else None
    Y = Y if W is None else Y * W
    th, a, b = rng.normal(size=(m, d)), 0.5 * rng.normal(size=(n, d)), rng.normal(size=n)
    nb = len(jml_blocks._item_blocks(m, n))
    passes = []
    for y_dtype in ("|b1", np.dtype(dtype).str):
        layout = jml_blocks._Pass.layout(m, n, d, nb, dtype, weighted)
        layout["Y"] = ((m, n), y_dtype)
        fill = {"Y": Y, "a": a.copy(), "b": b.copy(), **({} if W is None else {"W": W})}
        passes.append(jml_blocks._InProcess(layout, fill, 3.0, 3.0))
    assert [w.pass_.Y.dtype for w in passes] == [np.bool_, dtype]
    X = np.hstack([th, -np.ones((m, 1))])
    for newton in (False, True, True):
        for work in passes:
            work.pass_.X[...] = X
            work.pass_.XX[...] = (X[:, :, None] * X[:, None, :]).reshape(m, (d + 1) ** 2)
            work.run(newton)
        for name in ("a", "b", "nll", "g", "h"):
            np.testing.assert_array_equal(getattr(passes[0].pass_, name), getattr(passes[1].pass_, name))


@pytest.mark.filterwarnings("ignore:source_outputs:UserWarning")
@pytest.mark.filterwarnings("ignore:responses:UserWarning")
@pytest.mark.parametrize("miss", [0.0, 0.1])
def test_tinybenchmarks_estimates_do_not_depend_on_n_jobs(processes_for_small_fits, workers, monkeypatch, miss):
    kmeans = []
    monkeypatch.setattr(items._AnchorProcess, "result", lambda self, f=items._AnchorProcess.result: kmeans.append(
        self.proc is not None) or f(self))
    here = []  # the k-means runs made in this process
    monkeypatch.setattr(items, "_anchors_of", lambda *a, f=items._anchors_of: here.append(a[1]) or f(*a))
    Y = simulate_responses(45, 8_000, n_dims=2, rng=3).values.astype(float)  # the final fit: 6 blocks
    if miss:
        Y[np.random.default_rng(4).random(Y.shape) < miss] = np.nan
    out, made = {}, {}
    for n_jobs in (1, 2):
        TinyBenchmarks._fit_cache.clear()  # each run fits its own IRT models and k-means
        items._ANCHORS.clear()
        out[n_jobs] = TinyBenchmarks(30, dims_grid=(2, 3), n_jobs=n_jobs, random_state=0).fit(Y[:37])
        made[n_jobs], here[:] = list(here), []
    seq, par = out[1], out[2]
    assert seq.validation_errors_ == par.validation_errors_ and len(seq.validation_errors_) == 2
    assert seq.n_dims_ == par.n_dims_ and seq.lambda_ == par.lambda_
    assert kmeans == [True] and len(workers) == 1  # the k-means in its process, the final fit with a worker
    # the validation's five draws and the final selection: in this process with one job, in the k-means process
    # (the draws first, beside the validation fits) with two
    assert made == {1: [30] * 6, 2: []}
    np.testing.assert_array_equal(seq.selected_, par.selected_)
    np.testing.assert_array_equal(seq.weights_, par.weights_)
    for name in ("a_", "b_", "theta_"):
        np.testing.assert_array_equal(getattr(seq.irt_, name), getattr(par.irt_, name))
    tgt = np.nan_to_num(Y[37:], nan=0.0)
    a, b = seq.predict_all(tgt[:, seq.selected_]), par.predict_all(tgt[:, par.selected_])
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])


def test_fits_warn_for_each_unconverged_dimension():
    Y = simulate_responses(30, 200, rng=5).values.astype(bool)
    TinyBenchmarks._fit_cache.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        TinyBenchmarks(20, dims_grid=(2, 3), irt_params={"max_iter": 2}, n_jobs=2, random_state=0).fit(Y)
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert any("2-dimensional IRT fit used for validation" in m for m in msgs)
    assert any("3-dimensional IRT fit used for validation" in m for m in msgs)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_n_jobs_names_the_argument(bad):
    Y = simulate_responses(20, 60, rng=0).values.astype(bool)
    with pytest.raises(ValueError, match="n_jobs"):
        TinyBenchmarks(10, n_jobs=bad).fit(Y)
    with pytest.raises(ValueError, match="n_jobs"):
        IRT2PL(2, n_jobs=bad).fit(Y)


def test_workers_start_where_they_pay(workers):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        IRT2PL(2, method="jml", n_jobs=2, max_iter=3).fit(simulate_responses(40, 500, rng=0).values)  # 20,000 cells
        assert workers == []
        IRT2PL(2, method="jml", n_jobs=2, max_iter=3).fit(simulate_responses(40, 60_000, rng=0).values)
    assert len(workers) == 1 and len(workers[0].procs) == 0  # one worker beside the calling process, stopped


def test_without_a_worker_the_caller_takes_every_block(processes_for_small_fits, workers, monkeypatch):
    Y = simulate_responses(40, 10_000, rng=1).values
    want = IRT2PL(2, method="jml", tol=1e-4, n_jobs=1).fit(Y)

    def no_python(*args, **kwargs):
        raise OSError("no Python at sys.executable")
    monkeypatch.setattr(jml_blocks.subprocess, "Popen", no_python)
    got = IRT2PL(2, method="jml", tol=1e-4, n_jobs=2).fit(Y)
    assert len(workers) == 1 and workers[0].ranges == [(0, 7)] and workers[0].procs == []
    np.testing.assert_array_equal(got.theta_, want.theta_)
    np.testing.assert_array_equal(got.a_, want.a_)


def test_scratch_files_go_to_memory_only_where_it_has_room():
    with pytest.raises(OSError, match="no room"):
        _scratch_dir(1 << 60)  # more than any /dev/shm or disk
    assert _scratch_dir(1) in (tempfile.gettempdir(), "/dev/shm")


@functools.lru_cache(maxsize=None)
def _one_job_fit() -> TinyBenchmarks:
    """The n_jobs=1 fit that each fit run alone below must give, made once for the tests of the group "alone" (one
    process holds them): a single process's fit takes no worker, scratch file or k-means process, whatever they
    find."""
    Y = simulate_responses(45, 8_000, n_dims=2, rng=3).values.astype(float)
    TinyBenchmarks._fit_cache.clear()
    items._ANCHORS.clear()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "source_outputs", UserWarning)
        return TinyBenchmarks(30, dims_grid=(2,), n_jobs=1, random_state=0).fit(Y[:37])


def _fits_alone_as_with_one_job(workers, monkeypatch):
    """TinyBenchmarks and IRT2PL with n_jobs=2 give the n_jobs=1 fits, in this process (no worker, no k-means
    process)."""
    out = {1: _one_job_fit()}
    kmeans = []
    monkeypatch.setattr(items._AnchorProcess, "result", lambda self, f=items._AnchorProcess.result: kmeans.append(
        self.proc is not None) or f(self))
    Y = simulate_responses(45, 8_000, n_dims=2, rng=3).values.astype(float)
    TinyBenchmarks._fit_cache.clear()
    items._ANCHORS.clear()
    out[2] = TinyBenchmarks(30, dims_grid=(2,), n_jobs=2, random_state=0).fit(Y[:37])
    assert kmeans == [False] and not any(hasattr(w, "file") for w in workers)
    np.testing.assert_array_equal(out[1].selected_, out[2].selected_)
    np.testing.assert_array_equal(out[1].weights_, out[2].weights_)
    for name in ("a_", "b_", "theta_"):
        np.testing.assert_array_equal(getattr(out[1].irt_, name), getattr(out[2].irt_, name))


@pytest.mark.xdist_group("alone")
@pytest.mark.filterwarnings("ignore:source_outputs:UserWarning")
def test_without_a_writable_temporary_directory_the_fit_runs_alone(processes_for_small_fits, workers, monkeypatch,
                                                                   tmp_path):
    monkeypatch.setattr(shared, "_SHM", str(tmp_path / "no-shm"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    _fits_alone_as_with_one_job(workers, monkeypatch)


@pytest.mark.xdist_group("alone")
@pytest.mark.filterwarnings("ignore:source_outputs:UserWarning")
@pytest.mark.parametrize("short", ["free space", "allocation"])
def test_without_room_for_the_shared_file_the_fit_runs_alone(processes_for_small_fits, workers, monkeypatch, short):
    # a mapped file that outgrows its file system kills the process (SIGBUS): the room is checked, and the file's
    # blocks allocated, before anything is written through a mapping
    if short == "free space":
        monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(1 << 30, 1 << 30, 4096))
    elif hasattr(os, "posix_fallocate"):
        def full(fd, offset, length):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        monkeypatch.setattr(os, "posix_fallocate", full)
    else:
        pytest.skip("no posix_fallocate")
    _fits_alone_as_with_one_job(workers, monkeypatch)


_KILLED_FIT = """
import sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import effstats._items as items
import effstats._shared as shared
import effstats.irt._jml_blocks as jml_blocks
from effstats.irt import IRT2PL
jml_blocks._PROCESS_CELLS = 0
X = np.random.default_rng(0).random((20_000, 40))
kmeans = items._AnchorProcess(X, 500, 0, 50, lambda r: r)  # minutes of work
Y = np.random.default_rng(1).random((40, 10_000)) < 0.5
print("ready", flush=True)
while True:
    IRT2PL(2, method="jml", tol=1e-12, max_iter=50, n_jobs=2).fit(Y)
"""


def _children(pid):
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            out += [int(c) for c in f.read().split()]
    return out


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _fd_target(link):
    try:
        return os.readlink(link)
    except FileNotFoundError:  # closed since the listing
        return None


def _scratch_entries(dirs):
    return {os.path.join(d, e) for d in dirs if os.path.isdir(d) for e in os.listdir(d) if e.startswith("effstats-")}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_fit_killed_by_sigterm_leaves_no_file_and_no_process(tmp_path):
    dirs = [str(tmp_path), "/dev/shm"]
    before = _scratch_entries(dirs)
    fit = subprocess.Popen([sys.executable, "-c", _KILLED_FIT], stdout=subprocess.PIPE,
                           env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        assert fit.stdout.readline() == b"ready\n"
        seen, deadline = set(), time.monotonic() + 60
        while len(seen) < 2 and time.monotonic() < deadline:  # the k-means process and a worker
            seen.update(_children(fit.pid))
            time.sleep(0.02)
        assert len(seen) >= 2
        # the files the processes share have no name, from the start (the fits open and close theirs: looked at
        # until one is open, a descriptor closed between the listing and its reading skipped)
        scratch, deadline = [], time.monotonic() + 30
        while not scratch and time.monotonic() < deadline:
            links = [f"/proc/{fit.pid}/fd/{fd}" for fd in os.listdir(f"/proc/{fit.pid}/fd")]
            scratch = [f for f in map(_fd_target, links) if f and f.startswith(tuple(dirs))]
        assert scratch and all(f.endswith("(deleted)") for f in scratch)
        fit.send_signal(signal.SIGTERM)
        assert fit.wait(30) == -signal.SIGTERM
    finally:
        if fit.poll() is None:
            fit.kill()
            fit.wait()
    deadline = time.monotonic() + 10
    while any(map(_alive, seen)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(_alive, seen))
    assert _scratch_entries(dirs) <= before


@pytest.mark.parametrize("killed", [False, True])
def test_anchor_runs_sharing_a_process_are_the_runs_made_here(monkeypatch, killed):
    # three k-means runs in one child process, read back in order (or, the child killed at once, made here): each
    # result is the one the run gives in this process
    monkeypatch.setattr(items, "_PROCESS_SIZE", 0)
    rng = np.random.default_rng(0)
    runs = [((rng.random((400, 12)) < 0.5).astype(float), k, np.random.default_rng(s), 1)
            for k, s in ((20, 1), (35, 2), (10, 3))]
    items._ANCHORS.clear()
    started = items._started_anchor_runs([(X, k, np.random.default_rng(s), n) for (X, k, _, n), s in
                                          zip(runs, (1, 2, 3))])
    assert isinstance(started[-1], items._AnchorProcess) and started[-1].proc is not None
    if killed:
        started[-1].cancel()
    got = [h.result() for h in started]
    items._ANCHORS.clear()
    for (X, k, g, n), (anchors, shares) in zip(runs, got):
        want = items._weighted_anchors(X, k, g, n)
        np.testing.assert_array_equal(anchors, want[0])
        np.testing.assert_array_equal(shares, want[1])
    assert started[-1].proc is None  # all read: the child has ended


def test_the_anchor_process_imports_no_pandas():
    # the k-means child imports the worker's module alone (numpy, then scikit-learn for the k-means): pandas, which
    # effstats._items needs, would add about half a CPU second to its start, beside the fit's validation
    code = ("import sys; import effstats._anchor_kmeans as w; assert callable(w._anchor_worker); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pandas', 'effstats')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['effstats', 'effstats._anchor_kmeans']"


def test_the_anchor_process_imports_joblib_without_setuptools(monkeypatch):
    # joblib before 1.3 imports distutils, which setuptools' shim serves by importing setuptools and pkg_resources:
    # the child's environment takes the standard library's where there is one, and leaves a user's choice alone
    monkeypatch.setenv("SETUPTOOLS_USE_DISTUTILS", "local")
    assert items._stdlib_distutils() == {}
    monkeypatch.delenv("SETUPTOOLS_USE_DISTUTILS")
    env = {**os.environ, **items._stdlib_distutils()}
    code = "import sys, joblib; print('setuptools' in sys.modules, 'pkg_resources' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.filterwarnings("ignore:source_outputs:UserWarning")
def test_a_refit_whose_irt_fits_are_cached_keeps_its_kmeans_here(processes_for_small_fits, monkeypatch):
    # another seed on the same sources finds every IRT fit in the cache: nothing would run beside its anchor
    # k-means, so no process is started for it; its selection and estimates are those of the k-means process
    processes = []
    monkeypatch.setattr(items._AnchorProcess, "result", lambda self, f=items._AnchorProcess.result: processes.append(
        self.proc is not None) or f(self))
    Y = simulate_responses(40, 3_000, rng=6).values.astype(bool)
    tgt = Y[34:].astype(float)

    def fit(seed):
        est = TinyBenchmarks(30, "anchor-corr", "gp-irt", n_dims=1, n_jobs=2, random_state=seed).fit(Y[:34])
        return est, est.predict_all(tgt[:, est.selected_])

    TinyBenchmarks._fit_cache.clear()
    items._ANCHORS.clear()
    fit(0)
    assert processes == [True]
    here, here_pred = fit(1)
    assert processes == [True]  # the seed's k-means ran in this process
    TinyBenchmarks._fit_cache.clear()  # the IRT fits to make again: the k-means beside them, in its process
    items._ANCHORS.clear()
    there, there_pred = fit(1)
    assert processes == [True, True]
    np.testing.assert_array_equal(here.selected_, there.selected_)
    np.testing.assert_array_equal(here.weights_, there.weights_)
    assert here.lambda_ == there.lambda_
    for name in here_pred:
        np.testing.assert_array_equal(here_pred[name], there_pred[name])
