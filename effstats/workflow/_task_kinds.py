"""The kind of each lm-eval task the reference models' logs hold (a multiple-choice task, whose records log the
log-likelihoods of its choices, or generated text, a ``generate_until`` task), recorded with a selection or a
sequential run, and the refusal of a new model's logs of the other kind.

A choice ranked by log-likelihood and a generated answer are scored differently: the one score does not estimate
the other, whatever the metric is called. The kind is told by what each record logs (``resps``: per-choice
``[loglikelihood, is_greedy]`` pairs, or text), not by the metric's name: a generation task may log a field named
``acc`` too, which the reference's metric then reads without a word.
"""
from __future__ import annotations

import warnings
from typing import Any

import pandas as pd

from .._shared import _name_list, _plain
from ..datasets._lm_eval_records import MetricNotLogged, record_of_kind, task_kind
from ..responses import ResponseMatrix

MULTIPLE_CHOICE, GENERATION = "multiple-choice", "generation"
# what the harness names each kind by, for the advice
_RUN_AS = {MULTIPLE_CHOICE: "a multiple-choice task", GENERATION: "a generation task (generate_until)"}
_OF_KIND = {MULTIPLE_CHOICE: "a multiple-choice task", GENERATION: "generated text (a generate_until task)"}
_SCORE = {MULTIPLE_CHOICE: " (a multiple-choice score: the choice of highest log-likelihood)",
          GENERATION: " (the score of a generated answer)"}
# the kind of task lm-eval's usual metrics are scores of, where nothing else tells it
_NAMED_KIND = {"acc": MULTIPLE_CHOICE, "acc_norm": MULTIPLE_CHOICE, "exact_match": GENERATION}
_DIFFER = ("a choice ranked by log-likelihood and a generated answer are scored differently, so the one score does "
           "not estimate the other")


def task_kinds(rm: ResponseMatrix) -> dict[str, str] | None:
    """``{task: "multiple-choice" | "generation"}`` of data read from lm-eval logs (its items' ``n_choices``: 0 for
    generated text), for the tasks whose items are all of one kind; None for data without them (tables, HELM runs).

    Examples
    --------
    >>> from effstats import ResponseMatrix
    >>> rm = ResponseMatrix([[1, 0, 1]], item_ids=["arc/0", "arc/1", "gsm8k/0"],
    ...                     items=pd.DataFrame({"task": ["arc", "arc", "gsm8k"], "n_choices": [4, 4, 0]}))
    >>> task_kinds(rm)
    {'arc': 'multiple-choice', 'gsm8k': 'generation'}
    """
    cols = rm.items.columns
    if "n_choices" not in cols or "task" not in cols or not rm.n_items:
        return None
    choices = pd.Series(rm.items["n_choices"].to_numpy(dtype=float) > 0, index=rm.items["task"].astype(str).to_numpy())
    by_task = choices.groupby(level=0, sort=True)
    every, some = by_task.all(), by_task.any()
    return {str(t): MULTIPLE_CHOICE if every[t] else GENERATION for t in every.index if every[t] or not some[t]}


def _metric_of(metric: Any, task: str) -> Any:
    """The metric a task was read with: one name, or a per-task mapping (its other tasks' under None, written
    ``null`` in a saved record)."""
    if isinstance(metric, dict):
        return metric.get(task, metric.get(None, metric.get("null")))
    return metric


def _refusal(name: str, shown: str, line: int, choices: int, fields: Any, metric: Any, ref_kind: str | None,
             logged: bool) -> str:
    """The one line refusing a new record of another kind (``ref_kind``: the reference's, None where unknown) or
    measure than the reference's, naming the file and line, both kinds and both metrics."""
    # the metrics the record gives (the reader's _record_metrics), whichever refusal it is; a record may log hundreds
    scored = _name_list(map(repr, _plain(list(fields))), 5) or "no metric"
    said = f"{name}: {shown} (line {line}) logs {task_kind(choices)}, scored by {scored}; the reference models' logs "
    if logged:  # the metric read is there, but of the other kind of task
        said += f"are of {_OF_KIND[ref_kind]}, read with {_plain(metric)!r}"
    else:
        said += f"were read with {_plain(metric)!r}{_SCORE.get(ref_kind, '')}, which it does not log"
    new_kind = MULTIPLE_CHOICE if choices > 0 else GENERATION
    if ref_kind is not None and ref_kind != new_kind:
        return f"{said}: {_DIFFER}; run the new model on the task as {_RUN_AS[ref_kind]}, as the reference models were"
    return f"{said}; run the new model on the task as the reference models were (the same task configuration)"


