"""What a score table's column headers say before its values are judged: a published aggregate by its whole name
("Mean win rate ↑ [ sort ]", "Average ⬆️"), numbers that are metadata rather than scores (parameters, likes, rank),
and lower-is-better metrics (marked ↓ or named as an error, a loss or a perplexity), read negated.
"""
from __future__ import annotations

import re
import warnings
from typing import Any, Sequence

import pandas as pd

from .._scales import lower_is_better_name
from .._shared import _name_list

__all__: list[str] = []


# the whole name of an aggregate, once its notes in brackets and its marks (↑, ⬆️, **) are taken off: "Mean IoU",
# "Average Precision" and "Mean squared error" are scenarios, found as aggregates by their values if they are
_AGGREGATE = re.compile(r"mean win rate|win rate|(mean|average|avg\.?|overall|total)( (score|rank|ranking|win rate))?"
                        r"|score|win", re.I)


def _is_aggregate(col: Any) -> bool:
    """A column named as a published aggregate: "Mean win rate ↑ [ sort ]", "Average ⬆️", "average_score", "Mean",
    "Avg. rank", "Average (56 datasets)"; not a metric whose name begins so ("Mean IoU", "Average Precision")."""
    name = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", str(col).replace("_", " "))
    return bool(_AGGREGATE.fullmatch(" ".join(re.sub(r"[^\w. ]", " ", name).split())))


def _named_published(table: pd.DataFrame) -> list:
    """Columns named like a published aggregate ("Mean win rate", "Average ⬆️", "Score", ...)."""
    return [c for c in table.columns if _is_aggregate(c)]


# Columns of public leaderboards that are numbers but not scores (model size, likes, cost, dates, flags).
# Anchored where a task name could contain the word (BBH's "Date Understanding", "Geometric Shapes").
_METADATA = re.compile(r"(param|#params|size|hub|likes|❤|licen[cs]e|\bsha\b|weight type|architecture|\bdate$|flop|"
                       r"flagged|\bmoe\b|co₂|co2|cost|available|merged|chat template|submission|upload|^generation$|"
                       # rank columns (lower is better: scored as a scenario they invert the ranking) and
                       # efficiency / model-shape columns (GLUE, BBH, bigcode, MTEB)
                       r"^\s*(rank|#|position|pos\.?|no\.?)\s*$|throughput|latency|tokens|dimension)", re.I)


def _named_metadata(col: Any, columns: Sequence[Any]) -> bool:
    """A column named like metadata (:data:`_METADATA`), unless its header carries the score marker (↑ / ↓) that at
    least two columns not named like metadata carry too: then it is one of the table's scores (HEIM's "Fractal
    dimension loss ↓" beside its other ↓ scores)."""
    if not _METADATA.search(str(col)):
        return False
    marks = [m for m in "↑↓" if m in str(col)]
    return not marks or sum(1 for c in columns if c != col and any(m in str(c) for m in "↑↓")
                            and not _METADATA.search(str(c))) < 2


def _lower_columns(columns: Sequence[Any], higher_is_better: Sequence[str] | None, warn: bool = False) -> list:
    """The lower-is-better score columns among ``columns``: marked ↓, or named so (:func:`lower_is_better_name`),
    the latter said in one warning where ``warn``; none of ``higher_is_better`` (``--higher-is-better``)."""
    higher = {str(c) for c in higher_is_better or ()}
    lower = [c for c in columns if str(c) not in higher and ("↓" in str(c) or lower_is_better_name(c))]
    named = [c for c in lower if "↓" not in str(c)]
    if warn and named:
        cols = _name_list(repr(str(c)) for c in named)
        warnings.warn(f"SCORES: column(s) {cols} named like a lower-is-better metric (an error, loss or perplexity) "
                      "are read negated, so that higher is better; name them in --higher-is-better (Python: "
                      "higher_is_better=[...]) to read them as they are, or mark such a header ↑ or ↓",
                      UserWarning, stacklevel=4)
    return lower


def _lower_note(lower: list) -> str:
    return (f"{len(lower)} column(s) lower-is-better (marked ↓ or named like an error, loss or perplexity: "
            f"{_name_list(repr(str(c)) for c in lower)}) are negated so that higher is better.")


def _as_published(values: pd.Series, info: dict) -> pd.Series:
    pub = pd.to_numeric(values, errors="coerce")
    pub.attrs["kind"] = info["kind"]
    pub.attrs["info"] = info
    return pub
