"""A long score file of the three columns model, item and score read straight into the matrix by
:mod:`effstats.datasets._long_scores`, in one pass or, a large uncompressed file, in ranges of lines parsed by forked
processes; the fast path of :func:`effstats.datasets.read_scores_csv`, which hands any other table to the general
reader."""
from __future__ import annotations

import contextlib
import io
import lzma
import os
import zipfile
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from .._shared import _cpus, _Forked, _is_float, _progress
from ..responses import ResponseMatrix
from ._delimited import (_LONG_CHUNK_ROWS, _compression, _Counted, _header, _refuse_nul, _TextColumns, _Watched,
                         record_line, refuse_short_rows)
from ._table_layouts import _refuse_out_of_range, refuse_score_text


_RANGE_BYTES = 2**27  # the least bytes of a long table parsed by a process of its own
_MAX_RANGES = 8  # processes parsing a long table at most: each holds its parser's buffers (~300 MB a chunk)


def _read_long(p: Path, sep: str, text: _TextColumns, score: str, progress: bool) -> ResponseMatrix | None:
    """A long table of the three columns model, item and score (in any order) read by
    :func:`~effstats.datasets._long_scores.long_matrix`, chunk by chunk into the matrix; None where the table is
    another or that reader leaves it to the general one (which also words every error).

    An uncompressed file of more than ``2 * _RANGE_BYTES`` is cut into ranges of whole lines, one a core (as many as
    the process may run on: ``taskset -c 0`` reads in one process), each parsed by a forked process of its own; the
    ranges' chunks are joined in file order, so that the matrix, its id order and the hand-over to the
    general reader are those of one pass. A range holding a NUL character, or whose parse fails, sends the file to
    the one pass, which words the error or hands over: a cut after a line end in a quoted field leaves the range
    before it ending inside the field, an error of pandas' parser (the first range starts at a record, so, range by
    range, a range that parses starts at one too). A chunk whose last column has a missing cell sends the file to
    :func:`~effstats.datasets._delimited.refuse_short_rows` once read.

    A score the general reader refuses (a text, ``nan``; scores outside [0, 1], for the range of the whole column)
    is refused here in its words once the file is read (a short row or an empty id anywhere is refused first, as the
    general reader refuses them), naming the line of the first such cell (each range knows the byte it starts at and
    counts its records), with no other parse of the file."""
    from ._long_scores import BadCell, OutOfRange

    gaps: list[bool] = []
    try:
        rm = _read_long_noting(p, sep, text, score, progress, gaps)
    except (BadCell, OutOfRange) as exc:  # worded here, without another pass over the file, unless a short row
        if exc.gap or any(gaps):  # came first (the general reader refuses it before any score)
            _refuse_short_rows(p, sep)
        line = partial(_line, p, exc.record, exc.start, sep)
        if isinstance(exc, BadCell):
            refuse_score_text(exc.text, p, score, (text.missing,), line())
        else:
            _refuse_out_of_range(exc.values, p, f"the scores in column {score!r}", score, rows=exc.models, first=line)
        return None  # not refused after all: the general reader reads the table
    if rm is not None and any(gaps):
        _refuse_short_rows(p, sep)
    return rm


def _refuse_short_rows(p: Path, sep: str) -> None:
    """:func:`~effstats.datasets._delimited.refuse_short_rows` of the table ``p``, its header and compression read
    from the file."""
    compression = _compression(p)
    refuse_short_rows(p, sep, _header(p, sep, compression), compression)


def _line(p: Path, record: int, start: int, sep: str) -> str:
    return f"line {record_line(p, record, start, sep)}"


