"""Low-level helpers on item orders and "ones then zeros" thresholds, shared by :mod:`effstats.metrics` and
:mod:`effstats.sortsearch` (this module imports neither, so neither imports the other's private names).

* :func:`check_order` — validate a permutation of item positions;
* :func:`padded_prefix` / :func:`dp_rows` / :func:`dp_rows_and_errors` — DP-search (Theorem 3.1 of Prabhu,
  Udandarao et al.) on rows already in sorted order, by one prefix sum.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import check_array

__all__ = ["check_order", "padded_prefix", "dp_rows", "dp_packed", "dp_rows_and_errors"]


def check_order(order: Any, n: int, name: str = "order") -> np.ndarray:
    """``order`` as an int64 permutation of ``0..n-1``; ValueError naming ``name`` otherwise."""
    o = check_array(order, name, ndim=1, dtype=None, shape=(n,))
    if not np.issubdtype(o.dtype, np.integer):
        raise ValueError(f"{name}: expected integer positions (a permutation of 0..{n - 1}), got dtype {o.dtype}")
    seen = np.zeros(n, bool)
    ok = (o >= 0) & (o < n)
    if not ok.all():
        raise ValueError(f"{name}: expected a permutation of 0..{n - 1}; found out-of-range values such as "
                         f"{o[~ok][:5].tolist()}")
    seen[o] = True
    if not seen.all():
        raise ValueError(f"{name}: expected a permutation of 0..{n - 1}; positions "
                         f"{np.flatnonzero(~seen)[:5].tolist()} are missing "
                         "(some values repeat)")
    return o.astype(np.int64, copy=False)


def _prefix_dtype(n: int) -> type:
    return np.int16 if n < 2**15 else np.int32 if n < 2**31 else np.int64


def _pm1(r: np.ndarray) -> np.ndarray:
    """+1 / -1 int8 from bool by arithmetic on an int8 view (no temporary of the chosen values, as np.where makes)."""
    r = np.ascontiguousarray(r, dtype=bool)
    return r.view(np.int8) * np.int8(2) - np.int8(1)


def padded_prefix(b: np.ndarray) -> np.ndarray:
    """``C(k) = Σ_{j<k} (2 b_j − 1)`` for k = 0..n, shape (rows, n + 1), of sorted bool rows ``b`` (rows, n).

    Threshold k errs on ``ones − C(k)`` items, so the DP-search threshold is the first arg-max of C, with
    C(0) = 0 (predict all wrong) competing with C(1..n).
    """
    n = b.shape[1]
    dt = _prefix_dtype(n)
    c = np.empty((b.shape[0], n + 1), dt)  # the cumsum fills every column but the first: zero only that one
    c[:, 0] = 0
    np.cumsum(_pm1(b), axis=1, dtype=dt, out=c[:, 1:])
    return c


def _byte_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per byte value (bits first-to-last from the most significant, as ``np.packbits``): the sum of its eight ±1
    steps, the largest of its eight partial sums and the first position (0..7) where it is reached."""
    bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.int16) * 2 - 1
    part = np.cumsum(bits, axis=1)
    return part[:, -1].copy(), part.max(axis=1), part.argmax(axis=1).astype(np.int64)


_BYTE_SUM, _BYTE_MAX, _BYTE_ARG = _byte_tables()


def dp_rows(r: np.ndarray) -> np.ndarray:
    """DP-search thresholds for bool rows already in sorted order, shape (k, n) -> (k,) int64.

    The first arg-max of ``C(0..n)`` (:func:`padded_prefix`) without the (k, n) prefix sum, whose row-wise cumsum
    is most of a search: the rows are bit-packed, each byte's sum, best partial sum and its position are looked up
    (256-entry tables), and only the byte sums are cumulated (n / 8 per row). Equal to
    ``padded_prefix(r).argmax(axis=1)``, ties included (first maximum; ``C(0) = 0`` wins ties, i.e. k = 0).
    """
    r = np.ascontiguousarray(r, dtype=bool)
    return dp_packed(np.packbits(r, axis=1), r.shape[1])


def dp_packed(p: np.ndarray, n: int) -> np.ndarray:
    """:func:`dp_rows` on rows already packed by ``np.packbits(r, axis=1)`` (rows, ceil(n / 8)) uint8; the padding
    bits of a last partial byte only lower its later partial sums, so they never win."""
    rows = p.shape[0]
    if n == 0:
        return np.zeros(rows, np.int64)
    dt = _prefix_dtype(n)
    before = np.empty(p.shape, dt)  # C at the start of each byte
    before[:, 0] = 0
    np.cumsum(_BYTE_SUM[p[:, :-1]], axis=1, dtype=dt, out=before[:, 1:])
    best = before + _BYTE_MAX[p]  # the best C inside each byte
    j = best.argmax(axis=1)
    top = best[np.arange(rows), j]
    k = 8 * j + _BYTE_ARG[p[np.arange(rows), j]] + 1
    return np.where(top > 0, k, 0).astype(np.int64)


def dp_rows_and_errors(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DP-search thresholds (rows,) of sorted bool rows ``b`` and the Hamming error of each, int64."""
    c = padded_prefix(b)
    k = c.argmax(axis=1)
    return k.astype(np.int64), b.sum(axis=1, dtype=np.int64) - c[np.arange(b.shape[0]), k]
