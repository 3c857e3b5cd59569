"""The cells of a score table as written by spreadsheets and web pages, made plain before any reader judges them.

One conversion for every path that reads a CSV/TSV score table (the generic wide and long readers and the Open LLM
Leaderboard reader), decided by each column's content, not by its name:

* a decimal comma ("0,53") in a ';'-separated file is a decimal point;
* thousands separators ("1,085", "19,999.5") in a column whose other cells are plain numbers are dropped;
* a typographic minus (U+2212 "−0.4", or an en dash "–0.4" before a number) is a minus sign;
* the not-evaluated markers of spreadsheets and of pandas ('nan', 'N/A', 'n/a', 'NA', '—', '–', '?', 'null',
  'None') in a column holding numbers are written '-', the table's one not-evaluated marker.

Columns holding no number at all (model names, a licence, a type) are left as they are.

Then the readers judge the plain cells with the checks below: percentages become fractions, two numbers in a cell
('a/b') their mean; a cell of text, an infinite score or a stray value among fractions is refused by its row and
column; columns on a 0–100 scale among fractions are warned of.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._scales import FRACTION_MAX, score_scales
from .._shared import _name_list, _plain

__all__: list[str] = []

MISSING = "-"
_MARKERS = frozenset({"nan", "n/a", "na", "—", "–", "?", "null", "none", "-", ""})
_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d+,\d+\s*%?\s*$")
_THOUSANDS = re.compile(r"^\s*[-+]?[1-9]\d{0,2}(,\d{3})+(\.\d+)?\s*%?\s*$")
_PLAIN = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*%?\s*$")
_INTEGER = re.compile(r"-?\d{1,15}")
_DASH_MINUS = re.compile(r"^(\s*)[\u2212\u2013](?=\s*(\d|\.\d))")


def _stacked(df: pd.DataFrame) -> tuple[list[int], pd.Series, np.ndarray]:
    """The positions of ``df``'s text (object) columns, their cells as one Series, column after column, and the cells'
    presence as an array of rows × those columns: the checks of a table of thousands of columns run once over the
    cells, not once a column."""
    cols = [j for j, t in enumerate(df.dtypes) if t == object]
    cells = df.iloc[:, cols].to_numpy(dtype=object).ravel(order="F") if cols else np.empty(0, object)
    flat = pd.Series(cells, dtype=object)
    return cols, flat, flat.notna().to_numpy().reshape(len(df), len(cols), order="F")


def _grid(mask: pd.Series | np.ndarray, n_rows: int) -> np.ndarray:
    """A per-cell mask of :func:`_stacked`'s cells as rows × columns."""
    return np.asarray(mask, dtype=bool).reshape(n_rows, -1, order="F")


def plain_cells(df: pd.DataFrame, sep: str = ",") -> pd.DataFrame:
    """``df`` (text cells, NaN for empty) with its number cells made plain and its not-evaluated markers '-'.

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats.datasets._cells import plain_cells
    >>> t = pd.DataFrame({"model": ["a", "b", "c"], "Elo": ["1,085", "998", "N/A"], "AX": ["\u22120.4", "0.2", "nan"]})
    >>> plain_cells(t).values.tolist()
    [['a', '1085', '-0.4'], ['b', '998', '0.2'], ['c', '-', '-']]
    """
    cols, flat, present = _stacked(df)
    if not cols or not len(df):
        return df
    n = len(df)
    txt = flat.astype(str).str.strip().str.replace(_DASH_MINUS, r"\1-", regex=True)
    here = present.ravel(order="F")
    if sep == ";":
        txt = txt.where(~(here & txt.str.match(_DECIMAL_COMMA).to_numpy(dtype=bool)),
                        txt.str.replace(",", ".", regex=False))
    else:
        thousands = _grid(txt.str.match(_THOUSANDS), n) & present
        # a column of numbers some of which carry thousands separators (an Elo of "1,085", "19,999" votes)
        plain = _grid(txt.str.match(_PLAIN) | txt.str.lower().isin(_MARKERS), n)
        grouped = thousands & (thousands.any(axis=0) & (thousands | ~present | plain).all(axis=0))
        if grouped.any():
            txt = txt.where(~grouped.ravel(order="F"), txt.str.replace(",", "", regex=False))
    numbers = _grid(txt.str.match(_PLAIN), n) & present
    if not numbers.any():
        return df
    # columns holding no number at all (model names, a licence) stay as written, markers too
    marker = (~numbers & present & _grid(txt.str.lower().isin(_MARKERS), n) & numbers.any(axis=0)).ravel(order="F")
    out = flat.where(~numbers.ravel(order="F"), txt).where(~marker, MISSING).to_numpy(dtype=object)
    block = pd.DataFrame(out.reshape(n, len(cols), order="F"), index=df.index, columns=df.columns[cols])
    if len(cols) == df.shape[1]:
        return block
    res = df.copy()
    for k, j in enumerate(cols):
        res.isetitem(j, block.iloc[:, k])
    return res