def _read_long_noting(p: Path, sep: str, text: _TextColumns, score: str, progress: bool,
                      gaps: list[bool]) -> ResponseMatrix | None:
    """:func:`_read_long`, appending to ``gaps`` whether each read's last column has a missing cell."""
    from ._long_scores import Flagged

    model, item = text.pair
    names = (model, item, score)
    if len(sep) != 1 or _is_float(text.missing) or not all(isinstance(c, str) for c in names) or len(set(names)) < 3:
        return None  # column names that are not text: the general reader names the argument
    try:
        compression = _compression(p)
        # scores of few distinct texts (0/1) as categories: their distinct texts are read as numbers once each;
        # graded scores (about one text a row) as round-trip floats, which a category a cell would slow many times
        # over (a cell that is not a number, text or True/False, raises, and the general reader reads the table)
        kw = dict(sep=sep, keep_default_na=False, na_values={score: ["", text.missing]},
                  dtype={model: "category", item: "category", score: "category"}, low_memory=False,
                  chunksize=_LONG_CHUNK_ROWS, compression=compression)
        few = _few_scores(p, sep, score, compression)
        if few is None:
            return None
        if not few:
            try:
                return _read_long_as(p, names, {**kw, "dtype": {**kw["dtype"], score: float},
                                                "float_precision": "round_trip"}, text, progress, gaps)
            except Flagged:  # a chunk of 0/1 only, perhaps True/False: its texts are checked as categories
                gaps.clear()
        return _read_long_as(p, names, kw, text, progress, gaps)
    except _READ_ERRORS:
        return None  # read again by the general reader, whose message names what is wrong


def _read_long_as(p: Path, names: tuple[str, str, str], kw: dict, text: _TextColumns, progress: bool,
                  gaps: list[bool]) -> ResponseMatrix | None:
    """The long table ``p`` of the columns ``names`` (model, item, score) read chunk by chunk by
    ``pandas.read_csv(**kw)``, in ranges of lines (each by a forked process) where the file is large (see
    :func:`_read_long`); appends to ``gaps`` whether each read's last column has a missing cell."""
    from ._long_scores import BadCell, OutOfRange, chunk_parts, long_matrix

    def watch(reader: Any) -> _Watched:
        w = _Watched(reader)
        gaps_of.append(w)
        return w

    gaps_of: list[_Watched] = []
    sep, compression = kw["sep"], kw["compression"]
    # chunk_parts' arguments
    parse = (*names, _SeenNumbers(partial(_cell_numbers, sep=sep, missing=["", text.missing])))
    # the ranges cut and read from one descriptor: a file replaced meanwhile is read whole in the version opened
    with open(p, "rb") if compression is None else contextlib.nullcontext() as whole:
        ranges = [] if whole is None else _line_ranges(whole)
        if len(ranges) > 1:
            header = _header(p, sep)
            if sorted(header) != sorted(names):
                return None
            with contextlib.suppress(_Odd):
                try:
                    return _read_long_ranges(p, whole.fileno(), ranges, header, kw, parse, progress, gaps)
                except (BadCell, OutOfRange) as exc:  # the file read: a short row in any range came first
                    exc.gap = any(gaps)
                    raise
    _refuse_nul(p, sep, compression)
    if sorted(_header(p, sep, compression)) != sorted(names):
        return None
    try:
        if compression is not None:
            with _interrupt_kept():
                rm = long_matrix([lambda: chunk_parts(watch(pd.read_csv(p, **kw)), *parse)], *names[:2])
        else:
            with open(p, "rb") as raw, _progress(progress, total=p.stat().st_size, desc=f"reading {p.name}",
                                                 unit="B", unit_scale=True) as bar:
                with _interrupt_kept():
                    rm = long_matrix([lambda: chunk_parts(watch(pd.read_csv(_Counted(raw, bar.update), **kw)),
                                                          *parse)], *names[:2])
    except (BadCell, OutOfRange) as exc:
        exc.gap = any(w.gap for w in gaps_of)
        raise
    gaps.extend(w.gap for w in gaps_of)
    return rm


def _few_scores(p: Path, sep: str, score: str, compression: str | None, rows: int = 2**16) -> bool | None:
    """Whether the first ``rows`` rows of a long table hold few distinct score texts (at most one in 16 rows, as
    0/1 scores do), which makes the scores' categories cheaper to parse than numbers; None where one is ``True``
    or ``False``: the parser reads a chunk of such cells in a column of floats as 1 and 0, which the general reader
    does only where every cell of the column is one."""
    try:
        with _interrupt_kept():
            cells = pd.read_csv(p, sep=sep, usecols=[score], dtype=str, keep_default_na=False, nrows=rows,
                                compression=compression)[score]
    except _READ_ERRORS:
        return True  # the chunked parse words or hands over whatever is wrong
    distinct = pd.Index(cells.unique())
    if distinct.str.strip().str.lower().isin(["true", "false"]).any():
        return None
    return len(distinct) * 16 <= max(len(cells), 16)


