"""Score tables users have: a long or wide CSV/TSV (or Parquet frame) of per-item scores read into a
:class:`effstats.responses.ResponseMatrix`, with the layout checks that refuse what is not such a table."""
from __future__ import annotations

import contextlib
import importlib.util
import io
import lzma
import os
import re
import warnings
import zipfile
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

import numpy as np
import pandas as pd

from .._scales import RATING_MAX, in_percent, names_percent
from .._shared import _cpus, _Forked, _is_float, _name_list, _plain, _progress, _repeated, _sorted_codes
from ..responses import ResponseMatrix
from .leaderboards import _numeric
from ._files import _check_duplicates, _compression_of

__all__ = ["read_scores_csv", "read_scores_frame"]


def read_scores_csv(
    path: str | os.PathLike,
    *,
    format: Literal["auto", "long", "wide"] = "auto",
    model: str = "model",
    item: str = "item",
    score: str = "score",
    groups: str | Sequence[str] | None = None,
    kind: Literal["binary", "score"] | None = None,
    sep: str | None = None,
    missing_marker: str = "-",
    duplicates: Literal["last", "first", "error", "mean"] = "last",
    progress: bool = False,
) -> ResponseMatrix:
    """Read per-item scores from a CSV / TSV file in long or wide layout.

    Parameters
    ----------
    path : path
        The file (``.csv``, ``.tsv``), UTF-8 text; compressed with gzip, bz2, xz, zip or Zstandard, it is
        decompressed whatever its name (the compression is read from its first bytes).
    format : {"auto", "long", "wide"}, default="auto"
        ``"long"``: one row per (model, item) with columns ``model``, ``item``, ``score`` (+ ``groups``);
        ``"wide"``: one row per model, first column (or the ``model`` column) = model id, other columns = items.
        ``"auto"`` picks long when the three named columns exist, else wide. A table ``"auto"`` would misread is
        refused with one error saying what was found and what is expected: a transposed table (one row per
        item: its first column named like items, or rows named ``<task>/<doc_id>`` while the columns are not), a
        long table under other column names, a file without a header line, columns of model metadata or
        aggregates (text, names such as ``average`` or ``params``, or columns that are not ``<task>/<doc_id>``
        beside columns that are), a wide table without its model column (its first column named like the items
        and holding scores), scores outside [0, 1] (percentages say so), numbers written with ``_`` (``1_0``), and
        cells holding a NUL character (the line and column are named). Read as they are: a
        semicolon- or tab-separated ``.csv``, pandas' row numbers before the model column, ``True``/``False``
        cells, and a model id column that is not first but named ``model`` (or ``name``, ``model_name``, ...).
    model, item, score : str
        Column names in the long layout (``model`` also names the id column of a wide table, if present).
    groups : str or sequence of str, optional
        Long layout: item-level columns kept as item metadata (e.g. ``"benchmark"``, ``"scenario"``). Without
        it a ``task`` column is kept (the items' task, as the evaluation loop reads it); an item id in several
        tasks is refused.
    kind : {"binary", "score"}, optional
        Inferred when omitted (binary if every value is 0/1).
    sep : str, optional
        Field separator; default tab for ``.tsv`` files, else comma.
    missing_marker : str, default="-"
        Cell text meaning "not evaluated" (empty cells too). Long rows with it are dropped; wide cells become
        ``missing``.
    duplicates : {"last", "first", "error", "mean"}, default="last"
        What to do with repeated (model, item) rows of a long table or repeated model rows of a wide one (several
        runs of a model): ``"last"`` keeps the row lower in the file and ``"first"`` the higher one (a kept row
        marked not evaluated leaves the cell ``missing``), both with a ``UserWarning`` naming the repeated
        models; ``"mean"`` averages the evaluated values of the repeated rows; ``"error"`` raises.
    progress : bool, default=False
        Show the bytes read on a terminal (standard error) once the read has taken 2 s.

    Returns
    -------
    ResponseMatrix
        Shape (n_models, n_items); pairs absent from a long table are ``missing``. Models and items in the order
        they first appear in the file (a long table's rows not evaluated too).

    See Also
    --------
    effstats.datasets.read_lm_eval_samples : lm-evaluation-harness per-sample logs.
    effstats.datasets.read_helm_runs : HELM run folders.
    effstats.ResponseMatrix.from_long : the same from a DataFrame.

    Notes
    -----
    An uncompressed long file of the three columns of 256 MB or more is parsed in ranges of lines of at least 128 MB,
    one for each core the process may use (at most 8), each by a process forked for it but the first (POSIX systems
    but macOS); the matrix, its order and the errors are those of one pass over the file. Each process holds its
    parser's buffers (about 300 MB). Run on one core (``taskset -c 0`` on Linux) to read it in one process.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from effstats.datasets import read_scores_csv
    >>> tmp = tempfile.TemporaryDirectory()
    >>> f = pathlib.Path(tmp.name, "scores.csv")
    >>> _ = f.write_text("model,item,score\\na,q1,1\\na,q2,0\\nb,q1,0.5\\nb,q1,1\\n")
    >>> rm = read_scores_csv(f, duplicates="mean")  # b ran q1 twice; b never ran q2
    >>> rm.values_with_nan().tolist()
    [[1.0, 0.0], [0.75, nan]]
    >>> tmp.cleanup()
    """
    if format not in ("auto", "long", "wide"):
        raise ValueError(f"format: expected 'auto', 'long' or 'wide', got {format!r}")
    _check_duplicates(duplicates)
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path: expected a file path, got {type(path).__name__}")
    p = Path(path).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f"path: {str(p)!r} does not exist")
    text = _TextColumns(model, item, groups, missing_marker)
    if format != "wide" and groups is None and kind is None:
        rm = _read_long(p, sep or ("\t" if ".tsv" in p.suffixes else ","), text, score, progress)
        if rm is not None:
            return rm
    if sep is None:
        sep = "\t" if ".tsv" in p.suffixes else ","
        df, header = _read_delimited(p, sep, text, progress)
        other = _other_separator(p, df, sep)
        if other is not None:  # a semicolon- or tab-separated file named .csv: one column at the default comma
            sep, (df, header) = other, _read_delimited(p, other, text, progress)
    else:
        df, header = _read_delimited(p, sep, text, progress)
    if df.shape[1] < 2:
        raise ValueError(f"path: {p.name} has fewer than two columns (sep={sep!r}?); {_EXPECTED}")
    _refuse_headerless(header, p, sep, model)
    dup = sorted(h for h, k in Counter(header).items() if k > 1)
    if dup:
        raise ValueError(f"path: {p.name} repeats the column names {dup[:5]}; every column needs its own name (item "
                         "ids unique across tasks, e.g. 'arc_easy/12' rather than '12')")
    if df.empty:
        raise ValueError(f"path: {p.name} has a header line but no data rows")
    return _table_to_matrix(df, p, format=format, model=model, item=item, score=score, groups=groups, kind=kind,
                            missing_marker=missing_marker, duplicates=duplicates, row_number=header[0] == "")