def as_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame.apply(pd.to_numeric, errors="coerce")`` with its text columns parsed in one call over their cells:
    the values and dtypes pandas gives column by column (a column whose every cell is a whole number, which pandas
    may read as integers, is parsed on its own).

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats.datasets._cells import as_numbers
    >>> t = pd.DataFrame({"a": ["0.5", "-"], "b": ["1", "2"], "c": ["x", "0.25"]})
    >>> as_numbers(t).dtypes.tolist(), as_numbers(t).to_numpy().tolist()
    ([dtype('float64'), dtype('int64'), dtype('float64')], [[0.5, 1.0, nan], [nan, 2.0, 0.25]])
    """
    cols, flat, _ = _stacked(frame)
    if len(cols) < 2 or not len(frame):
        return frame.apply(pd.to_numeric, errors="coerce") if cols else frame.copy()
    n = len(frame)
    vals = pd.to_numeric(flat, errors="coerce").to_numpy(dtype=float).reshape(n, len(cols), order="F")
    with np.errstate(invalid="ignore"):
        alone = ~np.isnan(vals).any(axis=0) & (vals == np.round(vals)).all(axis=0)
    # integers written plainly (at most 15 digits: exact as floats) are what pandas reads as int64
    written = flat.map(type).eq(str).to_numpy() & flat.astype(str).str.fullmatch(_INTEGER).to_numpy(dtype=bool)
    ints = alone & _grid(written, n).all(axis=0)
    columns: dict[int, Any] = {j: vals[:, k].astype(np.int64) if ints[k] else vals[:, k] for k, j in enumerate(cols)}
    for k, j in enumerate(cols):
        if alone[k] and not ints[k]:
            columns[j] = pd.to_numeric(frame.iloc[:, j], errors="coerce").array
    for j in set(range(frame.shape[1])) - set(cols):
        columns[j] = pd.to_numeric(frame.iloc[:, j], errors="coerce").array
    out = pd.DataFrame({j: columns[j] for j in range(frame.shape[1])}, index=frame.index)
    out.columns = frame.columns
    return out


def text_cell_message(cells: pd.DataFrame, bad: pd.DataFrame, column: object, name: str = "",
                      exclude: bool = True) -> str:
    """One line naming the first cell of ``column`` that ``bad`` marks as text (not a number, not '-' / empty), by
    its row, its line in the file, its model (``cells``' index) and its value; a row repeating the header (two
    tables pasted together) or a first row of text in every column (a second header row) is named as such."""
    i = int(np.argmax(bad[column].to_numpy()))
    row = cells.iloc[i].astype(str).str.strip()
    heads = pd.Series([str(c).strip() for c in cells.columns], index=cells.columns)
    where = f"{name}: " if name else ""
    if (row == heads).sum() >= max(2, (len(heads) + 1) // 2):
        return (f"SCORES: {where}line {i + 2} (row {i + 1}) repeats the header ({_plain(str(column))!r} …): two "
                "tables pasted together? delete that line")
    if i == 0 and len(cells) > 1 and bad.iloc[0].sum() >= max(2, (bad.shape[1] + 1) // 2):
        eg = ", ".join(repr(_plain(v)) for v in row[bad.iloc[0].to_numpy()][:4])
        return (f"SCORES: {where}line 2 is text in {int(bad.iloc[0].sum())} of {bad.shape[1]} score columns ({eg} "
                "…): a second header row? merge the header rows into one line")
    return (f"SCORES: {where}row {i + 1} (line {i + 2}, model {_plain(cells.index[i])!r}), column {str(column)!r} "
            f"holds {_plain(cells[column].iloc[i])!r}, not a number ('-' or empty for not evaluated); correct it"
            + (f", or leave the column out with --exclude {str(column)!r}" if exclude else ""))


def _percent(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Cells written as percentages ("85.3%") → fractions; a column mixing "%" cells and plain numbers is refused."""
    cols, flat, present = _stacked(df)
    ends = _grid(flat.astype(str).str.strip().str.endswith("%"), len(df)) & present if cols else present
    with_pct = [df.columns[j] for k, j in enumerate(cols) if ends[:, k].any()]  # the others are left as they are
    out = df.copy()
    converted = []
    for c in with_pct:
        s = df[c]
        txt = s.astype(str).str.strip()
        pct = txt.str.endswith("%") & s.notna()
        other = s.notna() & ~pct & ~txt.isin(["-", ""])
        if other.any():
            raise ValueError(f"SCORES: column {c!r} mixes percentages and plain numbers (e.g. "
                             f"{_plain(s[other].iloc[0])!r}); "
                             "write them one way")
        vals = pd.to_numeric(txt.where(pct).str.rstrip("%").str.strip(), errors="coerce") / 100
        bad = pct & vals.isna()
        if bad.any():
            raise ValueError(f"SCORES: column {c!r} has a malformed percentage, e.g. {_plain(s[bad].iloc[0])!r}")
        out[c] = vals.where(pct, s)
        converted.append(str(c))
    return out, converted


