"""A delimited score file (CSV/TSV, compressed or not) read into a frame: the id columns as text, the others as
numbers parsed by pandas' C parser, after the checks of its bytes (compression, encoding, NUL characters) and its
header line; the general path of :func:`effstats.datasets.read_scores_csv`."""
from __future__ import annotations

import importlib.util
import lzma
import warnings
import zipfile
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import pandas as pd

from .._shared import _is_float, _progress
from ._files import _compression_of
from ._table_layouts import _EXPECTED, _MODEL_NAMES


_UTF16 = (b"\xff\xfe", b"\xfe\xff")
_NUL_BLOCK = 2**24  # bytes searched for a NUL character at once
_NARROW = 64  # columns of a table whose not-evaluated markers are set per column (its id columns keep theirs)
_ONE_PASS_BYTES = 256 * 2**20
_WIDE_CHUNK_CELLS = 2**24  # cells of a large wide table parsed at once: ~200 MB of tokens
_LONG_CHUNK_ROWS = 2**22  # rows of a long table parsed at once: ~200 MB of tokens


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


def first_text_line(lines: Iterable[bytes]) -> bytes:
    """The first of ``lines`` that is not blank, a byte order mark at its head dropped (a BOM alone is blank), as
    the table reader finds a table's header; b"" where every line is blank. ``lines`` is read up to that line."""
    return next((x for x in (x.lstrip(b"\xef\xbb\xbf") for x in lines) if x.strip()), b"")


def refuse_json_lines(p: Path, compression: str | None, name: str = "path", expected: str = "",
                      table: str = "a CSV/TSV table") -> None:
    """Raise where the file holds JSON lines (its first non-blank line parses as a JSON object) whatever its name:
    read as a table, its fields would be JSON's keys and values, refused as non-numeric columns. ``expected``: what
    the caller reads instead, appended to the message; ``table``: what the file is not."""
    import json

    try:
        with _open_bytes(p, compression) as handle:
            f = getattr(handle, "handle", handle)
            line = first_text_line(iter(lambda: f.readline(_NUL_BLOCK), b""))
    except Exception:  # damaged compressed data (errors vary by compressor): the table reader names it
        return
    line = line.strip()
    if not line.startswith(b"{"):  # a table's header does not: most files are decided without parsing
        return
    try:
        is_object = isinstance(json.loads(line), dict)
    except ValueError:  # UnicodeDecodeError too
        return
    if is_object:
        raise ValueError(f"{name}: {p.name} holds JSON lines (its first non-blank line is a JSON object), not "
                         f"{table}{expected}")


def _refuse_nul(p: Path, sep: str, compression: str | None, name: str = "path") -> None:
    """Raise naming the line and the column of the first NUL character: pandas' parser ends a field there, which
    would read ``"a\\0b"`` as ``"a"``, another row's id, without a word. ``name``: the argument the message names."""
    with _open_bytes(p, compression) as handle:
        f = getattr(handle, "handle", handle)
        head = f.read(_NUL_BLOCK)
        if head.startswith(_UTF16):
            raise ValueError(f"{name}: {p.name} is UTF-16 text; save it as UTF-8 (a CSV file's usual encoding)")
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
    raise ValueError(f"{name}: {p.name}: line {number}, {col} holds a NUL character ({cell!r}); pandas would cut "
                     f"the value there (read as {cut!r}): remove the NUL bytes from the file (a corrupted or binary "
                     "export?)")


def refuse_short_rows(p: Path, sep: str, header: list[str], compression: str | None = None,
                      name: str = "path") -> None:
    """Raise naming the first line (after the header) holding fewer fields than the ``header`` names, unnamed last
    columns aside: pandas' parser reads the missing fields as missing cells, "not evaluated", without a word (a file
    cut off mid-line: a truncated download, one still being written). Called where a table's last column has a
    missing cell, where such a row shows first. Unquoted text is counted by numpy a block at a time, quoted text
    (a separator or a line feed may lie inside a field) by :mod:`csv`; blank lines are skipped, as pandas does.
    ``name`` is the argument the message names."""
    n = len(header)
    while n > 1 and not str(header[n - 1]).strip():
        n -= 1
    if n < 2 or len(sep.encode()) != 1:
        return
    with _open_bytes(p, compression) as handle:
        f = getattr(handle, "handle", handle)
        before, first = 0, True
        for part, arr, starts, ends, last in _line_blocks(f):
            if b'"' in part:
                break
            seps = np.flatnonzero(arr == sep.encode()[0])
            fields = np.searchsorted(seps, ends) - np.searchsorted(seps, starts) + 1
            cr = (ends > starts) & (arr[np.maximum(ends - 1, 0)] == 13) if len(arr) else ends > starts
            short = (fields < n) & (ends - starts - cr > 0)
            short[:int(first)] = False  # the header
            first = first and not len(ends)
            if short.any():
                k = int(np.argmax(short))
                _short_row(name, p, before + k + 1, int(fields[k]), n)
            before += len(ends)
            if last:
                return
    import csv
    import io

    with _open_bytes(p, compression) as handle:
        lines = io.TextIOWrapper(getattr(handle, "handle", handle), encoding="utf-8-sig", errors="replace", newline="")
        rows = csv.reader(lines, delimiter=sep)
        next(rows, None)
        for row in rows:
            if row and len(row) < n:
                _short_row(name, p, rows.line_num, len(row), n)


