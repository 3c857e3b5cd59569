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
_DASH_MINUS = re.compile(r"^(\s*)[\u2212\u2013](?=\s*(\d|\.\d))")


def _column(s: pd.Series, sep: str) -> pd.Series:
    if s.dtype != object:
        return s
    txt = s.astype(str).str.strip().str.replace(_DASH_MINUS, r"\1-", regex=True)
    present = s.notna()
    if sep == ";":
        txt = txt.where(~(present & txt.str.match(_DECIMAL_COMMA)), txt.str.replace(",", ".", regex=False))
    else:
        thousands = present & txt.str.match(_THOUSANDS)
        # a column of numbers some of which carry thousands separators (an Elo of "1,085", "19,999" votes)
        if thousands.any() and (thousands | ~present | txt.str.match(_PLAIN)
                                | txt.str.lower().isin(_MARKERS)).all():
            txt = txt.where(~thousands, txt.str.replace(",", "", regex=False))
    numbers = present & txt.str.match(_PLAIN)
    if not numbers.any():
        return s
    marker = present & ~numbers & txt.str.lower().isin(_MARKERS)
    return s.where(~numbers, txt).where(~marker, MISSING)


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
    return df.apply(lambda s: _column(s, sep))


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
    out = df.copy()
    converted = []
    for c in df.columns:
        s = df[c]
        if s.dtype != object:
            continue
        txt = s.astype(str).str.strip()
        pct = txt.str.endswith("%") & s.notna()
        if not pct.any():
            continue
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
    if col.dtype != object:
        return False
    vals = col.dropna().astype(str).str.strip()
    vals = vals[~vals.isin(["", "-"])]
    return bool(len(vals)) and bool(vals.str.match(_PAIR).all())


def _pair_means(col: pd.Series) -> pd.Series:
    """The mean of the two numbers of each ``a/b`` cell; other cells missing."""
    parts = col.astype(str).str.extract(_PAIR).astype(float)
    return parts.mean(axis=1, skipna=False)


def _text_cells(cells: pd.DataFrame, numbers: pd.DataFrame | None = None) -> pd.DataFrame:
    """Where ``cells`` hold text: neither a number nor not evaluated ('-', empty or missing). ``numbers``: ``cells``
    as numbers (``pd.to_numeric(errors="coerce")``), where the caller has them."""
    if numbers is None:
        numbers = cells.apply(pd.to_numeric, errors="coerce")
    return numbers.isna() & cells.notna() & ~cells.astype(str).apply(lambda c: c.str.strip()).isin(["-", ""])


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
    x = num.apply(pd.to_numeric, errors="coerce").astype(float)
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
