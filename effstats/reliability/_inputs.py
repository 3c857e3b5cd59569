"""The audit's reading and judging of its input: score files and frames, published aggregates, and score scales."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._published import _decimals, _detect_published
from .._shared import _name_list, _plain
from .._scales import RATING_MAX, names_percent, score_scales
from ..datasets._cells import PercentColumnsWarning, _refuse_stray_cells, as_numbers
from ..datasets._score_files import per_example_columns
from ._benchmark import _negated_columns, no_scenario_column
from ._render import _SCORE_NAME


def _real(df: pd.DataFrame) -> pd.DataFrame | None:
    """The table as real numbers (unparsable cells NaN), or None when a column holds complex numbers: such input
    is left for :class:`effstats.reliability.Benchmark` to refuse with its message."""
    x = as_numbers(df)
    return None if any(t.kind == "c" for t in x.dtypes) else x.astype(float)


def _refuse_mixed_rows(x: pd.DataFrame, notes: list[str]) -> None:
    """Refuse a table whose models are written on two scales: some rows above 1 in every column within [0, 100]
    (percentages) while others lie within [0, 1] there (fractions; a row of 0s and 1s only says nothing). Read as one
    scale, one of the two groups would be ranked on numbers 100 times too large or too small.

    A few rows above 1 among fractions cannot be fractions. A few rows below 1 among percentages can be percent (a
    model near 0 on every column, a random baseline): they are refused only where the file's order of the other
    rows (a leaderboard sorted by score) puts them where their values read in percent fit; otherwise noted."""
    sub = x[[c for c in x.columns if x[c].min() >= 0 and x[c].max() <= 100]]
    n = sub.notna().sum(axis=1)
    above = ((sub > 1) | sub.isna()).all(axis=1) & (n >= 2)
    below = ((sub <= 1) | sub.isna()).all(axis=1) & ((sub > 0) & (sub < 1)).any(axis=1) & (n >= 2)
    if not (above.any() and below.any()):
        return
    few, many = (above, below) if above.sum() <= below.sum() else (below, above)
    what = {id(above): "above 1 (percentages?)", id(below): "within [0, 1] (fractions?)"}
    rows = _name_list(map(repr, map(str, x.index[few])), 5)
    if few is below and not _placed_by_order(sub.mean(axis=1), few, many):
        notes.append(f"Model(s) {rows} score below 1 in every column while the others are in percent: read as "
                     "percent (models near 0, such as a random baseline); if they are fractions, write them in "
                     "percent.")
        return
    eg = ", ".join(repr(str(m)) for m in x.index[many][:2])
    raise ValueError(f"SCORES: the rows mix two scales: {rows} score {what[id(few)]} in every score column, "
                     f"{int(many.sum())} other row(s) (e.g. {eg}) {what[id(many)]}; write every model's scores on "
                     "one scale (or state it with --scale percent, fraction or as-is)")


def _placed_by_order(means: pd.Series, few: pd.Series, many: pd.Series) -> bool:
    """Whether the rows ``many`` are sorted by their mean in the file (either way) and some row of ``few``, its
    mean times 100, falls where its place in that order says (between its neighbours' means, within one typical
    step of them): the evidence that a row below 1 among percentages is a row of fractions."""
    m = means.to_numpy(dtype=float)
    pos = np.flatnonzero(many.to_numpy())
    if len(pos) < 4 or np.isnan(m[pos]).any():
        return False
    steps = np.diff(m[pos])
    sign = np.sign(np.median(steps))
    if sign == 0 or (np.sign(steps) == -sign).mean() > 0.25:
        return False
    tol = np.median(np.abs(steps))
    for i in np.flatnonzero(few.to_numpy()):
        before, after = pos[pos < i], pos[pos > i]
        near = m[[j for j in (before[-1:].tolist() + after[:1].tolist())]]
        if near.min() - tol <= 100 * m[i] <= near.max() + tol:
            return True
    return False


def _prepare_frame(data: pd.DataFrame, published: Any,
                   notes: list[str]) -> tuple[pd.DataFrame, pd.Series | None, dict | None]:
    """A wide DataFrame given directly: name the published column, or find one among the columns by its values."""
    info = None
    twice = list(dict.fromkeys(map(str, data.columns[data.columns.duplicated()])))
    if twice:
        raise ValueError(f"data: duplicate column names {twice}; each scenario needs one column")
    if isinstance(published, str):
        if published not in data.columns:
            raise ValueError(f"published: column {published!r} not in the table "
                             f"(columns: {list(map(str, data.columns))})")
        col = published
        published = pd.to_numeric(data[col], errors="coerce")
        data = data.drop(columns=[col])
        num = _real(pd.concat([published.rename(col), data], axis=1))
        found = [] if num is None else _detect_published(num)
        match = [f for f in found if f["column"] == col]
        info = dict(match[0] if match else {}, column=col, rule=match[0]["rule"] if match else "given")
    elif published is None and data.shape[1] >= 3 and (num := _real(data)) is not None:
        found = [f for f in _detect_published(num) if f["rule"] != "name"]
        if found:
            info = found[0]
            col = info["column"]
            published = num[col]
            data = data.drop(columns=[f["column"] for f in found])
            notes.append(f"Left out of the scores: {_name_list(repr(str(f['column'])) for f in found)}, the "
                         f"{'Mean Win Rate' if info['kind'] == 'mwr' else 'mean'} of the other columns (a published "
                         "aggregate); pass published= to name it.")
    if published is not None:
        if not isinstance(published, pd.Series):
            raise ValueError(f"published: expected a Series indexed by model or a column name, got "
                             f"{type(published).__name__}")
        published = published.copy()
        if info is not None:
            published.attrs["kind"] = info.get("kind") or published.attrs.get("kind")
    return data, published, info


def _rescale_percent(data: Any, published: pd.Series | None, notes: list[str],
                     scale: str = "auto") -> tuple[Any, pd.Series | None, dict]:
    """A wide table written in percent, divided by 100 (a published mean too), so every score reads in [0, 1].

    The scale is judged by content, column by column (``scale="auto"``): a table whose rows mix percentages and
    fractions is refused (:func:`_refuse_mixed_rows`); columns on different scales are returned by scale for the
    aggregate to judge; only a table whose every column is in percent is divided. ``scale`` stated as "percent"
    divides every column, "fraction" and "as-is" read the scores as they are, without judging them."""
    x = _real(data) if isinstance(data, pd.DataFrame) else None
    if x is None or x.shape[1] == 0 or x.isna().all().any():
        return data, published, {}
    if scale in ("fraction", "percent"):
        top = 1 if scale == "fraction" else 100
        bad = [c for c in x.columns if x[c].min() < 0 or x[c].max() > top]
        if bad:
            c = bad[0]
            v = x[c].max() if x[c].max() > top else x[c].min()
            raise ValueError(f"--scale {scale}: column {str(c)!r} holds {float(v):g}, outside [0, {top}]")
    if scale == "fraction" or scale == "as-is":
        return data, published, {}
    if scale == "auto":
        negated = set(_negated_columns(data))  # negative as read, not as written
        _refuse_stray_cells(x[[c for c in x.columns if c not in negated]])
        _refuse_mixed_rows(x, notes)
        frac, pct, other = score_scales(x)
        if other and not (frac or pct):  # beside other scales, the note on mixed scales names them
            notes.append(f"Score column(s) {_name_list(map(repr, map(str, other)), 5)} lie within 0–10: neither "
                         "fractions nor clearly percent, so read as they are (rankings, win rates and DIoR do not "
                         "depend on the scale).")
        placed = {*frac, *pct, *other}
        if placed:  # a column beside them that fits no scale is read as it is, and the report says so
            for c in (c for c in x.columns if c not in placed and c not in negated):
                notes.append(f"Score column {str(c)!r} " + (f"exceeds 100 ({_plain(x[c].max()):g}): read as it is."
                             if x[c].max() > 100 else f"holds negative values ({_plain(x[c].min()):g}): read as "
                             "it is."))
        if len(pct) < x.shape[1]:
            groups = {"in [0, 1]": frac, "in 0–100": pct, "in 0–10": other}
            return data, published, {k: v for k, v in groups.items() if v}
    if scale == "percent" and x.max().max() <= 1:
        import warnings

        # stated, so read as stated (a very hard benchmark's percentages can all be below 1), but said loudly:
        # fractions divided by 100 give means 100 times too small and nothing else would show it
        msg = (f"--scale percent: every score lies in [0, 1] (largest {_plain(x.max().max())!r}), as fractions do; "
               f"divided by 100 they read as [0, {_plain(x.max().max() / 100)!r}]: drop --scale percent (or state "
               "--scale fraction) unless these are percentages below 1")
        warnings.warn(msg, UserWarning, stacklevel=3)
        notes.append(f"**Warning**: {msg}")
    data = x / 100
    notes.append("Scores are in percent (every score column lies in 0–100 and exceeds 1): divided by 100."
                 if scale == "auto" else "Scores are in percent (--scale percent): divided by 100.")
    hard = [c for c in x.columns if x[c].max() <= RATING_MAX and not names_percent(c)] if scale == "auto" else []
    if hard:
        notes.append(f"Score column(s) {_name_list(map(repr, map(str, hard)), 5)} lie within 0–10 and read as "
                     "percent, as the other columns are (a hard task's percentages; no header names a rating and "
                     "the values are not whole or half points): state --scale as-is if they are ratings.")
    if published is not None and published.attrs.get("kind") != "mwr" and published.max() > 1.5:
        attrs = dict(published.attrs)
        published = published / 100
        published.attrs.update(attrs)
    return data, published, {}


def _is_raw_mean(data: Any, published: pd.Series | None, info: dict | None) -> bool:
    """Whether a published aggregate taken for a mean by its name equals, within the rounding of the printed
    numbers, the mean of the score columns as they are. With 2 score columns it is not recognised by its values
    (a column equals the mean of two others by chance), so its name is checked here against them."""
    if (published is None or not isinstance(data, pd.DataFrame) or (info or {}).get("kind") != "mean"
            or (info or {}).get("rule") != "label"):
        return False
    x = _real(data)
    if x is None:
        return False
    p = pd.to_numeric(published, errors="coerce").reindex(x.index).to_numpy(dtype=float)
    m = x.to_numpy(dtype=float).mean(axis=1)
    ok = ~np.isnan(p) & ~np.isnan(m)
    if ok.sum() < 5:
        return False
    # the aggregate's own rounding plus the inputs' (a mean of values each off by half a unit)
    tol = 0.51 * 10.0 ** -_decimals(pd.Series(p[ok])) + max(0.51 * 10.0 ** -_decimals(x[c]) for c in x.columns)
    return bool(np.ptp(p[ok]) > 20 * tol and np.abs(p[ok] - m[ok]).max() <= tol)


def _state_scale(groups: dict) -> str:
    """The --scale that reads columns on two scales as one, as far as it can be told from which scales they are:
    percent where the columns within 0–10 may be a hard task's percentages beside percent columns."""
    if "in 0–100" in groups and "in [0, 1]" not in groups:
        return "state --scale percent if the columns within 0–10 are percentages too"
    return "e.g. divide the columns in percent by 100" if "in 0–100" in groups else "e.g. rescale the ratings"