_PAIR = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*/\s*(-?\d+(?:\.\d+)?)\s*$")


def _is_metric_pairs(col: pd.Series) -> bool:
    """Whether a text column holds two numbers a cell (``94.2/92.3``; GLUE's F1/accuracy), '-' or empty aside."""
    return bool(len(_metric_pair_columns(col.to_frame())))


def _metric_pair_columns(df: pd.DataFrame) -> list:
    """The text columns of ``df`` that hold two numbers a cell (:func:`_is_metric_pairs`), judged in one pass over
    the cells."""
    cols, flat, present = _stacked(df)
    if not cols or not len(df):
        return []
    txt = flat.astype(str).str.strip()
    held = _grid(~txt.isin(["", "-"]), len(df)) & present
    pairs = _grid(txt.str.match(_PAIR), len(df))
    found = held.any(axis=0) & (pairs | ~held).all(axis=0)
    return [df.columns[j] for k, j in enumerate(cols) if found[k]]


def _pair_means(col: pd.Series) -> pd.Series:
    """The mean of the two numbers of each ``a/b`` cell; other cells missing."""
    parts = col.astype(str).str.extract(_PAIR).astype(float)
    return parts.mean(axis=1, skipna=False)


def _text_cells(cells: pd.DataFrame, numbers: pd.DataFrame | None = None) -> pd.DataFrame:
    """Where ``cells`` hold text: neither a number nor not evaluated ('-', empty or missing). ``numbers``: ``cells``
    as numbers (``pd.to_numeric(errors="coerce")``), where the caller has them."""
    if numbers is None:
        numbers = as_numbers(cells)
    written = pd.Series(cells.astype(str).to_numpy(dtype=object).ravel(order="F"), dtype=object)
    blank = written.str.strip().isin(["-", ""]).to_numpy().reshape(cells.shape, order="F")
    return numbers.isna() & cells.notna() & ~pd.DataFrame(blank, index=cells.index, columns=cells.columns)


