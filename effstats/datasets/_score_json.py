"""Score files in JSON: HELM's ``groups/<group>.json`` tables and the Open LLM Leaderboard's per-model results,
and :func:`_load`, which reads SCORES in any layout as the command line and :func:`effstats.reliability.audit` do.
Tables (CSV/TSV) are read in :mod:`effstats.datasets._scores`."""
from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._shared import _name_list, _plain
from ._files import _find, without_jupyter_copies
from ._lm_eval_files import _NAME_KEYS
from ._score_files import _check_path, _read_json
from ._openllm_csv import read_openllm_csv
from ._score_choices import _check_duplicates, _dedupe_with, _select
from ._score_headers import _as_published, _named_published
from ._score_options import SCORE_FORMATS
from ._scores import read_scores

__all__ = ["read_helm_json", "read_openllm_json"]

# Open LLM Leaderboard v1 metric per harness task (their "About" page); other tasks: first metric found.
_OPENLLM_METRIC = {"arc:challenge": "acc_norm", "hellaswag": "acc_norm", "truthfulqa:mc": "mc2", "winogrande": "acc",
                   "gsm8k": "acc", "hendrycksTest": "acc"}

_OPENLLM_NAME = {"arc:challenge": "ARC", "hellaswag": "HellaSwag", "truthfulqa:mc": "TruthfulQA",
                 "winogrande": "Winogrande", "gsm8k": "GSM8K", "hendrycksTest": "MMLU"}

_METRIC_ORDER = ("acc_norm", "acc", "mc2", "exact_match", "prompt_level_strict_acc", "em", "f1")

# a results file's names, compressed too (read decompressed by its first bytes): in a folder and given alone alike
_JSON_NAMES = (".json", ".json.gz", ".json.bz2", ".json.xz")


def _metric(task: str, key: str, metrics: dict, f: Path, metric: str | None = None,
            filter: str | None = None) -> tuple[float, str, list[str]] | None:
    """The leaderboard's metric of one results entry (``key``), else the first of ``_METRIC_ORDER`` it holds, with
    the metric's name and its filters (lm-eval 0.4's ``"exact_match,strict-match"``; the first one logged is read):
    ``(value, "metric" or "metric,filter", [the filters logged])``; the value NaN when the metric is null (not
    evaluated); None when the entry holds none of them. ``metric`` (``--metric``): that metric only, None where
    the entry does not log it; ``filter`` (``--filter``): the metric under that filter where it logs it. A metric
    that is not a number is refused: read as not evaluated, it would silently rank the model on the other tasks
    alone."""
    base = task.split("-")[0] if task.startswith("hendrycksTest") else task
    clean: dict[str, Any] = {}
    filters: dict[str, list[str]] = {}
    for k, v in metrics.items():
        if "stderr" in k:
            continue
        m, _, filt = k.partition(",")
        clean.setdefault(m, (k, v))  # the first filter logged
        if filt == filter:
            clean[m] = (k, v)
        filters.setdefault(m, []).append(filt)
    want = metric or _OPENLLM_METRIC.get(base)
    name = want if want in clean else None if metric else next((m for m in _METRIC_ORDER if m in clean), None)
    if name is None:
        return None
    logged, value = clean[name]
    x = _json_score(value)
    if x is None:
        raise ValueError(f"SCORES: {str(f)!r}: {key!r} has {name} {_what(value)}, not a number (null for "
                         "not evaluated)")
    return x, logged, [flt for flt in filters[name] if flt]


