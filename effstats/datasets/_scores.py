"""Score tables: leaderboard tables (long or wide CSV/TSV) and the Open LLM Leaderboard's CSV export, read into a
models × scenarios table (or a :class:`effstats.responses.ResponseMatrix`) with the published aggregate set apart.

The JSON layouts (HELM, Open LLM results) are read in :mod:`effstats.datasets._score_json`. The command line
(:mod:`effstats.cli`) and :func:`effstats.reliability.audit` read their SCORES through both; messages name the
command line's options (``--by``, ``--duplicates``, ...) since that is where users meet them.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._published import _aggregates_of_rest, _correlations, _decimals, _detect_published, _weights_text
from .._shared import _name_list, _plain
from .._scales import FRACTION_MAX, lower_is_better_name, score_scales
from ._cells import text_cell_message
from ._score_files import _check_path, _drop_empty_trailing, _read_text_table
from ._score_options import DUPLICATE_POLICIES, SCORE_FORMATS
from ._summaries import (_companion_columns, _is_rank, _likely_aggregates, _rank_like, _reversed,
                         _summary_columns, _summary_rows)

__all__ = ["read_scores", "read_openllm_csv", "SCORE_FORMATS", "DUPLICATE_POLICIES"]

# the whole name of an aggregate, once its notes in brackets and its marks (↑, ⬆️, **) are taken off: "Mean IoU",
# "Average Precision" and "Mean squared error" are scenarios, found as aggregates by their values if they are
_AGGREGATE = re.compile(r"mean win rate|win rate|(mean|average|avg\.?|overall|total)( (score|rank|ranking|win rate))?"
                        r"|score|win", re.I)


def _is_aggregate(col: Any) -> bool:
    """A column named as a published aggregate: "Mean win rate ↑ [ sort ]", "Average ⬆️", "average_score", "Mean",
    "Avg. rank", "Average (56 datasets)"; not a metric whose name begins so ("Mean IoU", "Average Precision")."""
    name = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", str(col).replace("_", " "))
    return bool(_AGGREGATE.fullmatch(" ".join(re.sub(r"[^\w. ]", " ", name).split())))
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


_OPENLLM_V1 = ["ARC", "HellaSwag", "MMLU", "TruthfulQA", "Winogrande", "GSM8K"]
_OPENLLM_V2 = ["IFEval", "BBH", "MATH Lvl 5", "GPQA", "MUSR", "MMLU-PRO"]
_OPENLLM_V1_EXTRA = ["DROP"]  # in the v1 average for a while (2023)
_MARKUP = re.compile(r"<\s*/?\s*[a-zA-Z][^>]*>")


def _openllm_key(col: Any) -> str:
    """A header without its decorations: "ARC (25-shot) ⬆️", "ARC(25-shot)" and "arc" are all "arc"."""
    return re.sub(r"[^a-z0-9]", "", str(col).split("(")[0].lower())


def _openllm_columns(cols: Sequence[Any], names: Sequence[str]) -> dict[str, Any]:
    """The columns of ``cols`` that are the tasks ``names`` (canonical name -> header), by :func:`_openllm_key`."""
    by_key: dict[str, Any] = {}
    for c in cols:
        by_key.setdefault(_openllm_key(c), c)
    return {n: by_key[_openllm_key(n)] for n in names if _openllm_key(n) in by_key}


def _has_markup(values: pd.Series) -> bool:
    """Cells holding HTML tags (a leaderboard's ``<a href=…>name</a>`` link column)."""
    return bool(values.dropna().astype(str).str.contains(_MARKUP).any())


_LINK = re.compile(r"<a\b[^>]*>(.*?)</a\s*>", re.I | re.S)


def _is_link_column(values: pd.Series) -> bool:
    """Most cells HTML links with text (``<a href="…">org/name</a>``): a leaderboard's model links (its other cells,
    markup without a link such as ``<p>Baseline</p>``, are rows that are not models: :func:`_markup_rows`)."""
    v = values.dropna().astype(str)
    return bool(len(v)) and 2 * int(v.map(lambda t: any(m.strip() for m in _LINK.findall(t))).sum()) > len(v)


def _markup_rows(df: pd.DataFrame, column: Any) -> tuple[pd.DataFrame, str]:
    """``df`` without the rows whose ``column`` cell is markup without a link in a column of model links (the Open
    LLM Leaderboard's "<p>Baseline</p>" rows: reference points, not models), and the note naming them."""
    v = df[column]
    if not _is_link_column(v):
        return df, ""
    txt = v.astype(str)
    drop = (v.notna() & txt.str.contains(_MARKUP) & ~txt.map(lambda t: bool(_LINK.search(t)))).to_numpy()
    if not drop.any():
        return df, ""
    names = [re.sub(r"\s+", " ", _MARKUP.sub(" ", t)).strip() for t in txt[drop]]
    return df[~drop].reset_index(drop=True), (
        f"Rows whose model cell is markup without a link ({_name_list([repr(n) for n in names], 5)}: baselines, not "
        "models) are left out.")


def _plain_names(values: pd.Series) -> pd.Series:
    """The text of HTML link cells (``<a href="…">org/name</a>`` -> ``org/name``), entities decoded; other cells
    (a name that merely holds markup) as they are."""
    import html

    if not _is_link_column(values):
        return values
    return values.map(lambda v: html.unescape(_LINK.sub(lambda m: m.group(1), v)).strip() if isinstance(v, str)
                      else v)
# Open LLM Leaderboard v1 metric per harness task (their "About" page); other tasks: first metric found.
_OPENLLM_METRIC = {"arc:challenge": "acc_norm", "hellaswag": "acc_norm", "truthfulqa:mc": "mc2", "winogrande": "acc",
                   "gsm8k": "acc", "hendrycksTest": "acc"}
_OPENLLM_NAME = {"arc:challenge": "ARC", "hellaswag": "HellaSwag", "truthfulqa:mc": "TruthfulQA",
                 "winogrande": "Winogrande", "gsm8k": "GSM8K", "hendrycksTest": "MMLU"}
_METRIC_ORDER = ("acc_norm", "acc", "mc2", "exact_match", "prompt_level_strict_acc", "em", "f1")


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


def _select(wide: pd.DataFrame, scenarios: Sequence[str] | None, exclude: Sequence[str] | None) -> pd.DataFrame:
    cols = [str(c) for c in wide.columns]
    wide = wide.set_axis(cols, axis=1)
    for arg, names in (("--scenarios", scenarios), ("--exclude", exclude)):
        unknown = [n for n in names or [] if n not in cols]
        if unknown:
            raise ValueError(f"{arg}: unknown column(s) {unknown} (columns: {cols})")
    if scenarios:
        wide = wide[list(scenarios)]
    if exclude:
        wide = wide.drop(columns=list(exclude))
    if wide.shape[1] < 2:
        raise ValueError(f"--scenarios: at least 2 score columns are needed, got {list(wide.columns)}")
    return wide


def _dedupe(wide: pd.DataFrame, duplicates: str, *, hint: str = "") -> pd.DataFrame:
    """Rows sharing a model name (resubmissions): refused, or one row kept or their mean, said in a warning.

    ``wide`` holds numbers (NaN = not evaluated); "mean" averages each column over the evaluated rows.
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
        how = (f"kept the {duplicates} row of each in file order (no date column is read: sort the rows to keep "
               "the latest)")
    warnings.warn(f"--duplicates: {n} model(s) appear in more than one row ({rows} rows, e.g. {eg}); {how}"
                  f" (--duplicates error|first|last|mean){hint}", UserWarning, stacklevel=3)
    return out


def _check_column_lists(scenarios: Sequence[str] | None, exclude: Sequence[str] | None) -> None:
    """Refuse a column named twice in ``--scenarios`` or ``--exclude``, or named in both."""
    for arg, names in (("--scenarios", scenarios), ("--exclude", exclude)):
        twice = [n for i, n in enumerate(names or []) if n in list(names or [])[:i]]
        if twice:
            raise ValueError(f"{arg}: {_plain(str(twice[0]))!r} named twice; name each column once")
    both = [n for n in exclude or [] if n in set(scenarios or [])]
    if both:
        raise ValueError(f"--exclude: {_plain(str(both[0]))!r} is also in --scenarios; name it in one of them")


def _check_duplicates(duplicates: Any) -> str:
    if duplicates not in DUPLICATE_POLICIES:
        raise ValueError(f"--duplicates: expected one of {list(DUPLICATE_POLICIES)}, got {duplicates!r}")
    return duplicates


def _is_range_index(s: pd.Series) -> bool:
    """A column holding 0, 1, ..., n−1 in order: an index pandas' ``to_csv()`` wrote."""
    v = pd.to_numeric(s, errors="coerce")
    return bool(v.notna().all() and (v.to_numpy() == np.arange(len(v))).all())


_MD_LINK = re.compile(r"^\s*\[([^\]]+)\]\([^)\s]*\)\s*$")


def read_scores(path: str | Path, *, by: str = "scenario", model: str = "model", item: str = "item",
                score: str = "score", scenarios: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
                explicit: Sequence[str] = (), duplicates: str = "last",
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
    duplicates : {"last", "first", "mean", "error"}, default="last"
        Models listed more than once: keep the last row in file order, the first, their mean, or refuse (no date
        column is read: sort the rows to keep the latest run). Keeping one row or the mean is said in a
        ``UserWarning``.
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
    _check_duplicates(duplicates)
    _check_column_lists(scenarios, exclude)
    higher_is_better = [higher_is_better] if isinstance(higher_is_better, str) else higher_is_better
    if higher_is_better is not None and (not np.iterable(higher_is_better) or isinstance(higher_is_better, dict)
                                         or not all(isinstance(c, str) for c in higher_is_better)):
        raise ValueError(f"--higher-is-better: expected a list of column names, got {_plain(higher_is_better)!r:.80}")
    path = _check_path(path)
    df, sep, head = _read_text_table(path)
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
                    and not any(pd.to_numeric(df[c], errors="coerce").isna().all() for c in cols if c != model))
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
    paired = [c for c in df.columns if c != mcol and _is_metric_pairs(df[c])]
    if paired:
        df = df.assign(**{c: _pair_means(df[c]) for c in paired})
        notes.append(f"Cells of two numbers ('a/b', two metrics of one task) in {_plain([str(c) for c in paired])} "
                     "are read as their mean, as GLUE's score does.")
    wide = df.set_index(mcol)
    hint = ""
    if wide.index.has_duplicates:
        unique_text = [c for c in cols if c != mcol and df[c].notna().all() and not df[c].duplicated().any()
                       and pd.to_numeric(df[c], errors="coerce").isna().all() and not _is_timestamps(df[c])]
        hint = f"; column {unique_text[0]!r} is unique: pass --model {unique_text[0]!r}" if unique_text else ""
        n_distinct = wide.index.nunique()
        if unique_text and "--model" not in explicit and n_distinct <= len(wide) // 2:
            # most rows share a "model" with another row while a text column names every row: the id column is a
            # category (a type emoji, a family), not the model, and merging rows would collapse the leaderboard
            raise ValueError(f"--model: column {str(mcol)!r} names {n_distinct} distinct values for {len(wide)} rows; "
                             f"column {unique_text[0]!r} names every row: pass --model {unique_text[0]!r}")
    decimals = {c: _decimals(df[c]) for c in df.columns if c != mcol}
    wide, published = _finish_wide(wide, scenarios, exclude, duplicates=duplicates, hint=hint,
                                   names=(path.stem, path.parent.name), decimals=decimals,
                                   higher_is_better=higher_is_better)
    if notes:
        wide.attrs["note"] = " ".join(filter(None, [*notes, wide.attrs.get("note", "")]))
    return wide, published


# a table of one row per scenario and one column per model: its first column's header, its row labels (benchmark and
# metric names) and its column headers (model names: an org/ prefix, a model family, a size or a date) say so
_SCENARIO_HEADERS = {"scenario", "scenarios", "benchmark", "benchmarks", "task", "tasks", "dataset", "datasets",
                     "metric", "metrics", "subset", "subsets", "eval", "evaluation"}
_BENCHMARK_NAME = re.compile(
    r"(?i)(\s-\s(em|f1|bleu(-\d)?|rouge(-\w+)?|acc(uracy)?|exact match|equivalent.*|pass@\d+)\b"
    r"|\b(mmlu|gsm8k|hellaswag|arc|truthfulqa|winogrande|math|bbh|gpqa|ifeval|musr|narrativeqa|naturalquestions|"
    r"openbookqa|legalbench|medqa|wmt|humaneval|mbpp|boolq|piqa|squad|drop|lambada|mt-bench|alpacaeval)\b)")
_MODEL_NAME = re.compile(
    r"(?i)(^[\w.-]+/[\w.-]+|\b(gpt|llama|claude|gemini|mistral|mixtral|qwen|palmyra|deepseek|phi|gemma|falcon|yi|"
    r"command|olmo|jamba|nova|vicuna|pythia|bloom|opt|t5|granite|arctic|dbrx|grok)\b|\b\d+(\.\d+)?[bm]\b|"
    r"\(\d{4}-?\d{2}-?\d{2}\)|\b\d+x\d+b\b)")


# a date or time stamp (``2023-12-10T04-42-16.291896``, ``2023-10-01 08:30:00``): a column of them names
# runs, not models
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}([T _]\d{2}[:-]\d{2}([:-]\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$")


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


def _is_timestamps(col: pd.Series) -> bool:
    """Whether every value of ``col`` is a date or time stamp."""
    return bool(col.astype(str).str.strip().str.match(_TIMESTAMP).all())


def _refuse_transposed_board(df: pd.DataFrame, mcol: Any, path: Path) -> None:
    """Raise when the leaderboard has one row per scenario and one column per model (as ``select`` refuses a
    transposed table of item scores)."""
    rows = df[mcol].dropna().astype(str)
    cols = [str(c) for c in df.columns if c != mcol]
    if len(rows) < 2 or len(cols) < 2:
        return
    model_cols = np.mean([bool(_MODEL_NAME.search(c)) for c in cols])
    model_rows = rows.map(lambda r: bool(_MODEL_NAME.search(r))).mean()
    bench_rows = rows.map(lambda r: bool(_BENCHMARK_NAME.search(r))).mean()
    header = str(mcol).strip().lower() in _SCENARIO_HEADERS
    if model_cols >= 0.5 and model_rows < 0.5 and (header or bench_rows >= 0.5):
        found = (f"its first column is named {str(mcol)!r}" if header else
                 f"its rows are named like benchmarks ({rows.iloc[0]!r}, {rows.iloc[1]!r})")
        raise ValueError(f"SCORES: {path.name} looks transposed ({found} and its columns like models: "
                         f"{cols[0]!r}, {cols[1]!r} …): expected one row per model and one column per scenario; "
                         f"transpose it (pandas: df.set_index({str(mcol)!r}).T), or name the model column with "
                         "--model")


def _refuse_empty_names(ids: pd.Series, column: Any) -> None:
    """Raise naming the first row (and its line in the file) whose model name is empty."""
    blank = (ids.isna() | ids.astype(str).str.strip().eq("")).to_numpy()
    if blank.any():
        row = int(np.argmax(blank))
        raise ValueError(f"SCORES: row {row + 1} (line {row + 2}) has an empty model name in column {str(column)!r}; "
                         "name every row's model")


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


def _read_long(df: pd.DataFrame, *, by: str, model: str, item: str, score: str, scenarios: Sequence[str] | None,
               exclude: Sequence[str] | None, duplicates: str) -> Any:
    from ..responses import ResponseMatrix

    cols = list(df.columns)
    if by not in cols:
        raise ValueError(f"--by: column {by!r} not in the table (columns: {cols})")
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
        note = ("Left out of the scores: summary rows " + "; ".join(
            f"{str(wide.index[i])!r} (the column {what}s of the other rows within rounding)"
            for i, what in foot.items()) + ". Name the scenarios with --scenarios to change this.")
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


def _named_published(table: pd.DataFrame) -> list:
    """Columns named like a published aggregate ("Mean win rate", "Average ⬆️", "Score", ...)."""
    return [c for c in table.columns if _is_aggregate(c)]


def _as_published(values: pd.Series, info: dict) -> pd.Series:
    pub = pd.to_numeric(values, errors="coerce")
    pub.attrs["kind"] = info["kind"]
    pub.attrs["info"] = info
    return pub


def _finish_wide(wide: pd.DataFrame, scenarios, exclude, *, duplicates: str = "last", hint: str = "",
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
        raise ValueError(f"--higher-is-better: unknown column(s) {unknown} (columns: {[str(c) for c in wide.columns]})")
    # a column named in --scenarios is a score, whatever its name
    agg = [c for c in _named_published(wide) if str(c) not in {str(s) for s in scenarios or ()}]
    if len(agg) > 1 and not scenarios:
        warnings.warn(f"SCORES: columns {_name_list(repr(str(c)) for c in agg)} are each named as a published "
                      f"aggregate: all are set aside from the scores, {str(agg[0])!r} read as the leaderboard's; to "
                      "score one of them, name the score columns with --scenarios (Python: scenarios=[...])",
                      UserWarning, stacklevel=3)
    num_all = wide.apply(pd.to_numeric, errors="coerce")
    # Wholly non-numeric columns (a type emoji, a licence) and numeric metadata (parameters, likes) are not scores.
    meta = [c for c in wide.columns if c not in agg and (num_all[c].isna().all() or _named_metadata(c, wide.columns))]
    foot = {} if scenarios else _foot_rows(wide, num_all, [c for c in wide.columns if c not in meta
                                                           and c not in set(exclude or [])], decimals or {})
    if foot:
        keep = ~np.isin(np.arange(len(wide)), list(foot))
        foot = {str(wide.index[i]): what for i, what in foot.items()}
        wide, num_all = wide[keep], num_all[keep]
    cand = [c for c in wide.columns if c not in agg and c not in meta and c not in set(exclude or [])]
    numeric = [c for c in wide.columns if c not in agg and num_all[c].notna().any() and c not in set(exclude or [])]
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
        out = sel.apply(pd.to_numeric, errors="coerce")
        lower = _lower_columns(out.columns, higher_is_better, warn=True)
        out[lower] = -out[lower]
        out, published = _dedupe_with(out, published, duplicates, hint)
        if lower:
            out.attrs.update(note=_lower_note(lower), lower_is_better=lower)
        return out, published
    set_aside = agg + [f["column"] for f in found]
    wide = wide.drop(columns=set_aside)
    wide_in, wide = wide, wide.drop(columns=meta)
    if exclude:
        wide = _select(wide, None, exclude)
    num = wide.apply(pd.to_numeric, errors="coerce")
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
        ["summary rows " + "; ".join(f"{r!r} (the column {what}s of the other rows within rounding)"
                                     for r, what in foot.items())] if foot else []) + (
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
    num, published = _dedupe_with(num, published, duplicates, hint)
    if notes:
        num.attrs["note"] = " ".join(notes)
    if lower:  # negative as read, not as written (as a HELM table's lower_is_better columns)
        num.attrs["lower_is_better"] = lower
    if rank_col is not None:
        ranks = num_all[rank_col][~num_all.index.duplicated(keep="last")].reindex(num.index)
        num.attrs["published_rank"] = {"column": str(rank_col), "rank": ranks}
    return num, published


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


def _foot_rows(wide: pd.DataFrame, num: pd.DataFrame, cols: list, decimals: dict) -> dict[int, str]:
    """Row positions of ``wide`` that are the column means, medians or standard deviations of the other rows in
    its numeric columns ``cols`` (:func:`_summary_rows`): a spreadsheet's foot, not models."""
    cols = [c for c in cols if num[c].notna().any()]
    if len(cols) < 3:
        return {}
    tol = np.array([0.51 * 10.0 ** -decimals.get(c, _decimals(wide[c])) for c in cols])
    return _summary_rows(num[cols].to_numpy(dtype=float), tol, names=[str(m) for m in wide.index])


def _refuse_infinite(num: pd.DataFrame) -> None:
    """Raise naming the first infinite cell's column and row (before anything compares or fits the columns)."""
    inf = np.isinf(num.to_numpy(dtype=float))
    if inf.any():
        row, col = (int(i[0]) for i in np.nonzero(inf))
        raise ValueError(f"SCORES: infinite score in column {str(num.columns[col])!r}, row {str(num.index[row])!r}"
                         f"{f' ({int(inf.sum())} in all)' if inf.sum() > 1 else ''}; scores must be finite")


def _example_text(values: pd.Series) -> str:
    """The first cell of a text column as the report shows it: HTML links by their text (the markup is not data)."""
    v = str(values.dropna().iloc[0])
    return f"{_plain_names(pd.Series([v])).iloc[0]!r}, HTML links" if _is_link_column(pd.Series([v])) else repr(v)


def _dedupe_with(num: pd.DataFrame, published: pd.Series | None, duplicates: str,
                 hint: str) -> tuple[pd.DataFrame, pd.Series | None]:
    """Resolve repeated models in the scores and the published aggregate alike (they share the rows)."""
    if not num.index.has_duplicates:
        return num, published
    key = "\0published"  # a column name no table uses
    both = num.assign(**{key: published.to_numpy()}) if published is not None else num
    both = _dedupe(both, duplicates, hint=hint)
    if published is None:
        return both, None
    pub = both.pop(key)
    pub.attrs.update(published.attrs)
    return both, pub


def _looks_openllm(cols: Sequence[str]) -> bool:
    c = set(cols)
    v1 = len(_openllm_columns(cols, _OPENLLM_V1)) == len(_OPENLLM_V1)
    v2 = len(_openllm_columns(cols, _OPENLLM_V2)) == len(_OPENLLM_V2)
    keys = {_openllm_key(x) for x in c}
    return ("Average ⬆️" in c) or (v1 and bool({"fullname", "evalname", "average"} & keys)) or v2


def read_openllm_csv(path: str | Path, *, scenarios: Sequence[str] | None = None,
                     exclude: Sequence[str] | None = None,
                     duplicates: str = "last") -> tuple[pd.DataFrame, pd.Series | None]:
    """Read the Open LLM Leaderboard's CSV export (v1 tasks ARC … GSM8K, or v2 IFEval … MMLU-PRO).

    The model is ``fullname`` (else ``Model`` / ``eval_name``); task columns are the leaderboard's; scores in
    percent are divided by 100; the published "Average ⬆️" is returned as the aggregate.

    Parameters
    ----------
    path : str or Path
        The CSV (or TSV) export.
    scenarios, exclude : sequence of str, default=None
        Task columns to keep / to leave out (default: the leaderboard's tasks).
    duplicates : {"last", "first", "mean", "error"}, default="last"
        Models listed more than once: keep the last row in file order, the first, their mean, or refuse (no date
        column is read: sort the rows to keep the latest run). Keeping one row or the mean is said in a
        ``UserWarning``.

    Returns
    -------
    scores : DataFrame
        Models × tasks, fractions in [0, 1].
    published : Series or None
        The published average as a fraction.

    See Also
    --------
    effstats.cli.read_openllm_json : the per-model results files.
    effstats.datasets.load_openllm : the bundled Open LLM Leaderboard table.

    References
    ----------
    Beeching, E., Fourrier, C., Habib, N., Han, S., Lambert, N., Rajani, N., Sanseviero, O., Tunstall, L. and
    Wolf, T. (2023). Open LLM Leaderboard. Hugging Face.

    Examples
    --------
    >>> import os, tempfile
    >>> from effstats.cli import read_openllm_csv
    >>> path = os.path.join(tempfile.mkdtemp(), "open_llm.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write('''fullname,Average ⬆️,ARC,HellaSwag,MMLU,TruthfulQA,Winogrande,GSM8K
    ... org/big,70.0,70,85,65,50,80,70
    ... org/small,50.0,50,70,45,40,65,30
    ... ''')
    >>> scores, published = read_openllm_csv(path)
    >>> scores[["ARC", "GSM8K"]]
               ARC  GSM8K
    model
    org/big    0.7    0.7
    org/small  0.5    0.3
    >>> published.tolist()
    [0.7, 0.5]
    """
    _check_duplicates(duplicates)
    path = _check_path(path)
    df, _, _ = _read_text_table(path)
    if df.empty:
        raise ValueError(f"SCORES: {str(path)!r} holds no rows")
    names = [c for c in ("fullname", "Model", "model", "eval_name") if c in df.columns]
    names = [c for c in names if not _has_markup(df[c])] + [c for c in names if _has_markup(df[c])]
    if not names:
        raise ValueError("SCORES: an Open LLM Leaderboard table needs a 'fullname', 'Model' or 'eval_name' column")
    mcol = names[0]
    cols = list(df.columns)
    if scenarios:
        found = {t: _openllm_columns(cols, [t]).get(t, t if t in cols else None) for t in scenarios}
        missing = [t for t, c in found.items() if c is None]
        if missing:
            raise ValueError(f"--scenarios: unknown column(s) {missing} (columns: {cols})")
    else:
        found = _openllm_columns(cols, _OPENLLM_V2)
        if len(found) < 2:
            found = _openllm_columns(cols, _OPENLLM_V1 + _OPENLLM_V1_EXTRA)
    excluded = {_openllm_key(x) for x in exclude or []}
    found = {t: c for t, c in found.items() if _openllm_key(t) not in excluded and c not in set(exclude or [])}
    tasks = list(found)
    if len(tasks) < 2:
        raise ValueError(f"SCORES: fewer than 2 Open LLM Leaderboard task columns found ({tasks}); expected the v1 "
                         f"tasks {', '.join(_OPENLLM_V1)} (headers such as 'ARC (25-shot)' too) or the v2 tasks "
                         f"{', '.join(_OPENLLM_V2)}; columns: {_name_list(cols, 12)}")
    df, baselines = _markup_rows(df, mcol)
    _refuse_empty_names(df[mcol], mcol)
    ids = pd.Index(_plain_names(df[mcol]).astype(str), name="model")
    avg = next((c for c in df.columns if _openllm_key(c) == "average"), None)
    # the table is in percent whether or not its cells say so ("71.08%"): the sign is dropped, as _percent checks it
    _, pct = _percent(df[[c for c in [*found.values(), avg] if c is not None]])
    df = df.assign(**{c: df[c].str.strip().str.rstrip("%").str.strip() for c in pct})
    _refuse_text_cells(df, list(found.values()), ids, path)
    if avg:
        _refuse_text_cells(df, [avg], ids, path, exclude=False)
    wide = df[list(found.values())].apply(pd.to_numeric, errors="coerce").set_axis(ids).set_axis(tasks, axis=1) / 100
    pub = None
    if avg:
        pub = pd.Series(pd.to_numeric(df[avg], errors="coerce").to_numpy() / 100, index=ids)
        pub = _as_published(pub, dict(column=avg, kind="mean", rule="label"))
    note = " ".join(filter(None, [f"Open LLM Leaderboard table: tasks {', '.join(tasks)} (percent / 100).", baselines]))
    cols = list(found.values()) + ([avg] if avg else [])
    foot = {} if scenarios else _foot_rows(df[cols].set_axis(ids), df[cols].apply(pd.to_numeric, errors="coerce"),
                                           cols, {})
    if foot:
        keep = ~np.isin(np.arange(len(wide)), list(foot))
        note += (" Left out of the scores: summary rows " + "; ".join(
            f"{str(ids[i])!r} (the column {what}s of the other rows within rounding)" for i, what in foot.items())
            + ".")
        wide = wide[keep]
        if pub is not None:
            attrs = dict(pub.attrs)
            pub = pub[keep]
            pub.attrs.update(attrs)
    wide, pub = _dedupe_with(wide, pub, duplicates, "")
    wide.attrs["note"] = note
    return wide, pub