def _mixed_scales(groups: dict, aggregate: str, info: dict | None, notes: list[str], raw_mean: bool = False) -> None:
    """Columns on different scales (percent beside fractions, 0–10 beside either): the Mean Win Rate compares
    models within a column, so it is audited with a note; a mean would weigh the wider columns more, so it is
    refused naming them, unless the published mean is that mean of the columns as they are (the leaderboard's own
    ranking)."""
    if len(groups) < 2:
        return
    if set(groups) == {"in [0, 1]", "in 0–100"}:
        frac, pct = groups["in [0, 1]"], groups["in 0–100"]
        cols = (f"column(s) {_name_list(map(repr, map(str, pct)), 5)} lie in 0–100 while "
                f"{_name_list(map(repr, map(str, frac)), 5)} lie in [0, 1]")
        why, weigh = "percentages beside fractions?", "the first 100 times more"
        heavy = "the percent columns weigh 100 times"
    else:
        cols = " while ".join(f"column(s) {_name_list(map(repr, map(str, v)), 5)} lie {k}"
                              for k, v in sorted(groups.items(), key=lambda kv: -len(kv[0])))
        why, weigh, heavy = "scores on different scales", "the wider columns more", "the wider columns weigh"
    if aggregate == "mwr":
        notes.append(f"Score {cols}: the Mean Win Rate compares models within each column, so the scales do not "
                     "mix (a mean of them would).")
        return
    given = info is not None and info.get("kind") == "mean" and info.get("rule") in ("exact", "close")
    if given or raw_mean:
        notes.append(f"**Warning**: score {cols}; the published mean averages them as they are, and so does this "
                     f"audit ({heavy} more).")
        return
    raise ValueError(f"--aggregate: {cols} ({why}): a {_SCORE_NAME[aggregate].lower()} would weigh {weigh}; "
                     f"put them on one scale ({_state_scale(groups)}, or leave some out with --exclude, or state "
                     "--scale as-is), "
                     "or rank by the Mean Win Rate (--aggregate mwr), which compares models within each column")