def read_openllm_json(paths: Any, *, duplicates: str = "last", metric: str | None = None,
                      filter: str | None = None) -> pd.DataFrame:
    """Read Open LLM Leaderboard / lm-evaluation-harness results files into a wide table (models × tasks).

    Each file holds one model: ``config_general.model_name`` (else ``model_name`` / ``config.model_args``) and
    ``results`` keyed ``harness|<task>|<n-shot>`` (or ``<task>``) with metrics. The leaderboard's metric is used
    per task (ARC / HellaSwag ``acc_norm``, TruthfulQA ``mc2``, Winogrande / GSM8K / MMLU ``acc``), the 57 MMLU
    subjects (``hendrycksTest-*``) are averaged into MMLU as the leaderboard does, and the aggregate ``all``
    entry is skipped, as are lm-evaluation-harness groups (named under ``groups`` or ``group_subtasks``): their
    subtasks are scored on their own. A metric written as text that is a number (``"0.5"``) is read as that
    number; a null one as not evaluated, with a ``UserWarning``; any other value is refused, as is one task scored
    at two few-shot counts in one file (``harness|arc:challenge|25`` and ``|0``: two protocols, whose mean would
    be neither).

    Parameters
    ----------
    paths : str, Path or list of them
        A results JSON file, a folder (searched recursively for ``*.json``, and ``*.json.gz``, ``.json.bz2``,
        ``.json.xz`` read decompressed, as a file given alone is; hidden files such as an audit's own
        ``.effstats_audit.json`` left out) or a list of files.
    duplicates : {"last", "first", "mean", "error"}, default="last"
        A model's results files are merged task by task (a later file holding one task leaves the model's other
        tasks in place); a task several of a model's files hold: keep the last file's score, the first's, their
        mean, or refuse, said in a ``UserWarning``. "last" keeps the latest file in path order, which for the
        harness's ``results_<timestamp>.json`` names is the latest run.
    metric : str, optional
        The metric to read for every task (``"acc"``, ``"exact_match"``; the command line's ``--metric``) instead
        of the leaderboard's per task, else the first of acc_norm, acc, mc2, exact_match, prompt_level_strict_acc,
        em, f1 an entry logs. Tasks that do not log it are left out, with a ``UserWarning``; none that does is
        refused.
    filter : str, optional
        lm-evaluation-harness 0.4's filter to read where a metric is logged under several
        (``"exact_match,strict-match"`` and ``"exact_match,flexible-extract"``: ``"flexible-extract"``; the
        command line's ``--filter``) instead of the first one logged. A filter no entry logs is refused.

    Returns
    -------
    DataFrame
        Models × tasks, indexed by ``model``.

    See Also
    --------
    effstats.datasets.read_lm_eval_samples : per-example results (``--log_samples``).
    effstats.cli.read_openllm_csv : the leaderboard's CSV export.

    References
    ----------
    Gao, L., Tow, J., Abbasi, B., Biderman, S., Black, S., DiPofi, A., Foster, C., Golding, L., Hsu, J., Le Noac'h,
    A. et al. (2023). A framework for few-shot language model evaluation (lm-evaluation-harness). Zenodo,
    https://doi.org/10.5281/zenodo.5371628.

    Beeching, E., Fourrier, C., Habib, N., Han, S., Lambert, N., Rajani, N., Sanseviero, O., Tunstall, L. and
    Wolf, T. (2023). Open LLM Leaderboard. Hugging Face.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from effstats.cli import read_openllm_json
    >>> path = os.path.join(tempfile.mkdtemp(), "results_2024-01-01.json")
    >>> with open(path, "w") as f:
    ...     json.dump({"config_general": {"model_name": "org/big"},
    ...                "results": {"harness|arc:challenge|25": {"acc": 0.6, "acc_norm": 0.65},
    ...                            "harness|gsm8k|5": {"acc": 0.4}, "all": {"acc": 0.5}}}, f)
    >>> read_openllm_json(path)
              ARC  GSM8K
    model
    org/big  0.65    0.4
    >>> read_openllm_json(path, metric="acc")
             ARC  GSM8K
    model
    org/big  0.6    0.4
    """
    _check_duplicates(duplicates)
    for arg, v in (("--metric", metric), ("--filter", filter)):
        if v is not None and (not isinstance(v, str) or not v.strip() or "," in v or v != v.strip()):
            raise ValueError(f"{arg}: expected a {arg[2:]} name as the results files log it (e.g. "
                             f"{'acc' if arg == '--metric' else 'strict-match'}), got {v!r}")
    if isinstance(paths, (str, Path)):
        p = _check_path(paths, directory_ok=True)
        files = ([f for f in _find(p, lambda name: name.lower().endswith(_JSON_NAMES) and not name.startswith("."))
                  if f.is_file()] if p.is_dir() else [p])
        if p.is_dir():  # a stale copy of a results file, another file of its model
            files = without_jupyter_copies(files, p, "SCORES", stacklevel=2)
    elif isinstance(paths, (list, tuple)):
        files = [_check_path(f) for f in paths]
    else:
        raise ValueError(f"SCORES: expected a results file, a folder or a list of files, got {type(paths).__name__}")
    if not files:
        raise ValueError(f"SCORES: no .json results files (or .json.gz, .json.bz2, .json.xz) in {str(paths)!r}")
    helm = next((f for f in files if _uncompressed(f).name in ("per_instance_stats.json", "run_spec.json")), None)
    if helm is not None:  # HELM run folders, which select, estimate and sequential read: per instance, not per model
        raise ValueError(f"SCORES: {str(helm.parent)!r} is a HELM run folder ({helm.name}): audit reads a scores "
                         "table, HELM's groups JSON (helm-summarize's, --format helm-json) or Open LLM results "
                         "files; read HELM runs with effstats.datasets.read_helm_runs and pass them to "
                         "effstats.reliability.audit")
    rows, left_out, missing = [], set(), []
    lacking: set[str] = set()  # tasks that do not log --metric
    unlisted: dict[str, set] = {}  # tasks without a metric of _METRIC_ORDER -> what they log
    logged_metrics: set[str] = set()
    logged_filters: set[str] = set()
    read: dict[str, set] = {}  # column -> the metrics (with their filters) read for it
    read_by: dict[str, dict[str, list]] = {}  # column -> metric read -> the models read with it
    several: dict[str, set] = {}  # column -> the filters logged where a metric has more than one
    for f in files:
        d = _read_json(f)
        if not isinstance(d, dict) or not isinstance(d.get("results"), dict):
            raise ValueError(f"SCORES: {str(f)!r} has no 'results' object (not an Open LLM Leaderboard results file)")
        name = _model_name(d, f)
        row: dict[str, list[float]] = {}
        keys: dict[str, list[str]] = {}
        groups = _groups(d)
        left_out.update(g for g in groups if g in d["results"])
        for key, metrics in d["results"].items():
            task = key.split("|")[1] if "|" in key else key
            if task == "all" or key in groups or not isinstance(metrics, dict):
                continue
            logged_metrics.update(k.partition(",")[0] for k in metrics if "stderr" not in k)
            logged_filters.update(k.partition(",")[2] for k in metrics if "stderr" not in k and "," in k)
            got = _metric(task, key, metrics, f, metric, filter)
            if got is None:
                if metric is not None:
                    lacking.add(task)
                else:
                    unlisted.setdefault(task, set()).update(
                        k.partition(",")[0] for k, v in metrics.items()
                        if "stderr" not in k and isinstance(v, (int, float)) and not isinstance(v, bool))
                continue
            v, logged, filts = got
            if np.isnan(v):
                missing.append(f"{str(name)!r} {key!r}")
            keys.setdefault(task, []).append(key)
            base = "hendrycksTest" if task.startswith("hendrycksTest") else task
            col = _OPENLLM_NAME.get(base, task)
            row.setdefault(col, []).append(v)
            read.setdefault(col, set()).add(logged)
            models = read_by.setdefault(col, {}).setdefault(logged, [])
            if name not in models:
                models.append(name)
            if len(filts) > 1 and filter not in filts:  # a filter --filter names is read as asked
                several.setdefault(col, set()).update(filts)
        twice = next(((t, k) for t, k in keys.items() if len(k) > 1), None)
        if twice:
            # one task at two few-shot counts (``harness|arc:challenge|25`` and ``|0``): two protocols, whose mean
            # is neither the leaderboard's score nor the other's
            raise ValueError(f"SCORES: {str(f)!r}: {str(name)!r} has the task {twice[0]!r} scored {len(twice[1])} "
                             f"times ({_name_list(map(repr, twice[1]))}): keep the run of the protocol "
                             "to audit (the leaderboard's few-shot count) and remove the others from the file")
        rows.append(pd.Series({k: float(np.mean(v)) for k, v in row.items()}, name=name, dtype=float))
    if metric is not None and not read:
        raise ValueError(f"--metric: no results entry logs {metric!r}; they log "
                         f"{_name_list(map(repr, sorted(logged_metrics)), 10)}")
    if filter is not None and filter not in logged_filters:
        raise ValueError(f"--filter: no metric is logged under the filter {filter!r}; the files log "
                         + (_name_list(map(repr, sorted(logged_filters)), 10) if logged_filters else "no filters"))
    if lacking:
        warnings.warn(f"SCORES: {len(lacking)} task(s) do not log the metric {metric!r} (--metric) and are left out: "
                      f"{_name_list(map(repr, sorted(lacking)), 5)}", UserWarning, stacklevel=2)
    if unlisted:
        warnings.warn(f"SCORES: {len(unlisted)} task(s) log none of the metrics " + ", ".join(_METRIC_ORDER)
                      + " and are left out: " + _name_list((f"{t!r} (it logs {_name_list(map(repr, sorted(m)), 4)})"
                                                           for t, m in sorted(unlisted.items())), 3)
                      + "; name one with --metric where higher is better (a perplexity is not)", UserWarning,
                      stacklevel=2)
    if missing:
        warnings.warn(f"SCORES: {len(missing)} result(s) are null, read as not evaluated: {_name_list(missing, 3)}",
                      UserWarning, stacklevel=2)
    if several:
        warnings.warn("SCORES: " + "; ".join(
            f"{c!r} logs its metric under the filters {_name_list(map(repr, sorted(fl)))}, read: "
            f"{_name_list(map(repr, sorted(read[c])))}" for c, fl in several.items())
            + " (the first filter each results file logs); to audit another, pass --filter NAME",
            UserWarning, stacklevel=2)
    mixed = {c: by for c, by in read_by.items() if len(by) > 1}
    if mixed:
        # the metrics (acc_norm and acc) and filters (strict-match and flexible-extract) of one task differ by
        # points: one column of both ranks the models on other scores
        warnings.warn("SCORES: the files log other metrics for one column, ranked as one: " + "; ".join(
            f"{c!r} read as " + ", ".join(f"{m!r} for {_name_list(map(repr, map(str, ms)), 3)}"
                                          for m, ms in sorted(by.items())) for c, by in mixed.items())
            + "; to audit one, give --metric and --filter (a model without it is left out of that column) or keep "
            "one in the files", UserWarning, stacklevel=2)
    wide = pd.DataFrame(rows)
    wide.index.name = "model"
    wide = _merge_runs(wide, duplicates)
    by_metric: dict[str, list[str]] = {}
    for c, m in read.items():
        by_metric.setdefault(" / ".join(sorted(m)), []).append(str(c))
    asked = ", ".join(f"--{k} {v}" for k, v in (("metric", metric), ("filter", filter)) if v is not None)
    rule = ("the Open LLM Leaderboard's for its tasks, else the first of " + ", ".join(_METRIC_ORDER)
            + " an entry logs" + ("" if filter is None else f"; {asked}") if metric is None else asked)
    notes = ["Metric read: " + "; ".join(f"{m} for {_name_list(cs, 8, '… and {} more columns')}"
                                           for m, cs in by_metric.items()) + f" ({rule})."]
    if left_out:
        notes.append(f"Left out of the scores: the group(s) {_name_list(map(repr, sorted(left_out)))}, each an "
                     "aggregate of tasks audited on their own (lm-eval's 'groups').")
    wide.attrs["note"] = " ".join(notes)
    return wide


