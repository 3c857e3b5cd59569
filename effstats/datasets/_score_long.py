"""Long score tables: one row per (model, scenario), or per (model, example) with an item column, read into a
models × scenarios table or a :class:`effstats.responses.ResponseMatrix` (:func:`effstats.datasets.read_scores`'s long
layout).
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._shared import _plain
from ._cells import _percent, _text_cells
from ._model_names import _refuse_empty_names
from ._summaries import _foot_rows, _foot_text

__all__: list[str] = []


def _read_long(df: pd.DataFrame, *, by: str, model: str, item: str, score: str, scenarios: Sequence[str] | None,
               exclude: Sequence[str] | None, duplicates: str) -> Any:
    from ..responses import ResponseMatrix

    cols = list(df.columns)
    if by not in cols:
        # the loop's long tables name an item's task "task", which is the scenario here
        hint = "; its scenarios in column 'task': pass --by task" if by == "scenario" and "task" in cols else ""
        raise ValueError(f"--by: column {by!r} not in the table (columns: {cols}){hint}")
    _refuse_empty_names(df[model], model)
    df, _ = _percent(df)
    s = pd.to_numeric(df[score], errors="coerce")
    # '-' / empty: not evaluated, as in a wide table
    text = _text_cells(df[[score]], s.to_frame(score))[score].to_numpy()
    if text.any():
        i = int(np.argmax(text))
        raise ValueError(f"SCORES: row {i + 1} (line {i + 2}, model {_plain(df[model].iloc[i])!r}), column {score!r} "
                         f"holds {_plain(df[score].iloc[i])!r}, not a number ('-' or empty for not evaluated)")
    if np.isinf(s).any():
        raise ValueError(f"SCORES: column {score!r} has infinite values; scores must be finite")
    df = df.assign(**{score: s})
    if scenarios or exclude:
        keep = set(scenarios or df[by].unique()) - set(exclude or [])
        unknown = sorted(set(scenarios or []) | set(exclude or []) - set(df[by].astype(str)))
        if unknown:
            raise ValueError(f"--scenarios: unknown {by} value(s) {unknown}")
        df = df[df[by].astype(str).isin(keep)]
    keys = [by, item] if item in cols else [by]
    # a row not evaluated ('-', empty) is a missing cell, as ResponseMatrix.from_long reads it, not a run: beside an
    # evaluated row of its cell it is no duplicate and is dropped (of a cell no row evaluates, one row is kept)
    unscored = df[score].isna()
    if unscored.any():
        scored = df[score].notna().groupby([df[c] for c in [model, *keys]], sort=False, dropna=False).transform("any")
        df = df[~(unscored & (scored | df.duplicated([model, *keys])))]
    # one score per (model, cell): repeated rows are resubmissions of a model, handled like repeated rows of a
    # wide table (the key of a row is the model; the cell is the rest of the key)
    flat = df.set_index([model, *keys])[score]
    if flat.index.has_duplicates:
        if duplicates == "error":
            first = list(flat.index[flat.index.duplicated()][0])
            raise ValueError(f"SCORES: duplicate (model, {', '.join(keys)}) rows, e.g. {first}; keep one row each or "
                             "pass --duplicates last|first|mean")
        n_models = flat.index[flat.index.duplicated(keep=False)].get_level_values(0).nunique()
        if duplicates == "mean":
            flat = flat.groupby(level=list(range(flat.index.nlevels)), sort=False).mean()
            how = "averaged their scores"
        else:
            flat = flat[~flat.index.duplicated(keep=duplicates)]
            how = f"kept the {duplicates} row of each in file order (no date column is read)"
        warnings.warn(f"--duplicates: {n_models} model(s) have repeated (model, {', '.join(keys)}) rows; {how} "
                      "(--duplicates error|first|last|mean)", UserWarning, stacklevel=3)
        df = flat.reset_index()
    if item in cols:
        _refuse_shared_items(df, item, by, lines=not flat.index.has_duplicates)
        return ResponseMatrix.from_long(df, model=model, item=item, score=score, groups=[by])
    wide = df.pivot(index=model, columns=by, values=score)
    # a 'Median' or 'Mean' pseudo-model beside the models, as a wide table's foot rows
    foot = {} if scenarios else _foot_rows(wide, wide, list(wide.columns), {})
    if foot:
        note = ("Left out of the scores: " + _foot_text((wide.index[i], what) for i, what in foot.items())
                + ". Name the scenarios with --scenarios to change this.")
        wide = wide[~np.isin(np.arange(len(wide)), list(foot))]
        wide.attrs["note"] = note
    return wide


def _refuse_shared_items(df: pd.DataFrame, item: str, by: str, lines: bool = True) -> None:
    """Raise naming an item id that two scenarios share (its first line in the second one where ``lines``: ``df``'s
    index is then the file's row numbers): one id would join two items' results into one."""
    spread = df.groupby(item, sort=False)[by].nunique()
    if not (spread > 1).any():
        return
    it = spread.index[int(np.argmax((spread > 1).to_numpy()))]
    rows = df[df[item] == it]
    first, second = rows[by].astype(str).unique()[:2]
    at = f" (line {int(rows.index[rows[by].astype(str) == second][0]) + 2})" if lines else ""
    raise ValueError(f"SCORES: item {_plain(str(it))!r} appears in scenarios {_plain(first)!r} and {_plain(second)!r}"
                     f"{at}: item ids must be unique across scenarios; are these summary lines? delete them, or "
                     "prefix each id with its scenario")