_READ_ERRORS = (ValueError, UnicodeDecodeError, EOFError, OSError, lzma.LZMAError, zipfile.BadZipFile,
                pd.errors.ParserError, pd.errors.EmptyDataError)


def _cell_numbers(cells: pd.Index, sep: str, missing: list[str]) -> np.ndarray:
    """The numbers pandas' parser reads from the texts ``cells`` in a column of floats (round-trip precision, as
    ``float(text)`` reads them, ``missing`` as NaN); raises ValueError where a text is not a number. Each text is
    written quoted on a line of its own, so that the parser's field is the text whatever it holds."""
    if not len(cells):
        return np.empty(0)
    lines = "".join(f'"{c}"\n' for c in cells.str.replace('"', '""', regex=False))
    return pd.read_csv(io.StringIO(lines), sep=sep, header=None, names=["s"], dtype={"s": float},
                       float_precision="round_trip", keep_default_na=False, na_values={"s": missing},
                       skip_blank_lines=False)["s"].to_numpy()


class _SeenNumbers:
    """``numbers(cells)`` (:func:`_cell_numbers`) with each set of a few distinct texts parsed once per read: the
    chunks of a long table of 0/1 scores hold the same two or three texts, each a parse of its own otherwise."""

    _FEW = 64  # more distinct texts (graded scores) are seldom the same set in two chunks

    def __init__(self, numbers: Callable[[pd.Index], np.ndarray]) -> None:
        self._numbers, self._seen = numbers, {}

    def __call__(self, cells: pd.Index) -> np.ndarray:
        if len(cells) > self._FEW:
            return self._numbers(cells)
        key = tuple(cells)
        if key not in self._seen:
            self._seen[key] = self._numbers(cells)  # a text that is no number raises: nothing kept
        return self._seen[key].copy()