def _merge_runs(wide: pd.DataFrame, duplicates: str) -> pd.DataFrame:
    """One row per model from its results files' rows (one run each), task by task: a task one file holds keeps its
    score whatever the model's other files hold (a later run of GSM8K alone leaves the earlier ARC ... in place);
    a task several files hold is resolved by ``duplicates`` (the last or first file in path order, their mean, or
    refused), said in a warning."""
    if not wide.index.duplicated().any():
        return wide
    g = wide.groupby(level=0, sort=False)
    counts = g.count()
    twice = counts > 1
    pairs = [(m, t) for m, t in zip(*np.nonzero(twice.to_numpy()))]
    if pairs:
        n = len({m for m, _ in pairs})
        eg = _name_list((f"{str(twice.index[m])!r} {str(twice.columns[t])!r}" for m, t in pairs), 3)
        said = (f"{n} model(s) have a task in more than one results file ({len(pairs)} (model, task) pair(s): "
                f"{eg})")
        if duplicates == "error":
            raise ValueError(f"SCORES: {said}; keep one run of each or pass --duplicates last|first|mean")
        how = ("averaged their scores" if duplicates == "mean" else
               f"kept the {duplicates} file's score in path order (for results_<timestamp>.json, the "
               f"{'latest' if duplicates == 'last' else 'earliest'} run)")
        warnings.warn(f"--duplicates: {said}; {how} (--duplicates error|first|last|mean); a task in one file "
                      "keeps its score", UserWarning, stacklevel=3)
    # a model's rows hold its tasks' scores in file order, NaN where a file lacks the task
    merged = g.mean() if duplicates == "mean" else g.first() if duplicates == "first" else g.last()
    return merged[wide.columns]


