"""Checks of a new model's results against the items they should answer, for :func:`effstats.workflow.estimate`
and a sequential run's looks: results given transposed, ids that differ from the manifest's only by Unicode
normalisation or by characters that print alike, whole tasks without a result (not run, or every document failed),
0/1 or graded judged on the items read, and graded scores against a reference of 0/1 results. Each says what the
user gave and what to give instead."""
from __future__ import annotations

import unicodedata
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._shared import _name_list, _plain
from .._validation import snap_zero_one_scan
from ..responses import ResponseMatrix
from ._combine import graded_cells
from ._reference_copy import known_ids
from ._names import LM_EVAL_SAMPLES, _lm_eval_comma_note, _tasks_option

if TYPE_CHECKING:
    from ._select import Selection


def _refuse_transposed_results(new: ResponseMatrix, chosen: pd.Index, rm: ResponseMatrix) -> None:
    """Raise when the new results hold items as rows (a transposed table): ids of the manifest's items as models."""
    as_models = new.model_ids.astype(str).intersection(chosen.astype(str))
    as_items = new.item_ids.astype(str).intersection(rm.model_ids.astype(str))
    if len(as_models) or len(as_items):
        shown = (f"its models include the manifest's items {_plain(as_models[:3])}" if len(as_models) else
                 f"its items include the reference models {_plain(as_items[:3])}")
        raise ValueError(f"new_results: looks transposed ({shown}); expected one row per model and one column per "
                         "item (or a long table with columns 'model', 'item' and 'score')")


def _id_hint(new_ids: pd.Index, chosen: pd.Index) -> str:
    """When no result id is a manifest id, how the manifest names its items."""
    if len(new_ids.intersection(chosen)) or not len(chosen) or not len(new_ids):
        return ""
    return f" (the manifest names its items like {_plain(chosen[0])!r}; the results like {_plain(new_ids[0])!r})"


def _form(text: str) -> str:
    """The Unicode normalisation form ``text`` is in (NFC where it is in both, as plain ASCII is)."""
    return next((f for f in ("NFC", "NFD") if unicodedata.is_normalized(f, text)), "neither NFC nor NFD")


def str_id_set(known: Any) -> set[str]:
    """The ids among ``known`` that are strings, as a set: what :func:`refuse_unicode_twins` looks new ids up in."""
    return {i for i in known if isinstance(i, str)}


def refuse_unicode_twins(ids: Any, known: Any, where: str, seen: set[str] | None = None, what: str = "item",
                         name: str = "new_results", one: bool = False) -> None:
    """Raise when ids of the results that are not among ``known`` (the ids of ``where``: the manifest, the run) equal
    one of them but for Unicode normalisation (``'café'`` composed, NFC, or decomposed, NFD, as macOS file names
    and some tokenisers write it): they print alike, so the message shows both as escapes and names the forms.
    ``seen``, when given, is ``str_id_set(known)`` kept by the caller (a run checks every batch against the same
    ids); ``known`` is then read only when some id of the results is not among them. ``what``: the ids' kind in the
    message (``"item"``, ``"model"``); ``name``: the argument that gave ``ids``. With ``one``, ``ids`` is one id the
    user named (``--against``), and the message names the id of ``where`` to give instead (``what``: its kind,
    ``"reference model"``)."""
    if seen is None:
        seen = str_id_set(known)
    strange = [i for i in dict.fromkeys(ids) if isinstance(i, str) and i not in seen]
    if not strange or not seen:
        return
    known = [i for i in known if isinstance(i, str)]
    if unicodedata.is_normalized("NFC", "\n".join(strange)) and unicodedata.is_normalized("NFC", "\n".join(known)):
        return  # distinct ids in NFC stay distinct in NFC: no twin (the common case, checked without a loop)
    nfc = {unicodedata.normalize("NFC", i): i for i in known}
    twins = [(i, nfc[unicodedata.normalize("NFC", i)]) for i in strange if unicodedata.normalize("NFC", i) in nfc]
    if twins:
        theirs, ours = twins[0]
        if one:
            raise ValueError(f"{name}: no {what} {_plain(theirs)!r} (written {ascii(_plain(theirs))}); the {what} "
                             f"{_plain(ours)!r} (written {ascii(_plain(ours))}) differs from it only by Unicode "
                             "normalisation: give that one")
        raise ValueError(f"{name}: {len(twins)} {what} id(s) differ from {where}'s only by Unicode normalisation, "
                         f"e.g. {_plain(theirs)!r}, written {ascii(_plain(theirs))} ({_form(theirs)}), is "
                         f"{_plain(ours)!r} in {where}, written {ascii(_plain(ours))} ({_form(ours)}); normalise "
                         f"the results' ids with unicodedata.normalize({_form(ours)!r}, id)")


