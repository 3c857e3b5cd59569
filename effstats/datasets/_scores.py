"""Score tables: leaderboard tables (long or wide CSV/TSV) read into a models × scenarios table (or a
:class:`effstats.responses.ResponseMatrix`) with the published aggregate set apart.

The wide layout is read here from the parts beside it: the model column (:mod:`effstats.datasets._model_names`), the
cells (:mod:`effstats.datasets._cells`), what the headers say (:mod:`effstats.datasets._score_headers`) and what the
options choose (:mod:`effstats.datasets._score_choices`); the long layout in :mod:`effstats.datasets._score_long`,
the Open LLM Leaderboard's CSV export in :mod:`effstats.datasets._openllm_csv` and the JSON layouts (HELM, Open LLM
results) in :mod:`effstats.datasets._score_json`. The command line (:mod:`effstats.cli`) and
:func:`effstats.reliability.audit` read their SCORES through these; messages name the command line's options
(``--by``, ``--duplicates``, ...) since that is where users meet them.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._published import _aggregates_of_rest, _correlations, _decimals_of, _detect_published, _weights_text
from .._shared import _name_list, _plain
from ._cells import (PercentColumnsWarning, _is_metric_pairs, _metric_pair_columns, _pair_means,  # noqa: F401
                     _percent, as_numbers,
                     _refuse_infinite, _refuse_stray_cells, _text_cells, _warn_percent_columns, text_cell_message)
from ._model_names import (_example_text, _has_markup, _is_link_column, _is_run_ids, _is_timestamps, _markup_rows,
                           _MD_LINK, _plain_names, _refuse_empty_names, _refuse_transposed_board)
from ._openllm_csv import _looks_openllm, read_openllm_csv
from ._score_choices import _check_column_lists, _check_duplicates, _dedupe_with, _select, comma_note
from ._score_files import _DOCUMENT, _check_path, _drop_empty_trailing, _read_text_table, per_example_columns
from ._score_headers import (_as_published, _is_aggregate, _lower_columns, _lower_note,  # noqa: F401 (re-exported)
                             _named_metadata, _named_published)
from ._score_long import _read_long
from ._score_options import DUPLICATE_POLICIES, SCORE_FORMATS
from ._summaries import (_companion_columns, _foot_rows, _foot_text, _is_rank, _likely_aggregates, _rank_like,
                         _reversed, _summary_columns)

__all__ = ["read_scores", "read_openllm_csv", "SCORE_FORMATS", "DUPLICATE_POLICIES"]


def _is_range_index(s: pd.Series) -> bool:
    """A column holding 0, 1, ..., n−1 in order: an index pandas' ``to_csv()`` wrote."""
    v = pd.to_numeric(s, errors="coerce")
    return bool(v.notna().all() and (v.to_numpy() == np.arange(len(v))).all())


