"""What the score readers' options choose from a table: the score columns (``--scenarios`` / ``--exclude``) and
one row per model where a model is listed more than once (``--duplicates``), the published aggregate's rows kept
with the scores'.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import pandas as pd

from .._shared import _plain
from .._validation import check_option
from ._score_options import DUPLICATE_POLICIES

__all__: list[str] = []


def comma_note(columns: Any) -> str:
    """How to name the columns whose names hold a comma, for a refusal of unknown column names: ``""`` where none
    does."""
    named = [str(c) for c in columns if "," in str(c)]
    if not named:
        return ""
    shown = str(_plain(named[0])).replace(",", "\\,")
    return f"; a comma inside a column's name is written \\, (e.g. {shown})"


def _check_duplicates(duplicates: Any) -> str:
    return check_option(duplicates, "--duplicates", DUPLICATE_POLICIES)


def _check_column_lists(scenarios: Sequence[str] | None, exclude: Sequence[str] | None) -> None:
    """Refuse a column named twice in ``--scenarios`` or ``--exclude``, or named in both."""
    for arg, names in (("--scenarios", scenarios), ("--exclude", exclude)):
        twice = [n for i, n in enumerate(names or []) if n in list(names or [])[:i]]
        if twice:
            raise ValueError(f"{arg}: {_plain(str(twice[0]))!r} named twice; name each column once")
    both = [n for n in exclude or [] if n in set(scenarios or [])]
    if both:
        raise ValueError(f"--exclude: {_plain(str(both[0]))!r} is also in --scenarios; name it in one of them")


def _select(wide: pd.DataFrame, scenarios: Sequence[str] | None, exclude: Sequence[str] | None) -> pd.DataFrame:
    cols = [str(c) for c in wide.columns]
    wide = wide.set_axis(cols, axis=1)
    for arg, names in (("--scenarios", scenarios), ("--exclude", exclude)):
        unknown = [n for n in names or [] if n not in cols]
        if unknown:
            raise ValueError(f"{arg}: unknown column(s) {unknown} (columns: {cols}){comma_note(cols)}")
    if scenarios:
        wide = wide[list(scenarios)]
    if exclude:
        wide = wide.drop(columns=list(exclude))
    if wide.shape[1] < 2:
        raise ValueError(f"--scenarios: at least 2 score columns are needed, got {list(wide.columns)}")
    return wide


def _dedupe(wide: pd.DataFrame, duplicates: str, *, hint: str = "", order: str = "") -> pd.DataFrame:
    """Rows sharing a model name (resubmissions): refused, or one row kept or their mean, said in a warning.

    ``wide`` holds numbers (NaN = not evaluated); "mean" averages each column over the evaluated rows. ``order``:
    a column of the file holding times (a run's timestamp), named where a row is kept by its place in the file.
    """
    dup = wide.index.duplicated(keep=False)
    if not dup.any():
        return wide
    names = wide.index[dup].unique()
    n, rows = len(names), int(dup.sum())
    eg = ", ".join(map(repr, names[:3].tolist())) + (" …" if n > 3 else "")
    if duplicates == "error":
        raise ValueError(f"SCORES: {n} model(s) appear in more than one row (e.g. {eg}){hint}; keep one row each or "
                         "pass --duplicates last|first|mean")
    if duplicates == "mean":
        out = wide.groupby(level=0, sort=False).mean()
        how = "averaged their rows"
    else:
        out = wide[~wide.index.duplicated(keep=duplicates)]
        how = (f"kept the {duplicates} row of each in file order (no date column is read: sort the rows"
               + (f" by {order!r}, which holds times," if order else "") + " to keep the latest)")
    warnings.warn(f"--duplicates: {n} model(s) appear in more than one row ({rows} rows, e.g. {eg}); {how}"
                  f" (--duplicates error|first|last|mean){hint}", UserWarning, stacklevel=3)
    return out


def _dedupe_with(num: pd.DataFrame, published: pd.Series | None, duplicates: str,
                 hint: str, order: str = "") -> tuple[pd.DataFrame, pd.Series | None]:
    """Resolve repeated models in the scores and the published aggregate alike (they share the rows)."""
    if not num.index.has_duplicates:
        return num, published
    key = "\0published"  # a column name no table uses
    both = num.assign(**{key: published.to_numpy()}) if published is not None else num
    both = _dedupe(both, duplicates, hint=hint, order=order)
    if published is None:
        return both, None
    pub = both.pop(key)
    pub.attrs.update(published.attrs)
    return both, pub
