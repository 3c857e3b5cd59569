"""Files of the evaluation loop: reading results in any supported layout, content hashes, atomic JSON."""
from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._shared import RepeatedKeyError, open_regular, remove_stale_tmp, write_text_atomic
from .._user_files import json_loads, refuse_empty_path, refuse_url, repeated_key_said
from .._validation import check_trials
from ..datasets._delimited import first_text_line
from ..datasets._files import _walk
from ..datasets._lm_eval_files import ResultsWithoutSamplesWarning, is_results_name, old_layout_hint
from ..datasets._lm_eval_records import EmptySamplesFile, FilterNotChosen, MetricNotLogged, task_kind
from ..responses import ResponseMatrix
from ._reference_copy import REFERENCE_CACHE
from ._schema import check
from ._task_kinds import other_measure, refuse_other_kind

__all__ = ["read_results", "read_new_results", "per_task", "write_json_atomic", "read_json", "check_path",
           "output_dir", "read_saved"]

FORMATS = ("auto", "lm-eval", "helm", "csv", "parquet")
_TABLE_NAME = re.compile(r"\.(csv|tsv|txt)(\.(gz|bz2|xz|zip|zst))?$")
_COMPRESSED_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"PK\x03\x04", b"\x28\xb5\x2f\xfd")  # gzip ... zstd


def _detect(path: Path) -> str:
    if path.is_dir():
        # lm-eval logs anywhere make it lm-eval's: the walk stops at the first; HELM's and the hint's files are
        # decisive once none is found
        helm = results = False
        for f in _walk(path, lambda name: name.endswith((".json", ".jsonl")) or ".jsonl." in name or ".json." in name):
            n = f.name
            if n.startswith("samples_") and ".jsonl" in n:
                if f.is_file():
                    return "lm-eval"
            elif n == "per_instance_stats.json":
                helm = helm or f.is_file()
            elif is_results_name(n):
                results = results or f.is_file()
        if helm:
            return "helm"
        hint = ("; it holds lm-eval results_*.json files only: run lm_eval with --log_samples to log each document"
                if results else "")
        old = old_layout_hint(path)
        hint = f"; {old}" if old else hint
        for record, what in (("manifest.json", "a saved selection"), ("state.json", "a saved sequential run")):
            if (path / record).is_file():
                hint = f"; it is {what} ({record}): {_made_from(path / record)}"
                break
        raise ValueError(f"{path}: a folder with neither lm-evaluation-harness samples_*.jsonl logs nor HELM run "
                         f"folders (per_instance_stats.json){hint}")
    name = path.name.lower()
    head = b""
    if path.is_file():  # a FIFO would wait forever
        try:
            with open_regular(path) as f:
                head = f.read(4096)
        except OSError:
            pass
    line = first_text_line(head.split(b"\n"))  # as the table reader finds the header
    json_line = line.lstrip().startswith(b"{")
    text = b"\0" not in line and not json_line and any(sep in line for sep in (b",", b"\t", b";"))
    # Parquet's magic bytes, whatever the name; a file named .parquet that holds a text or compressed table is read
    # as what it holds (any other, JSON lines too, as Parquet: its reader says what the file holds)
    if head.startswith(b"PAR1") or (name.endswith((".parquet", ".pq")) and not text
                                    and not head.startswith(_COMPRESSED_MAGIC)):
        return "parquet"
    if ".jsonl" in name:
        return "lm-eval"
    if _TABLE_NAME.search(name):
        return "csv"
    if name.endswith((".xlsx", ".xls", ".xlsm", ".ods")):
        raise ValueError(f"{path}: a spreadsheet file; save its sheet as a CSV file (one table per file) and give "
                         "that")
    if head.startswith(b"PK\x03\x04") and _is_reference_copy(path):
        raise ValueError(f"{path}: effstats' copy of a selection's or run's reference data (its {REFERENCE_CACHE}, "
                         f"read by its refit), not results; {_made_from(path.parent / 'manifest.json')}")
    # another name: what the file holds decides (a compressed file is a table: its reader decompresses it)
    if head.startswith(_COMPRESSED_MAGIC):
        return "csv"
    if json_line:
        return "lm-eval"
    if text:
        return "csv"
    raise ValueError(f"{path}: unknown file type; expected a CSV/TSV or Parquet table, an lm-eval samples_*.jsonl "
                     "log or a folder of them, or HELM run folders")


