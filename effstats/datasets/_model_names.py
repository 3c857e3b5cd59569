"""The model column of a leaderboard table: HTML and Markdown links read as their text, rows of markup without a
link (baselines) left out, names that are run time stamps or empty refused, and a board written one row per scenario
(transposed) recognised by its headers and row names.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._shared import _name_list

__all__: list[str] = []


_MARKUP = re.compile(r"<\s*/?\s*[a-zA-Z][^>]*>")


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


_MD_LINK = re.compile(r"^\s*\[([^\]]+)\]\([^)\s]*\)\s*$")


def _example_text(values: pd.Series) -> str:
    """The first cell of a text column as the report shows it: HTML links by their text (the markup is not data)."""
    v = str(values.dropna().iloc[0])
    return f"{_plain_names(pd.Series([v])).iloc[0]!r}, HTML links" if _is_link_column(pd.Series([v])) else repr(v)


def _refuse_empty_names(ids: pd.Series, column: Any) -> None:
    """Raise naming the first row (and its line in the file) whose model name is empty."""
    blank = (ids.isna() | ids.astype(str).str.strip().eq("")).to_numpy()
    if blank.any():
        row = int(np.argmax(blank))
        raise ValueError(f"SCORES: row {row + 1} (line {row + 2}) has an empty model name in column {str(column)!r}; "
                         "name every row's model")


# a date or time stamp (``2023-12-10T04-42-16.291896``, ``2023-10-01 08:30:00``): a column of them names
# runs, not models
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}([T _]\d{2}[:-]\d{2}([:-]\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$")


def _is_timestamps(col: pd.Series) -> bool:
    """Whether every value of ``col`` is a date or time stamp."""
    return bool(col.astype(str).str.strip().str.match(_TIMESTAMP).all())


# a commit hash (``3f2a9c1``, a 40-digit sha): a column of them names a model's revisions, not models
_REVISION = re.compile(r"^(?=.*\d)[0-9a-f]{7,64}$", re.I)


def _is_run_ids(col: pd.Series) -> bool:
    """Whether every value of ``col`` marks a run of a model rather than a model: a date or time stamp, or a commit
    hash (rows a column of them tells apart are resubmissions)."""
    txt = col.astype(str).str.strip()
    return bool(txt.str.match(_TIMESTAMP).all() or txt.str.match(_REVISION).all())


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