def _model_name(d: dict, f: Path) -> str:
    """The model of a results file: ``config_general.model_name``, else ``model_name``, else ``config.model_args``
    (as written; given as an object, its ``pretrained`` / ``model`` / ``path`` / ``engine`` entry), else the file's
    name without its endings; a name that is not text is refused naming the file and the field."""
    for obj, field in (("config_general", "model_name"), (None, "model_name"), ("config", "model_args")):
        holder = d.get(obj) if obj else d
        if holder is None:
            continue
        if not isinstance(holder, dict):
            raise ValueError(f"SCORES: {str(f)!r}: {obj!r} is {_json_text(holder)}, not an object")
        v = holder.get(field)
        if field == "model_args" and isinstance(v, dict):  # lm-eval's arguments as given in Python
            v = next((v[k] for k in _NAME_KEYS if isinstance(v.get(k), str) and v[k].strip()), v)
        if v is None or v == "":
            continue
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"SCORES: {str(f)!r}: {f'{obj}.' if obj else ''}{field} is {_json_text(v)}, not a "
                             "model name")
        return v
    return _uncompressed(f).stem


def _uncompressed(f: Path) -> Path:
    """``f`` without its compression's ending (``m.json.gz``: ``m.json``)."""
    return f.with_suffix("") if f.suffix.lower() in (".gz", ".bz2", ".xz") else f