def _refuse_text_cells(df: pd.DataFrame, columns: Sequence[Any], ids: pd.Index, path: Path,
                       exclude: bool = True) -> None:
    """Raise naming the first cell of ``columns`` that is not a number ('-' or empty: not evaluated) by its row, line,
    model and column (:func:`._cells.text_cell_message`): read as missing, it would rank the model on its other
    columns alone."""
    cells = df[list(columns)].set_axis(ids)
    text = _text_cells(cells)
    for c in columns:
        if text[c].any():
            raise ValueError(text_cell_message(cells, text, c, path.name, exclude=exclude))


def _refuse_infinite(num: pd.DataFrame) -> None:
    """Raise naming the first infinite cell's column and row (before anything compares or fits the columns)."""
    inf = np.isinf(num.to_numpy(dtype=float))
    if inf.any():
        row, col = (int(i[0]) for i in np.nonzero(inf))
        raise ValueError(f"SCORES: infinite score in column {str(num.columns[col])!r}, row {str(num.index[row])!r}"
                         f"{f' ({int(inf.sum())} in all)' if inf.sum() > 1 else ''}; scores must be finite")


def _refuse_stray_cells(num: pd.DataFrame) -> None:
    """Refuse a few cells outside [0, 1] in a table of fractions (a typo such as 100, 1.2 or -0.2 among scores in
    [0, 1]), naming each by model, column and value: read as they are, such a column would be taken for percent or
    for a summary column, and a mean would be dominated by the cell. Only a table whose every column is within [0, 1]
    but for at most one cell in ten is judged; rows outside it in half their columns or more are left for the check
    of rows on two scales."""
    x = as_numbers(num).astype(float)
    if x.shape[1] == 0 or len(x) < 5:
        return
    above = (x > FRACTION_MAX) | (x < 0)
    rows = (above.sum(axis=1) < 0.5 * x.notna().sum(axis=1)).to_numpy()
    if rows.sum() < max(5, len(x) / 2):
        return
    over = above.to_numpy() & rows[:, None]
    k, n = over.sum(axis=0), x[rows].notna().sum().to_numpy()
    if not over.any() or (k > np.maximum(1, n // 10)).any():
        return
    cells = [f"{str(x.index[i])!r} in {str(x.columns[j])!r} = {_plain(x.iat[i, j]):g}"
             for i, j in zip(*np.nonzero(over))]
    raise ValueError(f"SCORES: cell(s) outside [0, 1] among fractions: {_name_list(cells, 5)}; correct them (a "
                     "typo?) or leave the column(s) out with --exclude")


class PercentColumnsWarning(UserWarning):
    """Columns on a 0–100 scale among columns of fractions, as read (a stated scale leaves them unjudged)."""


def _warn_percent_columns(num: pd.DataFrame, left_out: Any = ()) -> None:
    """Warn naming the columns in percent (``effstats._scales.score_scales``, the audit's judgement) among more
    columns of fractions: a mean over them is dominated by them. Where every such column is ``left_out`` of the
    scores (summary columns), the warning says so instead of what a mean over them would need."""
    frac, pct, _ = score_scales(num)
    if len(frac) >= 2 and 0 < len(pct) < len(frac):
        top = num[pct].max().max()
        head = (f"SCORES: column(s) {_name_list(map(repr, map(str, pct)))} hold values up to {_plain(top):g} while "
                f"{len(frac)} other columns are fractions in [0, 1]: percentages? ")
        if set(pct) <= set(left_out):
            tail = ("They are left out of the scores as summary columns (off the other columns' scale); name the "
                    "score columns with --scenarios to keep them (divided by 100, or with --scale as-is)")
        else:
            tail = ("A mean across them weighs them 100 times more (the report says whether the audit takes one; "
                    "the Mean Win Rate compares models within each column): put them on one scale (divide them by "
                    "100), leave them out with --exclude, or state --scale as-is")
        warnings.warn(head + tail, PercentColumnsWarning, stacklevel=3)
