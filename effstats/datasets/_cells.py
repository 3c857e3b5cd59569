"""The cells of a score table as written by spreadsheets and web pages, made plain before any reader judges them.

One conversion for every path that reads a CSV/TSV score table (the generic wide and long readers and the Open LLM
Leaderboard reader), decided by each column's content, not by its name:

* a decimal comma ("0,53") in a ';'-separated file is a decimal point;
* thousands separators ("1,085", "19,999.5") in a column whose other cells are plain numbers are dropped;
* a typographic minus (U+2212 "−0.4", or an en dash "–0.4" before a number) is a minus sign;
* the not-evaluated markers of spreadsheets and of pandas ('nan', 'N/A', 'n/a', 'NA', '—', '–', '?', 'null',
  'None') in a column holding numbers are written '-', the table's one not-evaluated marker.

Columns holding no number at all (model names, a licence, a type) are left as they are.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

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
    from .._shared import _plain

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
