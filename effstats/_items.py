"""Item selection shared by the subset estimators: uniform and stratified random draws of items, the allocation
of a budget over groups, and the weighted anchor points (k-means over the items' distinct outputs) of the
anchor-point methods."""

from __future__ import annotations

import os
from collections import OrderedDict
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ._anchor_kmeans import (_KMEANS_ITER, _anchors_of, _distinct_rows, _float_digest,  # noqa: F401
                             _kmeans_plusplus, _weighted_kmeans)
from ._shared import _child_python, _scratch_file
from ._validation import check_positive_int, check_rng


def select_random(n_items: int, k: int, *, groups: Any = None, rng: Any = None) -> np.ndarray:
    """Draw ``k`` items uniformly at random, without replacement (stratified: equal numbers per group).

    Parameters
    ----------
    n_items : int
        Number of items to draw from (positions ``0 .. n_items - 1``).
    k : int
        Number of items drawn, ``1 <= k <= n_items``.
    groups : array-like of shape (n_items,), default=None
        Item groups (e.g. MMLU tasks); each group gets ``k // n_groups`` items, and the share a small group
        cannot fill passes to the others.
    rng : int, numpy.random.Generator or None, default=None
        Seed or generator of the draw.

    Returns
    -------
    ndarray of shape (k,)
        Item positions in the order drawn (not sorted).

    See Also
    --------
    effstats.disco.select_top_k : The ``k`` items with the highest scores; this draw is ``select_top_k`` of
        uniform random scores.
    effstats.disco.RandomDirect : The plain mean over a random subset.

    Examples
    --------
    >>> from effstats.disco import select_random
    >>> sorted(select_random(10, 3, rng=0).tolist())
    [4, 5, 9]
    >>> sorted(select_random(6, 4, groups=["a", "a", "a", "a", "b", "b"], rng=1).tolist())  # 2 items per group
    [1, 3, 4, 5]
    """
    n_items = check_positive_int(n_items, "n_items")
    u = check_rng(rng).random(n_items)
    k = check_positive_int(k, "k", maximum=n_items)
    order = np.argsort(-u, kind="stable")
    if groups is None:
        return order[:k]
    codes = _group_codes(groups, n_items)
    sizes = np.bincount(codes)
    by_group = order[np.argsort(codes[order], kind="stable")]  # by group, then by draw
    chosen = _first_per_group(by_group, codes, sizes, _allocate(sizes, k))
    return chosen[np.lexsort((chosen, -u[chosen]))]


def _group_codes(groups: Any, n_items: int) -> np.ndarray:
    """Integer codes (n_items,) of the item ``groups`` in sorted group order; ValueError for another shape or a
    missing group."""
    g = np.asarray(groups)
    if g.shape != (n_items,):
        raise ValueError(f"groups: expected shape ({n_items},), got {g.shape}")
    codes, _ = pd.factorize(pd.Series(g), sort=True)
    if (codes < 0).any():
        raise ValueError("groups: contains missing values")
    return codes


def _allocate(sizes: np.ndarray, k: int) -> np.ndarray:
    """Equal share of k per group, capped at the group size; the surplus goes to the other groups."""
    alloc = np.zeros(len(sizes), dtype=int)
    remaining = k
    while remaining > 0:
        open_ = alloc < sizes
        share = remaining // open_.sum()
        if share == 0:  # fewer items left than open groups: one more each to the first groups
            idx = np.flatnonzero(open_)[:remaining]
            alloc[idx] += 1
            break
        add = np.where(open_, np.minimum(share, sizes - alloc), 0)
        alloc += add
        remaining -= int(add.sum())
    return alloc


