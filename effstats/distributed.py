"""Beyond one machine: the heavy paths of effstats on Dask.

Three kinds of work outgrow one box at lifelong scale, and each maps onto Dask without new algorithms:

* **Sort & Search on a chunked correctness cache.** :func:`save_packed` writes a bit-packed models × items
  matrix to a zarr store in row chunks (1 bit a cell: 6,000 models × 1.7M items is 1.2 GiB); :func:`open_packed`
  reads it back as a lazy bool Dask array that unpacks one chunk at a time. Every Sort & Search function already
  accepts Dask arrays (item sums are reduced chunk by chunk, DP-search runs on row blocks), so
  ``SortSearch().fit(open_packed(path))`` sorts a cache that never sits in memory whole, on whatever scheduler is
  active: a ``dask.distributed`` cluster if a ``Client`` exists, threads otherwise. :func:`packed_item_sums` is the
  fast path for the sort itself: it counts on the packed bytes (bit-sliced counters) without unpacking.
* **Bootstrap DIoR** (:func:`dior`) and **sequential simulations** (:func:`simulate`) split their resamples /
  runs into tasks, each with its own child of one ``numpy.random.SeedSequence``. The result does not depend on
  where the tasks run: a cluster gives exactly what the same tasks give in memory (``client=None`` and no active
  cluster runs them on threads; :func:`task_seeds` lists the seeds so that anyone can re-run one task alone).

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
from .bitpack import PackedBinaryMatrix, _packed_col_sums

__all__ = ["save_packed", "open_packed", "packed_item_sums", "task_seeds", "map_tasks", "dior", "simulate"]

_FORMAT = "effstats.packed-binary.v1"


def save_packed(matrix: Any, path: str | Path, *, rows_per_chunk: int = 1024, overwrite: bool = False) -> Path:
    """Write a binary models × items matrix to a zarr store, bit-packed, in chunks of ``rows_per_chunk`` rows.

    Parameters
    ----------
    matrix : PackedBinaryMatrix or bool array (n_rows, n_cols)
    path : str or Path
        Directory of the zarr store.
    rows_per_chunk : int, default=1024
    overwrite : bool, default=False
        Refuse to replace an existing store unless True.

    Returns
    -------
    Path of the store.
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
        from .exceptions import InputTypeError

        raise InputTypeError(f"path: expected a folder path (str or Path), got {path!r}")
    return Path(path)


def _open_bytes(path: str | Path):
    import dask.array as da
    import zarr

    path = _check_path(path)
    if not path.exists():
        raise ValueError(f"path: {path} does not exist")
    z = zarr.open(str(path), mode="r")
    if getattr(z, "attrs", {}).get("format") != _FORMAT:
        raise ValueError(f"path: {path} is not a packed binary matrix written by effstats.distributed.save_packed")
    return da.from_zarr(z), int(z.attrs["n_cols"])


def open_packed(path: str | Path):
    """The matrix written by :func:`save_packed` as a lazy bool Dask array (n_rows, n_cols), one chunk per row block.

    Chunks are unpacked only when a computation needs them, so a cache larger than memory can be sorted and
    searched: pass the array to :class:`effstats.sortsearch.SortSearch` or any Sort & Search function.
    """
    raw, n_cols = _open_bytes(path)
    return raw.map_blocks(lambda b: np.unpackbits(b, axis=1, count=n_cols).view(bool),
                          dtype=bool, chunks=(raw.chunks[0], (n_cols,)))


def packed_item_sums(path: str | Path) -> np.ndarray:
    """Number of ones per column of a stored packed matrix, counted on the packed bytes chunk by chunk.

    Returns
    -------
    int64 array (n_cols,), equal to ``item_sums(open_packed(path))`` but without unpacking.
    """
    import dask.array as da

    raw, n_cols = _open_bytes(path)
    parts = raw.map_blocks(lambda b: _packed_col_sums(b, n_cols, 1)[None, :], dtype=np.int64,
                           chunks=((1,) * raw.numblocks[0], (n_cols,)))
    return np.asarray(da.sum(parts, axis=0).compute(), dtype=np.int64)


def task_seeds(rng: Any, n_tasks: int) -> list[np.random.SeedSequence]:
    """One child ``SeedSequence`` per task, spawned from ``rng`` (an int, a SeedSequence or None)."""
    n_tasks = check_positive_int(n_tasks, "n_tasks")
    if isinstance(rng, np.random.Generator):
        raise ValueError("rng: expected an int seed, a SeedSequence or None (a Generator cannot be split reproducibly)")
    if rng is not None and not isinstance(rng, (int, np.integer, np.random.SeedSequence)) or isinstance(rng, bool) \
            or isinstance(rng, (int, np.integer)) and rng < 0:
        raise ValueError(f"rng: expected a non-negative int seed, a SeedSequence or None, got {rng!r}")
    ss = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(rng)
    return ss.spawn(n_tasks)


def map_tasks(func: Callable[..., Any], args: list[tuple], shared: Any = None, *, client: Any = None) -> list:
    """Run ``func(shared, *a)`` for each ``a`` in ``args`` as Dask tasks and return the results in order.

    ``shared`` (the data set) enters the graph once and reaches each worker once. With ``client`` the tasks run on
    that ``dask.distributed`` cluster; otherwise on the active scheduler (a cluster if a ``Client`` exists).
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
    """:func:`effstats.reliability.dior` with its bootstrap split into ``n_tasks`` Dask tasks.

    The plan (benchmark, original scores, top pairs) is built once here by
    :func:`effstats.reliability.dior_plan` and shipped once to each worker; task ``i`` draws and scores ``n_i``
    resamples with ``default_rng(task_seeds(rng, n_tasks)[i])``; the distributions are pooled in task order and
    :meth:`DIoRPlan.result` computes DIoR, its interval and standard error from the pooled one. With one task
    the result equals ``reliability.dior(..., rng=default_rng(task_seeds(rng, 1)[0]))``.

    Parameters
    ----------
    data, decision, objective, **kwargs
        As :func:`effstats.reliability.dior` (``size``, ``score``, ``ci``, ``n_top``, ``ties``, column names).
    n_boot : int, default=1000
    rng : int, SeedSequence or None
    n_tasks : int, default=8
    client : dask.distributed.Client, optional
        Run there; by default on the active scheduler.

    Returns
    -------
    DIoRResult with ``n_boot`` instantiations in all.
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
    """:meth:`SequentialEvaluator.simulate` with its runs split into ``n_tasks`` Dask tasks.

    Task ``i`` simulates ``n_i`` runs with ``rng=default_rng(task_seeds(rng, n_tasks)[i])``; the per-run arrays
    are concatenated in task order.

    Returns
    -------
    SimulationResult with ``n_runs`` runs.
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