def _heap_kept(fn: Callable[[], Any]) -> Any:
    """``fn()`` with glibc's malloc taking large blocks from the heap and keeping them once freed: pandas' parser
    grows and shrinks buffers of hundreds of MB chunk after chunk, each a fresh mapping of the system's otherwise (a
    page fault per 4 KB touched: a third of a long file's parse). ``fn`` makes the parser: a block mapped when it is
    made stays mapped as it grows. Only for a forked process that exits after: the settings cannot be put back
    (setting them turns off glibc's dynamic mmap threshold for the rest of the process, which would make every
    large numpy temporary a fresh mapping). Elsewhere than glibc, ``fn()``."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return fn()
    # M_MMAP_MAX (-4), M_TRIM_THRESHOLD (-1); mallopt returns 1 where it took the value
    if mallopt(-4, 0):
        mallopt(-1, 2**30)
    return fn()


def _line_ranges(f: Any) -> list[tuple[int, int]]:
    """Byte ranges of whole lines (cut after a line feed) that split the file ``f`` (open for binary reading, or its
    path) into one range a usable core (at most ``_MAX_RANGES``), each of at least ``_RANGE_BYTES`` (one range: a
    smaller file, or one core)."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as opened:
            return _line_ranges(opened)
    size = os.fstat(f.fileno()).st_size
    n = min(_cpus(), _MAX_RANGES, size // _RANGE_BYTES)
    if n < 2:
        return [(0, size)]
    cuts = [0]
    for k in range(1, n):
        f.seek(max(size * k // n, cuts[-1]))
        f.readline()  # the rest of the line the cut falls in
        if f.tell() >= size:
            break
        if f.tell() > cuts[-1]:
            cuts.append(f.tell())
    return list(zip(cuts, cuts[1:] + [size]))


@contextlib.contextmanager
def _interrupt_kept() -> Any:
    """A block that raises again what the SIGINT handler raised (Ctrl-C's KeyboardInterrupt) where the block fails
    after it: pandas' C parser turns an exception raised while it calls its source's ``read`` into a ParserError,
    else taken for a table to hand to the general reader."""
    import signal

    raised: list[BaseException] = []
    old = signal.getsignal(signal.SIGINT)

    def noted(signum: int, frame: Any) -> Any:
        try:
            return old(signum, frame)
        except BaseException as exc:
            raised.append(exc)
            raise

    try:
        if not callable(old):
            raise ValueError("SIGINT ignored or default")
        signal.signal(signal.SIGINT, noted)
    except ValueError:  # not the main thread (whose handlers Python runs), or no Python handler
        yield
        return
    try:
        yield
    except Exception:
        if raised:
            raise raised[0] from None
        raise
    finally:
        signal.signal(signal.SIGINT, old)


class _Odd(Exception):
    """A range of a long file holds a NUL character or does not parse: the file is read in one pass."""


class _Range:
    """The bytes ``start`` to ``end`` of the file open as descriptor ``fd`` (shared with other processes: read at
    their offset, the descriptor's own left alone), read by pandas' parser; a NUL character (where pandas' parser
    would cut a field) ends the read and sets ``odd``."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        self._fd, self._at, self._end, self.odd = fd, start, end, False

    def read(self, size: int = -1) -> bytes:
        left = self._end - self._at
        block = os.pread(self._fd, left if size < 0 else min(size, left), self._at) if left > 0 else b""
        if b"\0" in block:
            self.odd = True
            block = b""
        self._at += len(block)
        return block

    def __iter__(self):
        return iter(self.read, b"")


def _range_parts(fd: int, start: int, end: int, kw: dict, parse: tuple, caller: int) -> Any:
    """:func:`~effstats.datasets._long_scores.chunk_parts` of the lines from byte ``start`` to ``end`` (the first
    range holds the header) and whether a chunk's last column has a missing cell, or ``_Odd`` where the range holds
    a NUL character or does not parse, or the :class:`~effstats.datasets._long_scores.BadCell` or
    :class:`~effstats.datasets._long_scores.Flagged` it raises; malloc tuned by :func:`_heap_kept` in a forked
    process (another than ``caller``'s)."""
    from ._long_scores import BadCell, Flagged, chunk_parts

    src = _Range(fd, start, end)
    reader: list[_Watched] = []

    def parse_range() -> Any:
        reader.append(_Watched(pd.read_csv(src, **kw)))
        return chunk_parts(reader[-1], *parse, start=start)
    try:
        with _interrupt_kept():
            parts = parse_range() if os.getpid() == caller else _heap_kept(parse_range)
    except _READ_ERRORS:  # returned, not raised: a forked process that raised would be run again here
        return _Odd
    except BadCell as bad:
        bad.gap = reader[-1].gap
        return _Odd if src.odd else bad
    except Flagged as flagged:
        return _Odd if src.odd else flagged
    return _Odd if src.odd else (parts, reader[-1].gap)


def _read_long_ranges(p: Path, fd: int, ranges: list[tuple[int, int]], header: list[str], kw: dict,
                      parse: tuple, progress: bool, gaps: list[bool]) -> ResponseMatrix | None:
    """The long file ``p``, open as descriptor ``fd``, read by ranges of lines (see :func:`_read_long`), each by a
    forked process; raises ``_Odd`` where a range holds a NUL character or does not parse, and the
    :class:`~effstats.datasets._long_scores.Flagged` a range raised; appends to ``gaps`` whether each range's last
    column has a missing cell."""
    from ._long_scores import BadCell, Flagged, long_matrix

    def got(value: Any) -> Any:
        if value is _Odd:
            raise _Odd
        if isinstance(value, Flagged):
            raise value
        if isinstance(value, BadCell):  # raised once the later ranges are read (see long_matrix)
            gaps.append(value.gap)
            raise value
        gaps.append(value[1])
        return value[0]

    rest = {**kw, "header": None, "names": header}  # the ranges after the first have no header
    with contextlib.ExitStack() as stack:
        bar = stack.enter_context(_progress(progress, total=p.stat().st_size, desc=f"reading {p.name}", unit="B",
                                            unit_scale=True))
        # every range in a process of its own, this one's malloc settings left alone (see _heap_kept)
        forked = [stack.enter_context(_Forked(partial(_range_parts, fd, a, b, rest if a else kw, parse, os.getpid())))
                  for a, b in ranges]

        def later(f: _Forked, size: int) -> Any:
            value = got(f())
            bar.update(size)
            return value

        return long_matrix([partial(later, f, b - a) for f, (a, b) in zip(forked, ranges)], parse[0], parse[1])