def read_scores_frame(
    frame: pd.DataFrame,
    *,
    format: Literal["auto", "long", "wide"] = "auto",
    model: str = "model",
    item: str = "item",
    score: str = "score",
    groups: str | Sequence[str] | None = None,
    kind: Literal["binary", "score"] | None = None,
    missing_marker: str = "-",
    duplicates: Literal["last", "first", "error", "mean"] = "last",
    name: str = "frame",
) -> ResponseMatrix:
    """Read per-item scores from a DataFrame in long or wide layout, with the CSV reader's checks.

    For a table read by other means (:func:`pandas.read_parquet`, a database query): its number columns stay
    numbers, every other column is read as a CSV holds it (missing values as empty cells), ids written as the
    index (any index but the default one) are a column, and a table whose first column holds numbers only gets
    the rows' numbers as model ids. A table :func:`effstats.datasets.read_scores_csv` would refuse is refused
    with its message.

    Parameters
    ----------
    frame : DataFrame
        One row per (model, item) (long) or per model (wide).
    format, model, item, score, groups, kind, missing_marker, duplicates
        As for :func:`effstats.datasets.read_scores_csv`.
    name : str, default="frame"
        What the messages call the table (say, the file it was read from).

    Returns
    -------
    ResponseMatrix

    See Also
    --------
    effstats.datasets.read_scores_csv : the same from a CSV / TSV file.
    effstats.ResponseMatrix.from_long : a long table without the layout checks.

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats.datasets import read_scores_frame
    >>> long = pd.DataFrame({"model": ["a", "a", "b"], "item": ["q1", "q2", "q1"], "score": [1.0, 0.0, 0.5]})
    >>> read_scores_frame(long).values_with_nan().tolist()  # b never ran q2
    [[1.0, 0.0], [0.5, nan]]
    >>> read_scores_frame(long.assign(score=[100.0, 0.0, 50.0]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: frame: ...percentages...
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame: expected a pandas DataFrame, got {type(frame).__name__}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name: expected a non-empty str, got {_plain(name)!r}")
    if format not in ("auto", "long", "wide"):
        raise ValueError(f"format: expected 'auto', 'long' or 'wide', got {_plain(format)!r}")
    _check_duplicates(duplicates)
    if frame.empty:
        raise ValueError(f"frame: {name} is empty ({frame.shape[0]} rows, {frame.shape[1]} columns)")
    df = frame.reset_index() if not isinstance(frame.index, pd.RangeIndex) else frame
    names = [str(c) for c in df.columns]
    ids = _TextColumns(model, item, groups, missing_marker).of(names, names) if names else set()
    for c in df.columns:
        if str(c) in ids and df[c].dtype == object:
            # 1 and "1" are two values here but one id once read as text (as in a CSV file): refused, not merged
            u = pd.Series(pd.unique(df[c].dropna()), dtype=object)
            same = u.astype(str)
            if same.duplicated().any():
                v = u[same == same[same.duplicated()].iloc[0]].tolist()
                raise ValueError(f"frame: column {str(c)!r} mixes types ({_plain(v[0])!r} and {_plain(v[1])!r} are "
                                 "the same id as text); make its ids one type")
    # number columns stay numbers (NaN: not evaluated); the ids and any other column as text, as a CSV holds them
    # (str of a float round-trips), missing values as empty cells
    text = pd.DataFrame({str(c): (df[c] if str(c) not in ids and df[c].dtype.kind in "biuf" else
                                  [("" if pd.isna(v) else str(v)) for v in df[c].tolist()]) for c in df.columns})
    for c in text.columns[(text.dtypes == object).to_numpy()]:
        nul = text[c].str.contains("\0", regex=False).to_numpy(dtype=bool, na_value=False)
        if nul.any():  # a CSV written from it would cut the value there: refused as the CSV reader refuses it
            row = int(np.argmax(nul))
            where = "" if name == "frame" else f"{name}: "
            raise ValueError(f"frame: {where}row {row + 1}, column {c!r} holds a NUL character "
                             f"({text[c].iloc[row]!r}); remove the NUL characters from its values")
    if text.shape[1] and model not in text.columns and _text_example(text.iloc[:, 0], (missing_marker,)) is None:
        text.insert(0, model, [str(i) for i in range(len(text))])  # no model ids: the rows' numbers name them
    default = name == "frame"

    def renamed(msg: str) -> str:  # the checks name the table as a file read from `path`
        if msg.startswith("path: "):
            rest = msg[len("path: "):]
            return "frame: " + (rest[len(f"{name}: "):] if default and rest.startswith(f"{name}: ") else rest)
        return msg

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            out = _table_to_matrix(text, Path(name), format=format, model=model, item=item, score=score,
                                   groups=groups, kind=kind, missing_marker=missing_marker, duplicates=duplicates)
        except ValueError as exc:
            raise ValueError(renamed(str(exc))) from None
    for w in said:
        warnings.warn(renamed(str(w.message)), w.category, stacklevel=2)
    return out


# ------------------------------------------------------------------------------------------- score-table layouts
_EXPECTED = ("expected a long table with columns 'model', 'item' and 'score' (one row per model and item) or a "
             "wide one (one row per model: the model id first or in a 'model' column, then one column of scores in "
             "[0, 1] per item)")
# id-column names: a first column named like an item means one row per item (a transposed table)
_MODEL_NAMES = {"model", "models", "model_id", "model_name", "name", "llm", "system", "checkpoint"}
_ITEM_NAMES = {"item", "items", "item_id", "doc", "doc_id", "document", "question", "question_id", "example",
               "example_id", "sample", "sample_id", "instance", "instance_id", "prompt", "prompt_id", "task"}
# columns of leaderboard tables that describe a model or aggregate its scores, never one item
_META_NAMES = {"average", "avg", "mean", "overall", "total", "accuracy", "acc", "score", "rank", "params",
               "parameters", "n_params", "num_params", "size", "model_size", "date", "release", "release_date",
               "family", "organization", "org", "license", "type", "precision", "architecture", "link", "url"}
_ITEM_ID = re.compile(r"^.+/\d+$")  # the loop's item ids: <task>/<doc_id>
_TRUE_FALSE = {"true": "1", "false": "0"}
_UTF16 = (b"\xff\xfe", b"\xfe\xff")
_NUL_BLOCK = 2**24  # bytes searched for a NUL character at once
_NARROW = 64  # columns of a table whose not-evaluated markers are set per column (its id columns keep theirs)
_ONE_PASS_BYTES = 256 * 2**20
_BLOCK_CELLS = 2**20  # cells of a table checked at once (8 MB of floats)
_WIDE_CHUNK_CELLS = 2**24  # cells of a large wide table parsed at once: ~200 MB of tokens
_LONG_CHUNK_ROWS = 2**22  # rows of a long table parsed at once: ~200 MB of tokens
_RANGE_BYTES = 2**27  # the least bytes of a long table parsed by a process of its own
_MAX_RANGES = 8  # processes parsing a long table at most: each holds its parser's buffers (~300 MB a chunk)


class _TextColumns:
    """Which columns of a table are read as text (the ids) when the others are read as numbers."""

    def __init__(self, model: str, item: str, groups: Any, missing_marker: str) -> None:
        self.named = {model, item, *([groups] if isinstance(groups, str) or groups is None else groups)} - {None}
        self.missing = missing_marker
        self.pair = (model, item)

    def names(self, header: list[str]) -> list[str] | None:
        """The labels pandas gives the columns; None: read every cell as text (a missing marker that reads as a
        number would also hide numbers equal to it, e.g. ``0.0`` for ``"0"``)."""
        if _is_float(self.missing):
            return None
        return [h if h else f"Unnamed: {i}" for i, h in enumerate(header)]

    def of(self, names: list[str], header: list[str]) -> set[str]:
        """The id columns: the first, a second one after pandas' row numbers, every one named like the model or
        items."""
        ids = set(names[: 2 if header[0] == "" else 1])
        return ids | {n for n in names if n in self.named or n.lower() in _MODEL_NAMES}


def _compression(p: Path) -> str | None:
    """The compression pandas reads ``p`` with, from the file's first bytes (None: not compressed); a tar archive
    is left to pandas, by its name."""
    if ".tar" in p.suffixes:
        return "infer"
    with open(p, "rb") as f:
        name = _compression_of(f.read(10))
    if name == "zstd" and importlib.util.find_spec("zstandard") is None:
        raise ValueError(f"path: {p.name} is compressed with Zstandard; reading it needs the zstandard package (pip "
                         "install zstandard), or decompress it first (zstd -d)")
    return name


def _open_bytes(p: Path, compression: str | None) -> Any:
    """``p`` opened for reading its (decompressed) bytes."""
    if compression is None:
        return open(p, "rb")
    return pd.io.common.get_handle(p, "rb", compression=compression, is_text=False)


def _refuse_nul(p: Path, sep: str, compression: str | None) -> None:
    """Raise naming the line and the column of the first NUL character: pandas' parser ends a field there, which
    would read ``"a\\0b"`` as ``"a"``, another row's id, without a word."""
    with _open_bytes(p, compression) as handle:
        f = getattr(handle, "handle", handle)
        head = f.read(_NUL_BLOCK)
        if head.startswith(_UTF16):
            raise ValueError(f"path: {p.name} is UTF-16 text; save it as UTF-8 (a CSV file's usual encoding)")
        seen, block, at = 0, head, head.find(b"\0")
        while at < 0 and block:
            seen += len(block)
            block = f.read(_NUL_BLOCK)
            at = block.find(b"\0")
    if at < 0:
        return
    at += seen
    with _open_bytes(p, compression) as handle:  # the NUL's line: rare, so the file is read again to find it
        text = getattr(handle, "handle", handle).read(at + 4096)
    start = text.rfind(b"\n", 0, at) + 1
    end = text.find(b"\n", at)
    line = text[start:end if end >= 0 else len(text)].rstrip(b"\r").decode("utf-8", "replace")
    first = text[:text.find(b"\n") if b"\n" in text else len(text)].decode("utf-8", "replace").lstrip("\ufeff")
    field = text[start:at].count(sep.encode()) if len(sep) == 1 else 0
    names = first.rstrip("\r").split(sep)
    col = f"column {names[field]!r}" if start and field < len(names) else f"field {field + 1}"
    cells = line.split(sep)
    cell = cells[field] if field < len(cells) else line
    number, cut = text.count(b"\n", 0, at) + 1, cell.split("\0")[0]
    raise ValueError(f"path: {p.name}: line {number}, {col} holds a NUL character ({cell!r}); pandas would cut "
                     f"the value there (read as {cut!r}): remove the NUL bytes from the file (a corrupted or binary "
                     "export?)")