def read_scores(path: str | Path, *, by: str = "scenario", model: str = "model", item: str = "item",
                score: str = "score", scenarios: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
                explicit: Sequence[str] = (), duplicates: str | None = None,
                higher_is_better: Sequence[str] | None = None) -> tuple[Any, pd.Series | None]:
    """Read a long or wide score table (CSV / TSV; the delimiter "," / tab / ";" is sniffed).

    * **wide**: the ``model`` column (any case; else the first column) holds model names, one column per
      scenario; ``'-'`` or empty means not evaluated; percentages ("85.3%") become fractions; wholly non-numeric
      columns and numeric metadata (parameters, likes, rank, ...) are left out; ``scenarios`` / ``exclude``
      choose the score columns explicitly. A leading unnamed column holding 0 … n−1 (an index written by
      pandas' ``to_csv()``) is skipped; a model column holding numbers is refused.
    * **long**: columns ``model``, ``by`` and ``score``, one row per (model, scenario); with an ``item`` column
      too, one row per (model, example), returned as a :class:`effstats.ResponseMatrix` with the ``by`` column
      as item group. A row whose score is ``'-'`` or empty is a cell not evaluated (as
      :meth:`effstats.ResponseMatrix.from_long` reads a NaN score): beside an evaluated row of its cell it is no
      repeat, whatever ``duplicates`` says. A table of ``model`` and ``score`` with one row per model and no ``by``
      column is wide.

    The published aggregate is set aside (returned second): a column named "Mean win rate" / "Average" /
    "Mean" ..., a column named like the table (the file's stem or folder, e.g. ``helm_lite``), or a column equal
    to the mean or the Mean Win Rate of the other columns within the rounding of the printed numbers. Its
    ``attrs["kind"]`` is "mean" or "mwr" (what it reproduces) and ``attrs["info"]`` says how it was recognised.

    Parameters
    ----------
    path : str or Path
        The table.
    by : str, default="scenario"
        Scenario column of a long table.
    model, item, score : str, default="model", "item", "score"
        Model, example and score columns of a long table (``model`` also names the model column of a wide one).
    scenarios, exclude : sequence of str, default=None
        Score columns to keep / to leave out.
    explicit : sequence of str, default=()
        The command-line options the user gave (e.g. ``"--score"``): those must name existing columns.
    duplicates : {"last", "first", "mean", "error"} or None, default=None
        Models listed more than once: keep the last row in file order, the first, their mean, or refuse (no date
        column is read: sort the rows to keep the latest run). Keeping one row or the mean is said in a
        ``UserWarning``. None reads as "last" (resubmissions), but refuses a wide table whose repeated rows a text
        column naming every row tells apart (ImageNet's one row per weight, its ``Model`` the architecture):
        distinct entries, which ``model=`` that column audits and "last" would merge.
    higher_is_better : sequence of str, default=None
        Score columns of a wide table read as they are. Without it, a column whose header is marked ↓ or names a
        lower-is-better metric ("Mean squared error", "WER", "val_loss", "Perplexity"; one warning names those)
        is negated, so that higher is better in every column.

    Returns
    -------
    data : DataFrame or ResponseMatrix
        Wide scores (models × scenarios) with a ``attrs["note"]`` saying what was left out, or per-example
        responses for a long table with an ``item`` column.
    published : Series or None
        The published aggregate.

    Raises
    ------
    ValueError
        Starting with the argument at fault (``SCORES``, ``--model``, ``--scenarios`` ...): unreadable file,
        duplicated column names, a column with non-numeric values, fewer than 2 models or scenarios.

    See Also
    --------
    effstats.reliability.audit : audits what this reads.
    effstats.datasets.read_scores_csv : per-example results as a ResponseMatrix.
    effstats.ResponseMatrix.from_wide : a wide table already in memory.

    Examples
    --------
    >>> import os, tempfile
    >>> from effstats.cli import read_scores
    >>> path = os.path.join(tempfile.mkdtemp(), "board.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write('''model,Average,ARC,GSM8K,MMLU
    ... alpha,0.7,0.8,0.6,0.7
    ... beta,0.5,0.6,0.4,0.5
    ... gamma,0.3,0.5,0.1,0.3
    ... ''')
    >>> scores, published = read_scores(path)
    >>> scores
           ARC  GSM8K  MMLU
    model
    alpha  0.8    0.6   0.7
    beta   0.6    0.4   0.5
    gamma  0.5    0.1   0.3
    >>> published.attrs["kind"], published.tolist()
    ('mean', [0.7, 0.5, 0.3])
    """
    chosen = duplicates is not None  # the default merges resubmissions, never rows a name tells apart
    duplicates = _check_duplicates("last" if duplicates is None else duplicates)
    _check_column_lists(scenarios, exclude)
    higher_is_better = [higher_is_better] if isinstance(higher_is_better, str) else higher_is_better
    if higher_is_better is not None and (not np.iterable(higher_is_better) or isinstance(higher_is_better, dict)
                                         or not all(isinstance(c, str) for c in higher_is_better)):
        raise ValueError(f"--higher-is-better: expected a list of column names, got {_plain(higher_is_better)!r:.80}")
    path = _check_path(path)
    df, sep, head = _read_text_table(path, header_check=None if scenarios else _refuse_per_example_header)
    df, head = _drop_empty_trailing(df, head)
    if df.empty and len(df.columns):
        header = _name_list([repr(str(c)) for c in df.columns], 5)
        raise ValueError(f"SCORES: {str(path)!r} has a header ({header}) but no rows: give one row of scores per model")
    header_note = ""
    if (not isinstance(df.index, pd.RangeIndex) and df.index.nlevels == 1 and df.iloc[:, -1].isna().all()
            and model.lower() in {str(h).strip().lower() for h in head}):
        # A separator ending every row ("x,0.9,0.8,") beside a header naming the model column: pandas took the first
        # field as an index and shifted the columns one to the left
        df = df.reset_index().iloc[:, :-1].set_axis(list(df.columns), axis=1)
    if not isinstance(df.index, pd.RangeIndex):
        # The header has one name fewer than the rows hold (VTAB's table): pandas would take the first field as an
        # index and the first *named* column (there: the mean score) as the model names.
        df = df.reset_index().rename(columns={"index": model})
        head = [model] + list(head)
        header_note = (f"The header names one column fewer than the rows hold: the first column is read as the model "
                       f"names ({model!r}).")
    dups = sorted({h for h in head if head.count(h) > 1})
    if dups:
        raise ValueError(f"SCORES: duplicate column names {dups}; rename them (each scenario needs one column)")
    if df.empty or df.shape[1] < 2:
        raise ValueError(f"SCORES: expected a table with at least 2 columns and 1 row, got shape {df.shape}")
    cols = list(df.columns)
    for arg, name in (("--score", score), ("--model", model), ("--by", by), ("--item", item)):
        if arg in explicit and name not in cols:
            raise ValueError(f"{arg}: column {name!r} not in the table (columns: {cols})")
    if _looks_openllm(cols) and model not in cols and "--model" not in explicit:
        return read_openllm_csv(path, scenarios=scenarios, exclude=exclude, duplicates=duplicates)
    # long: model and score columns, the model repeated or a scenario column; one row per model, no scenario
    # column and no text column that could name the scenarios under another name is a wide table whose score
    # column is named "score"
    wide_one_row = (by not in cols and "--by" not in explicit and model in cols
                    and not df[model].duplicated().any()
                    and not as_numbers(df[[c for c in cols if c != model]]).isna().all().any())
    if {model, score} <= set(cols) and not wide_one_row:  # long format
        return _read_long(df, by=by, model=model, item=item, score=score, scenarios=scenarios, exclude=exclude,
                          duplicates=duplicates), None
    # Model column: one named like --model (any case; also "model_name"), else the first named column.
    notes = [header_note] if header_note else []
    first = str(cols[0])
    if first.startswith("Unnamed: ") or first.strip() == "":
        if _is_range_index(df[cols[0]]):  # pandas' to_csv() index: row numbers, not models
            df = df.drop(columns=cols[0])
            cols = cols[1:]
        elif pd.to_numeric(df[cols[0]], errors="coerce").isna().all():
            # a text index saved without a name (``df.set_index("model").to_csv()`` after a rename): the models
            df = df.rename(columns={cols[0]: model})
            cols = [model] + cols[1:]
        else:
            eg = df[cols[0]].dropna().iloc[0]
            df = df.drop(columns=cols[0])
            notes.append(f"A leading unnamed column of numbers (e.g. {eg!r}) is left out: read as a saved index, "
                         "not scores.")
            cols = cols[1:]
    wanted = [model.lower()] + ([] if "--model" in explicit else ["model_name", "model name", "fullname"])
    named = [c for w in wanted for c in cols if str(c).strip().lower() == w]
    if "--model" not in explicit:
        # two columns name the models (Open LLM v2: "Model" holds <a href=…> links, "fullname" the ids): the plain one
        plain = [c for c in named if not _has_markup(df[c])]
        named = plain + [c for c in named if c not in plain]
    mcol = named[0] if named else cols[0]
    df, baselines = _markup_rows(df, mcol)
    if baselines:
        notes.append(baselines)
    if _is_link_column(df[mcol]):
        df = df.assign(**{mcol: _plain_names(df[mcol])})
        notes.append(f"The model names in column {str(mcol)!r} are HTML links: their text is read as the name.")
    elif df[mcol].dropna().astype(str).str.match(_MD_LINK).all() and df[mcol].notna().any():
        df = df.assign(**{mcol: df[mcol].astype(str).str.replace(_MD_LINK, r"\1", regex=True).str.strip()})
        notes.append(f"The model names in column {str(mcol)!r} are Markdown links: their text is read as the name.")
    vals = df[mcol].dropna()
    if "--model" not in explicit and len(vals) and pd.to_numeric(vals, errors="coerce").notna().all():
        raise ValueError(f"--model: the model column {str(mcol)!r} holds numbers (e.g. {_plain(vals.iloc[0])!r}), "
                         "not model "
                         "names; name the column of model names with --model COLUMN, or add one")
    _refuse_empty_names(df[mcol], mcol)
    if "--model" not in explicit:
        _refuse_transposed_board(df, mcol, path)
    paired = [c for c in _metric_pair_columns(df) if c != mcol]
    if paired:
        df = df.assign(**{c: _pair_means(df[c]) for c in paired})
        named = ", ".join(repr(str(c)) for c in paired)
        notes.append(f"Cells of two numbers ('a/b', two metrics of one task) in {named} are read as their mean, as "
                     "GLUE's score does.")
    wide = df.set_index(mcol)
    hint = order = ""
    if wide.index.has_duplicates:
        unique_text = [c for c in cols if c != mcol and df[c].notna().all() and not df[c].duplicated().any()
                       and pd.to_numeric(df[c], errors="coerce").isna().all() and not _is_run_ids(df[c])]
        hint = f"; column {unique_text[0]!r} is unique: pass --model {unique_text[0]!r}" if unique_text else ""
        # a run's timestamp (an Open LLM details export's split_name): the column to sort by to keep the latest run
        order = next((str(c) for c in cols if c != mcol and df[c].notna().all() and _is_timestamps(df[c])), "")
        n_distinct = wide.index.nunique()
        if unique_text and "--model" not in explicit and n_distinct <= len(wide) // 2:
            # most rows share a "model" with another row while a text column names every row: the id column is a
            # category (a type emoji, a family), not the model, and merging rows would collapse the leaderboard
            raise ValueError(f"--model: column {str(mcol)!r} names {n_distinct} distinct values for {len(wide)} rows; "
                             f"column {unique_text[0]!r} names every row: pass --model {unique_text[0]!r}")
        if unique_text and "--model" not in explicit and not chosen:
            # rows a name tells apart (not a run's time) are distinct entries (one per weight of an architecture),
            # not resubmissions: keeping the last of each would rank a table the file does not hold
            shared = wide.index[wide.index.duplicated(keep=False)].unique()
            eg = ", ".join(repr(str(m)) for m in shared[:3]) + (" …" if len(shared) > 3 else "")
            raise ValueError(f"--model: {len(shared)} value(s) of column {str(mcol)!r} appear in more than one row "
                             f"(e.g. {eg}), rows that column {unique_text[0]!r} tells apart (a name for every row): "
                             f"distinct entries, not resubmissions; pass --model {unique_text[0]!r} to audit every "
                             f"row, or --duplicates last to keep the last row of each {str(mcol)!r}")
    decimals = _decimals_of(df.drop(columns=mcol))
    wide, published = _finish_wide(wide, scenarios, exclude, duplicates=duplicates, hint=hint, order=order,
                                   names=(path.stem, path.parent.name), decimals=decimals,
                                   higher_is_better=higher_is_better)
    if notes:
        wide.attrs["note"] = " ".join(filter(None, [*notes, wide.attrs.get("note", "")]))
    return wide, published


