"""lm-evaluation-harness sample logs, read by :func:`read_lm_eval_samples` (files found in
:mod:`effstats.datasets._lm_eval_files`, records parsed in :mod:`effstats.datasets._lm_eval_records`);
:func:`read_scores_csv`, the reader of score tables, is re-exported from :mod:`effstats.datasets._score_tables`.

lm-evaluation-harness (``lm_eval ... --output_path OUT --log_samples``) writes one JSON object per evaluated
document to ``OUT/<model_name_sanitized>/samples_<task>_<timestamp>.jsonl``::

    {"doc_id": 0, "doc": {...}, "target": "2",
     "arguments": {"gen_args_0": {"arg_0": "<context>", "arg_1": " <choice 0>"}, ...},
                                                       # older: [["<ctx>", " <choice>"], ...]
     "resps": [[["-7.2", "False"]], ...], "filtered_resps": [["-7.2", "False"], ...],   # per choice [loglik, is_greedy]
     "filter": "none", "metrics": ["acc", "acc_norm"], "acc": 0.0, "acc_norm": 1.0, "doc_hash": ..., ...}

Recent versions write the numbers inside ``resps`` / ``filtered_resps`` as strings (``sanitize_list``); older ones
write numbers and booleans. Both are read here.

Beside the samples, the harness's ``EvaluationTracker`` writes ``OUT/<model_name_sanitized>/results_<timestamp>.json``
with the same timestamp as the samples of that run (``OUT_<timestamp>.json`` beside the samples when ``--output_path``
ends in ``.json``). It holds the model's name as given (``"model_name"``, and ``config.model_args`` such as
``"pretrained=EleutherAI/pythia-160m,dtype=float16"``); the folder name is that name with ``/`` and ``:`` replaced by
``__``, which cannot be undone for local checkpoints (``/home/me/ckpt`` becomes ``__home__me__ckpt``).
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

import numpy as np
import pandas as pd
from scipy.special import softmax

from .._shared import _plain
from .._validation import check_flag, value_range
from ..responses import ResponseMatrix
from ._files import _check_duplicates
from ._lm_eval_files import (_choose_runs, _expand, _model_from_logs, _run_fields, _shown, _split_checkpoints,
                             _task_of)
from . import _lm_eval_cache
from ._lm_eval_records import (FILTER, HASHES, MIXED, WHY, FilterNotChosen, MetricNotLogged, _doc_sort_key,
                               _mean_of_runs, _read_file_kept, differing_digests, first_digests, first_filter,
                               logged_filters)
from ._score_tables import read_scores_csv

__all__ = ["read_lm_eval_samples", "read_scores_csv"]


def _warn_documents_failed_everywhere(gone: set, tasks_kept: set, arg: str) -> None:
    """Warn, in one line, of the documents (and whole tasks) that no model has a result on, every model logging
    their metric as NaN: they are not items of what is read."""
    if not gone:
        return
    lost = sorted({t for t, _ in gone} - tasks_kept)
    whole = f", every document of task(s) {', '.join(map(repr, lost))}," if lost else ""
    t, d = min(gone, key=lambda k: (k[0], _doc_sort_key(k[1])))
    warnings.warn(f"{arg}: {len(gone)} document(s) (e.g. {t}/{d}){whole} have no result from any model (every model "
                  "logs their metric as NaN) and are left out", UserWarning, stacklevel=4)


def _refuse_models_without_result(models: list, has_result: np.ndarray, n_failed: dict, arg: str) -> None:
    """One line naming the models whose every document failed (logged its metric as NaN), or held none."""
    empty = [m for m, ok in zip(models, has_result) if not ok]
    if not empty:
        return
    n = sum(n_failed.get(m, 0) for m in empty)
    one = len(empty) == 1
    who = (f"model {_plain(empty[0])!r} has" if one else
           f"{len(empty)} of {len(models)} models ({', '.join(repr(_plain(m)) for m in empty[:10])}"
           f"{' …' if len(empty) > 10 else ''}) have")
    its, it = ("its", "it") if one else ("their", "them")
    why = (f"every one of {its} {n} document(s) logs its metric as NaN (a failed run?)" if n
           else f"{its} samples files hold no document")
    raise ValueError(f"{arg}: {who} no result: {why}; " + ("run it again" if len(empty) == len(models) else
                                                             f"leave {it} out or run {it} again"))


def read_lm_eval_samples(
    path_or_paths: str | os.PathLike | Sequence[str | os.PathLike] | Mapping[str, Any],
    *,
    metric: str | Mapping[str | None, str] = "acc",
    normalize: bool | None = None,
    probabilities: bool = True,
    tasks: Sequence[str] | None = None,
    filter: str | Mapping[str | None, str] | None = None,
    duplicates: Literal["last", "first", "error", "mean"] = "last",
) -> ResponseMatrix:
    """Read lm-evaluation-harness ``--log_samples`` files of one or many models and tasks.

    Parameters
    ----------
    path_or_paths : path, sequence of paths, or mapping model name -> path(s)
        ``samples_<task>_<timestamp>.jsonl`` files (``.jsonl.gz`` too) or directories searched recursively for
        them, through linked folders too (e.g. the harness's ``--output_path``). Without a mapping, the model of
        a file is the name recorded in the run's ``results_<timestamp>.json`` in the same folder (``model_name``,
        else the ``pretrained=``, ``model=``, ``path=`` or ``engine=`` entry of ``config.model_args``), else its
        folder name (``org__name`` -> ``org/name``, as the harness writes it). With a mapping, the mapping names
        the models.
    metric : str, default="acc"
        Per-document field giving the response: ``"acc"`` or ``"acc_norm"`` (correctness of the raw or
        length-normalised arg-max choice), or any numeric per-sample metric (``"exact_match"``, ``"f1"`` ...).
        ``acc`` / ``acc_norm`` are recomputed from the loglikelihoods and the gold index if not logged. A mapping
        gives a metric per task (``{"gsm8k": "exact_match", None: "acc"}``: its key None, the other tasks', default
        ``"acc"``), for a suite of generation and multiple-choice tasks.
    normalize : bool, optional
        Length-normalise the per-choice loglikelihoods (divide by the number of characters of the choice, as the
        harness's ``acc_norm``) before the softmax. Default: where the task's metric is ``"acc_norm"``.
    probabilities : bool, default=True
        Attach choice probabilities ``softmax(loglikelihoods)`` (n_models, n_items, max_choices) and ``labels``
        (gold index) when every item is multiple choice with a known gold index; padded choices get probability 0
        and cells a model did not evaluate hold a uniform distribution (they are ``missing`` anyway).
    tasks : sequence of str, optional
        Keep only these tasks.
    filter : str or mapping, optional
        The harness filter to read when a file logs several (e.g. ``"strict-match"`` vs ``"flexible-extract"``); a
        mapping names it per task (``{"gsm8k": "strict-match"}``; the tasks it leaves out log one filter). Logs
        of one task under other filters are refused: each filter extracts another answer, so another metric.
    duplicates : {"last", "first", "error", "mean"}, default="last"
        What to do when one model has several runs (samples files) of one task: ``"last"`` keeps the run with the
        latest timestamp and ``"first"`` the earliest (runs without a timestamp count as earliest, ties keep the
        order given), both with a ``UserWarning`` naming the model and task; ``"mean"`` averages the runs'
        per-document values (and their choice probabilities) over the runs that logged each document;
        ``"error"`` raises.

    Returns
    -------
    ResponseMatrix
        Shape (n_models, n_items), binary if every value is 0/1 else ``kind="score"`` (values must lie in
        [0, 1]); item ids ``"<task>/<doc_id>"``; ``items`` columns ``task``, ``doc_id`` (an int where the log
        has one), ``n_choices`` (0 for generation tasks), ``lm_eval_filter`` (the filter the task was read
        under); ``models`` column ``n_tasks``. Pairs (model,
        document) absent from the logs are ``missing``, and so are documents whose metric is logged as NaN
        (failed documents; one ``UserWarning`` counts them and names the first).

    Raises
    ------
    ValueError
        Naming the argument: e.g. ``path_or_paths`` for a Git LFS pointer in place of a log, a truncated last
        line (an interrupted run) or a line that is not JSON, each with the file and line; ``metric`` for values
        outside [0, 1]; ``path_or_paths`` for several runs of one task under ``duplicates="error"``, and for a
        file with a line of more than 64 MiB characters or more than 1 MiB characters of blank lines (a damaged
        or hostile file, e.g. a few MB of gzip that decompress to gigabytes), read no further than that.

    Notes
    -----
    A samples file of 1 MB or more is parsed once per metric, normalisation and filter: what the parse gives is kept
    in ``~/.cache/effstats/lm_eval`` (the folder ``$EFFSTATS_CACHE_DIR`` names; set empty, none) and read back while
    the file's size and modification time are those it had, value for value what a parse gives.

    See Also
    --------
    effstats.datasets.read_helm_runs : the same matrix from HELM run folders.
    effstats.datasets.read_scores_csv : per-item scores from a CSV table.
    effstats.cli.read_openllm_json : the aggregate results files of the same runs.
    effstats.ResponseMatrix : the returned data model.

    References
    ----------
    Gao, L., Tow, J., Abbasi, B., Biderman, S., Black, S., DiPofi, A., Foster, C., Golding, L., Hsu, J.,
    Le Noac'h, A., Li, H., McDonell, K., Muennighoff, N., Ociepa, C., Phang, J., Reynolds, L., Schoelkopf, H.,
    Skowron, A., Sutawika, L., Tang, E., Thite, A., Wang, B., Wang, K. and Zou, A. "A framework for few-shot
    language model evaluation" (lm-evaluation-harness), Zenodo, 2023. https://doi.org/10.5281/zenodo.5371628

    Examples
    --------
    ``lm_eval --model hf --model_args pretrained=org/small --tasks arc_easy --output_path out --log_samples`` (and
    the same for ``org/big``) leaves one folder per model under ``out``; here three documents are written by
    hand in that layout (per choice ``[loglikelihood, is_greedy]``, gold index ``target``):

    >>> import json, pathlib, tempfile
    >>> from effstats.datasets import read_lm_eval_samples
    >>> out = tempfile.TemporaryDirectory()
    >>> for folder, acc in {"org__small": [1, 0, 0], "org__big": [1, 1, 0]}.items():
    ...     run = pathlib.Path(out.name, folder)
    ...     run.mkdir()
    ...     docs = [{"doc_id": i, "target": 0, "filtered_resps": [[-1.0 if a else -3.0, False], [-2.0, False]],
    ...              "filter": "none", "acc": float(a)} for i, a in enumerate(acc)]
    ...     _ = (run / "samples_arc_easy_2024-05-01T12-00-00.jsonl").write_text(
    ...         "".join(json.dumps(d) + "\\n" for d in docs))
    >>> rm = read_lm_eval_samples(out.name)
    >>> rm  # doctest: +NORMALIZE_WHITESPACE
    ResponseMatrix(2 models × 3 items, kind='binary', 2 classes, item groups ['task', 'doc_id', 'n_choices',
    'lm_eval_filter'])
    >>> rm.accuracy().round(3)
    model_ids
    org/big      0.667
    org/small    0.333
    Name: accuracy, dtype: float64
    >>> rm.probabilities[0].round(3)  # softmax of the loglikelihoods, org/big
    array([[0.731, 0.269],
           [0.731, 0.269],
           [0.269, 0.731]])
    >>> out.cleanup()

    A run of a local checkpoint: the folder name is the path with ``/`` replaced by ``__``, the results file holds
    the name itself.

    >>> import json, pathlib, tempfile
    >>> from effstats.datasets import read_lm_eval_samples
    >>> tmp = tempfile.TemporaryDirectory()
    >>> run = pathlib.Path(tmp.name, "__ckpt__step1000")
    >>> run.mkdir()
    >>> ts = "2024-05-01T12-00-00.000001"
    >>> _ = (run / f"results_{ts}.json").write_text(json.dumps({"model_name": "/ckpt/step1000"}))
    >>> rows = [{"doc_id": i, "filter": "none", "exact_match": float(i % 2)} for i in range(3)]
    >>> _ = (run / f"samples_gsm8k_{ts}.jsonl").write_text("".join(json.dumps(r) + "\\n" for r in rows))
    >>> rm = read_lm_eval_samples(tmp.name, metric="exact_match")
    >>> rm.model_ids.tolist(), rm.item_ids.tolist()
    (['/ckpt/step1000'], ['gsm8k/0', 'gsm8k/1', 'gsm8k/2'])
    >>> rm.values.astype(int).tolist()
    [[0, 1, 0]]
    >>> tmp.cleanup()
    """
    return _read_lm_eval_samples(path_or_paths, metric=metric, normalize=normalize, probabilities=probabilities,
                                 tasks=tasks, filter=filter, duplicates=duplicates)[0]


def _read_lm_eval_samples(path_or_paths: Any, *, metric: Any, normalize: bool | None, probabilities: bool,
                          tasks: Sequence[str] | None, filter: Any,
                          duplicates: str) -> tuple[ResponseMatrix, dict[tuple[str, str], int]]:
    """:func:`read_lm_eval_samples`'s matrix, and the number of documents each (model, task) logs as NaN (failed
    documents; only the pairs with some). Those documents are not items of the matrix where no model has a result
    on them: the counts tell a task a model ran and failed from a task missing from its results."""
    arg = "path_or_paths"
    metric_of = _per_task(metric, "metric", "acc", "a field name such as 'acc' or 'acc_norm'")
    filter_of = _per_task(filter, "filter", None, "a filter name such as 'strict-match'")
    if normalize is not None and not isinstance(normalize, (bool, np.bool_)):
        raise ValueError(f"normalize: expected True, False or None, got {normalize!r}")
    check_flag(probabilities, "probabilities")
    _check_duplicates(duplicates)
    if tasks is not None:
        tasks = [tasks] if isinstance(tasks, str) else list(tasks)

    if isinstance(path_or_paths, Mapping):
        pairs = [(str(m), f) for m, p in path_or_paths.items() for f in _expand(p, arg)]
    else:
        pairs = [(None, f) for f in _expand(path_or_paths, arg)]  # named from the logs once the tasks are chosen
    if not pairs:
        raise ValueError(f"{arg}: no samples files given")
    names: dict[Path, str | None] = {}
    runs: dict[tuple[str, str], list[tuple[str, int, Path]]] = {}
    found: set[str] = set()
    for order, (model, f) in enumerate(pairs):
        task, ts = _task_of(f)
        found.add(task)
        if tasks is None or task in tasks:
            model = model if model is not None else _model_from_logs(f, arg, names)
            runs.setdefault((model, task), []).append((ts, order, f))
    docs: dict[Path, Any] = {}  # the runs' results files, parsed
    if not isinstance(path_or_paths, Mapping):  # the models named from the logs: one name, several checkpoints?
        runs = _split_checkpoints(runs, arg, docs)
    unknown = [] if tasks is None else sorted({str(t) for t in tasks} - found)
    if not runs or unknown:
        # every task on disk, not the ones asked for: the user needs the names to choose from
        from .._response_meta import twin_note

        raise ValueError(f"tasks: {unknown or sorted(map(str, tasks))} not among the tasks of the sample files "
                         f"{_plain(sorted(found)[:20])}{' …' if len(found) > 20 else ''}{twin_note(unknown, found)}")
    left_out: dict[tuple[str, str], list[Path]] = {}  # the runs duplicates 'last' / 'first' leave out
    chosen = _choose_runs(runs, duplicates, arg, docs, left_out)

    models = sorted({m for m, _ in chosen})
    data = {}
    failed: list = []  # (file, line, doc_id) of documents whose metric is NaN
    n_failed: dict[str, int] = {}  # per model
    failed_in: dict[tuple[str, str], int] = {}  # per (model, task)
    failed_docs: set = set()  # (task, doc_id)
    with _lm_eval_cache.batch():  # the cache folder is pruned once, after the last file is read
        for key, files in sorted(chosen.items()):
            m = metric_of(key[1])
            norm = m == "acc_norm" if normalize is None else bool(normalize)
            start = len(failed)  # this (model, task)'s failed documents are failed[start:]
            try:
                per_run = [_read_file_kept(f, m, norm, filter_of(key[1]), arg, failed) for f in files]
            except MetricNotLogged as exc:
                exc.task = key[1]
                raise
            except FilterNotChosen as exc:
                exc.task, exc.suggest = key[1], _filters_to_name(chosen, filter_of)
                exc.tasks = sorted({t for _, t in chosen})
                if exc.suggest:
                    exc.args = (f"{exc}; name it per task: filter={exc.suggest!r}",)
                raise
            n_failed[key[0]] = n_failed.get(key[0], 0) + len(failed) - start
            if len(failed) > start:
                failed_in[key] = len(failed) - start
                failed_docs.update((key[1], d) for _, _, d in failed[start:])
            data[key] = per_run[0] if len(per_run) == 1 else _mean_of_runs(per_run, key, arg)
            if key in left_out:
                _warn_runs_left_out_differ(key, data[key], left_out[key], duplicates, arg)
    filters = _filters_read(chosen, filter_of, arg)
    if failed:
        f0, line0, doc0 = failed[0]
        warnings.warn(f"{arg}: {len(failed)} document(s) log their metric as NaN (failed documents), read as missing "
                      f"cells (e.g. doc {doc0!r}, {f0} line {line0})", UserWarning, stacklevel=3)

    # item index: tasks in name order, documents in doc_id order
    n_choices: dict[tuple[str, Any], int] = {}
    gold: dict[tuple[str, Any], int] = {}
    hashes: dict[str, dict[Any, str]] = {}  # per task, per document
    first: dict[str, tuple[str, dict]] = {}  # per task, the first model's digests
    conflicts: dict[tuple[str, str], tuple] = {}  # (task, field) -> (model, other model, documents, a document)
    for (model, task), recs in data.items():
        for doc_id, _, _, g, n, _ in recs:
            k = (task, doc_id)
            if k in n_choices and n_choices[k] != n:
                raise ValueError(
                    f"{arg}: {task}/{doc_id} has {n} choices for {model!r} but {n_choices[k]} for another model")
            n_choices[k] = n
            if g >= 0:
                if gold.get(k, g) != g:
                    raise ValueError(f"{arg}: {task}/{doc_id} has different gold answers across models")
                gold[k] = g
        _same_digests(hashes, task, recs)
        got = {r[0]: r[5] for r in recs if r[5]}
        m0, h0 = first.setdefault(task, (model, got))
        if m0 != model and got != h0:
            for field, (n, d) in differing_digests(h0, got).items():
                conflicts.setdefault((task, field), (m0, model, n, d))
    _refuse_other_documents(conflicts, {t: len(h) for t, h in hashes.items()}, arg)
    keys = sorted(n_choices, key=lambda k: (k[0], _doc_sort_key(k[1])))
    if len(models) > 1:  # one model's failed documents are its own, counted in the warning above
        _warn_documents_failed_everywhere(failed_docs.difference(n_choices), {t for t, _ in keys}, arg)
    pos = {k: i for i, k in enumerate(keys)}
    n_models, n_items = len(models), len(keys)
    mpos = {m: i for i, m in enumerate(models)}
    vals = np.zeros((n_models, n_items))
    observed = np.zeros((n_models, n_items), dtype=bool)
    for (model, task), recs in data.items():
        cols = np.fromiter((pos[(task, r[0])] for r in recs), dtype=np.int64, count=len(recs))
        vals[mpos[model], cols] = [r[1] for r in recs]
        observed[mpos[model], cols] = True
    _refuse_models_without_result(models, observed.any(axis=1), n_failed, arg)
    obs_vals = vals[observed]
    if obs_vals.min() < 0 or obs_vals.max() > 1:
        raise ValueError(f"metric: {_plain(metric)!r} values must lie in [0, 1] to form a response matrix, got range "
                         f"{value_range(obs_vals)}")

    if duplicates != "mean":  # averaged 0/1 runs are graded by the user's choice
        _warn_mixed_kinds(vals, observed, keys, models, metric_of)

    proba = labels = None
    n_arr = np.array([n_choices[k] for k in keys])
    if probabilities and (n_arr >= 2).all() and len(gold) == n_items:
        k_max = int(n_arr.max())
        proba = np.zeros((n_models, n_items, k_max))
        # uniform over the real choices where not evaluated
        proba[:] = (np.arange(k_max)[None, :] < n_arr[:, None]) / n_arr[:, None]
        for (model, task), recs in data.items():
            by_n: dict[int, list] = {}
            for doc_id, _, logits, _, n, _ in recs:
                by_n.setdefault(n, []).append((pos[(task, doc_id)], logits))
            for n, lst in by_n.items():  # one vectorised softmax per number of choices
                cols = np.fromiter((c for c, _ in lst), dtype=np.int64, count=len(lst))
                proba[mpos[model], cols, :n] = softmax(np.stack([lg for _, lg in lst]), axis=1)
        labels = np.array([gold[k] for k in keys], dtype=np.int64)

    item_ids = pd.Index([f"{t}/{d}" for t, d in keys], name="item")
    items = pd.DataFrame(
        {"task": [t for t, _ in keys], "doc_id": [d for _, d in keys], "n_choices": n_arr}, index=item_ids
    )
    if hashes:  # what the document, prompt and target were, for a later run on these documents to be checked against
        items[HASHES] = [hashes.get(t, {}).get(d, "") for t, d in keys]
    for field, per_task in _run_fields(chosen, arg).items():
        items[field] = [per_task.get(t, "") for t, _ in keys]
    items[FILTER] = [filters.get(t, "") for t, _ in keys]  # what a later run's logs must be read under
    mmeta = pd.DataFrame({"n_tasks": [sum(1 for (m, _) in data if m == name) for name in models]},
                         index=pd.Index(models, name="model"))
    out = ResponseMatrix(
        vals,
        missing=~observed,
        probabilities=proba,
        labels=labels,
        model_ids=mmeta.index,
        item_ids=item_ids,
        models=mmeta,
        items=items,
    )
    return out, failed_in


def _filters_to_name(chosen: dict[tuple[str, str], list[Path]], filter_of: Callable[[str], str | None]) -> dict:
    """The filter to name for each task whose logs hold several (the one asked for where they log it, else the
    first they log), from the first log of each task: the per-task option that reads every task."""
    out = {}
    for task in sorted({t for _, t in chosen}):
        logged = logged_filters(next(files[0] for (_, t), files in sorted(chosen.items()) if t == task))
        if len(logged) > 1:
            out[task] = filter_of(task) if filter_of(task) in logged else logged[0]
    return out


def _filters_read(chosen: dict[tuple[str, str], list[Path]], filter_of: Callable[[str], str | None],
                  arg: str) -> dict[str, str]:
    """Each task's filter as read: the one asked for, else the one its logs hold (one a file, or the read refused
    it). Logs of one task under other filters are refused, naming a file of each: a filter extracts the answer
    from the model's output ('strict-match', 'flexible-extract'), so the scores of two are of two metrics."""
    files_of: dict[str, list[Path]] = {}
    for (_, task), files in sorted(chosen.items()):
        files_of.setdefault(task, []).extend(files)
    out = {}
    for task, files in files_of.items():
        asked = filter_of(task)
        if asked is not None:
            out[task] = asked
            continue
        seen: dict[str, Path] = {}
        for f in files:
            got = first_filter(f)
            if got is not None:
                seen.setdefault(got, f)
        if len(seen) > 1:
            said = ", ".join(f"{k!r} in {_shown(f)}" for k, f in sorted(seen.items()))
            raise ValueError(f"{arg}: task {task!r} is scored under other filters: {said} (each extracts another "
                             "answer from the model's output: the scores are of other metrics); rerun the task "
                             "under one filter for every model, or leave the others' logs out")
        if seen:
            out[task] = next(iter(seen))
    return out


