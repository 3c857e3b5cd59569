"""Score scales: whether a column of scores is written in fractions, in percent or on a 0–10 rating, judged by its
values (and a header naming percent). Shared by the score-table readers (:mod:`effstats.datasets`), which warn
about columns in percent among fractions, and the audit (:func:`effstats.reliability.audit`), which divides a
table in percent by 100 and refuses a mean over columns on different scales: one judgement, so that a table is
read the same way by both."""
from __future__ import annotations

from typing import Any, NamedTuple

import pandas as pd

from ._validation import ZERO_ONE_ATOL

# the largest score read as a fraction: floating-point noise above 1 (1 + 1e-12 from a sum of shares) is a fraction
FRACTION_MAX = 1 + ZERO_ONE_ATOL
# above this a column within [0, 100] is percent by its values alone; at most this, only under a header naming
# percent: a 0–10 rating (MT-Bench) or a 1–5 Likert scale is no percentage
RATING_MAX = 10


class Scales(NamedTuple):
    """Score columns by scale, each list in the table's column order."""

    fraction: list
    percent: list
    other: list


def names_percent(col: Any) -> bool:
    """Whether a header names percent ("MMLU %", "accuracy_percent")."""
    return "%" in str(col) or "percent" in str(col).lower()


def in_percent(lo: Any, hi: Any, named: Any = False) -> Any:
    """Whether scores running from ``lo`` to ``hi`` are in percent: within [0, 100] and above 10 somewhere, or
    above 1 under a header naming percent (``named``). Scalars, or Series of columns' minima and maxima."""
    return (lo >= 0) & (hi <= 100) & (hi > FRACTION_MAX) & ((hi > RATING_MAX) | named)


def score_scales(x: pd.DataFrame) -> Scales:
    """The score columns of the numeric table ``x`` by their content: fractions, within [0, 1]; percentages,
    within [0, 100] and above 10 somewhere, or within [0, 100] and above 1 under a header naming % or percent;
    other, within [0, 10] and above 1 elsewhere, whose scale cannot be told (a 0–10 rating, a 1–5 scale). A column
    with negative values, values above 100 (a rating, a count) or no value is in none of the three."""
    lo, hi = x.min(), x.max()
    named = pd.Series([names_percent(c) for c in x.columns], index=x.columns, dtype=bool)
    inside = lo.ge(0) & hi.le(100)
    frac = inside & hi.le(FRACTION_MAX)
    pct = in_percent(lo, hi, named)
    other = inside & hi.gt(FRACTION_MAX) & ~pct
    return Scales(*(list(x.columns[m.to_numpy()]) for m in (frac, pct, other)))
