"""Loaders for evaluation outputs users already have: lm-evaluation-harness sample logs and generic score CSVs.

lm-evaluation-harness (``lm_eval ... --output_path OUT --log_samples``) writes one JSON object per evaluated
document to ``OUT/<model_name_sanitized>/samples_<task>_<timestamp>.jsonl``::

    {"doc_id": 0, "doc": {...}, "target": "2",
     "arguments": {"gen_args_0": {"arg_0": "<context>", "arg_1": " <choice 0>"}, ...},   # older: [["<ctx>", " <choice>"], ...]
     "resps": [[["-7.2", "False"]], ...], "filtered_resps": [["-7.2", "False"], ...],   # per choice [loglik, is_greedy]
     "filter": "none", "metrics": ["acc", "acc_norm"], "acc": 0.0, "acc_norm": 1.0, "doc_hash": ..., ...}

Recent versions write the numbers inside ``resps`` / ``filtered_resps`` as strings (``sanitize_list``); older ones
write numbers and booleans. Both are read here.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

import numpy as np
import pandas as pd
from scipy.special import softmax

from .._validation import check_flag
from ..responses import ResponseMatrix
from .leaderboards import _numeric

__all__ = ["read_lm_eval_samples", "read_scores_csv"]

_SAMPLES_RE = re.compile(r"^samples_(?P<task>.+?)(?:_(?P<ts>\d{4}-\d{2}-\d{2}T[0-9\-:.]+))?\.jsonl(?:\.gz)?$")


# ----------------------------------------------------------------------------------------------------- file discovery
def _expand(p: Any, arg: str) -> list[Path]:
    if isinstance(p, (str, os.PathLike)):
        path = Path(p).expanduser()
        if path.is_dir():
            files = sorted(f for f in path.rglob("samples_*.jsonl*") if f.name.endswith((".jsonl", ".jsonl.gz")))
            if not files:
                raise ValueError(f"{arg}: directory {str(path)!r} contains no samples_*.jsonl file")
            return files
        if path.is_file():
            return [path]
        raise FileNotFoundError(f"{arg}: {str(path)!r} does not exist")
    if isinstance(p, Iterable) and not isinstance(p, (bytes, Mapping)):
        out = [f for q in p for f in _expand(q, arg)]
        if not out:
            raise ValueError(f"{arg}: expected at least one file or directory")
        return out
    raise ValueError(f"{arg}: expected a path, a list of paths or a mapping model -> path(s), got {type(p).__name__}")


def _task_of(f: Path) -> tuple[str, str]:
    m = _SAMPLES_RE.match(f.name)
    if m:
        return m.group("task"), m.group("ts") or ""
    stem = f.name.split(".jsonl")[0]
    return stem, ""


def _model_of(f: Path) -> str:
    # lm-eval sanitises "org/name" into the folder name "org__name"
    return f.parent.name.replace("__", "/", 1)


# ----------------------------------------------------------------------------------------------------- record parsing
def _open(f: Path):
    return gzip.open(f, "rt", encoding="utf-8") if f.name.endswith(".gz") else open(f, encoding="utf-8")


def _loglik(x: Any) -> float | None:
    """The loglikelihood of a ``[loglik, is_greedy]`` response (``[-7.2, false]``, ``["-7.2", "False"]``, or that
    pair wrapped once more as in ``resps``); None for anything else, e.g. generated text."""
    if isinstance(x, (list, tuple)) and len(x) == 1 and isinstance(x[0], (list, tuple)):
        x = x[0]
    if not (isinstance(x, (list, tuple)) and len(x) == 2):
        return None
    ll, greedy = x
    if not (isinstance(greedy, bool) or greedy in ("True", "False")) or isinstance(ll, bool):
        return None
    try:
        v = float(ll)
    except (TypeError, ValueError):
        return None
    return None if np.isnan(v) or v == np.inf else v


def _arg_index(key: str) -> int:
    tail = key.rpartition("_")[2]
    return int(tail) if tail.isdigit() else 0


def _continuations(args: Any) -> list[str] | None:
    if isinstance(args, Mapping):  # {"gen_args_0": {"arg_0": ctx, "arg_1": cont}, ...}
        keys = sorted(args, key=_arg_index)
        args = [[a.get(f"arg_{j}") for j in range(len(a))] if isinstance(a, Mapping) else a for a in (args[k] for k in keys)]
    if not isinstance(args, list):
        return None
    out = []
    for a in args:
        if isinstance(a, (list, tuple)) and len(a) >= 2 and isinstance(a[1], str):
            out.append(a[1])
        else:
            return None
    return out


def _gold(target: Any, conts: list[str] | None, n: int) -> int:
    """Gold choice index from ``target`` (an index, or the text of a choice); -1 when unknown."""
    if isinstance(target, list) and len(target) == 1:
        target = target[0]
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        return int(target) if 0 <= target < n else -1
    if isinstance(target, str):
        t = target.strip()
        if re.fullmatch(r"\d+", t):
            k = int(t)
            return k if k < n else -1
        if conts is not None:
            stripped = [c.strip() for c in conts]
            if stripped.count(t) == 1:
                return stripped.index(t)
    return -1


def _numeric_fields(rec: Mapping) -> list[str]:
    skip = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "doc_hash", "prompt_hash", "target_hash", "filter", "metrics"}
    return sorted(k for k, v in rec.items() if k not in skip and isinstance(v, (int, float, bool)))


def _read_file(f: Path, metric: str, normalize: bool, want_filter: str | None, arg: str):
    """Per-document (doc_id, value, logits or None, gold, n_choices) of one samples file.

    Records are reduced to these fields as they are parsed: keeping thousands of parsed records alive makes
    Python's cyclic garbage collector rescan them over and over (a 4x slow-down on large logs).
    """
    by_filter: dict[str, list] = {}
    seen: dict[str, set] = {}
    with _open(f) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{arg}: {f.name} line {lineno} is not valid JSON ({exc.msg})") from None
            if not isinstance(rec, dict) or "doc_id" not in rec:
                raise ValueError(f"{arg}: {f.name} line {lineno} is not an lm-eval sample record (no 'doc_id')")
            filt = str(rec.get("filter", "none"))
            if want_filter is not None and filt != want_filter:
                by_filter.setdefault(filt, [])
                continue
            doc_id = rec["doc_id"]
            ids = seen.setdefault(filt, set())
            if doc_id in ids:
                raise ValueError(f"{arg}: {f.name} has doc_id {doc_id!r} twice (line {lineno})")
            ids.add(doc_id)
            by_filter.setdefault(filt, []).append(_parse_record(rec, f, lineno, metric, normalize))
    if not by_filter:
        raise ValueError(f"{arg}: {f.name} contains no sample records")
    if want_filter is not None:
        if not by_filter.get(want_filter):
            raise ValueError(f"filter: {want_filter!r} not logged in {f.name}; it has {sorted(by_filter)}")
        return by_filter[want_filter]
    if len(by_filter) > 1:
        raise ValueError(f"filter: {f.name} logs several filters {sorted(by_filter)}; pass filter=<one of them>")
    return next(iter(by_filter.values()))


def _parse_record(rec: dict, f: Path, lineno: int, metric: str, normalize: bool):
    doc_id = rec["doc_id"]
    resps = rec.get("filtered_resps", rec.get("resps"))
    lls = [_loglik(r) for r in resps] if isinstance(resps, list) and resps else None
    if lls is not None and any(v is None for v in lls):
        lls = None  # a generation task: responses are text
    n = len(lls) if lls is not None else 0
    target = rec.get("target")
    # continuation texts are parsed only when needed (normalisation, or a target given as text)
    need_conts = n and (normalize or (isinstance(target, str) and not target.strip().isdigit()))
    conts = _continuations(rec.get("arguments")) if need_conts else None
    gold = _gold(target, conts, n) if n else -1
    logits = None
    if lls is not None:
        logits = np.asarray(lls, dtype=float)
        if normalize:
            if conts is None or len(conts) != n:
                raise ValueError(f"normalize: {f.name} line {lineno} has no continuation texts to normalise by")
            # the harness's acc_norm divides by the character length of the choice (without the delimiter)
            lengths = np.array([max(len(c[1:] if c.startswith(" ") else c), 1) for c in conts], dtype=float)
            logits = logits / lengths
    if metric in rec:
        v = rec[metric]
        if isinstance(v, bool):
            v = float(v)
        if not isinstance(v, (int, float)) or not np.isfinite(v):
            raise ValueError(f"metric: {metric!r} of doc {doc_id!r} in {f.name} is {v!r}, expected a number")
        value = float(v)
    elif metric in ("acc", "acc_norm") and logits is not None and gold >= 0:
        value = float(np.argmax(logits) == gold)
    else:
        raise ValueError(
            f"metric: {metric!r} is not logged in {f.name} (line {lineno}); numeric fields there: {_numeric_fields(rec)}"
        )
    return doc_id, value, logits, gold, n


# ----------------------------------------------------------------------------------------------------- public
def read_lm_eval_samples(
    path_or_paths: str | os.PathLike | Sequence[str | os.PathLike] | Mapping[str, Any],
    *,
    metric: str = "acc",
    normalize: bool | None = None,
    probabilities: bool = True,
    tasks: Sequence[str] | None = None,
    filter: str | None = None,
) -> ResponseMatrix:
    """Read lm-evaluation-harness ``--log_samples`` files of one or many models and tasks.

    Parameters
    ----------
    path_or_paths : path, sequence of paths, or mapping model name -> path(s)
        ``samples_<task>_<timestamp>.jsonl`` files (``.jsonl.gz`` too) or directories searched recursively for
        them (e.g. the harness's ``--output_path``). Without a mapping, the model of a file is its folder name
        (``org__name`` -> ``org/name``, as the harness writes it). When one model has several files for one task
        (several runs), the latest timestamp is used and a warning is issued.
    metric : str, default "acc"
        Per-document field giving the response: ``"acc"`` or ``"acc_norm"`` (correctness of the raw or
        length-normalised arg-max choice), or any numeric per-sample metric (``"exact_match"``, ``"f1"`` ...).
        ``acc`` / ``acc_norm`` are recomputed from the loglikelihoods and the gold index if not logged.
    normalize : bool, optional
        Length-normalise the per-choice loglikelihoods (divide by the number of characters of the choice, as the
        harness's ``acc_norm``) before the softmax. Default: ``metric == "acc_norm"``.
    probabilities : bool, default True
        Attach choice probabilities ``softmax(loglikelihoods)`` (n_models, n_items, max_choices) and ``labels``
        (gold index) when every item is multiple choice with a known gold index; padded choices get probability 0
        and cells a model did not evaluate hold a uniform distribution (they are ``missing`` anyway).
    tasks : sequence of str, optional
        Keep only these tasks.
    filter : str, optional
        The harness filter to read when a file logs several (e.g. ``"strict-match"`` vs ``"flexible-extract"``).

    Returns
    -------
    ResponseMatrix
        Shape (n_models, n_items), binary if every value is 0/1 else ``kind="score"`` (values must lie in
        [0, 1]); item ids ``"<task>/<doc_id>"``; ``items`` columns ``task``, ``doc_id``, ``n_choices`` (0 for
        generation tasks); ``models`` column ``n_tasks``. Pairs (model, document) absent from the logs are
        ``missing``.
    """
    arg = "path_or_paths"
    if not isinstance(metric, str) or not metric:
        raise ValueError(f"metric: expected a field name such as 'acc' or 'acc_norm', got {metric!r}")
    if normalize is None:
        normalize = metric == "acc_norm"
    if not isinstance(normalize, (bool, np.bool_)):
        raise ValueError(f"normalize: expected True, False or None, got {normalize!r}")
    check_flag(probabilities, "probabilities")
    if tasks is not None:
        tasks = [tasks] if isinstance(tasks, str) else list(tasks)

    # (model, task) -> (timestamp, file)
    if isinstance(path_or_paths, Mapping):
        pairs = [(str(m), f) for m, p in path_or_paths.items() for f in _expand(p, arg)]
    else:
        pairs = [(_model_of(f), f) for f in _expand(path_or_paths, arg)]
    if not pairs:
        raise ValueError(f"{arg}: no samples files given")
    chosen: dict[tuple[str, str], tuple[str, Path]] = {}
    for model, f in pairs:
        task, ts = _task_of(f)
        if tasks is not None and task not in tasks:
            continue
        key = (model, task)
        if key in chosen:
            warnings.warn(f"{arg}: several sample files for model {model!r}, task {task!r}; using the latest", stacklevel=2)
            if ts <= chosen[key][0]:
                continue
        chosen[key] = (ts, f)
    if not chosen:
        raise ValueError(f"tasks: none of {tasks} found in the sample files")

    models = sorted({m for m, _ in chosen})
    try:
        data = {key: _read_file(f, metric, bool(normalize), filter, arg) for key, (_, f) in sorted(chosen.items())}
    except (UnicodeDecodeError, EOFError, OSError) as exc:  # binary or truncated files (gzip.BadGzipFile is an OSError)
        raise ValueError(f"{arg}: a samples file is not UTF-8 JSON lines ({type(exc).__name__}: {exc})") from None

    # item index: tasks in name order, documents in doc_id order
    n_choices: dict[tuple[str, Any], int] = {}
    gold: dict[tuple[str, Any], int] = {}
    for (model, task), recs in data.items():
        for doc_id, _, _, g, n in recs:
            k = (task, doc_id)
            if k in n_choices and n_choices[k] != n:
                raise ValueError(f"{arg}: {task}/{doc_id} has {n} choices for {model!r} but {n_choices[k]} for another model")
            n_choices[k] = n
            if g >= 0:
                if gold.get(k, g) != g:
                    raise ValueError(f"{arg}: {task}/{doc_id} has different gold answers across models")
                gold[k] = g
    keys = sorted(n_choices, key=lambda k: (k[0], _doc_sort_key(k[1])))
    pos = {k: i for i, k in enumerate(keys)}
    n_models, n_items = len(models), len(keys)
    mpos = {m: i for i, m in enumerate(models)}
    vals = np.zeros((n_models, n_items))
    observed = np.zeros((n_models, n_items), dtype=bool)
    for (model, task), recs in data.items():
        cols = np.fromiter((pos[(task, r[0])] for r in recs), dtype=np.int64, count=len(recs))
        vals[mpos[model], cols] = [r[1] for r in recs]
        observed[mpos[model], cols] = True
    obs_vals = vals[observed]
    if obs_vals.min() < 0 or obs_vals.max() > 1:
        raise ValueError(f"metric: {metric!r} values must lie in [0, 1] to form a response matrix, got range [{obs_vals.min():g}, {obs_vals.max():g}]")

    proba = labels = None
    n_arr = np.array([n_choices[k] for k in keys])
    if probabilities and (n_arr >= 2).all() and len(gold) == n_items:
        k_max = int(n_arr.max())
        proba = np.zeros((n_models, n_items, k_max))
        # uniform over the real choices where not evaluated
        proba[:] = (np.arange(k_max)[None, :] < n_arr[:, None]) / n_arr[:, None]
        for (model, task), recs in data.items():
            by_n: dict[int, list] = {}
            for doc_id, _, logits, _, n in recs:
                by_n.setdefault(n, []).append((pos[(task, doc_id)], logits))
            for n, lst in by_n.items():  # one vectorised softmax per number of choices
                cols = np.fromiter((c for c, _ in lst), dtype=np.int64, count=len(lst))
                proba[mpos[model], cols, :n] = softmax(np.stack([lg for _, lg in lst]), axis=1)
        labels = np.array([gold[k] for k in keys], dtype=np.int64)

    item_ids = pd.Index([f"{t}/{d}" for t, d in keys], name="item")
    items = pd.DataFrame(
        {"task": [t for t, _ in keys], "doc_id": [d for _, d in keys], "n_choices": n_arr}, index=item_ids
    )
    mmeta = pd.DataFrame({"n_tasks": [sum(1 for (m, _) in data if m == name) for name in models]}, index=pd.Index(models, name="model"))
    return ResponseMatrix(
        vals,
        missing=~observed,
        probabilities=proba,
        labels=labels,
        model_ids=mmeta.index,
        item_ids=item_ids,
        models=mmeta,
        items=items,
    )


def _doc_sort_key(d: Any) -> tuple:
    return (0, d, "") if isinstance(d, (int, np.integer)) and not isinstance(d, bool) else (1, 0, str(d))


def read_scores_csv(
    path: str | os.PathLike,
    *,
    format: Literal["auto", "long", "wide"] = "auto",
    model: str = "model",
    item: str = "item",
    score: str = "score",
    groups: str | Sequence[str] | None = None,
    kind: Literal["binary", "score"] | None = None,
    sep: str | None = None,
    missing_marker: str = "-",
) -> ResponseMatrix:
    """Read per-item scores from a CSV / TSV file in long or wide layout.

    Parameters
    ----------
    path : path
        The file (``.csv``, ``.tsv``; ``.gz`` etc. are decompressed by pandas).
    format : {"auto", "long", "wide"}, default "auto"
        ``"long"``: one row per (model, item) with columns ``model``, ``item``, ``score`` (+ ``groups``);
        ``"wide"``: one row per model, first column (or the ``model`` column) = model id, other columns = items.
        ``"auto"`` picks long when the three named columns exist, else wide.
    model, item, score : str
        Column names in the long layout (``model`` also names the id column of a wide table, if present).
    groups : str or sequence of str, optional
        Long layout: item-level columns kept as item metadata (e.g. ``"benchmark"``, ``"scenario"``).
    kind : {"binary", "score"}, optional
        Inferred when omitted (binary if every value is 0/1).
    sep : str, optional
        Field separator; default tab for ``.tsv`` files, else comma.
    missing_marker : str, default "-"
        Cell text meaning "not evaluated" (empty cells too). Long rows with it are dropped; wide cells become
        ``missing``.

    Returns
    -------
    ResponseMatrix
        Shape (n_models, n_items); pairs absent from a long table are ``missing``.
    """
    if format not in ("auto", "long", "wide"):
        raise ValueError(f"format: expected 'auto', 'long' or 'wide', got {format!r}")
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path: expected a file path, got {type(path).__name__}")
    p = Path(path).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f"path: {str(p)!r} does not exist")
    if sep is None:
        sep = "\t" if ".tsv" in p.suffixes else ","
    try:
        df = pd.read_csv(p, sep=sep, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"path: {p.name} is not a readable delimited table ({exc})") from None
    if df.empty or df.shape[1] < 2:
        raise ValueError(f"path: {p.name} has no data rows or fewer than two columns (sep={sep!r}?)")
    # pandas renames repeated header names ("a", "a.1"): read the header as it is written to refuse them
    header = pd.read_csv(p, sep=sep, dtype=str, keep_default_na=False, header=None, nrows=1).iloc[0].tolist()
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise ValueError(f"path: {p.name} repeats the column names {dup[:5]}")
    if format == "auto":
        format = "long" if {model, item, score} <= set(df.columns) else "wide"
    if format == "long":
        if score in df.columns:
            df = df[~df[score].str.strip().isin(["", missing_marker])]
            if df.empty:
                raise ValueError(f"score: every row of {p.name} is marked not evaluated")
            # numpy's parser is correctly rounded; pandas' fast to_numeric can be off by an ulp (pandas 1.5)
            df = df.assign(**{score: _numeric(df[[score]], f"path: {p.name}")[:, 0]})
        return _named(lambda: ResponseMatrix.from_long(df, model=model, item=item, score=score, groups=groups, kind=kind), p)
    if groups is not None:
        raise ValueError("groups: only available for the long layout")
    idx_col = model if model in df.columns else df.columns[0]
    wide = df.set_index(idx_col)
    if wide.index.has_duplicates:
        dup = wide.index[wide.index.duplicated()][:5].tolist()
        raise ValueError(f"path: model ids in column {idx_col!r} of {p.name} repeat: {dup}")
    values = _numeric(wide, f"path: {p.name}", missing=(missing_marker,))
    return _named(lambda: ResponseMatrix(values, kind=kind, nan_as_missing=True, model_ids=wide.index, item_ids=wide.columns), p)


def _named(build, p: Path) -> ResponseMatrix:
    # the table came from `path`: errors about the parsed frame name that argument
    try:
        return build()
    except ValueError as exc:
        msg = str(exc)
        for internal in ("df:", "values:", "model_ids:", "item_ids:", "missing:"):  # names the user never passed
            if msg.startswith(internal):
                raise ValueError(f"path: {p.name}: {msg[len(internal):].strip()}") from None
        raise