def _warn_runs_left_out_differ(key: tuple[str, str], kept: list, others: list[Path], duplicates: str,
                               arg: str) -> None:
    """Warn where the run kept of a (model, task) logs other digests than a run left out, compared on the first
    records of the run left out: the runs are of other documents or another protocol, and which one is read
    matters."""
    mine = {r[0]: r[5] for r in kept if r[5]}
    for f in others:
        for field, (n, d) in differing_digests(mine, first_digests(f)).items():
            warnings.warn(f"{arg}: the run kept ({'latest' if duplicates == 'last' else 'earliest'}) of model "
                          f"{key[0]!r} on task {key[1]!r} logs another {field} than the run left out "
                          f"{_shown(f)} on {n} of the documents compared (e.g. doc {d!r}; {WHY[field]}): the runs "
                          "are of other documents or another protocol; delete the files of the run not meant",
                          UserWarning, stacklevel=4)
            return


def _refuse_other_documents(conflicts: dict[tuple[str, str], tuple], n_docs: dict[str, int], arg: str) -> None:
    """Refuse models whose logs of a task hold other documents or targets than another model's at most of the
    same doc_ids (another dataset revision or order: their results are joined by doc_id); warn where a few
    differ (a document fixed between revisions: left out of the record of what the references ran) and of other
    prompts (a template or few-shot change, or a model's own chat template), naming the models."""
    said = []
    for (task, field), (m0, m, n, d) in conflicts.items():
        what = (f"task {task!r}: model {m!r} logs another {field} than model {m0!r} on {n} of {n_docs[task]} "
                f"document(s) (e.g. doc {d!r}; {WHY[field]})")
        if field != "prompt_hash" and 2 * n > n_docs[task]:
            raise ValueError(f"{arg}: {what}: its results are about other documents at the same doc_id; rerun it "
                             "on the other models' dataset or leave it out")
        said.append(what)
    if said:
        warnings.warn(f"{arg}: the models' logs differ in {len(said)} (task, digest) pair(s): {'; '.join(said[:3])}"
                      f"{' …' if len(said) > 3 else ''}; their scores there are of other documents or protocols",
                      UserWarning, stacklevel=3)