def _line_blocks(f: Any) -> Iterator[tuple[bytes, np.ndarray, np.ndarray, np.ndarray, bool]]:
    """The rest of the binary file ``f`` in blocks of whole lines: ``(part, its bytes as uint8, the lines' starts
    and ends (the offsets of their line feeds, or the part's end for a last line without one), whether it is the
    last)``, the lines counted by numpy a block at a time."""
    rest = b""
    while True:
        block = f.read(_NUL_BLOCK)
        data = rest + block
        cut = data.rfind(b"\n") + 1 if block else len(data)
        part, rest = data[:cut], data[cut:]
        arr = np.frombuffer(part, np.uint8)
        ends = np.flatnonzero(arr == 10)
        if not block and len(arr) and arr[-1] != 10:
            ends = np.append(ends, len(arr))  # the last line, without its line feed
        yield part, arr, np.r_[0, ends[:-1] + 1].astype(np.int64), ends, not block
        if not block:
            return


def record_line(p: Path, record: int, start: int = 0, sep: str = ",") -> int:
    """The line (counted from 1 over the whole file) of record number ``record`` of the lines from byte ``start``
    of ``p`` (a record's start; the header is record 0 of the lines from byte 0), the records counted as pandas'
    parser reads them: blank lines (white space only) are none. Lines are counted by numpy a block at a time; from
    a block holding a quote (a field may hold a line feed) or a carriage return alone (a line end to pandas), the
    records are read by :mod:`csv`, and the line is the one the record ends on. Called once a record is refused,
    it reads the file up to that record."""
    compression = _compression(p)
    with _open_bytes(p, compression) as handle:
        f = getattr(handle, "handle", handle)
        line, left = 1, start
        while left > 0:
            block = f.read(min(_NUL_BLOCK, left))
            if not block:
                break
            line, left = line + block.count(b"\n"), left - len(block)
        seen, offset = 0, start  # records before the part, its byte offset
        for part, arr, starts, ends, last in _line_blocks(f):
            if b'"' in part or part.count(b"\r") != part.count(b"\r\n"):
                break
            filled = ends > starts
            # a line of white space only is no record: rare, each line starting with a space or a tab looked at
            first = arr[np.minimum(starts, len(arr) - 1)] if len(arr) else np.zeros(0, np.uint8)
            for j in np.flatnonzero(filled & np.isin(first, (9, 13, 32))):
                filled[j] = bool(part[starts[j]:ends[j]].strip())
            at = np.flatnonzero(filled)
            if seen + len(at) > record:
                return line + int(at[record - seen])
            seen, line, offset = seen + len(at), line + len(ends), offset + len(part)
            if last:
                return line  # past the last record
    import csv
    import io

    with _open_bytes(p, compression) as handle:
        f = getattr(handle, "handle", handle)
        while offset > 0:
            got = len(f.read(min(_NUL_BLOCK, offset)))
            offset = 0 if not got else offset - got
        rows = csv.reader(io.TextIOWrapper(f, encoding="utf-8", errors="replace", newline=""), delimiter=sep)
        for row in rows:
            if any(c.strip() for c in row):
                if seen == record:
                    return line + rows.line_num - 1
                seen += 1
        return line + rows.line_num