def _first_per_group(order: np.ndarray, codes: np.ndarray, sizes: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    """The first ``alloc[g]`` items of every group g from ``order`` (all items, sorted by group first)."""
    start = np.r_[0, np.cumsum(sizes)[:-1]]
    rank_in_group = np.arange(len(order)) - start[codes[order]]
    return order[rank_in_group < alloc[codes[order]]]


def _weighted_anchors(X: np.ndarray, k: int, rng: np.random.Generator,
                      n_init: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Anchor items of ``k`` clusters of the item embeddings X (n_items, d; floats, or booleans for their 0/1
    floats) and the share of items each represents.

    k-means (k-means++ starts, best of ``n_init`` runs by inertia) runs on the distinct rows of X weighted by their
    counts: the weighted objective equals the objective on all rows, and the weighted k-means++ draws each start in
    proportion to count × squared distance, which is the distribution of k-means++ on all rows. Benchmarks have
    many items every source model answers alike (right, or wrong): they collapse to one weighted row. Each
    centroid's anchor is an item nearest it: of the distinct rows nearest it, the first in the order of their
    bytes as floats, and of the items holding that row, the first (the lowest position in X), so an anchor is
    always an item of X. The anchors are returned sorted and distinct, with the summed share of the clusters each
    one represents (two centroids can share their nearest item).
    """
    return _started_anchors(X, k, rng, n_init, in_process=True).result()


def _started_anchors(X: np.ndarray, k: int, rng: np.random.Generator, n_init: int = 1,
                     in_process: bool = False) -> Any:
    """:func:`_weighted_anchors` started: an object whose ``result()`` returns its result (``cancel()`` stops
    it). The k-means of a large X
    runs meanwhile in a process of its own (``python`` importing this module), unless ``in_process``; the
    caller's process goes on with other work (TinyBenchmarks' IRT fits). The seed is drawn from ``rng`` now, so
    the result is the same either way (the same code with the same seed on the same rows; the process's answer
    is read back exactly); if the process cannot start or fails, the k-means runs in the caller's process."""
    return _started_anchor_runs([(X, k, rng, n_init)], in_process)[0]


def _started_anchor_runs(runs: list[tuple[np.ndarray, int, np.random.Generator, int]],
                         in_process: bool = False) -> list[Any]:
    """:func:`_started_anchors` of each ``(X, k, rng, n_init)`` of ``runs`` (each seed drawn now, in turn): where
    the last run's X is large enough for a process of its own, the runs not in the cache share that process, which
    runs them in order (the earlier ones' results can be read while the later ones run); the others run in the
    caller's process, when their result is asked for."""
    jobs, handles = [], []
    for X, k, rng, n_init in runs:
        X = X if X.dtype == bool else np.ascontiguousarray(X, dtype=float)  # booleans: their 0/1 floats
        k = int(k)  # a numpy integer (or 0-d array) n_items: the cache key must hash
        seed = int(rng.integers(2**31 - 1))
        # Estimators that cluster the same embedding with the same seed (AnchorCorr and TinyBenchmarks'
        # anchor-corr among the method chooser's candidates, on the same folds) share one k-means: the key holds
        # the digest of the floats, whether they came as floats or as booleans.
        key = (X.shape, _float_digest(X), k, seed, n_init)
        if key in _ANCHORS:
            _ANCHORS.move_to_end(key)
            handles.append(_Ready(tuple(a.copy() for a in _ANCHORS[key])))
        else:
            jobs.append((len(handles), (X, k, seed, n_init, partial(_kept, key))))
            handles.append(None)
    if not jobs:
        return handles
    X = runs[-1][0]
    if handles[-1] is not None or in_process or X.size < _PROCESS_SIZE or os.name != "posix":
        for at, task in jobs:  # the child inherits a descriptor: POSIX
            handles[at] = _Ready(task[-1](_anchors_of(*task[:-1]))) if in_process else _Later(task)
        return handles
    proc = _AnchorProcess(*jobs[-1][1], first=[task for _, task in jobs[:-1]])
    for j, (at, _) in enumerate(jobs[:-1]):
        handles[at] = _Earlier(proc, j)
    handles[-1] = proc
    return handles


def _kept(key: tuple, result: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The ``result`` of the k-means ``key`` stands for, kept in the cache; a copy returned."""
    _ANCHORS[key] = result
    if len(_ANCHORS) > 32:
        _ANCHORS.popitem(last=False)
    return tuple(a.copy() for a in result)


class _Ready:
    """A result at hand (the interface of :class:`_AnchorProcess`)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value

    def cancel(self) -> None:
        pass


class _Later:
    """A k-means run in the caller's process when its result is asked for (the interface of
    :class:`_AnchorProcess`): ``task`` is ``(X, k, seed, n_init, done)``."""

    def __init__(self, task: tuple) -> None:
        self.task, self.value = task, None

    def result(self) -> Any:
        if self.value is None:
            self.value = self.task[-1](_anchors_of(*self.task[:-1]))
        return self.value

    def cancel(self) -> None:
        pass


class _Earlier:
    """The result of the ``at``-th of the runs an :class:`_AnchorProcess` runs before its own (the interface of
    :class:`_AnchorProcess`; cancelled with it)."""

    def __init__(self, proc: "_AnchorProcess", at: int) -> None:
        self.proc, self.at = proc, at

    def result(self) -> Any:
        return self.proc.answer(self.at)

    def cancel(self) -> None:
        pass


#: Cells of the item embedding from which TinyBenchmarks runs its anchor k-means in a process of its own, beside
#: its IRT fits: the process's start (about 1 CPU second, mostly imports) is then a third of the k-means or less.
_PROCESS_SIZE = 1 << 21


def _stdlib_distutils() -> dict[str, str]:
    """The environment that gives a child Python the standard library's distutils, where it has one (Python
    < 3.12) and the user chose none: scikit-learn's k-means imports joblib, whose version before 1.3 imports
    distutils, which setuptools' shim otherwise serves by importing setuptools and pkg_resources, a fifth of the
    child's imports; the k-means does not use it."""
    import sysconfig

    if "SETUPTOOLS_USE_DISTUTILS" in os.environ or not os.path.isdir(
            os.path.join(sysconfig.get_paths()["stdlib"], "distutils")):
        return {}
    return {"SETUPTOOLS_USE_DISTUTILS": "stdlib"}


class _AnchorProcess:
    """:func:`_anchors_of` in a child process (``python -c``, which imports ``effstats._anchor_kmeans`` and no user
    code): X goes
    to it through a file without a name (in memory where the system has /dev/shm room) whose descriptor it
    inherits, the result comes back on its standard output as an ``.npy`` pair. Nothing outlives the calling
    process: the system frees the file with the last process that has it open, and the child stops when its
    parent is gone (``effstats._anchor_kmeans._exit_with_parent``).

    ``first``: runs ``(X, k, seed, n_init, done)`` the child makes before this one, in order, each answer sent as
    soon as it is made (:meth:`answer`); ``done`` is given each result, read back or made here."""

    def __init__(self, X: np.ndarray, k: int, seed: int, n_init: int, done: Any, first: Any = ()) -> None:
        import json
        import subprocess

        self.X, self.k, self.seed, self.n_init, self.done = X, k, seed, n_init, done
        self.tasks = [*first, (X, k, seed, n_init, done)]
        self.answers: list[Any] = []  # the results read back (through done), in the tasks' order
        self.proc = None
        try:
            # each .npy header: 128 bytes, or a multiple of 64 more
            with _scratch_file(sum(t[0].nbytes + 4096 for t in self.tasks)) as f:
                for t in self.tasks:
                    np.save(f, t[0])
                f.flush()
                f.seek(0)  # the child reads from the shared offset
                root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this effstats, wherever it is
                # (the worker's module imports numpy alone: the child does not pay for this module's pandas)
                code = ("sys.path.insert(0, sys.argv[2]); from effstats._anchor_kmeans import _anchor_worker; "
                        "_anchor_worker()")
                # one core: the caller's process has the others
                env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                       **_stdlib_distutils()}
                self.proc = subprocess.Popen(_child_python(code, root), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.DEVNULL, env=env, pass_fds=(f.fileno(),))
                fd = f.fileno()
            task = {"fd": fd, "parent": os.getpid(),
                    "runs": [{"k": t[1], "seed": t[2], "n_init": t[3]} for t in self.tasks]}
            self.proc.stdin.write(json.dumps(task).encode())
            self.proc.stdin.close()
        except Exception:  # no file or no process: the k-means runs in result()
            self.cancel()
            self.proc = None

    def cancel(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        return self.answer(len(self.tasks) - 1)

    def answer(self, at: int) -> tuple[np.ndarray, np.ndarray]:
        """The result of run ``at`` (this one's: the last), read back from the child, or made here where the child
        failed or is gone (a result cut short, a process ended)."""
        import io

        while len(self.answers) <= at:
            X, k, seed, n_init, done = self.tasks[len(self.answers)]
            out = None
            try:
                if self.proc is not None:
                    size = int.from_bytes(self.proc.stdout.read(8), "little")
                    answer = io.BytesIO(self.proc.stdout.read(size) if size else b"")
                    out = (np.load(answer), np.load(answer))
            except (OSError, ValueError, EOFError):  # an answer cut short: the k-means runs here
                out = None
            if out is not None and len(self.answers) == len(self.tasks) - 1 and self.proc.wait() != 0:
                out = None  # the last answer, from a child that did not end well
            if out is None or len(self.answers) == len(self.tasks) - 1:
                self.cancel()  # all read, or the child failed: the later runs are made here
                self.proc = None
            self.answers.append(done(_anchors_of(X, k, seed, n_init) if out is None else out))
        return self.answers[at]


#: Anchors and weights of recent k-means runs, keyed by (shape, data digest, k, seed, n_init); results are small.
_ANCHORS: "OrderedDict[tuple, tuple[np.ndarray, np.ndarray]]" = OrderedDict()