def _warn_lookalikes(data: Any, notes: list[str]) -> None:
    """Warn (and note in the report) about model or score-column names that differ only by Unicode normalisation
    (``café`` composed and decomposed print alike) or by case: they are audited as two, which may be one."""
    import unicodedata
    import warnings

    if isinstance(data, pd.DataFrame):
        groups = (("model", data.index), ("score column", data.columns))
    else:
        groups = (("model", getattr(data, "model_ids", [])),)
    for what, names in groups:
        first: dict[str, str] = {}
        pairs = []
        for n in dict.fromkeys(map(str, names)):
            key = unicodedata.normalize("NFKC", n).casefold().strip()  # a trailing space is easily typed, unseen
            if key in first:
                pairs.append((first[key], n))
            first.setdefault(key, n)
        if not pairs:
            continue

        def how(a: str, b: str) -> str:
            if a.strip() == b.strip():
                return "spaces at the start or end"
            if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b):
                return "the same letters, composed and decomposed: Unicode NFC vs NFD"
            return "in case" if a.casefold() == b.casefold() else "in case or Unicode compatibility forms"

        eg = "; ".join(f"{a!r} and {b!r} ({how(a, b)})" for a, b in pairs[:3])
        msg = (f"SCORES: {len(pairs)} pair(s) of {what} names differ only in Unicode normalisation or case (or in "
               f"spaces at either end), e.g. "
               f"{eg}; they are audited as different {what}s: write each name one way if they are one")
        warnings.warn(msg, UserWarning, stacklevel=3)
        notes.append(f"**Warning**: {msg}")