def other_measure(exc: MetricNotLogged, name: str, reference: dict) -> str:
    """The refusal of new lm-eval logs that do not log the metric the reference logs were read with: they log
    another kind of task (generated answers where the reference's were choices ranked by log-likelihood, or the
    reverse) or another task configuration, whose score is not the reference models' score. The reference's kind
    is the one recorded for the task, else the one its metric names (lm-eval's ``acc``, ``acc_norm``: computed from
    the choices' log-likelihoods where not logged; ``exact_match``: a generated answer's)."""
    kinds = reference.get("task_kinds") or {}
    task = getattr(exc, "task", None)
    ref_kind = kinds.get(str(task)) if task is not None else None
    if ref_kind is None:
        ref_kind = _NAMED_KIND.get(exc.metric)
    return _refusal(name, exc.shown, exc.line, exc.choices, exc.fields, exc.metric, ref_kind, False)


def with_task_kinds(reference: dict, rm: ResponseMatrix | None) -> dict:
    """``reference`` (a manifest's or a state's record of the reference data) with each task's kind read from the
    reference data ``rm`` where the record names none, as a record written before the kinds were recorded: new logs
    are then checked as against a record of today. ``reference`` itself where it names them, where ``rm`` is None
    (a run that reads no reference data) or where the data tells no kind (tables, HELM runs)."""
    if "task_kinds" in reference or rm is None or reference.get("layout") != "lm-eval":
        return reference
    kinds = task_kinds(rm)
    return {**reference, "task_kinds": kinds} if kinds else reference


def refuse_other_kind(new: ResponseMatrix, source: Any, reference: dict, name: str = "new_results") -> None:
    """Raise where a task of new lm-eval logs (read with the reference's metric) is of another kind than the
    reference logs recorded for it, in one line naming the file, the line of a record of that kind, both kinds and
    both metrics; nothing where the reference recorded no kinds (tables, HELM runs). Where the reference is lm-eval
    logs whose record names none (written before the kinds were recorded; :func:`with_task_kinds` gives a caller
    that reads the reference data its kinds), a warning saying what to do where the new logs are of another kind
    than the one the reference's metric names (``acc``: multiple-choice, ``exact_match``: generation).

    Raises
    ------
    ValueError
        ``"new_results: org__m/samples_gsm8k_….jsonl (line 1) logs generated text (a generate_until task), scored
        by 'acc', 'exact_match'; the reference models' logs are of a multiple-choice task, read with 'acc': …"``.
    """
    kinds = reference.get("task_kinds")
    got = task_kinds(new) if kinds or reference.get("layout") == "lm-eval" else None
    if not got:
        return
    if not kinds:  # only the metric's name tells the reference's kind: a word where the new logs' kind is another
        for task, kind in got.items():
            metric = _metric_of(reference.get("metric"), task)
            named = _NAMED_KIND.get(metric)
            if named is not None and named != kind:
                warnings.warn(f"{name}: task {_plain(task)!r} logs {_OF_KIND[kind]}, and the reference logs were read "
                              f"with {_plain(metric)!r}{_SCORE[named]}; the reference's record names no task's kind "
                              "(it was written before effstats recorded them), so the two kinds are not compared: if "
                              f"the reference models ran the task as {_RUN_AS[named]}, run the new model on it so; "
                              "start again to have the kinds checked", UserWarning, stacklevel=4)
                return
        return
    for task, kind in got.items():
        want = kinds.get(task)
        if want is None or want == kind:
            continue
        metric = _metric_of(reference.get("metric"), task)
        found = record_of_kind(source, task, kind == MULTIPLE_CHOICE)
        if found is None:  # the file changed since it was read: the kinds alone
            raise ValueError(f"{name}: task {_plain(task)!r} logs {_OF_KIND[kind]}; the reference models' logs are "
                             f"of {_OF_KIND[want]}, read with {_plain(metric)!r}: {_DIFFER}; run the new model on the "
                             f"task as {_RUN_AS[want]}, as the reference models were")
        shown, line, choices, fields = found
        raise ValueError(_refusal(name, shown, line, choices, fields, metric, want, True))