def _refuse_per_example_header(head: list[str]) -> None:
    """Refuse, from its header alone, a wide table of a model column and one column per example (``<task>/<doc>``):
    reading its cells first would take minutes on tens of thousands of columns (the audit refuses it again after the
    read where other columns stand beside them)."""
    docs = [h for h in head if _DOCUMENT.fullmatch(str(h))]
    said = per_example_columns(docs) if len(head) - len(docs) <= 1 else ""
    if said:
        raise ValueError(said)


def _finish_wide(wide: pd.DataFrame, scenarios, exclude, *, duplicates: str = "last", hint: str = "", order: str = "",
                 names: Sequence[str] = (), decimals: dict | None = None,
                 higher_is_better: Sequence[str] | None = None) -> tuple[pd.DataFrame, pd.Series | None]:
    """Score columns as numbers, the published aggregate set aside, metadata left out, repeated models resolved,
    lower-is-better columns negated (:func:`_lower_columns`)."""
    wide, _ = _percent(wide)
    if len(wide) < 2:
        raise ValueError(f"SCORES: expected at least 2 models (rows), got {len(wide)}")
    if exclude:
        _select(wide, None, exclude)  # unknown names are refused before anything is left out
    unknown = [n for n in higher_is_better or () if n not in {str(c) for c in wide.columns}]
    if unknown:
        raise ValueError(f"--higher-is-better: unknown column(s) {unknown} (columns: {[str(c) for c in wide.columns]})"
                         f"{comma_note(wide.columns)}")
    # a column named in --scenarios is a score, whatever its name
    agg = [c for c in _named_published(wide) if str(c) not in {str(s) for s in scenarios or ()}]
    if len(agg) > 1 and not scenarios:
        warnings.warn(f"SCORES: columns {_name_list(repr(str(c)) for c in agg)} are each named as a published "
                      f"aggregate: all are set aside from the scores, {str(agg[0])!r} read as the leaderboard's; to "
                      "score one of them, name the score columns with --scenarios (Python: scenarios=[...])",
                      UserWarning, stacklevel=3)
    num_all = as_numbers(wide)
    # Wholly non-numeric columns (a type emoji, a licence) and numeric metadata (parameters, likes) are not scores.
    held = num_all.notna().any().to_numpy()  # per column, once
    meta = [c for c, h in zip(wide.columns, held) if c not in agg and (not h or _named_metadata(c, wide.columns))]
    foot = {} if scenarios else _foot_rows(wide, num_all, [c for c in wide.columns if c not in meta
                                                           and c not in set(exclude or [])], decimals or {})
    if foot:
        keep = ~np.isin(np.arange(len(wide)), list(foot))
        foot = {str(wide.index[i]): what for i, what in foot.items()}
        wide, num_all = wide[keep], num_all[keep]
        held = num_all.notna().any().to_numpy()
    cand = [c for c in wide.columns if c not in agg and c not in meta and c not in set(exclude or [])]
    numeric = [c for c, h in zip(wide.columns, held) if c not in agg and h and c not in set(exclude or [])]
    _refuse_infinite(num_all[[c for c in dict.fromkeys([*agg, *(scenarios or cand)]) if c in num_all]])
    # only a column of integers 1 … n is compared with the others (a selection of them per column costs much on
    # a table of thousands of columns)
    rank_col = next((c for c in numeric if _rank_like(num_all[c])
                     and _is_rank(num_all[c], num_all[[o for o in cand if o != c]])), None)
    _refuse_stray_cells(num_all[[c for c in (scenarios or cand) if c != rank_col and c in num_all]])
    summary = {} if scenarios else _summary_columns(num_all, [c for c in cand if c != rank_col], decimals or {},
                                                    ref=num_all[agg[0]] if agg else None)
    if not scenarios:
        summary.update(_companion_columns(num_all, [c for c in cand if c != rank_col and c not in summary]))
    _warn_percent_columns(num_all[[c for c in (scenarios or cand) if c != rank_col and c in num_all]], summary)
    if rank_col is not None:
        summary[rank_col] = "a ranking: integers 1 … n, best first (compared with the recomputed ranking)"
    meta += [c for c in summary if c not in meta]
    cand = [c for c in cand if c not in summary]
    found: list[dict] = []
    if not scenarios:
        # an aggregate under another name: remove the best match and look again (a table may carry two)
        for _ in range(3):
            hit = [f for f in _detect_published(num_all[cand], names=names, decimals=decimals)]
            if not hit:
                break
            found.append(hit[0])
            cand.remove(hit[0]["column"])
        likely = _likely_aggregates(num_all, cand)
        summary.update(likely)
        meta += list(likely)
        cand = [c for c in cand if c not in likely]
    info = None
    if agg:
        # what a named aggregate is: the aggregate of the scores it reproduces, else what its name says
        col = agg[0]
        hit = [f for f in _detect_published(num_all[[col] + cand], decimals=decimals) if f["column"] == col]
        info = dict(hit[0]) if hit else dict(column=col, kind="mwr" if "win" in str(col).lower() else "mean",
                                             rule="label")
        info["rule"] = "label" if not hit else info["rule"]
        lower = _lower_columns(cand, higher_is_better)
        if not hit and "win" not in str(col).lower() and _reversed(num_all[col], num_all[cand].apply(
                lambda v: -v if v.name in lower else v)):
            # lower is better than the scores (a mean rank; a win rate is higher-better by its name): read
            # negated, as the aggregate of the scores it follows best
            block = num_all[[col] + cand].to_numpy(dtype=float)
            kind = max(_correlations(-block[:, 0], _aggregates_of_rest(block), 0).items(), key=lambda kv: kv[1])[0]
            info.update(kind="mean" if kind == "mean" else "mwr", lower=True)
    elif found:
        info = found[0]
    published = None if info is None else _as_published(
        -num_all[info["column"]] if info.get("lower") else num_all[info["column"]], info)
    if scenarios:
        sel = _select(wide, scenarios, None)
        out = as_numbers(sel)
        lower = _lower_columns(out.columns, higher_is_better, warn=True)
        out[lower] = -out[lower]
        out, published = _dedupe_with(out, published, duplicates, hint, order)
        if lower:
            out.attrs.update(note=_lower_note(lower), lower_is_better=lower)
        return out, published
    set_aside = agg + [f["column"] for f in found]
    wide = wide.drop(columns=set_aside)
    wide_in, wide = wide, wide.drop(columns=meta)
    if exclude:
        wide = _select(wide, None, exclude)
    num = as_numbers(wide)
    # A column with some non-numeric cells (other than '-' / empty = not evaluated) is refused with the way out.
    bad = _text_cells(wide, num)
    if bad.to_numpy().any():
        raise ValueError(text_cell_message(wide, bad, bad.any()[lambda b: b].index[0]))
    # Leaderboards mark lower-is-better columns with "↓" (HEIM: NSFW fraction), or name them (an error, a loss):
    # negated so that higher is better
    lower = _lower_columns(num.columns, higher_is_better, warn=True)
    for c in lower:
        num[c] = -num[c]
    # Models with no score at all (HELM efficiency: models never timed) are left out, and said so.
    unscored = num.index[num.isna().all(axis=1)] if num.shape[1] else num.index[:0]
    if len(unscored) and len(unscored) < len(num):
        keep = ~num.index.isin(unscored)
        num = num[keep]
        if published is not None:
            attrs = dict(published.attrs)
            published = published[keep]
            published.attrs.update(attrs)
    else:
        unscored = unscored[:0]
    # incl. all-'-' columns: evaluated by no model
    text = [c for c in meta if not _named_metadata(c, wide.columns) and c not in summary]
    how = {"exact": "equal within rounding to the {} of the other columns",
           "close": "following the {} of the other columns (r ≥ 0.999)",
           "name": "named like the table; ranks as the {}", "label": "ranks as the {}",
           "lower": "lower is better, read negated; ranks as the {}"}
    kinds = {"mean": "mean", "mwr": "Mean Win Rate", "weighted": "weighted mean"}
    left_out = ([f"published aggregate {str(f['column'])!r} "
                 f"({how['lower' if f.get('lower') else f['rule']].format(kinds[f['kind']])}"
                 + (f": {_weights_text(f['weights'])})" if f.get("weights") else ")")
                 for f in ([info] if agg else []) + found]) + [
        f"published aggregate {str(c)!r}" for c in agg[1:]] + (
        ["non-numeric columns " + ", ".join(f"{str(c)!r} (e.g. {_example_text(wide_in[c])})" for c in text
                                             if wide_in[c].notna().any())]
        if any(wide_in[c].notna().any() for c in text) else []) + (
        ["columns with no values " + ", ".join(repr(str(c)) for c in text if not wide_in[c].notna().any())]
        if any(not wide_in[c].notna().any() for c in text) else []) + (
        ["metadata / rank columns " + ", ".join(repr(str(c)) for c in meta if c not in text and c not in summary)]
        if len([c for c in meta if c not in text and c not in summary]) else []) + (
        [f"summary columns {'; '.join(f'{str(c)!r} ({why})' for c, why in summary.items())}"] if summary else []) + (
        [_foot_text(foot.items())] if foot else []) + (
        [f"{len(unscored)} model(s) with no score "
         f"({', '.join(map(str, unscored[:5]))}{' …' if len(unscored) > 5 else ''})"]
        if len(unscored) else [])
    notes = []
    if left_out:
        notes.append("Left out of the scores: " + "; ".join(left_out)
                     + ". Name the score columns with --scenarios to change this.")
    if lower:
        notes.append(_lower_note(lower))
    _refuse_infinite(num)
    if num.shape[1] < 2:
        raise ValueError(f"SCORES: expected at least 2 score columns, found {list(num.columns)}"
                         + (f" after dropping metadata {meta}; name them with --scenarios" if meta else "")
                         + (f" ({_name_list(repr(str(c)) for c in set_aside)} read as the published aggregate)"
                            if set_aside else ""))
    num, published = _dedupe_with(num, published, duplicates, hint, order)
    if notes:
        num.attrs["note"] = " ".join(notes)
    if lower:  # negative as read, not as written (as a HELM table's lower_is_better columns)
        num.attrs["lower_is_better"] = lower
    if rank_col is not None:
        ranks = num_all[rank_col][~num_all.index.duplicated(keep="last")].reindex(num.index)
        num.attrs["published_rank"] = {"column": str(rank_col), "rank": ranks}
    return num, published