def _same_digests(hashes: dict[str, dict[Any, str]], task: str, recs: list) -> None:
    """Add one model's digests of a task's documents to ``hashes[task]``; a document whose models log other
    digests gets :data:`MIXED`. Models on the same documents log the same digests: one comparison of dicts."""
    got = {r[0]: r[5] for r in recs if r[5]}
    if not got:
        return
    seen = hashes.setdefault(task, got)
    if seen is not got and seen != got:
        for d, h in got.items():
            if seen.setdefault(d, h) != h:
                seen[d] = MIXED


def _warn_mixed_kinds(vals: np.ndarray, observed: np.ndarray, keys: list, models: list,
                      metric_of: Callable[[str], str | None]) -> None:
    """Warn, naming the tasks, when some tasks log graded values and the others 0/1 ones: one graded value makes
    the whole matrix graded (``kind="score"``), which changes the intervals of every task."""
    graded = observed & (vals != 0) & (vals != 1)
    if not graded.any():
        return
    tasks = np.array([t for t, _ in keys], dtype=object)
    names, codes = np.unique(tasks, return_inverse=True)
    per_task = np.bincount(codes, weights=graded.sum(axis=0), minlength=len(names)) > 0
    if per_task.all():
        return
    shown = []
    for t in names[per_task][:3]:
        i, j = np.argwhere(graded & (tasks == t)[None, :])[0]
        shown.append(f"{t!r} ({metric_of(t)} {vals[i, j]:g} for {models[i]!r} on document {_plain(keys[j][1])!r})")
    more = f" and {int(per_task.sum()) - 3} more" if per_task.sum() > 3 else ""
    warnings.warn(f"metric: task(s) {', '.join(shown)}{more} log graded scores while the other tasks' are 0/1: "
                  "every task is read as graded scores (kind='score', with the intervals of graded scores); pass "
                  "a 0/1 metric for those tasks if the graded values are not meant", UserWarning, stacklevel=4)


def _per_task(value: Any, name: str, default: str | None, what: str) -> Callable[[str], str | None]:
    """``task -> value`` for an option given once (a string) or per task (a mapping whose key None is the rest's)."""
    if value is None and default is None:
        return lambda task: None
    if isinstance(value, str) and value:
        return lambda task: value
    if isinstance(value, Mapping) and value and all(
            (k is None or isinstance(k, str) and k) and isinstance(v, str) and v for k, v in value.items()):
        rest = value.get(None, default)
        return lambda task: value.get(task, rest)
    raise ValueError(f"{name}: expected {what}, or a mapping of task names to them, got {_plain(value)!r}")
