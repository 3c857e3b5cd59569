"""The anchor k-means of the anchor-point methods (``effstats._items._weighted_anchors``) and the child process that
runs it beside TinyBenchmarks' IRT fits (``effstats._items._AnchorProcess``).

The module imports numpy alone (scikit-learn and threadpoolctl inside the functions that use them): the child
imports it and no other part of effstats, so its start costs numpy's and scikit-learn's imports only, not pandas'
(which ``effstats._items`` needs for its group codes).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np


def _anchors_of(X: np.ndarray, k: int, seed: int, n_init: int) -> tuple[np.ndarray, np.ndarray]:
    """The anchors (sorted, distinct) and the summed shares of ``effstats._items._weighted_anchors``, for a drawn
    seed."""
    from sklearn.metrics import pairwise_distances_argmin

    U, first, w = _distinct_rows(X)
    km = _weighted_kmeans(U, w, min(k, len(U)), seed, n_init)
    # one OpenMP thread, as in the k-means: with several, the nearest-item search can break ties differently from
    # run to run on a loaded machine
    with _one_openmp_thread():
        anchors = first[pairwise_distances_argmin(km.cluster_centers_, U)]
    shares = np.bincount(km.labels_, weights=w, minlength=km.n_clusters) / w.sum()
    uniq, where = np.unique(anchors, return_inverse=True)
    return uniq, np.bincount(where, weights=shares)


def _exit_with_parent(parent: int) -> None:
    """End this process once its parent process ``parent`` is gone: on Linux the kernel kills it (PR_SET_PDEATHSIG;
    the parent's thread that started it waits for its result), elsewhere too a thread that looks every 0.2 s
    whether its parent id changed (the orphan is adopted) ends it."""
    import ctypes
    import signal
    import threading
    import time

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no prctl: not Linux
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)
    threading.Thread(target=watch, daemon=True).start()


def _anchor_worker() -> None:
    """The child process of ``effstats._items._AnchorProcess``: reads its task on standard input, writes the result."""
    import io
    import json
    import sys

    task = json.loads(sys.stdin.buffer.read())
    _exit_with_parent(task["parent"])
    with open(task["fd"], "rb") as f:
        for run in task["runs"]:  # the runs' arrays one after another in the file
            X = np.load(f)
            anchors, shares = _anchors_of(X, run["k"], run["seed"], run["n_init"])
            answer = io.BytesIO()
            np.save(answer, anchors)
            np.save(answer, shares)
            # each answer its length first: the caller reads one while the next is made
            sys.stdout.buffer.write(len(answer.getvalue()).to_bytes(8, "little") + answer.getvalue())
            sys.stdout.buffer.flush()


#: Elkan iterations of each anchor k-means run. On 80,000 simulated correctness vectors over 90 models the runs take
#: 155-260 iterations to converge; at 30 their inertia is 0.1 % above, and the anchors' estimates (weighted,
#: p-IRT, gp-IRT) over 10 model splits of ImageNet and of simulated data differ from the converged runs' by less
#: than two runs from other k-means++ starts do (``benchmarks/README.md``). Fewer are not used: at 15, 10 or 5,
#: 10 anchor seeds on ImageNet do not bound the rise of TinyBenchmarks' weighted-estimate error within its
#: Monte-Carlo noise (a paired non-inferiority test), and at 10 the validation's anchor draws choose another IRT
#: dimension (``benchmarks/tinybenchmarks_kmeans_noise.py``).
_KMEANS_ITER = 30


#: The bits of the float 1.0 (those of 0.0 are all zero; -0.0 has others, and stays distinct from 0.0).
_ONE = np.array(1.0).view(np.uint64)


def _distinct_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct rows of X (in the order of their bytes as floats), the first row of X holding each (as floats),
    and their counts (as floats, the k-means weights). X holds floats, or booleans, which stand for their 0/1
    floats (correctness vectors: an eighth of the memory, and of the bytes a child process reads)."""
    B = X if X.dtype == bool else None
    if B is None:
        X = np.ascontiguousarray(X, dtype=float)
        bits = X.view(np.uint64)
        if X.shape[1] and ((bits == 0) | (bits == _ONE)).all():
            B = bits.astype(bool)
    if B is not None:
        # 0/1 rows compared as packed bits: the bytes of 0.0 and 1.0 first differ in a byte where 1.0's is the
        # larger, as a set bit is the larger in its packed byte, so the packed rows (element 0 in the high bit)
        # sort as the rows of floats do, in a sort that compares 1/64 of the bytes
        packed = np.ascontiguousarray(np.packbits(B, axis=1))
        rows = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    else:
        rows = X.view(np.dtype((np.void, X.dtype.itemsize * X.shape[1]))).ravel()
    _, first, counts = np.unique(rows, return_index=True, return_counts=True)
    return np.asarray(X[first], dtype=float), first, counts.astype(float)


def _float_digest(X: np.ndarray) -> str:
    """The hex SHA-1 of X's bytes as a C-ordered float array: of booleans (0/1 rows) converted a block of rows at a
    time, the same digest as of their floats, without their floats' whole copy."""
    import hashlib

    if X.dtype != bool:
        return hashlib.sha1(np.ascontiguousarray(X, dtype=float)).hexdigest()
    h = hashlib.sha1()
    step = max(1, (1 << 18) // max(1, X.shape[1]))  # blocks of 2 MB of floats, reused by the allocator
    for i in range(0, len(X), step):
        h.update(np.ascontiguousarray(X[i:i + step], dtype=float))
    return h.hexdigest()


def _weighted_kmeans(U: np.ndarray, w: np.ndarray, k: int, seed: int, n_init: int) -> Any:
    """The fitted scikit-learn ``KMeans`` of the rows U weighted by w with the lowest inertia over ``n_init`` runs
    from weighted k-means++ starts (drawn in turn from one ``RandomState(seed)``, so the first run does not depend
    on ``n_init``), each stopped after at most ``_KMEANS_ITER`` iterations. Elkan's algorithm gives Lloyd's
    iterations with fewer distance computations."""
    from sklearn.cluster import KMeans

    starts = np.random.RandomState(seed)
    best = None
    # one OpenMP thread: with several, scikit-learn's k-means can give other clusters from run to run on a loaded
    # machine for a fixed seed
    with _one_openmp_thread():
        for _ in range(n_init):
            km = KMeans(k, init=_kmeans_plusplus(U, w, k, starts), n_init=1, algorithm="elkan",
                        max_iter=_KMEANS_ITER).fit(U, sample_weight=w)
            if best is None or km.inertia_ < best.inertia_:
                best = km
    return best


_CONTROLLER: list = []  # threadpoolctl's controller of this process's thread pools, made at the first k-means


def _one_openmp_thread() -> Any:
    """A context in which the OpenMP runtime runs one thread (``threadpool_limits(limits=1, user_api="openmp")``).

    ``threadpool_limits`` walks every shared library of the process at each call to find the thread pools (about
    2 ms; twice an anchor k-means, hundreds of k-means a protocol); the controller that finds them is made once, after
    scikit-learn's k-means and nearest-centre search have loaded the OpenMP runtime they use, and limits that runtime
    at each call. A process whose controller holds no OpenMP runtime looks again."""
    from threadpoolctl import ThreadpoolController

    import sklearn.cluster  # noqa: F401  (loads scikit-learn's OpenMP runtime before the controller looks)
    import sklearn.metrics  # noqa: F401

    if not _CONTROLLER or not _CONTROLLER[0].select(user_api="openmp").lib_controllers:
        _CONTROLLER[:] = [ThreadpoolController()]
    return _CONTROLLER[0].limit(limits=1, user_api="openmp")


def _kmeans_plusplus(U: np.ndarray, w: np.ndarray, k: int, rs: np.random.RandomState) -> np.ndarray:
    """k-means++ starts (Arthur & Vassilvitskii 2007, with scikit-learn's 2 + log k greedy trials per centre) for the
    rows U weighted by w: each centre is drawn with probability proportional to w × squared distance to the nearest
    centre so far, as k-means++ on the rows repeated w times."""
    sq = np.einsum("ij,ij->i", U, U)
    # 0/1 rows (correctness vectors): every dot product is a count of common ones, which float32 holds exactly
    # (up to 2**24), so the products are taken in float32, half the bytes read per centre, with the same distances
    V = U.astype(np.float32) if U.size and ((U == 0) | (U == 1)).all() else U

    def dist2(C: np.ndarray) -> np.ndarray:
        G = np.asarray(C.astype(V.dtype) @ V.T, dtype=float)
        G *= -2.0  # in place, in the order of sq - 2 C Uᵀ + |C|²: the same roundings without the temporaries
        G += sq[None, :]
        G += np.einsum("ij,ij->i", C, C)[:, None]
        return np.maximum(G, 0.0, out=G)

    trials = 2 + int(np.log(k))
    centres = np.empty((k, U.shape[1]))
    centres[0] = U[np.searchsorted(np.cumsum(w), rs.uniform() * w.sum(), side="right").clip(max=len(w) - 1)]
    closest = dist2(centres[:1])[0]
    for c in range(1, k):
        pot = np.cumsum(w * closest)
        cand = np.searchsorted(pot, rs.uniform(size=trials) * pot[-1], side="right").clip(max=len(w) - 1)
        d = np.minimum(closest, dist2(U[cand]))
        best = int(np.argmin(d @ w))
        closest = d[best]
        centres[c] = U[cand[best]]
    return centres