def _drop_unweighted(data: Any, info: dict | None, notes: list[str]) -> Any:
    """A wide table without the score columns a published weighted mean gives no weight, said in a note: the
    audit ranks as the leaderboard does, and a column of weight 0 is no part of that ranking. Only where the
    weighted columns are most of the columns: a weighted mean of fewer (a domain average beside other tasks) is
    a partial aggregate, and the ranking stays the unweighted mean of every column."""
    w = (info or {}).get("weights")
    if not w or not isinstance(data, pd.DataFrame):
        return data
    zero = [c for c in data.columns if str(c) not in set(map(str, w))]
    if not zero or 2 * len(zero) >= data.shape[1] or not set(map(str, w)) <= set(map(str, data.columns)):
        return data
    notes.append(f"Left out of the scores: {_name_list(repr(str(c)) for c in zero)}, of weight 0 in the published "
                 f"weighted mean {str(info.get('column', ''))!r} (not part of the published aggregate); the ranking "
                 "uses the published weights. Name the score columns with --scenarios (or rank by --aggregate "
                 "mean) to keep them.")
    from ..datasets._score_json import score_columns_note

    kept = data.drop(columns=zero)
    notes[:] = [score_columns_note(kept.columns) if n == score_columns_note(data.columns) else n for n in notes]
    return kept