def _header(p: Path, sep: str, compression: str | None = None) -> list[str]:
    """The header line's fields as written (pandas renames repeated names "a", "a.1": they are refused by name).

    A plain first line (no quotes, not compressed) is split at ``sep``; pandas' parser reads any other, which
    builds a frame of one row and one column per field (seconds at 10^5 item columns)."""
    if len(sep) == 1 and compression is None:
        with open(p, encoding="utf-8-sig", newline="") as f:  # pandas drops a byte order mark too
            line = f.readline().rstrip("\r\n")
        if line.strip() and '"' not in line and "\r" not in line:
            return line.split(sep)
    return pd.read_csv(p, sep=sep, dtype=str, keep_default_na=False, header=None, nrows=1,
                       compression=compression).iloc[0].tolist()


def _read_typed(p: Path, sep: str, header: list[str], text: _TextColumns, progress: bool = False,
                compression: str | None = None, index_col: Any = None) -> pd.DataFrame | None:
    """The table with the id columns as text (as written) and the others parsed as numbers by pandas' C parser
    (correctly rounded); a column holding anything but numbers (text, True/False, markers with spaces) stays text.
    Cells left empty or marked not evaluated are ``""`` in the other text columns, NaN in number columns. None
    where every cell is to be read as text (:meth:`_TextColumns.names`)."""
    names = text.names(header)
    if names is None or len(sep) != 1:  # a longer separator is a regular expression, for pandas' Python parser
        return None
    ids = text.of(names, header)
    # pandas' chunked reader pays per column and chunk: a wide table is read in one pass unless the file is large;
    # a long one in chunks (one pass would hold every token of the file at once)
    narrow = len(names) <= _NARROW
    na = {c: ["", text.missing] for c in names if c not in ids} if narrow else ["", text.missing]
    kw = dict(sep=sep, keep_default_na=False, float_precision="round_trip", dtype={c: str for c in ids},
              na_values=na, low_memory=narrow or p.stat().st_size > _ONE_PASS_BYTES, compression=compression,
              index_col=index_col)
    # a long table's model and item ids as categories: the parser hashes its tokens once, without a text object
    # a cell, and the layout checks and the matrix read the codes
    pair = [c for c in text.pair if c in names] if narrow else []
    if len(pair) == 2:
        kw.update(dtype={c: "category" if c in pair else str for c in ids}, low_memory=False,
                  chunksize=_LONG_CHUNK_ROWS)
    read = (lambda f: _joined_chunks(pd.read_csv(f, **kw), pair)) if len(pair) == 2 else partial(pd.read_csv, **kw)
    if not narrow and kw["low_memory"]:
        # a large wide table in chunks of rows, each parsed in one pass: pandas' chunked reader would split it into
        # chunks of a few dozen rows (2**20 bytes over the columns) and pay per column and chunk, 2.6x the CPU at
        # 30,000 columns
        kw.update(low_memory=False, chunksize=max(1, _WIDE_CHUNK_CELLS // len(names)))
        read = lambda f: _stacked_chunks(pd.read_csv(f, **kw))  # noqa: E731
    if compression is not None:
        df = read(p)
    else:  # the bytes parsed so far, on a terminal when the read takes a while
        with open(p, "rb") as raw, _progress(progress, total=p.stat().st_size, desc=f"reading {p.name}", unit="B",
                                             unit_scale=True) as bar:
            df = read(_Counted(raw, bar.update))
    if not narrow and df[[c for c in df.columns if c in ids]].isna().any().any():
        return None  # an id written "" or as the marker (NaN here): read as text, where the two differ
    if (df.dtypes == bool).any():
        return None  # True/False cells are text to the layout checks, as written
    obj = [c for c in df.columns[(df.dtypes == object).to_numpy()] if c not in ids]
    if obj and pd.api.types.infer_dtype(df[obj].to_numpy().ravel(), skipna=True) != "string":
        return None  # the same, beside empty cells (pandas' booleans)
    blank = df[obj].isna().any() if obj else pd.Series(dtype=bool)
    filled = blank.index[blank.to_numpy()]
    return df.assign(**{c: df[c].fillna("") for c in filled}) if len(filled) else df


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
    range, a range that parses starts at one too)."""
    from ._long_scores import chunk_parts, long_matrix

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
        if not _few_scores(p, sep, score, compression):
            kw.update(dtype={**kw["dtype"], score: float}, float_precision="round_trip")
        parse = (*names, partial(_cell_numbers, sep=sep, missing=["", text.missing]))  # chunk_parts' arguments
        # the ranges cut and read from one descriptor: a file replaced meanwhile is read whole in the version opened
        with open(p, "rb") if compression is None else contextlib.nullcontext() as whole:
            ranges = [] if whole is None else _line_ranges(whole)
            if len(ranges) > 1:
                header = _header(p, sep)
                if sorted(header) != sorted(names):
                    return None
                with contextlib.suppress(_Odd):
                    return _read_long_ranges(p, whole.fileno(), ranges, header, kw, parse, progress)
        _refuse_nul(p, sep, compression)
        if sorted(_header(p, sep, compression)) != sorted(names):
            return None
        if compression is not None:
            with _interrupt_kept():
                return long_matrix([lambda: chunk_parts(pd.read_csv(p, **kw), *parse)], model, item)
        with open(p, "rb") as raw, _progress(progress, total=p.stat().st_size, desc=f"reading {p.name}", unit="B",
                                             unit_scale=True) as bar:
            with _interrupt_kept():
                return long_matrix([lambda: chunk_parts(pd.read_csv(_Counted(raw, bar.update), **kw), *parse)],
                                   model, item)
    except _READ_ERRORS:
        return None  # read again by the general reader, whose message names what is wrong


def _few_scores(p: Path, sep: str, score: str, compression: str | None, rows: int = 2**16) -> bool:
    """Whether the first ``rows`` rows of a long table hold few distinct score texts (at most one in 16 rows, as
    0/1 scores do), which makes the scores' categories cheaper to parse than numbers."""
    try:
        with _interrupt_kept():
            cells = pd.read_csv(p, sep=sep, usecols=[score], dtype=str, keep_default_na=False, nrows=rows,
                                compression=compression)[score]
    except _READ_ERRORS:
        return True  # the chunked parse words or hands over whatever is wrong
    return cells.nunique() * 16 <= max(len(cells), 16)


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
    range holds the header), or ``_Odd`` where the range holds a NUL character or does not parse; malloc tuned by
    :func:`_heap_kept` in a forked process (another than ``caller``'s)."""
    from ._long_scores import chunk_parts

    src = _Range(fd, start, end)
    parse_range = lambda: chunk_parts(pd.read_csv(src, **kw), *parse)  # noqa: E731
    try:
        with _interrupt_kept():
            parts = parse_range() if os.getpid() == caller else _heap_kept(parse_range)
    except _READ_ERRORS:  # returned, not raised: a forked process that raised would be run again here
        return _Odd
    return _Odd if src.odd else parts


def _read_long_ranges(p: Path, fd: int, ranges: list[tuple[int, int]], header: list[str], kw: dict,
                      parse: tuple, progress: bool) -> ResponseMatrix | None:
    """The long file ``p``, open as descriptor ``fd``, read by ranges of lines (see :func:`_read_long`), each by a
    forked process; raises ``_Odd`` where a range holds a NUL character or does not parse."""
    from ._long_scores import long_matrix

    def got(value: Any) -> Any:
        if value is _Odd:
            raise _Odd
        return value

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


def _stacked_chunks(reader: Any) -> pd.DataFrame:
    """One frame of the chunks of rows ``reader`` yields."""
    with reader:
        chunks = list(reader)
    if len(chunks) == 1:
        return chunks[0]
    # pandas joins a chunk's True/False column with another's numbers as numbers (True as 1): such columns are
    # joined as objects, so that they stay text to the layout checks as in one read
    flags = {c for chunk in chunks for c in chunk.columns[(chunk.dtypes == bool).to_numpy()]}
    if flags:
        chunks = [chunk.astype({c: object for c in flags}) for chunk in chunks]
    return pd.concat(chunks, ignore_index=True)


def _joined_chunks(reader: Any, cats: list[str]) -> pd.DataFrame:
    """One frame of the chunks ``reader`` yields, the ``cats`` columns categorical with the distinct values of the
    whole file as categories, sorted (chunks read in one pass each: pandas' own chunked reader joins their
    categories at a cost growing with their number)."""
    seen = {c: pd.Index([], dtype=object) for c in cats}
    codes: dict[str, list] = {c: [] for c in cats}
    rest, columns = [], []
    with reader:
        for chunk in reader:
            for c in cats:
                at = seen[c].get_indexer(chunk[c].cat.categories)
                new = at < 0
                if new.any():
                    at[new] = len(seen[c]) + np.arange(int(new.sum()))
                    seen[c] = seen[c].append(chunk[c].cat.categories[new])
                codes[c].append(at[chunk[c].cat.codes.to_numpy()])
            rest.append(chunk.drop(columns=cats))
            columns = list(chunk.columns)
    out = pd.concat(rest, ignore_index=True, copy=False) if len(rest) > 1 else rest[0]
    for c in cats:
        order = np.argsort(seen[c].to_numpy(), kind="stable")
        rank = np.empty(len(order), np.int32)
        rank[order] = np.arange(len(order))
        out[c] = pd.Categorical.from_codes(rank[np.concatenate(codes[c])], seen[c][order])
    return out[columns]


class _Counted:
    """A binary file whose reads report the bytes read. Without a ``mode`` pandas' C parser reads its blocks
    itself, as it reads a file it opened (with ``mode="rb"`` pandas would wrap it in a text decoder)."""

    def __init__(self, f: Any, update: Callable[[int], Any]) -> None:
        self._f, self._update = f, update

    def read(self, size: int = -1) -> bytes:
        block = self._f.read(size)
        self._update(len(block))
        return block

    def __iter__(self):
        return iter(self._f)


def _read_delimited(p: Path, sep: str, text: _TextColumns | None = None,
                    progress: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """The table (every cell as text, or :func:`_read_typed`'s number columns given ``text``) and its header."""
    compression = None
    try:
        compression = _compression(p)
        _refuse_nul(p, sep, compression)
        header = _header(p, sep, compression)
        for index_col in (None, False):
            typed = None if text is None else _read_typed(p, sep, header, text, progress, compression, index_col)
            df = typed if typed is not None else pd.read_csv(p, sep=sep, dtype=str, keep_default_na=False,
                                                             compression=compression, index_col=index_col)
            # every row holding one field more than the header, pandas takes the first as the row labels: read again
            # without them where that field is a separator ending every line ("m0,q0,1,"), as pandas' index_col=False
            # does, which would drop any other last field
            if isinstance(df.index, pd.RangeIndex) or not _trailing_separator(df, p, header):
                return df, header
        return df, header
    except pd.errors.EmptyDataError:
        raise ValueError(f"path: {p.name} is empty; {_EXPECTED}") from None
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start:exc.start + 1].hex() if isinstance(exc.object, bytes) else "?"
        raise ValueError(f"path: {p.name} is not UTF-8 text (byte 0x{byte} is not UTF-8: {exc.reason}); save it as "
                         "UTF-8 (e.g. iconv -f latin1 -t utf-8, or a spreadsheet's 'CSV UTF-8')") from None
    except (EOFError, OSError, lzma.LZMAError, zipfile.BadZipFile) as exc:  # a cut or damaged compressed file
        what = f"holds {compression} data that does not decompress" if compression else "cannot be read"
        raise ValueError(f"path: {p.name} {what} ({type(exc).__name__}: {exc})") from None
    except pd.errors.ParserError as exc:
        raise ValueError(f"path: {p.name} is not a readable delimited table ({exc})") from None


def _trailing_separator(df: pd.DataFrame, p: Path, header: list[str]) -> bool:
    """True where every row of ``df`` (read with its first field as row labels: every row holds one field more than
    the ``header`` names) ends in an empty field; raises ValueError otherwise."""
    last = df.iloc[:, -1]
    if bool((last.isna() | (last.astype(object) == "")).all()):
        return True
    raise ValueError(f"path: {p.name}'s rows hold {len(header) + 1} fields but its header names {len(header)}: name "
                     f"every column in the header (the first one, e.g. 'model') or drop the extra field; {_EXPECTED}")


def _other_separator(p: Path, df: pd.DataFrame, sep: str) -> str | None:
    """The one other common separator the header uses when it is a single column at ``sep``, else None."""
    if df.shape[1] != 1:
        return None
    found = [s for s in (";", "\t", "|") if s != sep and s in str(df.columns[0])]
    return found[0] if len(found) == 1 else None


def _looks_like_score(h: str) -> bool:
    try:
        float(h)
    except ValueError:
        return h.strip().lower() in _TRUE_FALSE
    return "." in h or h.strip() in ("0", "1") or "e" in h.lower()


def _refuse_headerless(header: list, p: Path, sep: str, model: str) -> None:
    """Raise when the first line holds scores where column names belong: a file written without a header."""
    first, rest = str(header[0]).strip(), [str(h).strip() for h in header[1:]]
    if not rest or first == "" or first == model or first.lower() in _MODEL_NAMES | _ITEM_NAMES:
        return
    if sum(map(_looks_like_score, rest)) * 2 >= len(rest):
        shown = sep.join(map(str, header[:4])) + (sep + "…" if len(header) > 4 else "")
        raise ValueError(f"path: {p.name} has no header line: its first line {shown!r} holds scores where column names "
                         f"belong; add a header line ('model,item,score' for a long table, 'model,<item id>,…' for a "
                         "wide one)")


def _cells(frame: pd.DataFrame, missing: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The cells of a table of strings, stripped, and which of them are written (not empty, not a missing marker).
    One pass over the whole table: a wide table has tens of thousands of item columns."""
    cells = np.char.strip(frame.to_numpy(dtype=str))
    return cells, ~(np.isin(cells, list(missing)) | (cells == ""))


def _text_columns(frame: pd.DataFrame) -> pd.Index:
    """The columns of ``frame`` held as text; the others hold numbers already (a table read by
    :func:`_read_typed` or a Parquet file)."""
    return frame.columns[(frame.dtypes == object).to_numpy()]


def _values(frame: pd.DataFrame, name: str, missing: tuple[str, ...]) -> np.ndarray:
    """Float matrix of a table of text and number columns: :func:`~effstats.datasets.leaderboards._numeric` on the
    text columns, NaN at the number columns' missing values."""
    text = frame.dtypes.to_numpy() == object
    # pandas' own missing value (nullable columns of a Parquet file) as NaN; numpy columns need no such pass
    na = {"na_value": np.nan} if any(isinstance(t, pd.api.extensions.ExtensionDtype) for t in frame.dtypes) else {}
    if not text.any():
        return frame.to_numpy(dtype=float, **na)
    if text.all():
        return _numeric(frame, name, missing=missing)
    out = np.empty(frame.shape)
    out[:, ~text] = frame.iloc[:, np.flatnonzero(~text)].to_numpy(dtype=float, **na)
    out[:, text] = _numeric(frame.iloc[:, np.flatnonzero(text)], name, missing=missing)
    return out


def _true_false(df: pd.DataFrame, cols: list, missing: tuple[str, ...]) -> pd.DataFrame:
    """Columns written as True/False (pandas writes booleans so) as 1/0."""
    held = set(_text_columns(df))
    cols = [c for c in cols if c in held]
    if not cols:
        return df
    cells, written = _cells(df[cols], missing)
    low = np.char.lower(cells)
    convert = written.any(axis=0) & (np.isin(low, list(_TRUE_FALSE)) | ~written).all(axis=0)
    out = {cols[j]: pd.Series(np.where(written[:, j], np.where(low[:, j] == "true", "1", "0"), df[cols[j]]),
                              index=df.index, dtype=object) for j in np.flatnonzero(convert)}
    return df.assign(**out) if out else df


def _text_examples(frame: pd.DataFrame, missing: tuple[str, ...]) -> dict:
    """For each column with a cell that is neither a number nor a not-evaluated marker, its first such cell."""
    frame = frame[_text_columns(frame)]
    if not frame.size:
        return {}
    cells, written = _cells(frame, missing)
    values, where = np.unique(cells, return_inverse=True)
    text = np.array([not _is_float(x) for x in values])[where.reshape(cells.shape)] & written
    return {frame.columns[j]: str(cells[int(np.argmax(text[:, j])), j]) for j in np.flatnonzero(text.any(axis=0))}


def _text_example(col: pd.Series, missing: tuple[str, ...]) -> str | None:
    """A cell of ``col`` that is neither a number nor a not-evaluated marker, else None."""
    return next(iter(_text_examples(col.to_frame(), missing).values()), None)


def _id_column(df: pd.DataFrame, model: str) -> str:
    """The model id column of a wide table: ``model``, else one column named like a model id, else the first."""
    if model in df.columns:
        return model
    named = [c for c in df.columns if str(c).lower() in _MODEL_NAMES]
    return named[0] if len(named) == 1 else df.columns[0]


def _header_shape(h: str) -> str:
    """A column name with its runs of digits as ``#``: items of one benchmark share it ('t0/#', 'q#')."""
    return re.sub(r"\d+", "#", h.strip())


def _refuse_scores_as_ids(df: pd.DataFrame, id_col: Any, p: Path, model: str, missing: tuple[str, ...]) -> None:
    """Raise when a wide table has no model column: its first column, taken for the model ids, is an item's.

    Two signals together, since model ids may be numbers (run numbers, checkpoints' steps): the column is named
    like the other columns (the same name up to its digits, e.g. 't0/0' beside 't0/1'), and every value in it is
    a number in [0, 1]."""
    first = str(id_col)
    if id_col != df.columns[0] or first == model or first.lower() in _MODEL_NAMES or not re.search(r"\d", first):
        return
    others = [str(c) for c in df.columns[1:]]
    if _header_shape(first) not in {_header_shape(c) for c in others}:
        return
    values = pd.unique(df[id_col].astype(str).str.strip())
    written = [v for v in values if v not in missing and v != ""]
    if not written or not all(_is_float(v) and 0 <= float(v) <= 1 for v in written):
        return
    raise ValueError(f"path: {p.name}: the table has no model column: its first column {first!r} is named like the "
                     f"item columns ({others[:2]} …) and holds scores (every value a number in [0, 1], e.g. "
                     f"{_plain(written[0])!r}), not model ids; add the model ids as the first column, named {model!r} "
                     f"(a header line '{model},{first},…', then one line per model: '<model id>,<score>,…')")


def _refuse_long_as_wide(df: pd.DataFrame, p: Path, model: str, item: str, score: str, cell_text: dict) -> None:
    """Raise when a table read as wide (the long columns are not all there) is a long table under other names;
    ``cell_text``: :func:`_text_examples` of ``df``."""
    cols = [str(c) for c in df.columns]
    id_col = _id_column(df, model)
    ids = df[id_col]
    reason = None
    text = [c for c in cols if c != id_col and c in cell_text]
    if item in cols or score in cols:
        reason = f"it has the column(s) {[c for c in (item, score) if c in cols]}"
    else:
        named = [c for c in cols if c.lower() in _ITEM_NAMES and c != id_col]
        counts = ids.value_counts()
        if named:
            reason = f"column(s) {named} name items"
        elif len(cols) >= 3 and len(ids) > 1 and counts.min() > 1 and (counts.max() >= 3 or text):
            reason = (f"every id in its column {id_col!r} repeats, e.g. {_plain(counts.index[0])!r} on "
                      f"{int(counts.iloc[0])} rows")
    if reason is None:
        return
    kv = ", ".join(f"{k}={c!r}" for k, c in (("model", model), ("item", item), ("score", score)) if c not in cols)
    lead = "read as a wide table, "
    if text:
        lead = f"column {text[0]!r} has non-numeric values, e.g. {_plain(cell_text[text[0]])!r} ({lead[:-2]}: "
    raise ValueError(f"path: {p.name}: {lead}the long layout's columns {kv} are absent{')' if text else ''}; it looks "
                     f"like a long table ({reason}), with the columns {cols[:8]}{' …' if len(cols) > 8 else ''}: name "
                     "them 'model', 'item' and 'score' (one row per model and item; item ids unique across tasks, "
                     "e.g. 'arc_easy/12'), or write a wide table (one row per model)")


def _refuse_transposed(df: pd.DataFrame, id_col: str, p: Path, model: str, cell_text: dict) -> None:
    """Raise when a wide table has one row per item and one column per model; ``cell_text``: :func:`_text_examples`
    of ``df``."""
    ids = df[id_col].astype(str)
    cols = [str(c) for c in df.columns if c != id_col]
    if (str(id_col).lower() in _ITEM_NAMES and model not in df.columns and not ids.duplicated().any()
            and not any(c in cell_text for c in cols)):
        found = f"its first column is named {id_col!r}"
    elif (len(ids) > 1 and ids.str.match(_ITEM_ID).all() and not any(_ITEM_ID.match(c) for c in cols)
          # under a model header, ids such as 'ckpt/1000' name checkpoints: items span several tasks
          and (str(id_col).lower() not in _MODEL_NAMES | {model} or ids.str.rsplit("/", n=1).str[0].nunique() > 1)):
        found = (f"its rows are named like items ({_plain(ids.iloc[0])!r}, {_plain(ids.iloc[1])!r}) and its "
                 "columns are not")
    else:
        return
    raise ValueError(f"path: {p.name} looks transposed ({found}): one row per item and one column per model "
                     f"({cols[:2]} …); expected one row per model, the model id first, then one column per item: "
                     f"transpose it (pandas: df.set_index({str(id_col)!r}).T) or write a long table with columns "
                     "'model', 'item' and 'score'")


def _refuse_non_items(df: pd.DataFrame, values: np.ndarray, p: Path) -> None:
    """Raise when some columns of a wide table are model metadata or aggregates rather than items."""
    cols = [str(c) for c in df.columns]
    why: dict[str, str] = {}
    for c in cols:
        if c.lower() in _META_NAMES:
            why[c] = "named like model metadata or an aggregate"
    lm = [c for c in cols if _ITEM_ID.match(c)]
    if len(lm) >= 2:
        for c in cols:
            if not _ITEM_ID.match(c):
                why.setdefault(c, f"not an item id <task>/<doc_id> as the other {len(lm)} columns")
    low, high = _finite_range(values)
    out = (high > 1) | (low < 0)
    # a few columns outside [0, 1] beside many scores are metadata (sizes, dates); most of them: percentages
    if out.any() and out.sum() <= max(3, 0.1 * len(cols)) and 2 * out.sum() < len(cols):
        for j in np.flatnonzero(out):
            why.setdefault(cols[j], f"values up to {high[j]:g}" if high[j] > 1 else f"values down to {low[j]:g}")
    if why:
        shown = "; ".join(f"{c!r}: {w}" for c, w in list(why.items())[:5])
        raise ValueError(f"path: {p.name}: column(s) {list(why)[:5]} are not items ({shown}); a wide table holds the "
                         "model id column, then one column of scores in [0, 1] per item: drop the other columns")


def _finite_range(values: np.ndarray, empty: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Per column of the 2-D ``values``, the smallest and the largest finite value (``empty`` and ``-empty`` where
    there is none; 0 and 0 by default), read in blocks of rows: no temporary of the whole table's size."""
    low = np.full(values.shape[1], empty)
    high = np.full(values.shape[1], -empty)
    step = max(1, _BLOCK_CELLS // max(values.shape[1], 1))
    for a in range(0, len(values), step):
        block = values[a:a + step]
        finite = np.isfinite(block)
        np.minimum(low, np.where(finite, block, empty).min(axis=0, initial=empty), out=low)
        np.maximum(high, np.where(finite, block, -empty).max(axis=0, initial=-empty), out=high)
    return low, high


def _row_models(df: pd.DataFrame, model: str, codes: Any) -> Any:
    """The model of each row of a long table (its ids where ``codes`` holds them as codes), None without one."""
    if model not in df.columns:
        return None
    if codes is not None and model in codes:
        return np.asarray(codes[model][1])[np.asarray(df[model])]
    return df[model].to_numpy()


def _refuse_out_of_range(values: np.ndarray, p: Path, where: str, header: Any = None, rows: Any = None) -> None:
    """Raise, naming percentages when they are the likely cause (the audit's judgement of a scale,
    ``effstats._scales.in_percent``, under the scores' ``header`` if they have one), unless every score is in
    [0, 1]. ``rows``, the model of each row (or a function giving them, called only then): percentages in some
    models' rows only name those models."""
    low, high = _finite_range(values if values.ndim == 2 else values[:, None], np.inf)
    lo, hi = float(low.min(initial=np.inf)), float(high.max(initial=-np.inf))
    if lo > hi or (lo >= 0 and hi <= 1):  # no finite value, or all in [0, 1]
        return
    excess = max(-lo, hi - 1)
    if excess <= 1e-6:  # e.g. 1.0000001: a sum or mean in floating point, not another scale
        raise ValueError(f"path: {p.name}: {where} run from {lo:.10g} to {hi:.10g}, out of [0, 1] by {excess:.2g} "
                         "(floating-point rounding?); round or clip them to [0, 1]")
    if in_percent(lo, hi, header is not None and names_percent(header)):
        fix = "divide them by 100"
        rows = rows() if callable(rows) else rows
        if rows is not None:
            over = np.asarray(values > 1 + 1e-6).reshape(len(values), -1).any(axis=1)
            odd = pd.unique(np.asarray(rows, dtype=object)[over])
            if len(odd) < len(pd.unique(np.asarray(rows, dtype=object))):  # other models' rows are fractions
                fix = (f"model(s) {_name_list(map(repr, map(_plain, odd)), 5)} score above 1, the other models "
                       "within [0, 1]: divide those models' scores by 100")
        raise ValueError(f"path: {p.name}: {where} run from {lo:g} to {hi:g}: percentages? "
                         f"expected scores in [0, 1] ({fix})")
    if lo >= 0 and hi <= RATING_MAX:
        raise ValueError(f"path: {p.name}: {where} run from {lo:g} to {hi:g}: a rating (0–10, 1–5)? expected "
                         "scores in [0, 1] (rescale them to [0, 1])")
    raise ValueError(f"path: {p.name}: {where} run from {lo:g} to {hi:g}; expected scores in "
                     "[0, 1] (correctness 0/1 or a score such as a normalised metric)")


def _table_to_matrix(df: pd.DataFrame, p: Path, *, format: str, model: str, item: str, score: str, groups: Any,
                     kind: Any, missing_marker: str, duplicates: str, row_number: bool = False) -> ResponseMatrix:
    """A ResponseMatrix from a table of strings (every cell as written) in long or wide layout, refusing layouts
    it would otherwise misread; ``row_number``: the first column has no name (pandas' row numbers, or ids)."""
    missing = (missing_marker,)
    first = df.columns[0]
    if row_number and df.shape[1] > 2 and df[first].tolist() == [str(i) for i in range(len(df))]:
        rest = df.drop(columns=first)
        # pandas' row numbers before the real id column (to_csv without index=False): not data
        if (model in rest.columns or {model, item, score} <= set(rest.columns)
                or _text_example(rest.iloc[:, 0], missing)):
            df = rest
    guessed = format == "auto"
    if guessed:
        format = "long" if {model, item, score} <= set(df.columns) else "wide"
    if format == "long":
        # models and items in the order they first appear (rows not evaluated and repeated rows too), as a wide file
        # keeps its rows' and columns' order and the chunked reader orders them: one table in either layout is one
        # matrix
        appearance = {c: pd.Index(np.asarray(pd.unique(df[c]), dtype=object)) for c in (model, item)
                      if c in df.columns}
        # string ids as codes, computed once: the checks and the matrix read them instead of hashing the strings
        codes = {c: _codes(df[c]) for c in (model, item) if c in df.columns}
        codes = codes if len(codes) == 2 and None not in codes.values() else None
        if codes is None:
            df = _as_text(df)
        _refuse_empty_ids(df, {model: "model", item: "item"}, p, codes)
        if groups is None and "task" in df.columns and "task" not in (model, item, score) and item in df.columns:
            groups = ["task"]  # the items' task, as the loop reads it (lm-eval and HELM readers write it too)
            _refuse_items_in_two_tasks(df, item, p)
        if score in df.columns:
            df = _true_false(df, [score], missing)
            # numpy's parser is correctly rounded; pandas' fast to_numeric can be off by an ulp (pandas 1.5)
            scores = {score: _values(df[[score]], f"path: {p.name}", missing=missing)[:, 0]}
            if codes is not None and not _repeated(codes[model], codes[item]):
                # the ids' codes (integers, ordered as the ids) in their place: a fraction of the frame to copy
                df = pd.DataFrame({**{c: df[c] for c in df.columns if c not in codes and c != score},
                                   **{c: k for c, (k, _) in codes.items()}, **scores})
            else:
                df, codes = _as_text(df).assign(**scores), None
            _refuse_out_of_range(df[score].to_numpy(), p, f"the scores in column {score!r}", score,
                                 partial(_row_models, df, model, codes))
            if model in df.columns and item in df.columns and codes is None:
                df = _one_row_per_pair(df, [model, item], score, duplicates, p)
            kept = df[score].notna().to_numpy()
            if not kept.all():
                if model in df.columns:  # a model without any score would vanish from what is read: say so
                    gone = pd.Index(df[model][~kept].unique()).difference(pd.Index(df[model][kept].unique()))
                    if len(gone) and len(gone) < df[model].nunique():
                        names = codes[model][1][gone] if codes is not None and model in codes else gone
                        warnings.warn(f"path: {p.name}: model(s) {_name_list(map(repr, _plain(list(names))))} have "
                                      "no score on any item (every row not evaluated) and are left out", UserWarning,
                                      stacklevel=3)
                if item in df.columns and model in df.columns and df[model].nunique() > 1:
                    # (one model's table: its missing cells are its own, which its reader's caller words)
                    _warn_items_without_score(df, kept, item, codes, p)
                df = df[kept]
            if df.empty:
                raise ValueError(f"score: every row of {p.name} is marked not evaluated")
        else:
            df, codes = _as_text(df), None
        rm = _named(lambda: ResponseMatrix.from_long(df, model=model, item=item, score=score, groups=groups,
                                                     kind=kind), p)
        if codes is not None:
            models, items = codes[model][1][rm.model_ids], codes[item][1][rm.item_ids]
            rm = ResponseMatrix(rm.values, kind=rm.kind, missing=rm.missing, model_ids=models, item_ids=items,
                                items=rm.items.set_axis(items) if len(rm.items.columns) else None)
        return _in_order_of_appearance(rm, appearance.get(model), appearance.get(item))
    if groups is not None:
        raise ValueError("groups: only available for the long layout")
    df = _as_text(df)
    idx_col = _id_column(df, model)
    _refuse_scores_as_ids(df, idx_col, p, model, missing)
    _refuse_empty_ids(df, {idx_col: "model"}, p)
    cell_text = _text_examples(df, missing)
    _refuse_transposed(df, idx_col, p, model, cell_text)
    if guessed:
        _refuse_long_as_wide(df, p, model, item, score, cell_text)
    wide = df.copy(deep=False)  # the id column moved to the index without a copy of the score columns
    wide.set_index(idx_col, inplace=True)
    wide = _true_false(wide, list(wide.columns), missing)
    text = _text_examples(wide, missing)
    if text:
        c, x = next(iter(text.items()))
        under = next(((c, x) for c, x in text.items() if "_" in x and _is_float(x.replace("_", ""))), None)
        if under is not None:  # float("1_0") is 10: a cell such as this one is text to a table
            c, x = under
            row = int(np.argmax(wide[c].astype(str).str.strip().eq(x).to_numpy()))
            raise ValueError(f"path: {p.name}: column {c!r} has non-numeric values, e.g. {_plain(x)!r} (model "
                             f"{_plain(wide.index[row])!r}, line {row + 2}: numbers are written without '_')")
        if not guessed:
            raise ValueError(f"path: {p.name}: column {c!r} has non-numeric values, e.g. {_plain(x)!r}")
        if idx_col not in cell_text:  # the ids are numbers while some other column holds text
            raise ValueError(f"path: {p.name}: the first column {str(idx_col)!r} holds numbers, not model ids, and "
                             f"column {c!r} holds text (e.g. {_plain(x)!r}); put the model ids first or name their "
                             "column "
                             f"{model!r}; {_EXPECTED}")
        more = f" (and {len(text) - 1} more: {list(text)[1:4]})" if len(text) > 1 else ""
        raise ValueError(f"path: {p.name}: column {c!r} has non-numeric values, e.g. {_plain(x)!r}{more}; a wide "
                         "table holds "
                         f"the model ids in column {str(idx_col)!r}, then one column of scores per item: drop "
                         "metadata columns such as this one")
    parsed = _values(wide, f"path: {p.name}", missing=missing)
    _refuse_non_items(wide, parsed, p)
    _refuse_out_of_range(parsed, p, "the scores", rows=wide.index)
    values = pd.DataFrame(parsed, index=wide.index, columns=wide.columns)
    if values.index.has_duplicates:
        values = _one_row_per_pair(values.reset_index(), [idx_col], None, duplicates, p).set_index(idx_col)
    return _named(
        lambda: ResponseMatrix(values.to_numpy(), kind=kind, nan_as_missing=True, model_ids=values.index,
                               item_ids=values.columns),
        p
    )


def _in_order_of_appearance(rm: ResponseMatrix, models: pd.Index | None, items: pd.Index | None) -> ResponseMatrix:
    """``rm`` (models and items in :meth:`effstats.ResponseMatrix.from_long`'s sorted order) with its models and
    items in the order of ``models`` and ``items``, their ids in the order they first appear in the table."""
    pos = []
    for ids, appearance in ((rm.model_ids, models), (rm.item_ids, items)):
        at = np.arange(len(ids)) if appearance is None else ids.get_indexer(appearance)
        at = at[at >= 0]
        pos.append(at if len(at) == len(ids) else np.arange(len(ids)))
    rows, cols = pos
    if (rows == np.arange(len(rows))).all() and (cols == np.arange(len(cols))).all():
        return rm
    return ResponseMatrix(rm.values[np.ix_(rows, cols)], kind=rm.kind,
                          missing=None if rm.missing is None else rm.missing[np.ix_(rows, cols)],
                          model_ids=rm.model_ids[rows], item_ids=rm.item_ids[cols],
                          models=rm.models.iloc[rows] if len(rm.models.columns) else None,
                          items=rm.items.iloc[cols] if len(rm.items.columns) else None)


def _codes(col: pd.Series) -> tuple[np.ndarray, pd.Index] | None:
    """:func:`~effstats._shared._sorted_codes` of an id column, read off a categorical one (:func:`_read_typed`)."""
    if not isinstance(col.dtype, pd.CategoricalDtype):
        return _sorted_codes(col)
    cats = col.cat.categories
    k = col.cat.codes.to_numpy()
    if (not cats.is_monotonic_increasing or pd.api.types.infer_dtype(cats) != "string" or (len(k) and k.min() < 0)
            or np.bincount(k, minlength=len(cats)).min(initial=1) == 0):
        return _sorted_codes(_as_text(col.to_frame()).iloc[:, 0])
    return k, pd.Index(cats, dtype=object, name=col.name)


def _as_text(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its categorical columns (:func:`_read_typed`'s ids) as text, as written."""
    cat = [j for j, t in enumerate(df.dtypes) if isinstance(t, pd.CategoricalDtype)]  # one look at 10^5 columns
    return df.assign(**{df.columns[j]: df.iloc[:, j].astype(object) for j in cat}) if cat else df


def _refuse_empty_ids(df: pd.DataFrame, cols: dict, p: Path, codes: dict | None = None) -> None:
    """Raise naming the first row whose model or item id (``cols``: column -> what it names) is empty: read, it
    would be a model (or item) named "". ``codes``: each column's :func:`~effstats._shared._sorted_codes`, whose
    distinct values are checked instead of every row."""
    for c, what in cols.items():
        if c not in df.columns:
            continue
        if codes is not None:
            k, distinct = codes[c]
            blank = np.array([str(v).strip() == "" for v in distinct], bool)[k]
        else:
            ids = df[c]
            blank = (ids.isna() | ids.astype(str).str.strip().eq("")).to_numpy()
        if blank.any():
            row = int(np.argmax(blank))
            raise ValueError(f"path: {p.name}: row {row + 1} (line {row + 2}) has an empty {str(c)!r}; every row "
                             f"names its {what}")


def _one_row_per_pair(df: pd.DataFrame, keys: list[str], score: str | None, duplicates: str, p: Path) -> pd.DataFrame:
    """``df`` with one row per ``keys`` under the ``duplicates`` rule; NaN marks cells not evaluated.

    ``score`` is the value column of a long table; None means every non-key column is a value (a wide table).
    """
    rep = df.duplicated(keys, keep=False)
    if not rep.any():
        return df
    what = "duplicate (model, item) rows" if len(keys) == 2 else f"model ids in column {keys[0]!r} repeat"
    shown = df.loc[rep, keys].drop_duplicates().head(5)
    examples = ", ".join(repr(tuple(r)) if len(keys) == 2 else repr(r[0]) for r in shown.itertuples(index=False))
    if duplicates == "error":
        raise ValueError(
            f"path: {p.name}: {what}, e.g. {examples}; pass duplicates='last', 'first' or 'mean' to choose or "
            "average them"
        )
    if duplicates == "mean":
        values = [score] if score is not None else [c for c in df.columns if c not in keys]
        # pandas' mean skips NaN: the mean of the evaluated values, NaN where none was evaluated
        agg = {c: ("mean" if c in values else "first") for c in df.columns if c not in keys}
        return df.groupby(keys, sort=False, as_index=False).agg(agg)[list(df.columns)]
    warnings.warn(
        f"path: {p.name}: {what}, e.g. {examples}; using the {duplicates} row of each (duplicates={duplicates!r}; "
        "'mean' averages them, 'error' refuses them)",
        UserWarning,
        stacklevel=3,
    )
    kept = df.drop_duplicates(keys, keep=duplicates)
    first_seen = df.groupby(keys, sort=False).ngroup()  # models keep the place of their first row
    return kept.iloc[np.argsort(first_seen[kept.index].to_numpy(), kind="stable")]


def _refuse_items_in_two_tasks(df: pd.DataFrame, item: str, p: Path) -> None:
    """Raise, naming one, when an item id of a long table stands in several tasks: its rows would be one item."""
    tasks = df[[item, "task"]].drop_duplicates()
    two = tasks[item][tasks[item].duplicated()]
    if len(two):
        i = two.iloc[0]
        names = sorted(map(str, tasks.loc[tasks[item] == i, "task"]))
        raise ValueError(f"path: {p.name}: item {str(i)!r} stands in the tasks {names} (column 'task'); "
                         f"{len(two.unique())} item id(s) are ambiguous: make item ids unique across tasks (e.g. "
                         "'<task>/<id>')")


def _named(build, p: Path) -> ResponseMatrix:
    # the table came from `path`: errors about the parsed frame name that argument
    try:
        return build()
    except ValueError as exc:
        msg = str(exc)
        for internal in ("df:", "values:", "model_ids:", "item_ids:", "missing:"):  # names the user never passed
            if msg.startswith(internal):
                raise ValueError(f"path: {p.name}: {msg[len(internal):].strip()}") from None
        raise


def _warn_items_without_score(df: pd.DataFrame, kept: np.ndarray, item: str, codes: dict | None, p: Path) -> None:
    """Warn, in one line, of the items (and whole tasks) that vanish from what is read because no model has a score
    on them (``kept``: the rows with a score)."""
    gone = pd.Index(df[item][~kept].unique()).difference(pd.Index(df[item][kept].unique()))
    if not len(gone) or len(gone) == df[item].nunique():  # none, or all (refused as such)
        return
    names = codes[item][1][gone] if codes is not None and item in codes else gone
    what = f"{len(gone)} item(s) (e.g. {_name_list(map(repr, _plain(list(names[:3]))))})"
    if "task" in df.columns:
        has = df["task"][kept].unique()
        lost = [t for t in pd.unique(df["task"][~kept]) if t not in set(has)]
        if lost:
            what += f", every item of task(s) {_name_list(map(repr, _plain(lost)))},"
    warnings.warn(f"path: {p.name}: {what} have no score from any model (every row not evaluated) and are left out",
                  UserWarning, stacklevel=4)
