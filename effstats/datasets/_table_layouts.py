"""What a score table's header and cells say of its layout, and the refusals of the layouts the score-table
reader would misread (a transposed table, a long one under other names, a wide one without its model column,
metadata columns, scores out of [0, 1], empty ids); the cells' numbers as the reader takes them."""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from .._scales import RATING_MAX, in_percent, names_percent
from .._shared import _is_float, _name_list, _plain
from .leaderboards import _numeric


_EXPECTED = ("expected a long table with columns 'model', 'item' and 'score' (one row per model and item) or a "
             "wide one (one row per model: the model id first or in a 'model' column, then one column of scores in "
             "[0, 1] per item)")
# id-column names: a first column named like an item means one row per item (a transposed table)
_MODEL_NAMES = {"model", "models", "model_id", "model_name", "name", "llm", "system", "checkpoint"}
_ITEM_NAMES = {"item", "items", "item_id", "doc", "doc_id", "document", "question", "question_id", "example",
               "example_id", "sample", "sample_id", "instance", "instance_id", "prompt", "prompt_id", "task"}
# columns of leaderboard tables that describe a model or aggregate its scores, never one item
_META_NAMES = {"average", "avg", "mean", "overall", "total", "accuracy", "acc", "score", "rank", "params",
               "parameters", "n_params", "num_params", "size", "model_size", "date", "release", "release_date",
               "family", "organization", "org", "license", "type", "precision", "architecture", "link", "url"}
_ITEM_ID = re.compile(r"^.+/\d+$")  # the loop's item ids: <task>/<doc_id>
_TRUE_FALSE = {"true": "1", "false": "0"}
_BLOCK_CELLS = 2**20  # cells of a table checked at once (8 MB of floats)


def _looks_like_score(h: str) -> bool:
    try:
        float(h)
    except ValueError:
        return h.strip().lower() in _TRUE_FALSE
    return "." in h or h.strip() in ("0", "1") or "e" in h.lower()


def _refuse_headerless(header: list, p: Path, sep: str, model: str) -> None:
    """Raise when the first line holds scores where column names belong: a file written without a header."""
    first, rest = str(header[0]).strip(), [str(h).strip() for h in header[1:]]
    if not rest or first == "" or first == model or first.lower() in _MODEL_NAMES | _ITEM_NAMES:
        return
    if sum(map(_looks_like_score, rest)) * 2 >= len(rest):
        shown = sep.join(map(str, header[:4])) + (sep + "…" if len(header) > 4 else "")
        raise ValueError(f"path: {p.name} has no header line: its first line {shown!r} holds scores where column names "
                         f"belong; add a header line ('model,item,score' for a long table, 'model,<item id>,…' for a "
                         "wide one)")