def _published_weights(data: Any, info: dict | None) -> dict | None:
    """The weights of a published weighted mean, by scenario, where they give every score column of a wide table a
    positive weight; None otherwise (per-item data, or a weighted mean of some of the columns: a scenario of weight
    0 would count as missing for the Mean Win Rate and the scenario tables), and the ranking is then the unweighted
    mean's."""
    w = (info or {}).get("weights")
    if not w or not isinstance(data, pd.DataFrame):
        return None
    if {str(c) for c in data.columns} != set(map(str, w)) or min(map(float, w.values())) <= 0:
        return None
    return {str(c): float(v) for c, v in w.items()}


def _raw_table(data: pd.DataFrame, model: str | None) -> bool:
    """Whether a DataFrame is a table as read from a file (a model column named by ``model=`` or text columns),
    not scores indexed by model: such a frame is read as the command line reads the file."""
    if model is not None:
        return True
    return any(not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t)) for t in data.dtypes)


def _read_frame(data: pd.DataFrame, **kw: Any) -> tuple[Any, pd.Series | None, list[str], bool]:
    """:func:`_read_file` of a DataFrame, written as the TSV it would have been read from (its index as the first
    column unless it is the default 0 … n−1)."""
    import tempfile

    plain = isinstance(data.index, pd.RangeIndex) and data.index.start == 0 and data.index.step == 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.tsv"
        data.to_csv(path, sep="\t", index=not plain, index_label=None if plain else (data.index.name or "model"))
        return _read_file(path, **kw)


def _read_file(path: str | Path, judge_scale: bool = True,
               **kw: Any) -> tuple[Any, pd.Series | None, list[str], bool]:
    """A score file read as the command line reads it: (data, published aggregate, notes, is HELM).

    The reader's warnings (duplicated models, ...) are raised again for the caller and written at the top of the
    report's notes, whole; its judgement of the columns' scale only when ``judge_scale`` (a stated scale is not
    judged).
    """
    import warnings

    from ..datasets._score_json import _load

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        data, pub, read_notes, helm = _load(path, **kw)
    said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)
            and (judge_scale or not issubclass(w.category, PercentColumnsWarning))]
    for msg in said:
        warnings.warn(msg, UserWarning, stacklevel=3)
    return data, pub, read_notes + [f"**Warning**: {m}" for m in said], helm


def _per_example_layouts(data: Any, by: str, scenarios: Any, notes: list[str]) -> None:
    """Per-example results about to be audited as a models × scenarios table, each example a scenario (whose
    advice differs: hundreds of "scenarios" that agree look robust). A wide table whose score columns are all
    named as examples of a few tasks (``<task>/<doc>``, two or more a task, twenty or more columns) is refused,
    naming the long layout, unless ``scenarios`` names the columns to audit; a ResponseMatrix whose items name no
    ``by`` column is audited as the table it is read as, with a warning and a note (a leaderboard read into one,
    such as the bundled ImageNet classes, is that table)."""
    import warnings

    said = per_example_columns(data.columns) if isinstance(data, pd.DataFrame) and not scenarios else ""
    if said:
        raise ValueError(said)
    hint = no_scenario_column(data, by)
    if hint:
        msg = f"SCORES: audited as a models × scenarios table: {hint}"
        warnings.warn(msg, UserWarning, stacklevel=3)
        notes.append(f"**Warning**: {msg}")
