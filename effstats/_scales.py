"""Score scales: whether a column of scores is written in fractions, in percent or on a 0–10 rating, judged by its
values (and a header naming percent). Shared by the score-table readers (:mod:`effstats.datasets`), which warn
about columns in percent among fractions, and the audit (:func:`effstats.reliability.audit`), which divides a
table in percent by 100 and refuses a mean over columns on different scales: one judgement, so that a table is
read the same way by both."""
from __future__ import annotations

import re
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


# a header naming a rating scale: a 0–10 or 1–5 column under it stays a rating beside percent columns
_RATING_WORDS = ("rating", "likert", "mt-bench", "mt bench", "mtbench", "judge", "stars", "/10", "/5", "out of")


def names_rating(col: Any) -> bool:
    """Whether a header names a rating ("MT-Bench", "rating (1-5)", "score /10")."""
    return any(w in str(col).lower() for w in _RATING_WORDS)


def _rating_like(v: pd.Series, col: Any) -> bool:
    """Whether a column within [0, 10] reads as a rating rather than as percentages of a hard task: a header
    naming a rating, every value within 1–5 (a Likert scale) or on a half-point grid (whole or half points)."""
    v = v.dropna()
    return bool(names_rating(col) or (v.min() >= 1 and v.max() <= 5) or ((v * 2) % 1 == 0).all())


def in_percent(lo: Any, hi: Any, named: Any = False) -> Any:
    """Whether scores running from ``lo`` to ``hi`` are in percent: within [0, 100] and above 10 somewhere, or
    above 1 under a header naming percent (``named``). Scalars, or Series of columns' minima and maxima."""
    return (lo >= 0) & (hi <= 100) & (hi > FRACTION_MAX) & ((hi > RATING_MAX) | named)


def score_scales(x: pd.DataFrame) -> Scales:
    """The score columns of the numeric table ``x`` by their content: fractions, within [0, 1]; percentages,
    within [0, 100] and above 10 somewhere, or within [0, 100] and above 1 under a header naming % or percent;
    other, within [0, 10] and above 1 elsewhere, whose scale cannot be told (a 0–10 rating, a 1–5 scale). A column
    with negative values, values above 100 (a rating, a count) or no value is in none of the three.

    Beside columns in percent and no column of fractions, a column within [0, 10] that does not read as a rating
    (no header naming one, values neither within 1–5 nor on whole or half points) is in percent: a hard task's
    percentages (every model below 10 %) beside easier ones."""
    lo, hi = x.min(), x.max()
    named = pd.Series([names_percent(c) for c in x.columns], index=x.columns, dtype=bool)
    inside = lo.ge(0) & hi.le(100)
    frac = inside & hi.le(FRACTION_MAX)
    pct = in_percent(lo, hi, named)
    other = inside & hi.gt(FRACTION_MAX) & ~pct
    if pct.any() and not frac.any():
        hard = pd.Series([bool(o) and not _rating_like(x[c], c) for c, o in other.items()], index=x.columns,
                         dtype=bool)
        pct, other = pct | hard, other & ~hard
    return Scales(*(list(x.columns[m.to_numpy()]) for m in (frac, pct, other)))


# the words of a header naming a lower-is-better metric, and of one naming a higher-is-better one or a task about
# errors beside it ("Error detection F1", "Loss-aware accuracy", BBH's "Salient Translation Error Detection")
_LOWER_WORDS = {"error", "errors", "err", "loss", "perplexity", "ppl", "mse", "mae", "rmse", "rmsle", "mape", "wer",
                "cer", "ter", "nll", "ece", "fid", "bpb", "bpc"}
_HIGHER_WORDS = {"accuracy", "acc", "f1", "score", "precision", "recall", "bleu", "rouge", "em", "match", "auc",
                 "correlation", "win", "pass", "rate", "detection", "correction"}


def lower_is_better_name(col: Any) -> bool:
    """Whether a score column's header names a lower-is-better metric by its words ("Mean squared error", "WER",
    "val_loss", "Perplexity (wikitext)"), without a mark of direction (↑ / ↓) and without a word of a score beside
    it, or of a task about errors ("Error detection F1", "Salient Translation Error Detection"; "Error rate" is
    lower-is-better: "rate" beside "error" is the error's)."""
    name = str(col)
    if "↑" in name or "↓" in name:
        return False
    words = set(re.split(r"[^0-9a-z]+", name.lower()))
    return bool(words & _LOWER_WORDS) and not (words & _HIGHER_WORDS - {"rate"})
