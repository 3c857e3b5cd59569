"""Bit-packed binary matrices: 8 cells a byte, summed by rows or columns in chunks.

A 6,000 × 1,700,000 correctness matrix is 10^10 cells: 10 GB as bool, ~1.3 GB packed.
Rows are packed along the item axis (``numpy.packbits(axis=1)``), so a row sum is a popcount and a
column sum unpacks one block of columns at a time.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

import numpy as np

from ._validation import check_array, check_binary, check_positive_int

__all__ = ["PackedBinaryMatrix"]

# popcount of every byte value
_POPCOUNT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(1).astype(np.uint8)

_LANES = np.uint64(0x0101010101010101)


def _lane_col_sums(packed: np.ndarray, n_cols: int, n_threads: int | None = None) -> np.ndarray:
    """Column sums of a packed matrix without unpacking to one byte a cell.

    Rows are read as little-endian uint64 words (64 columns). ``(w >> s) & 0x0101..01`` keeps bit ``s`` of every
    byte in its own 8-bit lane, so summing up to 255 rows in uint64 counts 8 columns per word at once
    (no lane can overflow). Row chunks run on threads: numpy releases the GIL in these ufuncs.
    """
    n_rows, nb = packed.shape
    nw = (nb + 7) // 8
    chunk = 255
    starts = list(range(0, n_rows, chunk))
    # never more threads than row chunks (a huge n_threads would only fail to start threads)
    n_threads = min(len(starts), n_threads or os.cpu_count() or 1)

    def work(idx: list[int]) -> np.ndarray:
        counts = np.zeros((nw * 8, 8), np.int64)  # (byte, bit from the least significant)
        buf = np.zeros((chunk, nw * 8), np.uint8)
        tmp = np.empty((chunk, nw), np.uint64)
        acc = np.empty(nw, np.uint64)
        for s in idx:
            e = min(n_rows, s + chunk)
            r = e - s
            buf[:r, :nb] = packed[s:e]
            words = buf[:r].view("<u8")
            for bit in range(8):
                t = tmp[:r]
                np.right_shift(words, np.uint64(bit), out=t)
                np.bitwise_and(t, _LANES, out=t)
                np.sum(t, axis=0, out=acc)
                counts[:, bit] += acc.astype("<u8").view(np.uint8)
        return counts

    groups = [starts[i::n_threads] for i in range(n_threads)]
    if n_threads == 1:
        parts = [work(starts)]
    else:
        with ThreadPoolExecutor(n_threads) as ex:
            parts = list(ex.map(work, groups))
    counts = np.sum(parts, axis=0)
    # packbits is big-endian: column 8*byte + j is bit 7 - j
    return counts[:, ::-1].reshape(-1)[:n_cols]


def _positions(sel: Any, n: int, name: str, allow_mask: bool = False) -> np.ndarray:
    """Integer positions in [0, n) from a 1-D sequence (negative positions count from the end, as in numpy)."""
    try:
        arr = np.asarray(sel)
    except ValueError:
        raise ValueError(f"{name}: expected a 1-D array of positions, got a ragged sequence") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array of positions, got shape {arr.shape}")
    if arr.dtype == bool:
        if not allow_mask:
            raise ValueError(f"{name}: expected integer positions, got booleans")
        if arr.shape != (n,):
            raise ValueError(f"{name}: a boolean mask must have length {n}, got {arr.size}")
        return np.flatnonzero(arr)
    if arr.size == 0:
        return np.zeros(0, np.intp)
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name}: expected integer positions, got dtype {arr.dtype}")
    if arr.min() < -n or arr.max() >= n:
        raise ValueError(f"{name}: positions must be in [0, {n - 1}] (or [-{n}, -1] from the end), got range [{arr.min()}, {arr.max()}]")
    return arr % n


class PackedBinaryMatrix:
    """Binary matrix of shape (n_rows, n_cols) stored as ``uint8`` of shape (n_rows, ceil(n_cols / 8)).

    Parameters
    ----------
    packed : uint8 array of shape (n_rows, ceil(n_cols / 8))
        ``numpy.packbits(dense, axis=1)`` (big-endian bit order).
    n_cols : int
        Number of logical columns.
    """

    def __init__(self, packed: np.ndarray, n_cols: int) -> None:
        try:
            packed = np.asarray(packed)
        except ValueError:
            raise ValueError("packed: expected a 2-D uint8 array, got a ragged sequence") from None
        if packed.dtype != np.uint8 or packed.ndim != 2:
            raise ValueError(f"packed: expected a 2-D uint8 array, got {packed.dtype} with shape {packed.shape}")
        n_cols = check_positive_int(n_cols, "n_cols")
        if packed.shape[1] != (n_cols + 7) // 8:
            raise ValueError(f"n_cols: {n_cols} columns need {(n_cols + 7) // 8} bytes a row, packed has {packed.shape[1]}")
        pad = 8 * packed.shape[1] - n_cols
        if pad and packed.size and (packed[:, -1] & np.uint8((1 << pad) - 1)).any():
            # row sums count whole bytes: set padding bits would be counted as correct answers
            raise ValueError(f"packed: the {pad} padding bits after column {n_cols} must be 0 (numpy.packbits pads with zeros)")
        self.packed = packed
        self.n_cols = n_cols

    @classmethod
    def from_dense(cls, dense: np.ndarray) -> "PackedBinaryMatrix":
        arr = check_binary(dense, "dense", ndim=2)
        return cls(np.packbits(arr, axis=1), arr.shape[1])

    @classmethod
    def from_row_blocks(
        cls, n_rows: int, n_cols: int, make_block: Callable[[int, int], np.ndarray], block_rows: int = 256
    ) -> "PackedBinaryMatrix":
        """Build without materialising the dense matrix: ``make_block(start, stop)`` returns bool rows start..stop."""
        n_rows = check_positive_int(n_rows, "n_rows")
        n_cols = check_positive_int(n_cols, "n_cols")
        block_rows = check_positive_int(block_rows, "block_rows")
        if not callable(make_block):
            raise ValueError(f"make_block: expected a callable (start, stop) -> bool rows, got {type(make_block).__name__}")
        out = np.empty((n_rows, (n_cols + 7) // 8), np.uint8)
        for s in range(0, n_rows, block_rows):
            e = min(n_rows, s + block_rows)
            # checked as 0/1: a 2 or a NaN must not be packed as a 1
            blk = check_binary(make_block(s, e), "make_block")
            if blk.shape != (e - s, n_cols):
                raise ValueError(f"make_block: expected shape {(e - s, n_cols)} for rows {s}:{e} (n_rows={n_rows}, n_cols={n_cols}), got {blk.shape}")
            out[s:e] = np.packbits(blk, axis=1)
        return cls(out, n_cols)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.packed.shape[0], self.n_cols)

    @property
    def nbytes(self) -> int:
        return self.packed.nbytes

    def __repr__(self) -> str:
        return f"PackedBinaryMatrix({self.shape[0]} × {self.shape[1]}, {self.nbytes / 2**20:.1f} MiB)"

    def to_dense(self) -> np.ndarray:
        # unpackbits yields 0/1 bytes: viewing them as bool avoids a second full-size copy
        return np.unpackbits(self.packed, axis=1, count=self.n_cols).view(bool)

    def row_blocks(self, block_rows: int = 1024) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (start, dense bool rows) blocks."""
        block_rows = check_positive_int(block_rows, "block_rows")
        for s in range(0, self.shape[0], block_rows):
            yield s, np.unpackbits(self.packed[s : s + block_rows], axis=1, count=self.n_cols).view(bool)

    def row_sums(self, block_rows: int = 4096) -> np.ndarray:
        """Number of ones per row, shape (n_rows,) — a byte popcount, no unpacking."""
        block_rows = check_positive_int(block_rows, "block_rows")
        out = np.empty(self.shape[0], np.int64)
        for s in range(0, self.shape[0], block_rows):
            out[s : s + block_rows] = _POPCOUNT[self.packed[s : s + block_rows]].sum(1, dtype=np.int64)
        return out

    def col_sums(self, block_bytes: int = 4096, weights: np.ndarray | None = None, n_threads: int | None = None) -> np.ndarray:
        """Number of ones per column (or the ``weights``-weighted sum over rows), shape (n_cols,).

        Unweighted sums count on the packed words (8 columns per uint64 lane, row chunks on threads);
        weighted sums unpack ``8 * block_bytes`` columns at a time, so peak extra memory is about
        ``n_rows * 8 * block_bytes`` bytes.
        """
        block_bytes = check_positive_int(block_bytes, "block_bytes")
        if n_threads is not None:
            n_threads = check_positive_int(n_threads, "n_threads")
        if weights is None:
            return _lane_col_sums(self.packed, self.n_cols, n_threads)
        n_rows = self.shape[0]
        w = check_array(weights, "weights", shape=(n_rows,))
        out = np.zeros(self.packed.shape[1] * 8, np.float64)
        for b in range(0, self.packed.shape[1], block_bytes):
            blk = np.unpackbits(self.packed[:, b : b + block_bytes], axis=1)
            out[8 * b : 8 * b + blk.shape[1]] = w @ blk
        return out[: self.n_cols]

    def take_columns(self, cols: np.ndarray) -> np.ndarray:
        """Dense bool array (n_rows, len(cols)) of the selected columns (positions in [0, n_cols))."""
        cols = _positions(cols, self.n_cols, "cols")
        byte, bit = np.divmod(cols, 8)
        return ((self.packed[:, byte] >> (7 - bit).astype(np.uint8)) & 1).astype(bool)

    def take_rows(self, rows: np.ndarray) -> "PackedBinaryMatrix":
        """A packed matrix of the selected rows (positions in [0, n_rows) or a boolean mask of length n_rows)."""
        rows = _positions(rows, self.shape[0], "rows", allow_mask=True)
        if rows.size == 0:
            raise ValueError("rows: the selection is empty")
        return PackedBinaryMatrix(self.packed[rows], self.n_cols)

    def permute_columns(self, order: np.ndarray, block_rows: int = 256) -> "PackedBinaryMatrix":
        """A new packed matrix with columns in ``order`` (row blocks at a time)."""
        block_rows = check_positive_int(block_rows, "block_rows")
        from ._ordering import check_order  # a repeated, negative or out-of-range column would silently duplicate data

        order = check_order(order, self.n_cols)
        return PackedBinaryMatrix.from_row_blocks(
            self.shape[0], self.n_cols, lambda s, e: np.unpackbits(self.packed[s:e], axis=1, count=self.n_cols)[:, order], block_rows
        )
