"""The Open LLM Leaderboard's CSV export (v1 tasks ARC … GSM8K, v2 IFEval … MMLU-PRO), recognised by its task
columns and read in percent with its published average (:func:`effstats.datasets.read_openllm_csv`).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._shared import _name_list
from ._cells import _percent, _refuse_text_cells
from ._model_names import _has_markup, _markup_rows, _plain_names, _refuse_empty_names
from ._score_choices import _check_duplicates, _dedupe_with, comma_note
from ._score_files import _check_path, _read_text_table
from ._score_headers import _as_published
from ._summaries import _foot_rows, _foot_text

__all__ = ["read_openllm_csv"]


_OPENLLM_V1 = ["ARC", "HellaSwag", "MMLU", "TruthfulQA", "Winogrande", "GSM8K"]

_OPENLLM_V2 = ["IFEval", "BBH", "MATH Lvl 5", "GPQA", "MUSR", "MMLU-PRO"]

_OPENLLM_V1_EXTRA = ["DROP"]  # in the v1 average for a while (2023)


def _openllm_key(col: Any) -> str:
    """A header without its decorations: "ARC (25-shot) ⬆️", "ARC(25-shot)" and "arc" are all "arc"."""
    return re.sub(r"[^a-z0-9]", "", str(col).split("(")[0].lower())


def _openllm_columns(cols: Sequence[Any], names: Sequence[str]) -> dict[str, Any]:
    """The columns of ``cols`` that are the tasks ``names`` (canonical name -> header), by :func:`_openllm_key`."""
    by_key: dict[str, Any] = {}
    for c in cols:
        by_key.setdefault(_openllm_key(c), c)
    return {n: by_key[_openllm_key(n)] for n in names if _openllm_key(n) in by_key}


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
            raise ValueError(f"--scenarios: unknown column(s) {missing} (columns: {cols}){comma_note(cols)}")
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
        note += " Left out of the scores: " + _foot_text((ids[i], what) for i, what in foot.items()) + "."
        wide = wide[keep]
        if pub is not None:
            attrs = dict(pub.attrs)
            pub = pub[keep]
            pub.attrs.update(attrs)
    wide, pub = _dedupe_with(wide, pub, duplicates, "")
    wide.attrs["note"] = note
    return wide, pub
