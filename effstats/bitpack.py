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

from ._validation import check_array, check_binary, check_positions, check_positive_int

__all__ = ["PackedBinaryMatrix"]

# popcount of every byte value
_POPCOUNT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(1).astype(np.uint8)


def _popcount_rows(packed: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Ones per row of a bit-packed (rows, bytes) array, optionally within a packed column ``mask`` (bytes,)."""
    x = packed if mask is None else packed & mask
    if x.shape[1] % 8 or not x.flags.c_contiguous:
        return _POPCOUNT[x].sum(axis=1, dtype=np.int64)
    # whole 64-bit words: the SWAR bit count (Warren, Hacker's Delight, 5-1) does a word in a dozen operations
    w = x.view(np.uint64)
    w = w - ((w >> _U1) & _M1)
    w = (w & _M2) + ((w >> _U2) & _M2)
    w = (w + (w >> _U4)) & _M4
    return ((w * _H01) >> _U56).sum(axis=1, dtype=np.int64)


_U1, _U2, _U4, _U56 = (np.uint64(v) for v in (1, 2, 4, 56))
_M1, _M2, _M4, _H01 = (np.uint64(v) for v in (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
                                               0x0101010101010101))


def _csa(a: np.ndarray, b: np.ndarray, c: np.ndarray, hi: np.ndarray, u: np.ndarray, t: np.ndarray) -> None:
    """Carry-save adder on bit-sliced words, in place: ``a <- a ^ b ^ c`` (sum bit), ``hi <- majority(a, b, c)``."""
    np.bitwise_xor(a, b, out=u)
    np.bitwise_and(a, b, out=hi)
    np.bitwise_and(u, c, out=t)
    np.bitwise_or(hi, t, out=hi)
    np.bitwise_xor(u, c, out=a)


def _unpack_counts(words: np.ndarray) -> np.ndarray:
    """One bit-slice (nw,) uint64 -> 0/1 per column (nw * 64,), in packbits' column order."""
    return np.unpackbits(words.view(np.uint8)).astype(np.int64)


def _harley_seal_sums(packed: np.ndarray, r0: int, r1: int, nw: int) -> np.ndarray:
    """Column sums (nw * 64,) of rows ``r0:r1`` over their first ``nw`` 64-bit words.

    Every bit of a word is one column, so the words are vertical bit-sliced counters: a Harley-Seal tree of
    carry-save adders folds 16 rows into ones/twos/fours/eights slices plus one "sixteens" row (15 adders, ~5 ops a
    row, against 24 for the shift-and-mask lane count), and the sixteens ripple into a slice counter. Every numpy
    call works on one row of words (~200 KiB at 1.7M columns), which stays in cache.
    """
    aligned = packed.shape[1] == nw * 8 and packed.flags.c_contiguous and packed.ctypes.data % 8 == 0
    buf = np.empty((16, nw), np.uint64)  # rows whose length is not a whole number of words are copied in
    ones, twos, fours, eights, two_a, two_b, four_a, four_b, eight_a, eight_b, sixteens, u, t, carry, tmp = (
        np.zeros(nw, np.uint64) for _ in range(15))
    slices: list[np.ndarray] = []  # bit k counts 16 * 2**k
    r = r0
    while r + 16 <= r1:
        if aligned:
            d = packed[r : r + 16].view(np.uint64)
        else:
            buf.view(np.uint8)[:] = packed[r : r + 16, : nw * 8]
            d = buf
        for h, four in ((0, four_a), (8, four_b)):
            _csa(ones, d[h], d[h + 1], two_a, u, t)
            _csa(ones, d[h + 2], d[h + 3], two_b, u, t)
            _csa(twos, two_a, two_b, four, u, t)
        _csa(fours, four_a, four_b, eight_a, u, t)  # rows 0-3 and 8-11; each carry is consumed before reuse
        for h, four in ((4, four_a), (12, four_b)):
            _csa(ones, d[h], d[h + 1], two_a, u, t)
            _csa(ones, d[h + 2], d[h + 3], two_b, u, t)
            _csa(twos, two_a, two_b, four, u, t)
        _csa(fours, four_a, four_b, eight_b, u, t)
        _csa(eights, eight_a, eight_b, sixteens, u, t)
        np.copyto(carry, sixteens)
        k = 0
        while carry.any():  # ripple the sixteens into the slice counter
            if k == len(slices):
                slices.append(np.zeros(nw, np.uint64))
            np.bitwise_and(slices[k], carry, out=tmp)
            np.bitwise_xor(slices[k], carry, out=slices[k])
            carry, tmp = tmp, carry
            k += 1
        r += 16
    counts = _unpack_counts(ones) + 2 * _unpack_counts(twos) + 4 * _unpack_counts(fours) + 8 * _unpack_counts(eights)
    for k, s in enumerate(slices):
        counts += _unpack_counts(s) << (4 + k)
    if r < r1:  # fewer than 16 rows left
        counts += np.unpackbits(packed[r:r1, : nw * 8], axis=1).sum(0, dtype=np.int64)
    return counts


def _packed_col_sums(packed: np.ndarray, n_cols: int, n_threads: int | None = None) -> np.ndarray:
    """Column sums (n_cols,) of a packed matrix (n_rows, n_bytes) without unpacking to one byte a cell.

    The whole 64-bit words of each row go through ``_harley_seal_sums`` (row ranges on threads: numpy releases
    the GIL in these ufuncs); the last ``n_bytes % 8`` bytes of each row are unpacked.
    """
    n_rows, nb = packed.shape
    nw = nb // 8
    n_threads = max(1, min(n_threads or os.cpu_count() or 1, n_rows // 64))
    edges = np.linspace(0, n_rows, n_threads + 1).astype(int)
    edges[1:-1] -= edges[1:-1] % 16  # whole 16-row blocks per thread
    out = np.zeros(nb * 8, np.int64)
    if nw:
        if n_threads == 1:
            parts = [_harley_seal_sums(packed, 0, n_rows, nw)]
        else:
            with ThreadPoolExecutor(n_threads) as ex:
                parts = list(ex.map(lambda i: _harley_seal_sums(packed, edges[i], edges[i + 1], nw), range(n_threads)))
        out[: nw * 64] = np.sum(parts, axis=0)
    if nb > nw * 8:
        out[nw * 64 :] = np.unpackbits(packed[:, nw * 8 :], axis=1).sum(0, dtype=np.int64)
    return out[:n_cols]


class PackedBinaryMatrix:
    """Binary matrix of shape (n_rows, n_cols) stored as ``uint8`` of shape (n_rows, ceil(n_cols / 8)).

    Eight cells a byte: a 6,000 × 1,700,000 correctness matrix takes ~1.3 GB instead of 10 GB as bool. Row and
    column sums work on the packed bytes; other operations unpack blocks of rows or columns at a time.

    Parameters
    ----------
    packed : ndarray of uint8 of shape (n_rows, ceil(n_cols / 8))
        ``numpy.packbits(dense, axis=1)`` (big-endian bit order, zero padding bits).
    n_cols : int
        Number of logical columns.

    Attributes
    ----------
    packed : ndarray of uint8 of shape (n_rows, ceil(n_cols / 8))
    n_cols : int

    See Also
    --------
    effstats.ResponseMatrix.pack : packs complete binary responses.
    effstats.distributed.save_packed : stores one on disk for a cluster.
    effstats.datasets.simulate_packed_responses : simulates one block by block.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats import PackedBinaryMatrix
    >>> dense = np.array([[1, 0, 1, 1, 0, 0, 0, 0, 1], [0, 0, 0, 1, 1, 1, 0, 1, 1]], dtype=bool)
    >>> m = PackedBinaryMatrix.from_dense(dense)
    >>> m
    PackedBinaryMatrix(2 × 9, 0.0 MiB)
    >>> m.packed.shape
    (2, 2)
    >>> m.row_sums(), m.col_sums()
    (array([4, 5]), array([1, 0, 1, 2, 1, 1, 0, 1, 2]))
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
            raise ValueError(f"n_cols: {n_cols} columns need {(n_cols + 7) // 8} bytes a row, packed has "
                             f"{packed.shape[1]}")
        pad = 8 * packed.shape[1] - n_cols
        if pad and packed.size and (packed[:, -1] & np.uint8((1 << pad) - 1)).any():
            # row sums count whole bytes: set padding bits would be counted as correct answers
            raise ValueError(f"packed: the {pad} padding bits after column {n_cols} must be 0 (numpy.packbits pads "
                             "with zeros)")
        self.packed = packed
        self.n_cols = n_cols

    @classmethod
    def from_dense(cls, dense: np.ndarray) -> "PackedBinaryMatrix":
        """Pack a dense binary matrix.

        Parameters
        ----------
        dense : array-like of shape (n_rows, n_cols)
            0/1 or bool values.

        Returns
        -------
        PackedBinaryMatrix

        Examples
        --------
        >>> import numpy as np
        >>> from effstats import PackedBinaryMatrix
        >>> dense = np.array([[1, 0, 1, 1, 0, 0, 0, 0, 1], [0, 0, 0, 1, 1, 1, 0, 1, 1]], dtype=bool)
        >>> m = PackedBinaryMatrix.from_dense(dense)
        >>> np.array_equal(m.to_dense(), dense)
        True
        """
        arr = check_binary(dense, "dense", ndim=2)
        return cls(np.packbits(arr, axis=1), arr.shape[1])

    @classmethod
    def from_row_blocks(
        cls, n_rows: int, n_cols: int, make_block: Callable[[int, int], np.ndarray], block_rows: int = 256
    ) -> "PackedBinaryMatrix":
        """Build a packed matrix without materialising the dense one.

        Parameters
        ----------
        n_rows, n_cols : int
            Shape of the matrix.
        make_block : callable
            ``make_block(start, stop)`` returns the 0/1 rows ``start:stop`` as an array of shape
            (stop - start, n_cols).
        block_rows : int, default=256
            Rows requested per call; peak extra memory is about ``block_rows * n_cols`` bytes.

        Returns
        -------
        PackedBinaryMatrix

        Examples
        --------
        >>> import numpy as np
        >>> from effstats import PackedBinaryMatrix
        >>> m = PackedBinaryMatrix.from_row_blocks(
        ...     4, 10, lambda start, stop: np.arange(start * 10, stop * 10).reshape(-1, 10) % 3 == 0, block_rows=2)
        >>> m.row_sums()
        array([4, 3, 3, 4])
        """
        n_rows = check_positive_int(n_rows, "n_rows")
        n_cols = check_positive_int(n_cols, "n_cols")
        block_rows = check_positive_int(block_rows, "block_rows")
        if not callable(make_block):
            raise ValueError("make_block: expected a callable (start, stop) -> bool rows, got "
                             f"{type(make_block).__name__}")
        out = np.empty((n_rows, (n_cols + 7) // 8), np.uint8)
        for s in range(0, n_rows, block_rows):
            e = min(n_rows, s + block_rows)
            # checked as 0/1: a 2 or a NaN must not be packed as a 1
            blk = check_binary(make_block(s, e), "make_block")
            if blk.shape != (e - s, n_cols):
                raise ValueError(f"make_block: expected shape {(e - s, n_cols)} for rows {s}:{e} (n_rows={n_rows}, "
                                 f"n_cols={n_cols}), got {blk.shape}")
            out[s:e] = np.packbits(blk, axis=1)
        return cls(out, n_cols)

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_cols)``."""
        return (self.packed.shape[0], self.n_cols)

    @property
    def nbytes(self) -> int:
        """Bytes held by the packed array."""
        return self.packed.nbytes

    def __repr__(self) -> str:
        return f"PackedBinaryMatrix({self.shape[0]} × {self.shape[1]}, {self.nbytes / 2**20:.1f} MiB)"

    def to_dense(self) -> np.ndarray:
        """The dense bool matrix.

        Returns
        -------
        ndarray of bool of shape (n_rows, n_cols)
        """
        # unpackbits yields 0/1 bytes: viewing them as bool avoids a second full-size copy
        return np.unpackbits(self.packed, axis=1, count=self.n_cols).view(bool)

    def row_blocks(self, block_rows: int = 1024) -> Iterator[tuple[int, np.ndarray]]:
        """Iterate over dense blocks of rows.

        Parameters
        ----------
        block_rows : int, default=1024

        Yields
        ------
        start : int
            Position of the block's first row.
        rows : ndarray of bool of shape (block, n_cols)
        """
        block_rows = check_positive_int(block_rows, "block_rows")
        for s in range(0, self.shape[0], block_rows):
            yield s, np.unpackbits(self.packed[s : s + block_rows], axis=1, count=self.n_cols).view(bool)

    def row_sums(self, block_rows: int = 4096, columns: Any = None) -> np.ndarray:
        """Number of ones per row, counted on the packed bytes.

        Parameters
        ----------
        block_rows : int, default=4096
            Rows counted per step.
        columns : array-like of bool of shape (n_cols,), default=None
            Count only the ones in these columns (packed once, then ANDed with each row); None counts all.

        Returns
        -------
        ndarray of int64 of shape (n_rows,)

        Examples
        --------
        >>> import numpy as np
        >>> from effstats import PackedBinaryMatrix
        >>> dense = np.array([[1, 0, 1, 1, 0, 0, 0, 0, 1], [0, 0, 0, 1, 1, 1, 0, 1, 1]], dtype=bool)
        >>> m = PackedBinaryMatrix.from_dense(dense)
        >>> m.row_sums()
        array([4, 5])
        >>> m.row_sums(columns=np.arange(9) < 3)  # ones among the first three columns
        array([2, 0])
        """
        block_rows = check_positive_int(block_rows, "block_rows")
        mask = None
        if columns is not None:
            mask = np.packbits(check_binary(columns, "columns", ndim=1, shape=(self.n_cols,)))
        out = np.empty(self.shape[0], np.int64)
        for s in range(0, self.shape[0], block_rows):
            out[s : s + block_rows] = _popcount_rows(self.packed[s : s + block_rows], mask)
        return out

    def col_sums(self, block_bytes: int = 4096, weights: np.ndarray | None = None,
                 n_threads: int | None = None) -> np.ndarray:
        """Number of ones per column, or the weighted sum of the rows.

        Unweighted sums count on the packed words (bit-sliced Harley-Seal counters, row ranges on threads);
        weighted sums unpack ``8 * block_bytes`` columns at a time, so peak extra memory is about
        ``n_rows * 8 * block_bytes`` bytes.

        Parameters
        ----------
        block_bytes : int, default=4096
            Packed bytes per block of a weighted sum.
        weights : array-like of shape (n_rows,), default=None
            Row weights; None counts ones.
        n_threads : int, default=None
            Threads of the unweighted count (default: the number of CPUs).

        Returns
        -------
        ndarray of shape (n_cols,)
            int64 counts, or float64 weighted sums.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats import PackedBinaryMatrix
        >>> dense = np.array([[1, 0, 1, 1, 0, 0, 0, 0, 1], [0, 0, 0, 1, 1, 1, 0, 1, 1]], dtype=bool)
        >>> m = PackedBinaryMatrix.from_dense(dense)
        >>> m.col_sums()
        array([1, 0, 1, 2, 1, 1, 0, 1, 2])
        >>> m.col_sums(weights=[0.5, 2.0])
        array([0.5, 0. , 0.5, 2.5, 2. , 2. , 0. , 2. , 2.5])
        """
        block_bytes = check_positive_int(block_bytes, "block_bytes")
        if n_threads is not None:
            n_threads = check_positive_int(n_threads, "n_threads")
        if weights is None:
            return _packed_col_sums(self.packed, self.n_cols, n_threads)
        n_rows = self.shape[0]
        w = check_array(weights, "weights", shape=(n_rows,))
        out = np.zeros(self.packed.shape[1] * 8, np.float64)
        for b in range(0, self.packed.shape[1], block_bytes):
            blk = np.unpackbits(self.packed[:, b : b + block_bytes], axis=1)
            out[8 * b : 8 * b + blk.shape[1]] = w @ blk
        return out[: self.n_cols]

    def take_columns(self, cols: np.ndarray) -> np.ndarray:
        """Dense bool array of the selected columns.

        Parameters
        ----------
        cols : array-like of int
            Positions in [0, n_cols) (negative positions count from the end).

        Returns
        -------
        ndarray of bool of shape (n_rows, len(cols))

        Examples
        --------
        >>> import numpy as np
        >>> from effstats import PackedBinaryMatrix
        >>> dense = np.array([[1, 0, 1, 1, 0, 0, 0, 0, 1], [0, 0, 0, 1, 1, 1, 0, 1, 1]], dtype=bool)
        >>> m = PackedBinaryMatrix.from_dense(dense)
        >>> m.take_columns([0, 3])
        array([[ True,  True],
               [False,  True]])
        """
        cols = check_positions(cols, self.n_cols, "cols")
        byte, bit = np.divmod(cols, 8)
        return ((self.packed[:, byte] >> (7 - bit).astype(np.uint8)) & 1).astype(bool)

    def take_rows(self, rows: np.ndarray) -> "PackedBinaryMatrix":
        """A packed matrix of the selected rows.

        Parameters
        ----------
        rows : array-like of int or bool
            Positions in [0, n_rows) or a boolean mask of length n_rows; not empty.

        Returns
        -------
        PackedBinaryMatrix
        """
        rows = check_positions(rows, self.shape[0], "rows", allow_mask=True)
        if rows.size == 0:
            raise ValueError("rows: the selection is empty")
        return PackedBinaryMatrix(self.packed[rows], self.n_cols)

    def permute_columns(self, order: np.ndarray, block_rows: int = 256) -> "PackedBinaryMatrix":
        """A new packed matrix with its columns in ``order``.

        Parameters
        ----------
        order : array-like of int of shape (n_cols,)
            A permutation of the columns.
        block_rows : int, default=256
            Rows unpacked at a time.

        Returns
        -------
        PackedBinaryMatrix
        """
        block_rows = check_positive_int(block_rows, "block_rows")
        from ._ordering import check_order  # a repeated, negative or out-of-range column would silently duplicate data

        order = check_order(order, self.n_cols)
        return PackedBinaryMatrix.from_row_blocks(
            self.shape[0], self.n_cols,
            lambda s, e: np.unpackbits(self.packed[s:e], axis=1, count=self.n_cols)[:, order], block_rows
        )