def _is_reference_copy(path: Path) -> bool:
    """Whether ``path`` is a zip of the arrays :func:`stage_reference` writes (``sha256.npy``, ``kind.npy``, ...)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
    except (OSError, zipfile.BadZipFile, ValueError):
        return False
    return {"sha256.npy", "kind.npy", "model_ids.npy", "item_ids.npy", "values.npy"} <= names


def _made_from(record: Path) -> str:
    """"pass the results it was made from (PATH)": the path a saved selection's or run's record names, if any."""
    source = None
    for name in (record.name, "manifest.json", "state.json"):
        try:
            with open_regular(record.parent / name) as fh:
                source = json.load(fh)["reference"]["source"]
            break
        except Exception:  # no record, or not one of ours: the hint names no path
            continue
    return "pass the results it was made from" + (f" ({source})" if isinstance(source, str) else "")


def default_metric(fmt: str) -> str | None:
    """The per-item metric :func:`read_results` reads by default in each layout (tables hold one score a cell)."""
    return {"lm-eval": "acc", "helm": "exact_match"}.get(fmt)


IN_MEMORY = (ResponseMatrix, pd.DataFrame, pd.Series)  # data given as objects, not files


def detect_format(source: Any) -> str:
    """The layout ``read_results(format="auto")`` would read ``source`` as (``"matrix"`` for a ResponseMatrix or a
    pandas frame)."""
    if isinstance(source, IN_MEMORY):
        return "matrix"
    try:
        if not os.fspath(source):  # Path('') is the current folder, not the path given
            return "auto"
        return _detect(Path(source).expanduser())
    except (ValueError, TypeError, OSError):
        return "auto"


def per_task(value: Any, name: str) -> Any:
    """An option given once or per task: ``"gsm8k=exact_match,acc"`` -> ``{"gsm8k": "exact_match", None: "acc"}``
    (``task=value`` pairs and at most one value for the other tasks); a plain name, None or a mapping as given. A
    comma inside a task's name is written ``\\,`` (a HELM run spec's, as ``--tasks`` reads it).

    Examples
    --------
    >>> per_task("gsm8k=exact_match,acc", "metric")
    {'gsm8k': 'exact_match', None: 'acc'}
    >>> per_task("acc_norm", "metric")
    'acc_norm'
    >>> per_task(r"mmlu:subject=anatomy\\,method=multiple_choice_joint=quasi_exact_match", "metric")
    {'mmlu:subject=anatomy,method=multiple_choice_joint': 'quasi_exact_match'}
    """
    if not isinstance(value, str) or ("=" not in value and "," not in value):
        return value
    out: dict = {}
    for part in (p.strip().replace("\\,", ",") for p in re.split(r"(?<!\\),", value)):
        task, eq, v = (s.strip() for s in part.rpartition("=")) if "=" in part else (None, "", part)
        if v and task is None and None in out:  # two plain names: nothing repeated, one too many for the rest
            raise ValueError(f"{name}: {value!r} gives two {name}s for the other tasks ({out[None]!r} and {v!r}); "
                             f"one {name} per task: one name, or task=name pairs and at most one name for the other "
                             "tasks (e.g. gsm8k=exact_match,acc)")
        if not v or (eq and not task) or task in out:
            what = "twice" if v and task in out else "empty"
            raise ValueError(f"{name}: {part!r} in {value!r} is {what}; expected one name, or task=name pairs and at "
                             f"most one name for the other tasks (e.g. gsm8k=exact_match,acc)")
        out[task] = v
    return out


def per_task_text(value: dict) -> str:
    """A per-task option as :func:`per_task` reads it back (commas in a task's name written ``\\,``).

    Examples
    --------
    >>> per_task_text({"gsm8k": "exact_match", None: "acc"})
    'gsm8k=exact_match,acc'
    """
    named = [f"{str(k).replace(',', chr(92) + ',')}={v}" for k, v in value.items() if k is not None]
    return ",".join(named + ([str(value[None])] if value.get(None) else []))


HELM_DEFAULTS = {"split": "test", "perturbation": None, "trials": "mean"}


def helm_options(split: Any = "test", perturbation: Any = None, trials: Any = "mean") -> dict:
    """The HELM reader's options as plain JSON values (for the manifest and the state), checked."""
    if split is not None and (not isinstance(split, str) or not split):
        raise ValueError(f"split: expected a split name such as 'test' or 'valid', or None (every split), "
                         f"got {split!r}")
    if not (perturbation is None or isinstance(perturbation, str) and perturbation
            or isinstance(perturbation, dict) and perturbation):
        raise ValueError(f"perturbation: expected None, a perturbation name or a non-empty mapping of its fields, "
                         f"got {perturbation!r}")
    return {"split": split, "perturbation": perturbation, "trials": check_trials(trials)}


def read_results(source: Any, *, format: str = "auto", metric: Any = None, duplicates: str = "last",
                 filter: Any = None, name: str = "source", tasks: Any = None, split: Any = "test",
                 perturbation: Any = None, trials: Any = "mean", progress: bool = False) -> ResponseMatrix:
    """Read per-item results of one or many models from the files users have.

    Parameters
    ----------
    source : path, ResponseMatrix or pandas DataFrame
        A folder of lm-evaluation-harness ``--log_samples`` output (``samples_<task>_<time>.jsonl``), a folder
        of HELM run folders (``per_instance_stats.json`` + ``run_spec.json``), a long or wide CSV/TSV/Parquet
        table of item scores (long: columns ``model``, ``item``, ``score``; wide: one row per model, the model id
        first or in a ``model`` column, then one column per item; scores in [0, 1]), or a
        :class:`~effstats.responses.ResponseMatrix` (returned as it is), or a pandas DataFrame in a table's
        layouts (long: the columns ``model``, ``item``, ``score`` and optionally ``task``; else wide: models ×
        items, the model ids as the index or in a ``model`` column; a Series named by its model is one model's
        scores by item). A table in another layout (transposed,
        long under other column names, without a header line, with metadata columns, in percent) is refused with
        one error naming ``name`` and the file (:func:`effstats.datasets.read_scores_csv` lists the checks).
    format : {"auto", "lm-eval", "helm", "csv", "parquet"}, default="auto"
        The layout; ``"auto"`` looks at the folder's contents, or at the file's first bytes (Parquet's magic
        bytes, a compressed or delimited table) and its name.
    metric : str, optional
        The per-item metric to read: lm-eval's per-sample field (default ``"acc"``), HELM's stat name (default
        ``"exact_match"``). Tables hold one score per cell and take none. lm-eval logs and HELM runs take a metric
        per task too: ``"gsm8k=exact_match,acc"`` (exact_match for gsm8k, acc for the other tasks; for HELM the task
        is a run spec's scenario, ``"bbq"`` or its whole name) or a mapping
        (:func:`~effstats.datasets.read_lm_eval_samples`, :func:`~effstats.datasets.read_helm_runs`).
    duplicates : {"last", "first", "mean", "error"}, default="last"
        Two runs of one model (on one task): keep the latest, the first, average them, or refuse.
    split, perturbation, trials
        HELM runs: the split (``"test"``; ``"valid"`` for a scenario evaluated on its validation split only, None
        for every split), the perturbation (None: unperturbed) and what to do with several train trials
        (``"mean"``, ``"separate"`` or one trial's index), as :func:`effstats.datasets.read_helm_runs` takes them.
        Other layouts refuse values other than these defaults.
    filter : str, optional
        lm-eval logs: the harness filter to read where a task logs several (e.g. gsm8k's ``"strict-match"`` and
        ``"flexible-extract"``); per task as ``metric`` (``"gsm8k=strict-match"``).
    name : str, default="source"
        The argument name used in error messages.
    tasks : sequence of str, optional
        lm-eval logs: read these tasks' files only (the others are not opened: their metric does not matter).
    progress : bool, default=False
        CSV/TSV tables: show the bytes read on a terminal once the read has taken 2 s.

    Returns
    -------
    ResponseMatrix
        Models × items; cells a model was not run on are ``missing``.

    See Also
    --------
    select : reads the reference models' results with it.
    estimate : reads the new model's results with it, as the manifest recorded.
    effstats.ResponseMatrix.from_long : a long table already in memory.
    write_lm_eval_samples : writes 0/1 results as the lm-eval logs this reads.

    Examples
    --------
    >>> import pandas as pd, tempfile, os
    >>> from effstats.workflow import read_results
    >>> d = tempfile.mkdtemp()
    >>> pd.DataFrame({"model": ["a", "a", "b", "b"], "item": ["q1", "q2", "q1", "q2"],
    ...               "score": [1, 0, 1, 1]}).to_csv(os.path.join(d, "scores.csv"), index=False)
    >>> read_results(os.path.join(d, "scores.csv"))
    ResponseMatrix(2 models × 2 items, kind='binary')
    """
    return _read_results(source, format=format, metric=metric, duplicates=duplicates, filter=filter, name=name,
                         tasks=tasks, split=split, perturbation=perturbation, trials=trials, progress=progress)[0]


def _from_frame(df: Any, name: str) -> ResponseMatrix:
    """A pandas frame in the layouts a table file has: long (columns or index levels ``model``, ``item`` and
    ``score``, optionally ``task``) or wide (models × items, the model ids as the index or in a ``model`` column); a
    Series is one model's scores by item, named by the model, or long scores indexed by (model, item)."""
    if isinstance(df, pd.Series):
        if {"model", "item"} <= set(df.index.names):
            df = df.rename("score").reset_index()
        elif df.name is None:
            raise ValueError(f"{name}: a Series is one model's scores by item: name it by the model (series.rename("
                             "'model id')), or pass a DataFrame")
        else:
            df = df.to_frame().T
    if {"model", "item"} & set(df.index.names) - {None}:
        df = df.reset_index()
    for axis, labels in (("index", df.index), ("columns", df.columns)):
        if isinstance(labels, pd.MultiIndex):
            raise ValueError(f"{name}: a DataFrame with MultiIndex {axis} {list(labels.names)}; give one level of "
                             "ids (reset_index, or join the levels into one id), or a long table with the columns "
                             "model, item, score and optionally task")
    _refuse_long_under_other_names(df, name)
    try:
        if {"model", "item", "score"} <= set(df.columns):
            rm = ResponseMatrix.from_long(df, groups=["task"] if "task" in df.columns else None)
            # models and items in the order they first appear, as a table file is read
            return rm.subset(models=list(pd.unique(df["model"])), items=list(pd.unique(df["item"])))
        if "model" in df.columns:
            df = df.set_index("model")
        return ResponseMatrix.from_wide(df)
    except ValueError as exc:
        said = str(exc).removeprefix("df: ")  # from_long's and from_wide's own argument, not the user's
        raise ValueError(f"{name}: {said} (a DataFrame is read as a long table with the columns model, item and "
                         "score, else as a wide one: models × items)") from None


def _refuse_long_under_other_names(df: pd.DataFrame, name: str) -> None:
    """Raise when a frame without all of the long layout's columns is a long table under other names: it has an
    ``item`` or a ``score`` column, or a ``model`` column whose ids repeat beside at most three other columns (a wide
    table has a row per model and a column per item). Read as wide, it would fail on its repeated model ids."""
    cols = list(df.columns)
    if {"model", "item", "score"} <= set(cols):
        return
    repeats = ("model" in cols and len(cols) <= 4 and df["model"].duplicated().any())
    if not ({"item", "score"} & set(cols) or repeats):
        return
    absent = [c for c in ("model", "item", "score") if c not in cols]
    why = (f"; its model ids repeat (e.g. {df['model'].value_counts().index[0]!r}), one row per model and item"
           if repeats else "")
    raise ValueError(f"{name}: a long table needs the columns model, item and score; this one has "
                     f"{', '.join(repr(str(c)) for c in cols[:8])}{' …' if len(cols) > 8 else ''}, without "
                     f"{', '.join(absent)}{why}: rename its columns (df.rename(columns={{...}})), or give a wide "
                     "table (one row per model, a column per item)")


def _read_results(source: Any, *, format: str = "auto", metric: Any = None, duplicates: str = "last",
                  filter: Any = None, name: str = "source", tasks: Any = None, split: Any = "test",
                  perturbation: Any = None, trials: Any = "mean",
                  progress: bool = False) -> tuple[ResponseMatrix, dict[tuple[str, str], int]]:
    """:func:`read_results`'s matrix, and the number of documents each (model, task) of lm-eval logs logs as NaN
    (failed documents, ``{}`` from the other layouts): they tell a task a model ran and failed from one missing from
    its results."""
    if not isinstance(format, str) or format not in FORMATS:
        raise ValueError(f"format: expected one of {list(FORMATS)}, got {format!r}")
    if not isinstance(duplicates, str) or duplicates not in ("last", "first", "mean", "error"):
        raise ValueError(f"duplicates: expected 'last', 'first', 'mean' or 'error', got {duplicates!r}")
    opts = helm_options(split, perturbation, trials)
    if isinstance(source, ResponseMatrix):
        _helm_only(opts, name, "a ResponseMatrix")
        return source, {}
    if isinstance(source, (pd.DataFrame, pd.Series)):
        _helm_only(opts, name, f"a {type(source).__name__}")
        return _from_frame(source, name), {}
    if isinstance(source, bool) or not isinstance(source, (str, os.PathLike)):
        raise ValueError(f"{name}: expected a path, a ResponseMatrix or a pandas DataFrame, got "
                         f"{type(source).__name__}")
    refuse_empty_path(source, name)
    try:
        path = Path(source).expanduser()
    except TypeError:  # an os.PathLike whose __fspath__ gives bytes
        raise ValueError(f"{name}: expected a path, got a {type(source).__name__} naming "
                         f"{type(os.fspath(source)).__name__}") from None
    try:
        exists = path.exists()
    except OSError as exc:  # a name too long, a folder that cannot be searched: the path given is at fault
        raise ValueError(f"{name}: {_shown_path(path)} cannot be read ({exc.strerror or exc})") from None
    if not exists:
        refuse_url(source, name)
        raise ValueError(f"{name}: {str(path)!r} " + ("is a broken link or a link loop" if path.is_symlink() else
                                                      "does not exist"))
    if not (path.is_dir() or path.is_file()):  # reading a FIFO would wait forever
        raise ValueError(f"{name}: {str(path)!r} is not a regular file or a folder (a FIFO or a device); give the "
                         "results file or folder itself")
    fmt = format
    if fmt == "auto":
        try:
            fmt = _detect(path)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    if fmt in ("csv", "parquet") and path.is_dir():
        raise ValueError(f"{name}: {str(path)!r} is a folder; format {fmt!r} reads one table file (a folder holds "
                         "lm-eval logs or HELM runs: format 'auto' finds which)")
    if fmt != "helm":
        _helm_only(opts, name, f"read as {fmt}")
    # an option that does not apply to what was read is said so first, in the form it was given (a per-task value
    # too): its value may be right for logs
    if metric is not None and fmt in ("csv", "parquet"):
        raise ValueError(f"metric: a table holds one score per cell; metric={metric!r} applies to lm-eval logs and "
                         "HELM runs")
    if filter is not None and fmt != "lm-eval":
        read = {"csv": "a CSV table", "parquet": "a Parquet table", "helm": "HELM runs"}.get(fmt, fmt)
        raise ValueError(f"filter: filter={filter!r} applies to lm-eval logs, not to {read}")
    metric, filter = per_task(metric, "metric"), per_task(filter, "filter")
    if metric is not None and not (isinstance(metric, str) and metric or isinstance(metric, dict)):
        raise ValueError(f"metric: expected a field name such as 'acc', got {metric!r}")
    from ..datasets import harness

    if filter is not None and (not isinstance(filter, (str, dict)) or not filter):
        raise ValueError(f"filter: the name of an lm-eval filter such as 'strict-match', got {filter!r}")
    if tasks is not None:
        tasks = [tasks] if isinstance(tasks, str) else [str(t) for t in tasks]
    try:
        if fmt == "lm-eval":
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                out, failed = harness._read_lm_eval_samples(path, metric=metric or default_metric(fmt), filter=filter,
                                                            duplicates=duplicates, tasks=tasks, normalize=None,
                                                            probabilities=True)
            for w in said:  # the reader's warnings name its own argument: say which input it was
                text = str(w.message).replace("path_or_paths:", f"{name}:", 1)
                if isinstance(w.message, ResultsWithoutSamplesWarning):  # the models it names, for the record
                    text = ResultsWithoutSamplesWarning(text, w.message.models)
                warnings.warn(text, w.category, stacklevel=3)
            return out, failed
        if fmt == "helm":
            from ..datasets import helm

            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                out = helm.read_helm_runs(path, metric=metric or default_metric(fmt), duplicates=duplicates, **opts)
            for w in said:  # the reader's warnings name its own argument: say which input it was
                warnings.warn(str(w.message).replace("path_or_paths:", f"{name}:", 1), w.category, stacklevel=3)
            return out, {}
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            out = (harness.read_scores_csv(path, duplicates=duplicates, progress=progress) if fmt == "csv"
                   else _read_parquet(path, duplicates))
        for w in said:  # the reader's warnings name its own argument: say which input it was
            warnings.warn(re.sub(r"^(path|frame):", f"{name}:", str(w.message)), w.category, stacklevel=3)
        return out, {}
    except MetricNotLogged as exc:  # whose fields read_new_results reads
        raise _metric_not_logged(exc, metric, name, path, tasks) from None
    except FilterNotChosen as exc:
        raise ValueError(_filter_not_chosen(exc, filter, name)) from None
    except EmptySamplesFile as exc:  # its task, for the advice of the command that knows the tasks wanted
        raise EmptySamplesFile(f"{name}: {str(exc).split(': ', 1)[-1]}", exc.task) from None
    except (ValueError, FileNotFoundError) as exc:
        msg = str(exc)
        for internal in ("path_or_paths:", "path:", "frame:"):  # the readers' argument names: say which input it was
            if msg.startswith(internal):
                msg = msg[len(internal):].strip()
        # options the caller passed under these names
        if msg.startswith(("filter:", "metric:", "duplicates:", "tasks:", "split:", "perturbation:", "trials:")):
            raise ValueError(msg) from None
        raise ValueError(f"{name}: {msg}") from None


def _reads_alike(metric: Any, used: Any, reference: dict) -> bool:
    """Whether ``metric`` reads each task of ``reference`` with the metric ``used`` read it with, as the reader of
    its layout resolves a per-task option (``clean=acc,acc`` is ``acc``; pairs in another order are the same)."""
    if metric == used:
        return True
    given, read, tasks = per_task(metric, "metric"), per_task(used, "metric"), reference.get("tasks")
    if not tasks or not all(isinstance(v, (str, dict)) and v for v in (given, read)):
        return False
    if reference.get("layout") == "helm":
        from ..datasets.helm import _metric_for as metric_of
    else:
        from ..datasets.harness import _per_task

        def metric_of(task: str, value: Any) -> Any:
            return _per_task(value, "metric", default_metric("lm-eval"), "a field name")(task)
    return all(metric_of(str(t), given) == metric_of(str(t), read) for t in tasks)


def read_new_results(source: Any, reference: dict, *, metric: str | None = None, duplicates: str = "last",
                     name: str = "new_results") -> tuple[ResponseMatrix, dict[tuple[str, str], int]]:
    """A new model's results, read as the reference data was (``reference``: a manifest's or a state's record of it),
    and the documents each (model, task) logs as NaN (:func:`_read_results`).

    Logs in the reference's layout are read with its metric and filter (``metric``, if given, must be the same);
    a table holds one score per cell, taken as that metric; logs of another harness are read with their default;
    logs beside a reference given in memory (layout "matrix") with the metric recorded for it, if any.
    """
    if isinstance(source, IN_MEMORY):  # as it is, once the options are checked
        return _read_results(source, duplicates=duplicates, name=name)
    _refuse_own_file(source, name)
    used, layout = reference.get("metric"), detect_format(source)
    if layout == "auto":  # no results layout recognised: one of effstats' own folders given by a slip?
        _refuse_own_folder(source, name)
    if metric is not None and used is not None and not _reads_alike(metric, used, reference):
        raise ValueError(f"metric: the reference models were read with metric {used!r}; the new results must be "
                         f"scored the same way, got {metric!r}")
    same = layout == reference.get("layout") or layout == "auto"
    if layout in ("csv", "parquet"):
        metric, filter = (metric if used is None else None), None
    else:
        # a reference given in memory records only the metric select was told: the new logs are read with it
        metric = metric or (used if same or reference.get("layout") == "matrix" else None)
        filter = reference.get("filter") if same else None
    # HELM runs: the split, perturbation and train trials the reference runs were read with
    helm = reference.get("helm") if layout == "helm" and same else None
    try:  # read as detected (a folder is walked once more, by the reader)
        out = _read_results(source, format=layout, metric=metric, duplicates=duplicates, filter=filter, name=name,
                            **(helm or {}))
    except MetricNotLogged as exc:
        if not (same and used is not None):  # a metric of the user's, or the default of another layout
            raise ValueError(str(exc)) from None
        raise ValueError(other_measure(exc, name, reference)) from None
    if same and layout == "lm-eval":  # logs that hold the metric may still be of another kind of task
        refuse_other_kind(out[0], source, reference, name)
    return out


def _fitting(fields: list[str]) -> str | None:
    """The field to suggest of those a record logs: ``exact_match`` for a generated answer, else ``acc``, else
    ``acc_norm``, else the first; None where it logs none."""
    return next((f for f in ("exact_match", "acc", "acc_norm") if f in fields), fields[0] if fields else None)


def _every_task_named(named: dict, source: Any, tasks: Any) -> dict:
    """``named`` (a per-task metric that reads the task a refusal met first) with each other task whose first
    record (:func:`~effstats.datasets._lm_eval_records.logged_metrics`) lacks the metric it would be read with
    named too, and written as one name where that is one name for every task: one rerun with the advice reads every
    task, not one more task a refusal."""
    from ..datasets._lm_eval_files import _expand, _task_of
    from ..datasets._lm_eval_records import logged_metrics

    try:
        if tasks is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the read has said what its listing left out
                tasks = sorted({_task_of(f)[0] for f in _expand(source, "source")})
        logged = logged_metrics(source, tasks)
    except (ValueError, OSError):
        return named
    out = dict(named)
    for task, fields in logged.items():
        if out.get(task, out.get(None)) not in fields and (fit := _fitting(fields)) is not None:
            out[task] = fit
    if set(logged) != set(tasks):  # a task without a readable record keeps the value for the other tasks
        return out
    given = {out.get(t, out.get(None)) for t in tasks}
    if len(given) == 1:
        return {None: given.pop()}
    return {t: v for t, v in out.items() if t is not None} if all(t in out for t in tasks) else out


def _metric_not_logged(exc: MetricNotLogged, metric: Any, name: str, source: Any = None,
                       tasks: Any = None) -> MetricNotLogged:
    """The reader's refusal of a record without the metric, said of the option given (or of the default metric,
    under ``name``, where none was), with the per-task form of the option that reads the task: the field the
    record logs (``exact_match`` for a generated answer) for that task and for every other task of ``source``
    whose first record lacks the metric read for it (one name, where that reads every task), the metric read for
    the others."""
    said = (f"{exc.metric!r} is not logged in {exc.shown} (line {exc.line}), a record of {task_kind(exc.choices)}; "
            f"its metrics: {exc.fields}")
    said = f"metric: {said}" if metric is not None else f"{name}: the default metric {said}"
    fit = [f for f in ("exact_match", "acc", "acc_norm") if f in exc.fields] or exc.fields
    task = getattr(exc, "task", None)
    if task is not None and fit:
        named = dict(metric) if isinstance(metric, dict) else {None: metric or exc.metric}
        named[task] = fit[0]
        named = named if source is None else _every_task_named(named, source, tasks)
        said += (f"; name the metric per task: metric='{per_task_text(named)}'" if len(named) > 1 or None not in named
                 else f"; pass metric='{named[None]}', which every task logs")
    return MetricNotLogged(said, exc.shown, exc.line, exc.metric, exc.fields, exc.choices)


def _filter_not_chosen(exc: FilterNotChosen, filter: Any, name: str) -> str:
    """The reader's refusal of a samples file of several filters, or without the filter asked for, with the
    per-task filters that read every task where the logs tell them."""
    if exc.wanted is None:
        said = f"{exc.shown} logs several filters {sorted(exc.logged)}"
    else:
        said = f"{exc.wanted!r} is not logged in {exc.shown}; it logs {sorted(exc.logged)}"
    said = f"filter: {said}" if filter is not None else f"{name}: {said}"
    if exc.suggest and sorted(exc.suggest) == exc.tasks and len(set(exc.suggest.values())) == 1:
        return f"{said}; pass filter='<one of them>', e.g. filter='{next(iter(exc.suggest.values()))}'"
    if exc.suggest:
        return f"{said}; name the filter per task: filter='{per_task_text(exc.suggest)}'"
    return f"{said}; pass filter='<one of them>'" if exc.wanted is None else said


# effstats' own JSON files, by their format field: what a user gives as results by a slip (both kinds of paths come
# up in the printed instructions)
_OWN_FORMATS = {"effstats.sequential/1": "a sequential run's state file", "effstats.manifest/1": "a selection's "
                "manifest", "effstats.estimate/1": "an estimate's record of its report files",
                "effstats.audit/1": "an audit's record of its report files"}


def _refuse_own_file(source: Any, name: str) -> None:
    """Raise when ``source`` is one of effstats' own JSON files (a state, a manifest, a batch's or a selection's
    documents for the harness), not results: each is valid JSON that the results readers would call broken."""
    from ._names import HELM_INSTANCES, LM_EVAL_SAMPLES

    if not isinstance(source, (str, os.PathLike)):
        return
    p = Path(source).expanduser()
    try:
        if not p.is_file() or p.stat().st_size > 2**28:
            return
    except OSError:  # a name too long, ...: the reader says what is wrong with the path
        return
    try:
        with open_regular(p) as fh:
            doc = json.loads(fh.read())
    except (ValueError, OSError, RecursionError):  # not one JSON document (a table, ...): the readers say what it is
        return
    what = _OWN_FORMATS.get(doc.get("format")) if isinstance(doc, dict) and isinstance(doc.get("format"), str) else None
    if what is None and p.name in (LM_EVAL_SAMPLES, HELM_INSTANCES) and isinstance(doc, dict) \
            and all(isinstance(v, list) for v in doc.values()):
        what = (f"the list of documents handed to the harness ({p.name}: " +
                ("lm_eval --samples" if p.name == LM_EVAL_SAMPLES else "HELM instance ids") + ")")
    if what is not None:
        raise ValueError(f"{name}: {p} is {what}, not results; {_GIVE_NEW}")


# what new results are, for a user who gave one of effstats' own files or folders instead
_GIVE_NEW = ("give the new model's results: the harness's output (lm_eval's --output_path folder of the run, with its "
             "samples_*.jsonl files; HELM's benchmark_output/runs/SUITE) or a table of scores")


def _refuse_own_folder(source: Any, name: str) -> None:
    """Raise, saying what to give instead, where ``source`` holds no results and is a folder effstats wrote (a
    selection's, a sequential run's or one of its batch folders): a slip for the harness's output, which the
    reference's hint ("pass the results it was made from") would send to the reference models' logs."""
    from ._names import ITEMS_JSON

    if not isinstance(source, (str, os.PathLike)):
        return
    p = Path(source).expanduser()
    for record, what in (("manifest.json", "a saved selection"), ("state.json", "a saved sequential run"),
                         (ITEMS_JSON, "a sequential run's batch folder")):
        try:
            ours = (p / record).is_file()
        except OSError:  # a name too long, ...: the reader says what is wrong with the path
            return
        if ours:
            raise ValueError(f"{name}: {p} is {what} ({record}), not results; {_GIVE_NEW}") from None


def _helm_only(opts: dict, name: str, what: str) -> None:
    """Raise when HELM's reading options are set for data of another layout."""
    given = [(k, v) for k, v in opts.items() if v != HELM_DEFAULTS[k]]
    if given:
        raise ValueError(f"{given[0][0]}: {', '.join(f'{k}={v!r}' for k, v in given)} applies to HELM runs; {name} is "
                         f"{what}")


def _read_parquet(path: Path, duplicates: str = "last") -> ResponseMatrix:
    """A long or wide Parquet table, read as the CSV reader reads a table (the same layout checks)."""
    from ..datasets import read_scores_frame
    from ..datasets._delimited import refuse_json_lines

    with open_regular(path) as fh:
        head = fh.read(4)
    if head != b"PAR1":  # every Parquet file begins (and ends) with these bytes: a CSV named so, say, is not one
        refuse_json_lines(path, None, expected="; lm-evaluation-harness logs are read under their names "
                          "(samples_*.jsonl) or from their folder", table="a Parquet table")
        raise ValueError(f"{path.name} is not a Parquet file (it does not begin with PAR1); for a CSV or TSV table, "
                         "format='csv'")
    try:
        df = pd.read_parquet(path)
    except ImportError:  # no engine installed: the file may be fine
        import shlex
        import sys

        # the running interpreter's pip: a plain ``pip`` first on PATH may install into another Python
        raise ValueError(f"{path.name}: reading Parquet needs pyarrow ({shlex.quote(sys.executable)} -m pip install "
                         "pyarrow; effstats installed from PyPI: its extra effstats[parquet]), or give the table as "
                         "a CSV") from None
    except Exception as exc:  # the engine's errors vary (pyarrow, fastparquet)
        what = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{path.name} is not a readable Parquet file ({type(exc).__name__}: {what})") from None
    return read_scores_frame(df, duplicates=duplicates, name=path.name)


def _shown_path(path: Path, limit: int = 80) -> str:
    """``path`` quoted, its middle cut where it is longer than ``limit`` characters."""
    text = str(path)
    return repr(text if len(text) <= limit else f"{text[:limit // 2]}…{text[-limit // 2:]}")


def check_path(path: Any, name: str) -> Path:
    """``path`` as a Path, or a ValueError naming ``name``."""
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"{name}: expected a path, got {type(path).__name__}")
    refuse_empty_path(path, name)
    refuse_url(path, name)
    return Path(path).expanduser()


