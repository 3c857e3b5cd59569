"""Beyond one machine: the heavy paths of effstats on Dask.

Three kinds of work outgrow one box at lifelong scale, and each maps onto Dask without new algorithms:

* **Sort & Search on a chunked correctness cache.** :func:`effstats.distributed.save_packed` writes a bit-packed
  models × items matrix to a zarr store in row chunks (1 bit a cell: 6,000 models × 1.7M items is 1.2 GiB);
  :func:`effstats.distributed.open_packed` reads it back as a lazy bool Dask array that unpacks one chunk at a time.
  Every Sort & Search function already accepts Dask arrays (item sums are reduced chunk by chunk, DP-search runs on
  row blocks), so ``SortSearch().fit(open_packed(path))`` sorts a cache that never sits in memory whole, on whatever
  scheduler is active: a ``dask.distributed`` cluster if a ``Client`` exists, threads otherwise.
  :func:`effstats.distributed.packed_item_sums` is the fast path for the sort itself: it counts on the packed bytes
  (bit-sliced counters) without unpacking.
* **Bootstrap DIoR** (:func:`effstats.distributed.dior`) and **sequential simulations**
  (:func:`effstats.distributed.simulate`) split their resamples / runs into tasks, each with its own child of one
  ``numpy.random.SeedSequence``. The result does not depend on where the tasks run: a cluster gives exactly what the
  same tasks give in memory (``client=None`` and no active cluster runs them on threads;
  :func:`effstats.distributed.task_seeds` lists the seeds so that anyone can re-run one task alone).

Memory per worker is bounded by one chunk: ``rows_per_chunk × n_items`` bytes when a chunk is unpacked
(1,024 × 1.7M ≈ 1.7 GB; use smaller chunks on small workers), or the data set itself for DIoR and simulations
(a leaderboard or one benchmark's scores, shipped to each worker once).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ._validation import check_binary, check_flag, check_positive_int
from .bitpack import PackedBinaryMatrix

__all__ = ["save_packed", "open_packed", "packed_item_sums", "task_seeds", "map_tasks", "dior", "simulate"]

_FORMAT = "effstats.packed-binary.v1"


def save_packed(matrix: Any, path: str | Path, *, rows_per_chunk: int = 1024, overwrite: bool = False) -> Path:
    """Write a binary models × items matrix to a zarr store, bit-packed, in chunks of rows.

    Parameters
    ----------
    matrix : PackedBinaryMatrix or array-like of bool of shape (n_rows, n_cols)
    path : str or Path
        Directory of the zarr store.
    rows_per_chunk : int, default=1024
        Rows per chunk; a worker unpacks one chunk at a time (``rows_per_chunk * n_cols`` bytes).
    overwrite : bool, default=False
        Replace an existing store; without it an existing ``path`` is refused.

    Returns
    -------
    Path
        The store.

    See Also
    --------
    effstats.distributed.open_packed : read it back as a Dask array.
    effstats.distributed.packed_item_sums : item sums without unpacking.

    Examples
    --------
    >>> import os, tempfile
    >>> from effstats import distributed
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(6, 20, rng=0)  # 6 models, 20 items
    >>> path = distributed.save_packed(rm.values, os.path.join(tempfile.mkdtemp(), "cache.zarr"), rows_per_chunk=4)
    >>> path.name
    'cache.zarr'
    """
    import zarr

    if not isinstance(matrix, PackedBinaryMatrix):
        matrix = PackedBinaryMatrix.from_dense(check_binary(matrix, "matrix", ndim=2))
    packed = matrix
    rows_per_chunk = check_positive_int(rows_per_chunk, "rows_per_chunk")
    overwrite = check_flag(overwrite, "overwrite")
    path = _check_path(path)
    if path.exists() and not overwrite:
        raise ValueError(f"path: {path} exists; pass overwrite=True to replace it")
    z = zarr.open(str(path), mode="w", shape=packed.packed.shape, dtype="u1",
                  chunks=(min(rows_per_chunk, packed.shape[0]), packed.packed.shape[1]))
    z[:] = packed.packed
    z.attrs.update(format=_FORMAT, n_cols=int(packed.n_cols))
    return path


def _check_path(path: Any) -> Path:
    if not isinstance(path, (str, Path)) or not str(path):
        from ._plain_exceptions import InputTypeError

        raise InputTypeError(f"path: expected a folder path (str or Path), got {path!r}")
    return Path(path)


def _open_bytes(path: str | Path):
    import dask.array as da
    import zarr

    path = _check_path(path)
    if not path.exists():
        raise ValueError(f"path: {path} does not exist")
    not_ours = f"path: {path} is not a packed binary matrix written by effstats.distributed.save_packed"
    try:
        z = zarr.open_array(str(path), mode="r")
    except (FileNotFoundError, ValueError, KeyError, TypeError):  # zarr 3: FileNotFoundError; zarr 2: ValueError
        raise ValueError(not_ours) from None
    if z.attrs.get("format") != _FORMAT:
        raise ValueError(not_ours)
    return da.from_zarr(z), int(z.attrs["n_cols"])


def open_packed(path: str | Path):
    """The matrix written by :func:`effstats.distributed.save_packed` as a lazy bool Dask array.

    Chunks (one per block of rows) are unpacked only when a computation needs them, so a cache larger than memory
    can be sorted and searched: pass the array to :class:`effstats.sortsearch.SortSearch` or any Sort & Search
    function.

    Parameters
    ----------
    path : str or Path
        A store written by :func:`effstats.distributed.save_packed`.

    Returns
    -------
    dask.array.Array of bool of shape (n_rows, n_cols)

    Raises
    ------
    ValueError
        If ``path`` does not exist or is not such a store.

    See Also
    --------
    effstats.distributed.save_packed : writes the store.
    effstats.sortsearch.SortSearch : sorts and searches it.

    Examples
    --------
    >>> import os, tempfile
    >>> from effstats import distributed
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(6, 20, rng=0)  # 6 models, 20 items
    >>> path = distributed.save_packed(rm.values, os.path.join(tempfile.mkdtemp(), "cache.zarr"), rows_per_chunk=4)
    >>> x = distributed.open_packed(path)
    >>> x.shape, x.numblocks
    ((6, 20), (2, 1))
    >>> bool((x.compute() == rm.values).all())
    True
    """
    raw, n_cols = _open_bytes(path)
    return raw.map_blocks(lambda b: np.unpackbits(b, axis=1, count=n_cols).view(bool),
                          dtype=bool, chunks=(raw.chunks[0], (n_cols,)))


def packed_item_sums(path: str | Path) -> np.ndarray:
    """Number of ones per column of a stored packed matrix, counted on the packed bytes chunk by chunk.

    Parameters
    ----------
    path : str or Path
        A store written by :func:`effstats.distributed.save_packed`.

    Returns
    -------
    ndarray of int64 of shape (n_cols,)
        Equal to ``effstats.sortsearch.item_sums(open_packed(path))``, without unpacking.

    See Also
    --------
    effstats.distributed.save_packed : writes the store.
    effstats.sortsearch.item_sums : the same counts on an in-memory matrix.

    Examples
    --------
    >>> import os, tempfile
    >>> from effstats import distributed
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(6, 20, rng=0)  # 6 models, 20 items
    >>> path = distributed.save_packed(rm.values, os.path.join(tempfile.mkdtemp(), "cache.zarr"), rows_per_chunk=4)
    >>> sums = distributed.packed_item_sums(path)
    >>> bool((sums == rm.values.sum(axis=0)).all())
    True
    """
    import dask.array as da

    raw, n_cols = _open_bytes(path)
    parts = raw.map_blocks(lambda b: PackedBinaryMatrix(b, n_cols).col_sums(n_threads=1)[None, :], dtype=np.int64,
                           chunks=((1,) * raw.numblocks[0], (n_cols,)))
    return np.asarray(da.sum(parts, axis=0).compute(), dtype=np.int64)


def task_seeds(rng: Any, n_tasks: int) -> list[np.random.SeedSequence]:
    """One child :class:`numpy.random.SeedSequence` per task, spawned from ``rng``.

    Task ``i`` uses ``numpy.random.default_rng(task_seeds(rng, n_tasks)[i])``, so a result does not depend on
    where the tasks run, and any task can be re-run alone.

    Parameters
    ----------
    rng : int, SeedSequence or None
        A non-negative seed, a SeedSequence, or None for fresh entropy. A Generator is refused (it cannot be
        split reproducibly).
    n_tasks : int

    Returns
    -------
    list of SeedSequence of length ``n_tasks``

    See Also
    --------
    effstats.distributed.map_tasks : runs the tasks.

    Examples
    --------
    >>> from effstats.distributed import task_seeds
    >>> seeds = task_seeds(0, 3)
    >>> [s.spawn_key for s in seeds]
    [(0,), (1,), (2,)]
    """
    n_tasks = check_positive_int(n_tasks, "n_tasks")
    if isinstance(rng, np.random.Generator):
        raise ValueError("rng: expected an int seed, a SeedSequence or None (a Generator cannot be split reproducibly)")
    if rng is not None and not isinstance(rng, (int, np.integer, np.random.SeedSequence)) or isinstance(rng, bool) \
            or isinstance(rng, (int, np.integer)) and rng < 0:
        raise ValueError(f"rng: expected a non-negative int seed, a SeedSequence or None, got {rng!r}")
    ss = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(rng)
    return ss.spawn(n_tasks)


def map_tasks(func: Callable[..., Any], args: list[tuple], shared: Any = None, *, client: Any = None) -> list:
    """Run ``func(shared, *a)`` for each ``a`` in ``args`` as Dask tasks; return the results in order.

    ``shared`` (the data set) enters the task graph once and reaches each worker once.

    Parameters
    ----------
    func : callable
        ``func(shared, *a)``.
    args : list of tuple
        One argument tuple per task.
    shared : object, default=None
        Data every task reads.
    client : dask.distributed.Client, default=None
        Run on that cluster; by default on the active scheduler (a cluster if a ``Client`` exists, threads
        otherwise).

    Returns
    -------
    list
        ``[func(shared, *a) for a in args]``.

    See Also
    --------
    effstats.distributed.task_seeds : one seed per task.
    effstats.distributed.dior, effstats.distributed.simulate : built on it.

    Examples
    --------
    >>> from effstats.distributed import map_tasks
    >>> map_tasks(lambda shared, k: shared * k, [(1,), (2,), (3,)], shared=10)
    [10, 20, 30]
    """
    import dask

    if not callable(func):
        raise ValueError(f"func: expected a callable, got {func!r}")
    if not isinstance(args, (list, tuple)) or not all(isinstance(a, tuple) for a in args):
        raise ValueError(f"args: expected a list of argument tuples, got {args!r}")
    data = dask.delayed(shared, pure=True)
    tasks = [dask.delayed(func, pure=True)(data, *a) for a in args]
    if client is not None:
        return client.gather(client.compute(tasks))
    return list(dask.compute(*tasks))


def _splits(total: int, n_tasks: int) -> list[int]:
    return [len(s) for s in np.array_split(np.arange(total), n_tasks) if len(s)]


def _dior_task(plan: Any, n: int, seed: np.random.SeedSequence):
    # draws and scores n resamples in the plan's own batch size (bounded memory on the worker)
    rng = np.random.default_rng(seed)
    parts = [plan.statistic(plan.draw(min(plan.chunk_size, n - s), rng)) for s in range(0, n, plan.chunk_size)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts], axis=0)


def dior(data: Any, decision: str = "scenarios", objective: str = "kendall", *, n_boot: int = 1000, rng: Any = None,
         n_tasks: int = 8, client: Any = None, **kwargs: Any):
    """:func:`effstats.reliability.dior` with its bootstrap split into Dask tasks.

    The plan (benchmark, original scores, top pairs) is built once by :func:`effstats.reliability.dior_plan` and
    shipped once to each worker; task ``i`` draws and scores its share of the resamples with
    ``default_rng(task_seeds(rng, n_tasks)[i])``; the distributions are pooled in task order and the plan computes
    DIoR, its interval and standard error from the pooled one. With one task the result equals
    ``reliability.dior(..., rng=default_rng(task_seeds(rng, 1)[0]))``.

    Parameters
    ----------
    data, decision, objective, **kwargs
        As :func:`effstats.reliability.dior` (``size``, ``score``, ``ci``, ``n_top``, ``ties``, column names).
    n_boot : int, default=1000
        Resamples in all.
    rng : int, SeedSequence or None, default=None
        Seed of :func:`effstats.distributed.task_seeds`.
    n_tasks : int, default=8
        Tasks (at most ``n_boot``).
    client : dask.distributed.Client, default=None
        Run there; by default on the active scheduler.

    Returns
    -------
    DIoRResult
        With ``n_boot`` resamples in all.

    See Also
    --------
    effstats.reliability.dior : the same in one process.

    References
    ----------
    Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N., Shmueli-Scheuer, M. and
    Choshen, L. (2024). Efficient Benchmarking (of Language Models). *Proceedings of NAACL 2024*,
    arXiv:2308.11696.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from effstats import distributed
    >>> rng = np.random.default_rng(0)
    >>> board = pd.DataFrame(0.3 * rng.random((8, 6)) + np.linspace(0.6, 0.2, 8)[:, None],
    ...                      index=[f"m{i}" for i in range(8)], columns=[f"s{j}" for j in range(6)])
    >>> result = distributed.dior(board, n_boot=40, rng=0, n_tasks=2)
    >>> 0 < result.dior < result.statistic <= 1
    True
    """
    from .reliability import dior_plan

    n_boot = check_positive_int(n_boot, "n_boot")
    seeds = task_seeds(rng, min(check_positive_int(n_tasks, "n_tasks"), n_boot))
    plan = dior_plan(data, decision, objective, **kwargs)
    parts = map_tasks(_dior_task, list(zip(_splits(n_boot, len(seeds)), seeds)), plan, client=client)
    return plan.result(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts], axis=0))


def _simulate_task(arms: tuple, evaluator: Any, n_runs: int, seed: np.random.SeedSequence, kwargs: dict):
    return evaluator.simulate(*arms, n_runs=n_runs, rng=np.random.default_rng(seed), **kwargs)


def simulate(evaluator: Any, scores_a: Any, scores_b: Any = None, *, n_runs: int = 1000, rng: Any = None,
             n_tasks: int = 8, client: Any = None, **kwargs: Any):
    """:meth:`effstats.sequential.SequentialEvaluator.simulate` with its runs split into Dask tasks.

    Task ``i`` simulates its share of the runs with ``rng=default_rng(task_seeds(rng, n_tasks)[i])``; the per-run
    arrays are concatenated in task order.

    Parameters
    ----------
    evaluator : SequentialEvaluator
    scores_a, scores_b, **kwargs
        As :meth:`effstats.sequential.SequentialEvaluator.simulate` (``paired``, ``groups``, ...).
    n_runs : int, default=1000
        Runs in all.
    rng : int, SeedSequence or None, default=None
        Seed of :func:`effstats.distributed.task_seeds`.
    n_tasks : int, default=8
        Tasks (at most ``n_runs``).
    client : dask.distributed.Client, default=None
        Run there; by default on the active scheduler.

    Returns
    -------
    SimulationResult
        With ``n_runs`` runs.

    See Also
    --------
    effstats.sequential.SequentialEvaluator.simulate : the same in one process.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats import distributed
    >>> from effstats.sequential import Precision, SequentialEvaluator
    >>> a = np.random.default_rng(0).random(2000) < 0.7  # one model's correctness on 2,000 items
    >>> sim = distributed.simulate(SequentialEvaluator([Precision(0.03)]), a, n_runs=20, rng=0, n_tasks=2)
    >>> len(sim.n)
    20
    """
    n_runs = check_positive_int(n_runs, "n_runs")
    if not callable(getattr(evaluator, "simulate", None)):
        raise ValueError(f"evaluator: expected a SequentialEvaluator (an object with simulate()), got {evaluator!r}")
    seeds = task_seeds(rng, min(check_positive_int(n_tasks, "n_tasks"), n_runs))
    parts = map_tasks(_simulate_task, [(evaluator, n, s, kwargs) for n, s in zip(_splits(n_runs, len(seeds)), seeds)],
                      (scores_a, scores_b), client=client)
    return _concat_runs(parts)


def _concat_runs(parts: list):
    first = parts[0]
    if len(parts) == 1:
        return first
    out = {}
    for f in dataclasses.fields(first):
        vals = [getattr(p, f.name) for p in parts]
        if isinstance(vals[0], np.ndarray) and vals[0].ndim >= 1:
            out[f.name] = np.concatenate(vals)
        else:
            if any(not np.array_equal(v, vals[0]) for v in vals[1:]):
                raise RuntimeError(f"simulate: tasks disagree on {f.name!r}")  # same design in every task
            out[f.name] = vals[0]
    return type(first)(**out)