def _short_row(name: str, p: Path, line: int, fields: int, n: int) -> None:
    raise ValueError(f"{name}: {p.name}: line {line} has {fields} field{'' if fields == 1 else 's'}, the header {n}: "
                     "its missing fields would read as not evaluated (a truncated file, or one still being "
                     "written?); complete the line or remove it")


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
    watched: list[_Watched] = []

    def watch(reader: Any) -> _Watched:
        watched.append(_Watched(reader))
        return watched[-1]

    read = (lambda f: _joined_chunks(watch(pd.read_csv(f, **kw)), pair)) if len(pair) == 2 \
        else partial(pd.read_csv, **kw)
    if not narrow and kw["low_memory"]:
        # a large wide table in chunks of rows, each parsed in one pass: pandas' chunked reader would split it into
        # chunks of a few dozen rows (2**20 bytes over the columns) and pay per column and chunk, 2.6x the CPU at
        # 30,000 columns
        kw.update(low_memory=False, chunksize=max(1, _WIDE_CHUNK_CELLS // len(names)))
        read = lambda f: _stacked_chunks(watch(pd.read_csv(f, **kw)))  # noqa: E731
    if compression is not None:
        df = read(p)
    else:  # the bytes parsed so far, on a terminal when the read takes a while
        with open(p, "rb") as raw, _progress(progress, total=p.stat().st_size, desc=f"reading {p.name}", unit="B",
                                             unit_scale=True) as bar:
            df = read(_Counted(raw, bar.update))
    if any(w.gap for w in watched) if watched else df.shape[1] and df.iloc[:, -1].isna().any():
        refuse_short_rows(p, sep, header, compression)  # before empty text cells and missing ones are joined
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
    # a chunk's True/False column beside another's numbers: joined as objects, as by _stacked_chunks (pandas 1.5
    # warns of a column of booleans as objects, which _read_typed hands to the text path)
    flags = {c for chunk in rest for c in chunk.columns[(chunk.dtypes == bool).to_numpy()]} if len(rest) > 1 else ()
    with warnings.catch_warnings():
        if flags:
            warnings.simplefilter("ignore", FutureWarning)
            rest = [chunk.astype({c: object for c in flags}) for chunk in rest]
        out = pd.concat(rest, ignore_index=True, copy=False) if len(rest) > 1 else rest[0]
    for c in cats:
        order = np.argsort(seen[c].to_numpy(), kind="stable")
        rank = np.empty(len(order), np.int32)
        rank[order] = np.arange(len(order))
        out[c] = pd.Categorical.from_codes(rank[np.concatenate(codes[c])], seen[c][order])
    return out[columns]


class _Watched:
    """A chunked reader of pandas noting whether a chunk's last column has a missing cell, where a row of fewer
    fields than the header shows (see :func:`refuse_short_rows`)."""

    def __init__(self, reader: Any) -> None:
        self._reader, self.gap = reader, False

    def __enter__(self) -> _Watched:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._reader.close()

    def __iter__(self):
        for chunk in self._reader:
            self.gap = self.gap or (chunk.shape[1] > 0 and bool(chunk.iloc[:, -1].isna().any()))
            yield chunk


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


def excel_sep_hint(p: Path, encoding: str = "utf-8-sig") -> str | None:
    """The delimiter a first line ``sep=;`` names (Excel writes it in CSV files for other locales, and reads the
    rest with that delimiter), or None where the first line is not such a hint (a compressed file: not read)."""
    try:
        with open(p, encoding=encoding, errors="replace", newline="") as f:
            line = f.readline(64).strip("\r\n\ufeff")
    except OSError:
        return None
    return line[4] if len(line) == 5 and line.lower().startswith("sep=") and line[4] in ",;\t|" else None


def refuse_workbook(p: Path, name: str = "path") -> None:
    """Raise where ``p`` is a spreadsheet workbook (Excel .xlsx, OpenDocument .ods: a zip file of XML parts), not a
    zip-compressed CSV: read as text it fails with a codec's complaint that names no cause."""
    try:
        with zipfile.ZipFile(p) as z:
            parts = z.namelist()
    except (OSError, zipfile.BadZipFile):
        return
    kind = ("an Excel workbook" if any(n.startswith("xl/") for n in parts) else
            "an OpenDocument spreadsheet" if "content.xml" in parts and "mimetype" in parts else None)
    if kind:
        raise ValueError(f"{name}: {p.name} is {kind} (a zip file of XML), not CSV/TSV text; save the sheet as CSV "
                         "UTF-8 (File > Save As) and pass that file")


def _read_delimited(p: Path, sep: str, text: _TextColumns | None = None,
                    progress: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """The table (every cell as text, or :func:`_read_typed`'s number columns given ``text``) and its header."""
    compression = None
    try:
        refuse_workbook(p)
        compression = _compression(p)
        hint = None if compression else excel_sep_hint(p)
        if hint:
            raise ValueError(f"path: {p.name}: line 1 {f'sep={hint}'!r} is Excel's delimiter hint, not the header: "
                             "delete that line")
        _refuse_nul(p, sep, compression)
        header = _header(p, sep, compression)
        for index_col in (None, False):
            typed = None if text is None else _read_typed(p, sep, header, text, progress, compression, index_col)
            df = typed if typed is not None else pd.read_csv(p, sep=sep, dtype=str, keep_default_na=False,
                                                             compression=compression, index_col=index_col)
            if typed is None and df.shape[1] and (df.iloc[:, -1].isna() | (df.iloc[:, -1] == "")).any():
                refuse_short_rows(p, sep, header, compression)  # pandas reads a missing field as "" here
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
        raise ValueError(f"path: {p.name} is not a readable delimited table ({str(exc).strip()})") from None


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