def output_dir(directory: Any, name: str = "directory") -> Path:
    """``directory`` as a Path to write into (it may not exist yet), or a ValueError naming ``name``."""
    refuse_url(directory, name, output=True)
    d = check_path(directory, name)
    if d.exists() and not d.is_dir():
        raise ValueError(f"{name}: {str(d)!r} is a file")
    under = next((q for q in d.parents if q.exists() and not q.is_dir()), None)
    if under is not None:
        raise ValueError(f"{name}: {str(d)!r} cannot be made: {str(under)!r} is a file")
    return d


def read_saved(directory: Any, filename: str, fmt: str, what: str, clean: bool = True) -> tuple[Path, dict]:
    """The JSON document ``filename`` in ``directory`` (or ``directory`` itself as that file), checked to be of
    format ``fmt``; errors name ``directory``. With ``clean``, the temporary files an interrupted write of it left
    are removed first (a read that must write nothing passes False)."""
    p = check_path(directory, "directory")
    f = p / filename if p.is_dir() else p
    if clean:
        remove_stale_tmp(f)
    doc = read_json(f, "directory")
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        found = doc.get("format") if isinstance(doc, dict) else None
        family, _, version = fmt.rpartition("/")
        if isinstance(found, str) and found.rpartition("/")[0] == family and found.rpartition("/")[2].isdigit() \
                and int(found.rpartition("/")[2]) > int(version):
            raise ValueError(f"directory: {p} holds an effstats {what} written by a newer effstats (format "
                             f"{found!r}; this effstats reads {fmt!r}): update effstats to read it")
        raise ValueError(f"directory: {p} is not an effstats {what} (format {fmt!r})")
    check(doc, fmt, f"directory: {f.name}")
    return p, doc