# characters that print like "/" (Unicode's confusables of U+002F that NFKC keeps apart): a result id written
# with one of them is a different id that looks the same
_SLASHES = dict.fromkeys(map(ord, "\u1735\u2041\u2044\u2215\u2571\u27cb\u29f8\u2cc6\u3033\u30ce\u31d3\u4e3f"), "/")


def _lookalike_key(text: str) -> str:
    """``text`` in NFKC without format characters (Unicode category Cf: zero-width spaces and joiners, a byte
    order mark, direction marks) and with every look-alike slash written ``/``: two ids with one key print alike."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if unicodedata.category(c) != "Cf").translate(_SLASHES)


def lookalike_note(lacking: Any, ids: Any, known: Any, where: str = "the manifest") -> str:
    """Where items of ``lacking`` (chosen items without a result) have a result under an id of ``ids`` (the
    results') that is not among ``known`` (the ids of the benchmark, of ``where``) but prints alike
    (:func:`_lookalike_key`), a clause naming the first such pair, both escaped; else ``""``. A result under such
    an id reads as a missing one, while the model did answer."""
    want: dict[str, str] = {}
    for i in lacking:
        if isinstance(i, str):
            want.setdefault(_lookalike_key(i), i)
    known = known if isinstance(known, (set, frozenset, dict)) else set(known)
    pairs = [(want[k], i) for i in dict.fromkeys(ids)
             if isinstance(i, str) and i not in known and (k := _lookalike_key(i)) in want]
    if not pairs:
        return ""
    ours, theirs = pairs[0]
    return (f"; the results hold {len(pairs)} of them under an id that prints alike but differs in invisible or "
            f"look-alike characters, e.g. {_plain(ours)!r}, written {ascii(_plain(ours))}, as {_plain(theirs)!r}, "
            f"written {ascii(_plain(theirs))}: write the results' ids as {where} does")


def tasks_without_results(items: Any, tasks: Any, answered: Any) -> dict[str, int]:
    """The tasks none of whose ``items`` (of the parallel ``tasks``) is in ``answered``, with their numbers of items.

    A harness run that skipped a task, or lost its output file, leaves a whole task of a batch or a selection
    without results; callers name those tasks rather than the items.
    """
    got = set(map(str, answered))
    size: dict[str, int] = {}
    seen: set[str] = set()
    for i, t in zip(map(str, items), map(str, tasks)):
        size[t] = size.get(t, 0) + 1
        if i in got:
            seen.add(t)
    return {t: n for t, n in size.items() if t not in seen}


def zero_one_where_read(new: ResponseMatrix) -> ResponseMatrix:
    """``new`` (cut down to the items and models a look or an estimate reads) with each model's results snapped to 0
    and 1 where all its cells there are 0/1 up to floating-point noise, as a reading of that model's cells alone
    snaps them; 0/1 results when every model's are.

    A reading snaps 0/1 results off by noise (1 - 1e-12) only when no value of the whole table is graded, so a
    graded score on an item left out (``restrict_to_manifest``, a task not scored) or of another model would leave
    the noise on a model's cells and make them graded: a model's estimate must be the one its results on the items
    read give alone.
    """
    if new.kind == "binary":
        return new
    vals = np.where(new.observed, np.asarray(new.values, float), np.nan)
    snapped, rows = vals.copy(), np.zeros(len(vals), bool)
    for i, row in enumerate(vals):  # each model's cells alone, as a reading of them snaps them
        snapped[i], rows[i] = snap_zero_one_scan(row, allow_nan=True)
    if not rows.any() or not rows.all() and np.array_equal(snapped, vals, equal_nan=True):
        return new
    with known_ids():  # the results' ids were warned about when read
        return ResponseMatrix(np.where(new.observed, snapped, 0.0), kind="binary" if rows.all() else "score",
                              missing=new.missing, probabilities=new.probabilities, labels=new.labels,
                              predictions=new.predictions, model_ids=new.model_ids, item_ids=new.item_ids,
                              models=new.models, items=new.items)


def warn_graded_against_binary(models: Any, items: Any, values: np.ndarray, stacklevel: int = 3) -> bool:
    """Warn, naming the first model and one of its scores, when ``values`` (models x items, NaN where missing) hold
    graded scores while the reference's results are 0/1; whether it warned. They are estimated as graded scores
    (a mean score), ranked beside accuracies, which is right for the mean of repeated 0/1 runs and wrong for another
    metric."""
    vals = np.asarray(values, float)
    graded = graded_cells(vals)
    if not graded.any():
        return False
    i, j = np.argwhere(graded)[0]
    who = [str(m) for m in np.asarray(models, dtype=object)[graded.any(axis=1)]]
    also = f" (and {len(who) - 1} other model(s))" if len(who) > 1 else ""
    warnings.warn(f"new_results: model {who[0]!r}{also} has graded scores (e.g. {vals[i, j]:g} on item "
                  f"{_plain(np.asarray(items, dtype=object)[j])!r}) while the reference's results are 0/1: they are "
                  "estimated as graded scores and compared with the reference models' accuracies; give 0/1 results "
                  "with the reference's metric unless the scores are meant as graded", UserWarning,
                  stacklevel=stacklevel)
    return True


def refuse_batch_without_tasks(model: str, batch: Any, tasks: Any, answered: Any, failed: Any = ()) -> None:
    """Raise, naming the tasks, when ``model``'s results (``answered``: the item ids it has a result on) lack a whole
    task of a sequential run's ``batch`` (item ids, with their parallel ``tasks``).

    A look needs every item handed out (the batch is a random sample of the whole benchmark; leaving a task out
    would change what the test is about), and the task, not its items, is what the user left out. When no task of
    the batch is answered at all the results are another batch's or another run's, which the caller says.
    ``failed``: the tasks whose documents ``model`` logged as NaN (run, but failed).
    """
    absent = tasks_without_results(batch, tasks, answered)
    if not absent or len(absent) == len(set(map(str, tasks))):
        return
    shown = ", ".join(f"{t!r} ({k} item{'s' if k > 1 else ''})" for t, k in absent.items())
    why = ("the task was run, but every document of the batch failed (logged its metric as NaN)"
           if set(absent) <= set(map(str, failed)) else "the task was not run or its output file is missing")
    raise ValueError(f"new_results: no result of {model!r} on the task(s) {shown} of this batch of {len(batch)} "
                     f"items: {why}; a look needs every item of the "
                     "batch (a random sample of the whole benchmark): run the batch's whole --samples file, every "
                     "task in it")


def _refuse_missing_tasks(new: ResponseMatrix, fits: dict, sel: "Selection", chose: bool,
                          failed: dict | None = None) -> None:
    """Raise, naming them, when a new model has no result on any chosen item of a whole task of the manifest
    (``failed``: the number of documents each (model, task) logged as NaN, which tells a failed task from one not
    run)."""
    have = pd.DataFrame(new.observed, index=new.model_ids, columns=new.item_ids)
    absent = {}  # task -> the new models without any result on it
    for t, f in fits.items():
        cols = f.items.intersection(have.columns)
        got = have[cols].any(axis=1) if len(cols) else pd.Series(False, index=have.index)
        if not got.all():
            absent[t] = list(have.index[~got.to_numpy()])
    if not absent:
        return
    present = [t for t in fits if t not in absent]
    if all(len(m) == new.n_models for m in absent.values()):
        n = sum(len(fits[t].items) for t in absent)
        head = f"no result on any chosen item of the task(s) {', '.join(map(repr, absent))} ({n} items)"
    else:
        head = "no result on any chosen item of " + "; ".join(
            f"task {t!r} for model(s) {', '.join(map(repr, m[:3]))}{' …' if len(m) > 3 else ''}"
            for t, m in absent.items())
    run = ""
    if sel.lm_eval_samples is not None:
        note = _lm_eval_comma_note(absent)
        run = (f" (lm_eval --tasks {','.join(absent)} --samples <manifest dir>/{LM_EVAL_SAMPLES} ..."
               + (f"; {note}" if note else "") + ")")
    instead = (f", or score on the tasks present only with tasks={present} (--tasks {_tasks_option(present)}; the "
               "estimate and the rank then cover those tasks only)" if present and not chose else "")
    ran = [t for t, m in absent.items() if all((failed or {}).get((str(x), t)) for x in m)]
    if not ran:
        why = "the task was not run or its output file is missing"
    elif len(ran) == len(absent):
        why = "the task was run, but every chosen document failed (logged its metric as NaN)"
    else:
        why = (f"{', '.join(map(repr, ran))} ran, but every chosen document failed (logged its metric as NaN); the "
               "other task(s) were not run or their output file is missing")
    raise ValueError(f"new_results: {head}: {why}, and the score needs every task it covers: run the "
                     f"{'failed' if len(ran) == len(absent) else 'missing'} task(s){run}{instead}")


def models_named(ids: Any, models: Any, name: str = "models", without_samples: Any = ()) -> list[str]:
    """The ids among ``ids`` (the models of the new results) that ``models`` names (one name, or several), in the
    order given, or, for a set (which has no order), in the order of ``ids``; a name not among them is refused: one
    of ``without_samples`` (lm-eval runs without ``--log_samples``) saying so, another naming the id that differs
    from it only by Unicode normalisation, by letter case or by HELM's ``org_name`` for ``org/name``, else the first
    few ids."""
    if isinstance(models, np.ndarray) and models.ndim == 0:  # np.array('org/new'): the one name it holds
        models = models[()]
    wanted = [models] if isinstance(models, str) else models
    if isinstance(wanted, (bytes, dict)) or not hasattr(wanted, "__iter__"):
        raise ValueError(f"{name}: expected model names of new_results, got {type(models).__name__}")
    wanted = list(dict.fromkeys(map(str, wanted)))
    have = [str(i) for i in ids]
    if isinstance(models, (set, frozenset)):  # a set iterates in its hashes' order, another in each process
        at = {m: k for k, m in enumerate(have)}
        wanted = sorted(wanted, key=lambda w: (0, at[w], "") if w in at else (1, 0, w))  # unknown names: by name
    if not wanted:
        raise ValueError(f"{name}: none given; name models of new_results ({_name_list(map(repr, _plain(have)), 5)})")
    for w in wanted:
        if w in have:
            continue
        if w in set(map(str, without_samples)):  # named, so wanted: an estimate without it is not what was asked
            raise ValueError(f"{name}: {_plain(w)!r} has an lm-eval results_*.json but no samples_*.jsonl in "
                             "new_results (a run without --log_samples logs no per-document result): rerun lm_eval "
                             "with --log_samples")
        refuse_unicode_twins([w], have, "new_results", what="model", name=name, one=True)
        close = [_plain(m) for m in have if w.lower() in (m.lower(), m.replace("/", "_").lower())
                 or _lookalike_key(w) == _lookalike_key(m)]  # letter case, HELM's folder name, invisible characters
        close = close or [_plain(m) for m in have if w.strip() and w.lower() in m.lower()][:5]  # '' is in every name
        hint = f"; did you mean {close}?" if close else f" (its models: {_name_list(map(repr, _plain(have)), 5)})"
        raise ValueError(f"{name}: no model {_plain(w)!r} in new_results{hint}")
    return wanted


def reference_models_advice(given: Any, twins: Any, option: str = "models") -> str:
    """The advice of the refusal of new results holding models of the reference data (``twins``, among the
    ``given`` models): with models that are not reference models beside them (a HELM suite or lm-eval output
    folder holding the reference runs and the new model's), how to score those; else how to score a known
    model."""
    twins = set(map(str, twins))
    others = [str(m) for m in given if str(m) not in twins]
    if others:
        return (f"; score the other model{'s' if len(others) > 1 else ''} with {option}="
                f"{[_plain(m) for m in others[:5]]}{' …' if len(others) > 5 else ''}")
    return ("; to check the loop on a known model, select again from reference data without it; to score a new run "
            "of it, give the run another name (it is then ranked beside its reference row)")


def empty_log_advice(exc: Exception, tasks: Any, chose: bool) -> str:
    """The refusal of an empty samples file (``exc``, an :class:`~effstats.datasets._lm_eval_records.EmptySamplesFile`
    of one of the manifest's ``tasks``) with the advice a missing task's gets: run the task again, or (unless the
    tasks were ``chose``n) leave the file out and score on the other tasks only."""
    task = str(exc.task)
    present = [str(t) for t in tasks if str(t) != task]
    instead = (f", or move the empty file away and score on the other tasks only with tasks={present} (--tasks "
               f"{_tasks_option(present)}; the estimate and the rank then cover those tasks only)"
               if present and not chose else "")
    return (f"{exc} (a run stopped before it logged a document?): run the task again (lm_eval --tasks {task} "
            f"--samples <manifest dir>/{LM_EVAL_SAMPLES} ...){instead}")