def _groups(d: dict) -> set:
    """The groups of an lm-evaluation-harness results file: the keys of its ``groups`` and those of its
    ``group_subtasks`` that list subtasks (a plain task there lists none) of which ``results`` holds one. Their
    entries in ``results`` aggregate their subtasks' (which are there too), so scoring them beside the subtasks
    would count those twice."""
    groups = d.get("groups") if isinstance(d.get("groups"), dict) else {}
    subtasks = d.get("group_subtasks") if isinstance(d.get("group_subtasks"), dict) else {}
    listed = {g: sub for g, sub in subtasks.items() if isinstance(sub, list) and sub}
    return {g for g in {*groups, *listed} if g not in listed or any(t in d["results"] for t in listed[g])}


def read_helm_json(path: str | Path, *, table: str | None = None,
                   duplicates: str = "last") -> tuple[pd.DataFrame, pd.Series | None]:
    """Read a HELM leaderboard table from ``helm-summarize`` output (``groups/<group>.json``, a list of tables).

    Each table has ``title``, ``header`` (cells with ``value`` and ``lower_is_better``) and ``rows`` (lists of
    cells with ``value``; the first cell names the model). Columns marked ``lower_is_better`` are negated so that
    higher is better everywhere (as HELM's win rate does); the "Mean win rate" column is the published aggregate.
    A cell without a value (or null, ``""``, ``"-"``) is not evaluated, as HELM writes a cell with no matching
    runs; a number written as text (``"0.5"``) is read as that number. A row with more or fewer cells than the
    header, a value that is not a number, a model cell that is not a name and a ``lower_is_better`` that is not
    true or false are refused, naming the table, the row and the column.

    Parameters
    ----------
    path : str or Path
        The JSON file.
    table : str, default=None
        Pick the table whose title contains this text (case-insensitive); default the first.
    duplicates : {"last", "first", "mean", "error"}, default="last"
        Models listed more than once: keep the last row, the first, their mean, or refuse. Keeping one row or
        the mean is said in a ``UserWarning``.

    Returns
    -------
    scores : DataFrame
        Models × scenario columns.
    published : Series or None
        The "Mean win rate" column.

    See Also
    --------
    effstats.datasets.read_helm_runs : per-instance results of HELM run folders.
    effstats.datasets.load_helm_lite : the bundled HELM Lite table.

    References
    ----------
    Liang, P., Bommasani, R., Lee, T., Tsipras, D., Soylu, D., Yasunaga, M., Zhang, Y., Narayanan, D., Wu, Y.,
    Kumar, A. et al. (2023). Holistic Evaluation of Language Models. *Transactions on Machine Learning Research*,
    arXiv:2211.09110.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from effstats.cli import read_helm_json
    >>> head = [{"value": "Model/adapter"}, {"value": "Mean win rate"}, {"value": "MMLU - EM"},
    ...         {"value": "Time (s)", "lower_is_better": True}]
    >>> rows = [[{"value": "model-a"}, {"value": 0.75}, {"value": 0.6}, {"value": 1.2}],
    ...         [{"value": "model-b"}, {"value": 0.25}, {"value": 0.65}, {"value": 0.8}]]
    >>> path = os.path.join(tempfile.mkdtemp(), "lite.json")
    >>> with open(path, "w") as f:
    ...     json.dump([{"title": "Accuracy", "header": head, "rows": rows}], f)
    >>> scores, published = read_helm_json(path)
    >>> scores
                   MMLU - EM  Time (s)
    Model/adapter
    model-a             0.60      -1.2
    model-b             0.65      -0.8
    >>> published.tolist()
    [0.75, 0.25]
    """
    _check_duplicates(duplicates)
    p = _check_path(path)
    d = _read_json(p)
    tables = d if isinstance(d, list) else d.get("tables", [d]) if isinstance(d, dict) else []
    tables = [t for t in tables if isinstance(t, dict) and "header" in t and "rows" in t]
    if not tables:
        raise ValueError(f"SCORES: {str(p)!r} holds no HELM table (a list of objects with 'header' and 'rows')")
    if table is not None:
        hit = [t for t in tables if table.lower() in str(t.get("title", "")).lower()]
        if not hit:
            raise ValueError(f"--table: no table titled like {table!r} (titles: {[t.get('title') for t in tables]})")
        t = hit[0]
    else:
        t = tables[0]
    head, lower, recs = _helm_cells(t, p)
    df = pd.DataFrame(recs, columns=head).set_index(head[0])
    agg = _named_published(df)
    pub = None
    if agg:
        pub = _as_published(df[agg[0]], dict(column=agg[0], kind="mwr" if "win" in str(agg[0]).lower() else "mean",
                                             rule="label"))
    num = df.drop(columns=agg).apply(pd.to_numeric, errors="coerce")
    for c, lb in zip(head[1:], lower[1:]):
        if lb and c in num.columns:
            num[c] = -num[c]
    empty = [c for c in num.columns if num[c].isna().all()]
    if num.shape[1] - len(empty) < 2:
        held = [str(c) for c in num.columns if c not in empty]
        raise ValueError(f"SCORES: {p.name}: HELM table {_plain(t.get('title'))!r} has {len(held)} score column(s) "
                         f"with values {held}"
                         + (f" (no values in {_name_list(map(repr, empty))})" if empty else "")
                         + (f" beside the published aggregate {str(agg[0])!r}" if agg else "")
                         + ": expected at least 2" + ("; choose another table with --table" if len(tables) > 1 else ""))
    num, pub = _dedupe_with(num.drop(columns=empty), pub, duplicates, "")
    num.attrs["lower_is_better"] = [c for c, lb in zip(head[1:], lower[1:]) if lb and c in num.columns]
    if empty:
        num.attrs["note"] = (f"Left out of the scores: columns with no values {_name_list(map(repr, empty))} (not "
                             "evaluated for any model).")
    return num, pub