def write_json_atomic(path: str | os.PathLike, obj: Any) -> Path:
    """JSON version of :func:`write_text_atomic`."""
    return write_text_atomic(path, json_text(obj))


def json_text(obj: Any) -> str:
    """``obj`` as the text of the JSON files effstats writes (numpy numbers and arrays as plain ones)."""
    text = json.dumps(obj, indent=1, ensure_ascii=False, default=_jsonable) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # a path with bytes that are not UTF-8, which Python holds as lone surrogates that no UTF-8 text can: as
        # JSON escapes (\udcff), which read back as the same path
        text = json.dumps(obj, indent=1, ensure_ascii=True, default=_jsonable) + "\n"
    return text


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def read_json(path: str | os.PathLike, name: str) -> Any:
    """Parse a JSON file, or one clear error naming ``name``; an object naming a key twice is refused (``json``
    would keep its last value without a word: a hand-edited ``"alpha"`` written twice, a changed level)."""
    p = check_path(path, name)
    if not p.is_file():
        raise ValueError(f"{name}: {str(p)!r} " + ("is not a regular file" if p.exists() else "does not exist"))
    try:
        with open_regular(p) as fh:
            return json_loads(fh.read().decode("utf-8"))
    except OSError as exc:
        raise ValueError(f"{name}: {str(p)!r} cannot be read ({exc.strerror})") from None
    except RepeatedKeyError as exc:
        raise ValueError(f"{name}: {p.name} {repeated_key_said(exc)}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{name}: {p.name} is not valid JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{name}: {p.name} is nested too deeply to be an effstats file") from None