def _cells(frame: pd.DataFrame, missing: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The cells of a table of strings, stripped, and which of them are written (not empty, not a missing marker).
    One pass over the whole table: a wide table has tens of thousands of item columns."""
    cells = np.char.strip(frame.to_numpy(dtype=str))
    return cells, ~(np.isin(cells, list(missing)) | (cells == ""))


def _text_columns(frame: pd.DataFrame) -> pd.Index:
    """The columns of ``frame`` held as text; the others hold numbers already (a table read by
    :func:`~effstats.datasets._delimited._read_typed` or a Parquet file)."""
    return frame.columns[(frame.dtypes == object).to_numpy()]


def _values(frame: pd.DataFrame, name: str, missing: tuple[str, ...]) -> np.ndarray:
    """Float matrix of a table of text and number columns: :func:`~effstats.datasets.leaderboards._numeric` on the
    text columns, NaN at the number columns' missing values."""
    text = frame.dtypes.to_numpy() == object
    # pandas' own missing value (nullable columns of a Parquet file) as NaN; numpy columns need no such pass
    na = {"na_value": np.nan} if any(isinstance(t, pd.api.extensions.ExtensionDtype) for t in frame.dtypes) else {}
    if not text.any():
        return frame.to_numpy(dtype=float, **na)
    if text.all():
        return _numeric(frame, name, missing=missing)
    out = np.empty(frame.shape)
    out[:, ~text] = frame.iloc[:, np.flatnonzero(~text)].to_numpy(dtype=float, **na)
    out[:, text] = _numeric(frame.iloc[:, np.flatnonzero(text)], name, missing=missing)
    return out


def refused_scores(texts: Any, missing: tuple[str, ...], true_false: bool = True) -> np.ndarray | None:
    """Which of the score ``texts`` (as written) :func:`_values` refuses: text that is not a number, numbers
    written with ``_``, ``nan``; a blank or ``missing`` cell is none. None where one is ``True`` or ``False`` and
    ``true_false`` holds: a column of such cells only reads as 1/0 (:func:`_true_false`), which the texts of a part
    of the column cannot tell."""
    texts = pd.Index(texts, dtype=object).astype(str)
    stripped = texts.str.strip()
    if true_false and stripped.str.lower().isin(list(_TRUE_FALSE)).any():
        return None
    blank = (stripped == "") | texts.isin(list(missing))
    bad = np.array([not _is_float(t) or math.isnan(float(t)) for t in texts], bool)
    return bad & ~np.asarray(blank)


def refuse_score_text(text: str, p: Path, score: str, missing: tuple[str, ...], where: str) -> None:
    """Raise :func:`_values`' error on the score cell ``text`` of column ``score``, naming ``where`` it is."""
    _numeric(pd.DataFrame({score: [text]}, dtype=object), f"path: {p.name}", missing=missing, where=lambda i: where)


def _true_false(df: pd.DataFrame, cols: list, missing: tuple[str, ...]) -> pd.DataFrame:
    """Columns written as True/False (pandas writes booleans so) as 1/0."""
    held = set(_text_columns(df))
    cols = [c for c in cols if c in held]
    if not cols:
        return df
    cells, written = _cells(df[cols], missing)
    low = np.char.lower(cells)
    convert = written.any(axis=0) & (np.isin(low, list(_TRUE_FALSE)) | ~written).all(axis=0)
    out = {cols[j]: pd.Series(np.where(written[:, j], np.where(low[:, j] == "true", "1", "0"), df[cols[j]]),
                              index=df.index, dtype=object) for j in np.flatnonzero(convert)}
    return df.assign(**out) if out else df


def _text_examples(frame: pd.DataFrame, missing: tuple[str, ...]) -> dict:
    """For each column with a cell that is neither a number nor a not-evaluated marker, its first such cell."""
    frame = frame[_text_columns(frame)]
    if not frame.size:
        return {}
    cells, written = _cells(frame, missing)
    values, where = np.unique(cells, return_inverse=True)
    text = np.array([not _is_float(x) for x in values])[where.reshape(cells.shape)] & written
    return {frame.columns[j]: str(cells[int(np.argmax(text[:, j])), j]) for j in np.flatnonzero(text.any(axis=0))}


def _text_example(col: pd.Series, missing: tuple[str, ...]) -> str | None:
    """A cell of ``col`` that is neither a number nor a not-evaluated marker, else None."""
    return next(iter(_text_examples(col.to_frame(), missing).values()), None)


def _id_column(df: pd.DataFrame, model: str) -> str:
    """The model id column of a wide table: ``model``, else one column named like a model id, else the first."""
    if model in df.columns:
        return model
    named = [c for c in df.columns if str(c).lower() in _MODEL_NAMES]
    return named[0] if len(named) == 1 else df.columns[0]


def _header_shape(h: str) -> str:
    """A column name with its runs of digits as ``#``: items of one benchmark share it ('t0/#', 'q#')."""
    return re.sub(r"\d+", "#", h.strip())


def _refuse_scores_as_ids(df: pd.DataFrame, id_col: Any, p: Path, model: str, missing: tuple[str, ...]) -> None:
    """Raise when a wide table has no model column: its first column, taken for the model ids, is an item's.

    Two signals together, since model ids may be numbers (run numbers, checkpoints' steps): the column is named
    like the other columns (the same name up to its digits, e.g. 't0/0' beside 't0/1'), and every value in it is
    a number in [0, 1]."""
    first = str(id_col)
    if id_col != df.columns[0] or first == model or first.lower() in _MODEL_NAMES or not re.search(r"\d", first):
        return
    others = [str(c) for c in df.columns[1:]]
    if _header_shape(first) not in {_header_shape(c) for c in others}:
        return
    values = pd.unique(df[id_col].astype(str).str.strip())
    written = [v for v in values if v not in missing and v != ""]
    if not written or not all(_is_float(v) and 0 <= float(v) <= 1 for v in written):
        return
    raise ValueError(f"path: {p.name}: the table has no model column: its first column {first!r} is named like the "
                     f"item columns ({others[:2]} …) and holds scores (every value a number in [0, 1], e.g. "
                     f"{_plain(written[0])!r}), not model ids; add the model ids as the first column, named {model!r} "
                     f"(a header line '{model},{first},…', then one line per model: '<model id>,<score>,…')")


def _refuse_long_as_wide(df: pd.DataFrame, p: Path, model: str, item: str, score: str, cell_text: dict) -> None:
    """Raise when a table read as wide (the long columns are not all there) is a long table under other names;
    ``cell_text``: :func:`_text_examples` of ``df``."""
    cols = [str(c) for c in df.columns]
    id_col = _id_column(df, model)
    ids = df[id_col]
    reason = None
    text = [c for c in cols if c != id_col and c in cell_text]
    if item in cols or score in cols:
        reason = f"it has the column(s) {[c for c in (item, score) if c in cols]}"
    else:
        named = [c for c in cols if c.lower() in _ITEM_NAMES and c != id_col]
        counts = ids.value_counts()
        if named:
            reason = f"column(s) {named} name items"
        elif len(cols) >= 3 and len(ids) > 1 and counts.min() > 1 and (counts.max() >= 3 or text):
            reason = (f"every id in its column {id_col!r} repeats, e.g. {_plain(counts.index[0])!r} on "
                      f"{int(counts.iloc[0])} rows")
    if reason is None:
        return
    kv = ", ".join(f"{k}={c!r}" for k, c in (("model", model), ("item", item), ("score", score)) if c not in cols)
    lead = "read as a wide table, "
    if text:
        lead = f"column {text[0]!r} has non-numeric values, e.g. {_plain(cell_text[text[0]])!r} ({lead[:-2]}: "
    raise ValueError(f"path: {p.name}: {lead}the long layout's columns {kv} are absent{')' if text else ''}; it looks "
                     f"like a long table ({reason}), with the columns {cols[:8]}{' …' if len(cols) > 8 else ''}: name "
                     "them 'model', 'item' and 'score' (one row per model and item; item ids unique across tasks, "
                     "e.g. 'arc_easy/12'), or write a wide table (one row per model)")


def _refuse_transposed(df: pd.DataFrame, id_col: str, p: Path, model: str, cell_text: dict) -> None:
    """Raise when a wide table has one row per item and one column per model; ``cell_text``: :func:`_text_examples`
    of ``df``."""
    ids = df[id_col].astype(str)
    cols = [str(c) for c in df.columns if c != id_col]
    if (str(id_col).lower() in _ITEM_NAMES and model not in df.columns and not ids.duplicated().any()
            and not any(c in cell_text for c in cols)):
        found = f"its first column is named {id_col!r}"
    elif (len(ids) > 1 and ids.str.match(_ITEM_ID).all() and not any(_ITEM_ID.match(c) for c in cols)
          # under a model header, ids such as 'ckpt/1000' name checkpoints: items span several tasks
          and (str(id_col).lower() not in _MODEL_NAMES | {model} or ids.str.rsplit("/", n=1).str[0].nunique() > 1)):
        found = (f"its rows are named like items ({_plain(ids.iloc[0])!r}, {_plain(ids.iloc[1])!r}) and its "
                 "columns are not")
    else:
        return
    if len(cols) == 1 and cols[0].lower() in _META_NAMES | {"correct", "value", "result"}:
        # item, score: one model's results, long, without the model's name (not one model called 'score')
        raise ValueError(f"path: {p.name} looks like one model's long table without a model column (columns "
                         f"{[str(id_col), cols[0]]}): add a 'model' column naming the model (pandas: "
                         "df.assign(model='<its name>'))")
    raise ValueError(f"path: {p.name} looks transposed ({found}): one row per item and one column per model "
                     f"({cols[:2]} …); expected one row per model, the model id first, then one column per item: "
                     f"transpose it (pandas: df.set_index({str(id_col)!r}).T) or write a long table with columns "
                     "'model', 'item' and 'score'")


def _refuse_non_items(df: pd.DataFrame, values: np.ndarray, p: Path) -> None:
    """Raise when some columns of a wide table are model metadata or aggregates rather than items."""
    cols = [str(c) for c in df.columns]
    why: dict[str, str] = {}
    for c in cols:
        if c.lower() in _META_NAMES:
            why[c] = "named like model metadata or an aggregate"
    lm = [c for c in cols if _ITEM_ID.match(c)]
    if len(lm) >= 2:
        for c in cols:
            if not _ITEM_ID.match(c):
                why.setdefault(c, f"not an item id <task>/<doc_id> as the other {len(lm)} columns")
    low, high = _finite_range(values)
    out = (high > 1) | (low < 0)
    # a few columns outside [0, 1] beside many scores are metadata (sizes, dates); most of them: percentages
    if out.any() and out.sum() <= max(3, 0.1 * len(cols)) and 2 * out.sum() < len(cols):
        for j in np.flatnonzero(out):
            why.setdefault(cols[j], f"values up to {high[j]:g}" if high[j] > 1 else f"values down to {low[j]:g}")
    if why:
        shown = "; ".join(f"{c!r}: {w}" for c, w in list(why.items())[:5])
        raise ValueError(f"path: {p.name}: column(s) {list(why)[:5]} are not items ({shown}); a wide table holds the "
                         "model id column, then one column of scores in [0, 1] per item: drop the other columns")


def _finite_range(values: np.ndarray, empty: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Per column of the 2-D ``values``, the smallest and the largest finite value (``empty`` and ``-empty`` where
    there is none; 0 and 0 by default), read in blocks of rows: no temporary of the whole table's size."""
    low = np.full(values.shape[1], empty)
    high = np.full(values.shape[1], -empty)
    step = max(1, _BLOCK_CELLS // max(values.shape[1], 1))
    for a in range(0, len(values), step):
        block = values[a:a + step]
        finite = np.isfinite(block)
        np.minimum(low, np.where(finite, block, empty).min(axis=0, initial=empty), out=low)
        np.maximum(high, np.where(finite, block, -empty).max(axis=0, initial=-empty), out=high)
    return low, high


def _row_models(df: pd.DataFrame, model: str, codes: Any) -> Any:
    """The model of each row of a long table (its ids where ``codes`` holds them as codes), None without one."""
    if model not in df.columns:
        return None
    if codes is not None and model in codes:
        return np.asarray(codes[model][1])[np.asarray(df[model])]
    return df[model].to_numpy()


def _refuse_out_of_range(values: np.ndarray, p: Path, where: str, header: Any = None, rows: Any = None,
                         first: Callable[[], str] | None = None) -> None:
    """Raise, naming percentages when they are the likely cause (the audit's judgement of a scale,
    ``effstats._scales.in_percent``, under the scores' ``header`` if they have one), unless every score is in
    [0, 1]. ``rows``, the model of each row (or a function giving them, called only then): percentages in some
    models' rows only name those models. ``first``: a function giving where the first score outside [0, 1] is
    (its line in the file), called only then."""
    low, high = _finite_range(values if values.ndim == 2 else values[:, None], np.inf)
    lo, hi = float(low.min(initial=np.inf)), float(high.max(initial=-np.inf))
    if lo > hi or (lo >= 0 and hi <= 1):  # no finite value, or all in [0, 1]
        return
    at = "" if first is None else f"; the first outside [0, 1] is on {first()}"
    excess = max(-lo, hi - 1)
    if excess <= 1e-6:  # e.g. 1.0000001: a sum or mean in floating point, not another scale
        raise ValueError(f"path: {p.name}: {where} run from {lo:.10g} to {hi:.10g}, out of [0, 1] by {excess:.2g} "
                         f"(floating-point rounding?); round or clip them to [0, 1]{at}")
    if in_percent(lo, hi, header is not None and names_percent(header)):
        fix = "divide them by 100"
        rows = rows() if callable(rows) else rows
        if rows is not None:
            over = np.asarray(values > 1 + 1e-6).reshape(len(values), -1).any(axis=1)
            rows = np.asarray(rows, dtype=object)
            # in the order the models first appear (a long table's rows, a matrix's or a wide table's models alike)
            models = pd.unique(rows)
            odd = models[pd.Index(models).isin(rows[over])]
            if len(odd) < len(models):  # other models' rows are fractions
                fix = (f"model(s) {_name_list(map(repr, map(_plain, odd)), 5)} score above 1, the other models "
                       "within [0, 1]: divide those models' scores by 100")
        raise ValueError(f"path: {p.name}: {where} run from {lo:g} to {hi:g}: percentages? "
                         f"expected scores in [0, 1] ({fix}){at}")
    if lo >= 0 and hi <= RATING_MAX:
        raise ValueError(f"path: {p.name}: {where} run from {lo:g} to {hi:g}: a rating (0–10, 1–5)? expected "
                         f"scores in [0, 1] (rescale them to [0, 1]){at}")
    raise ValueError(f"path: {p.name}: {where} run from {lo:g} to {hi:g}; expected scores in "
                     f"[0, 1] (correctness 0/1 or a score such as a normalised metric){at}")


def _refuse_empty_ids(df: pd.DataFrame, cols: dict, p: Path, codes: dict | None = None) -> None:
    """Raise naming the first row whose model or item id (``cols``: column -> what it names) is empty: read, it
    would be a model (or item) named "". ``codes``: each column's :func:`~effstats._shared._sorted_codes`, whose
    distinct values are checked instead of every row."""
    for c, what in cols.items():
        if c not in df.columns:
            continue
        if codes is not None:
            k, distinct = codes[c]
            blank = np.array([str(v).strip() == "" for v in distinct], bool)[k]
        else:
            ids = df[c]
            blank = (ids.isna() | ids.astype(str).str.strip().eq("")).to_numpy()
        if blank.any():
            row = int(np.argmax(blank))
            raise ValueError(f"path: {p.name}: row {row + 1} (line {row + 2}) has an empty {str(c)!r}; every row "
                             f"names its {what}")


def _refuse_items_in_two_tasks(df: pd.DataFrame, item: str, p: Path) -> None:
    """Raise, naming one, when an item id of a long table stands in several tasks: its rows would be one item."""
    tasks = df[[item, "task"]].drop_duplicates()
    two = tasks[item][tasks[item].duplicated()]
    if len(two):
        i = two.iloc[0]
        names = sorted(map(str, tasks.loc[tasks[item] == i, "task"]))
        raise ValueError(f"path: {p.name}: item {str(i)!r} stands in the tasks {names} (column 'task'); "
                         f"{len(two.unique())} item id(s) are ambiguous: make item ids unique across tasks (e.g. "
                         "'<task>/<id>')")