# a number written as text (a converter's "0.5", "1e-3"); not "1_0", "1,234", "nan" or other digits, which float()
# would read too
_NUMBER = re.compile(r"\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*")


def _json_score(v: Any) -> float | None:
    """A score of a JSON leaderboard as a float: a JSON number or text that is one; null, "" and "-" are NaN (not
    evaluated, as HELM writes a cell with no matching runs). None for anything else (an infinite number, other text,
    true/false, a list, an object): no score, and not "not evaluated" either."""
    if v is None or (isinstance(v, str) and v.strip() in ("", "-")):
        return np.nan
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)):
        return None if np.isinf(v) else float(v)  # 1e400 or Infinity in the file: no score
    if isinstance(v, str) and _NUMBER.fullmatch(v):
        return float(v)
    return None


def _what(v: Any) -> str:
    """:func:`_json_text`, and for an infinite number what the file holds (a number beyond float range)."""
    if isinstance(v, float) and np.isinf(v):
        return f"{'-' if v < 0 else ''}Infinity (a number beyond the float range, e.g. 1e400)"
    return _json_text(v)


def _json_text(v: Any) -> str:
    """A JSON value as the file writes it (``true``, ``"0.5\\u0000"``, ``{"x": 1}``), cut at 60 characters."""
    text = json.dumps(_plain(v), ensure_ascii=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _helm_cells(t: dict, p: Path) -> tuple[list[str], list[bool], list[list]]:
    """A HELM table's column names, lower-is-better flags and rows (the model's name, then one float a column),
    every row as long as the header; anything else is refused naming the table, the row and the column."""
    where = f"SCORES: {p.name}: HELM table {_plain(t.get('title'))!r}"
    header, rows = t["header"], t["rows"]
    if not isinstance(header, list) or not isinstance(rows, list):
        bad = "header" if not isinstance(header, list) else "rows"
        raise ValueError(f"{where} has a {bad!r} that is a {type(t[bad]).__name__}, not a list of cells")
    head, lower = [], []
    for j, h in enumerate(header):
        name = h.get("value") if isinstance(h, dict) else h
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{where}: header cell {j + 1} has no column name (value {_plain(name)!r})")
        lb = h.get("lower_is_better") if isinstance(h, dict) else None
        if lb is not None and not isinstance(lb, bool):  # "false" as text or 0/1 would read as a flag
            raise ValueError(f"{where}: column {name!r} has lower_is_better {_json_text(lb)}; expected true or false "
                             "(a JSON boolean, not a number or text)")
        head.append(name)
        lower.append(bool(lb))
    dups = sorted({h for h in head if head.count(h) > 1})
    if dups:
        raise ValueError(f"{where} has duplicate column names {dups}")
    if len(head) < 2 or not rows:
        raise ValueError(f"{where} has {len(head)} column(s) and {len(rows)} row(s): expected the model column and "
                         "score columns, and one row per model")
    recs = []
    for i, r in enumerate(rows):
        if not isinstance(r, list):
            raise ValueError(f"{where}: row {i + 1} is a {type(r).__name__}, not a list of cells")
        vals = [c.get("value") if isinstance(c, dict) else c for c in r]
        if not vals or not isinstance(vals[0], str) or not vals[0].strip():
            raise ValueError(f"{where}: row {i + 1}'s first cell ({head[0]!r}) is "
                             f"{_json_text(vals[0]) if vals else 'missing'}, not a model name")
        if len(r) != len(head):
            raise ValueError(f"{where}: row {i + 1} ({vals[0]!r}) has {len(r)} cell(s), the header {len(head)}: its "
                             "scores would be read under other columns; give it one cell a column (null for not "
                             "evaluated)")
        rec = [vals[0]]
        for name, v in zip(head[1:], vals[1:]):
            x = _json_score(v)
            if x is None:
                raise ValueError(f"{where}: row {i + 1} ({vals[0]!r}), column {name!r} holds {_what(v)}, "
                                 "not a number (null for not evaluated)")
            rec.append(x)
        recs.append(rec)
    return head, lower, recs


def _is_helm(wide: Any, published: pd.Series | None) -> bool:
    """A HELM table: its model column is HELM's "Model/adapter", or its aggregate HELM's "Mean win rate"."""
    col = "" if published is None else str(published.attrs.get("info", {}).get("column", ""))
    name = str(getattr(getattr(wide, "index", None), "name", "") or "")
    return name.strip().lower() == "model/adapter" or col.strip().lower().startswith("mean win rate")


def _load(src: Any, *, format: str = "auto", table: str | None = None, by: str = "scenario", model: str | None = None,
          item: str | None = None, score: str | None = None, scenarios: Any = None, exclude: Any = None,
          duplicates: str | None = None, metric: str | None = None, filter: str | None = None,
          higher_is_better: Any = None) -> tuple[Any, pd.Series | None, list[str], bool]:
    """Read SCORES in any supported layout: (scores, published aggregate, notes for the report, is HELM);
    ``duplicates`` None: not chosen (:func:`effstats.datasets._scores.read_scores` says what that refuses)."""
    given, duplicates = duplicates, _check_duplicates("last" if duplicates is None else duplicates)
    if format not in SCORE_FORMATS:
        raise ValueError(f"--format: expected one of {list(SCORE_FORMATS)}, got {format!r}")
    scen = _names(scenarios, "--scenarios") if isinstance(scenarios, str) else scenarios
    excl = _names(exclude, "--exclude") if isinstance(exclude, str) else exclude
    higher = _names(higher_is_better, "--higher-is-better") if isinstance(higher_is_better, str) else higher_is_better
    src = _check_path(src, directory_ok=True)
    fmt = format
    if fmt == "auto":
        if src.is_dir():
            fmt = "openllm-json"
        elif src.name.lower().endswith(_JSON_NAMES):
            d = _read_json(src)  # decompressed by its first bytes
            fmt = "openllm-json" if isinstance(d, dict) and "results" in d else "helm-json"
        else:
            fmt = "table"
    if src.is_dir() and fmt != "openllm-json":
        raise ValueError(f"SCORES: {str(src)!r} is a directory; give a file (or --format openllm-json)")
    if table is not None and fmt != "helm-json":
        raise ValueError(f"--table: applies to a HELM groups JSON (the title of the table to audit), not to {fmt} "
                         f"input; leave it out")
    if higher is not None and fmt != "table":
        raise ValueError(f"--higher-is-better: applies to a table (CSV/TSV), not to {fmt} input (whose columns' "
                         "directions are the file's); leave it out")
    for arg, v in (("--metric", metric), ("--filter", filter)):
        if v is not None and fmt != "openllm-json":
            raise ValueError(f"{arg}: applies to lm-evaluation-harness / Open LLM Leaderboard results JSON files "
                             f"(--format openllm-json), not to {fmt} input; leave it out")
    if fmt == "helm-json":
        data, published = read_helm_json(src, table=table, duplicates=duplicates)
        data = _select(data, scen, excl)
    elif fmt == "openllm-json":
        data, published = _select(read_openllm_json(src, duplicates=duplicates, metric=metric, filter=filter), scen,
                                  excl), None
        # no aggregate column is published there, but the Open LLM Leaderboard ranks by its Average and
        # lm-evaluation-harness aggregates a group by a mean: the ranking to audit is the mean's
        data.attrs["ranked_by"] = "mean"
    elif fmt == "openllm-csv":
        data, published = read_openllm_csv(src, scenarios=scen, exclude=excl, duplicates=duplicates)
    else:
        explicit = [f"--{k}" for k, v in (("by", None if by == "scenario" else by), ("model", model), ("item", item),
                                          ("score", score)) if v is not None]
        data, published = read_scores(src, by=by, model=model or "model", item=item or "item",
                                      score=score or "score", scenarios=scen, exclude=excl, explicit=explicit,
                                      duplicates=given, higher_is_better=higher)
    notes = []
    if isinstance(data, pd.DataFrame):
        if data.attrs.get("note"):
            notes.append(data.attrs["note"])
        # a HELM table's lower-is-better columns (a CSV's are said in its own note, data.attrs["note"])
        lower = [c for c in data.attrs.get("lower_is_better", ()) if c in data.columns] if fmt == "helm-json" else []
        if lower:
            notes.append(f"Lower-is-better column(s) {_name_list(map(repr, map(str, lower)), 5)} (the file's "
                         "lower_is_better) are negated, so that higher is better in every column as HELM's win rate "
                         "reads them: a mean over the columns subtracts them; leave them out with --exclude for a "
                         "mean of the scores.")
        notes.append(score_columns_note(data.columns))
    return data, published, notes, fmt == "helm-json" or (fmt == "table" and _is_helm(data, published))


def score_columns_note(columns: Any) -> str:
    """The report's note naming a wide table's score columns (the first 20)."""
    cols = list(map(str, columns))
    return f"Score columns: {', '.join(cols[:20])}" + (f", … ({len(cols)} in all)." if len(cols) > 20 else ".")


def _names(s: str | None, arg: str) -> list[str] | None:
    """Comma-separated column names, a comma inside a name written ``\\,`` (as ``--tasks`` and ``--model`` read
    theirs); an empty one (``,,``, a stray comma) is refused rather than dropped, since no name left would silently
    mean every column."""
    if s is None:
        return None
    names = [x.strip().replace("\\,", ",") for x in re.split(r"(?<!\\),", s)]
    if not all(names):
        raise ValueError(f"{arg}: expected comma-separated column names, got {s!r} (an empty name)")
    return names
