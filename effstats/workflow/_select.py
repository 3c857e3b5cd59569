"""Choose items and write the harness's manifest: :func:`select` and its :class:`Selection`."""
from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._escape import html_safe, html_text, line_text
from .._response_meta import twin_note
from .._shared import _name_list, _plain, _progress
from .._shared import swap_files
from .._validation import _number, check_positive_int
from ..responses import ResponseMatrix
from ._combine import _combine, _task_weights
from ._provenance import lm_eval_provenance
from ._task_kinds import task_kinds
from ..datasets._lm_eval_files import noting_results_without_samples
from ._io import (HELM_DEFAULTS, IN_MEMORY, check_path, default_metric, detect_format, helm_options, json_text,
                  output_dir, read_results, read_saved)
from ._names import HELM_INSTANCES, LM_EVAL_SAMPLES, MANIFEST, METHODS, WEIGHTS, _tasks_option
from ._reference_copy import REFERENCE_CACHE, cells_digest, content_hash, kept_reference, stage_reference
from ._tasks import (_FORMAT, _TaskFit, _task_seed, _version, _warn_models_missing_tasks, allocate_budget,
                     check_task_keys, comma_hint, item_tasks, samples_by_task)

__all__ = ["Selection", "neyman_shares", "select"]

# --------------------------------------------------------------------------------------------------- selection
@dataclass
class Selection:
    """The items chosen for a new model, with everything needed to estimate from them later.

    Made by :func:`select`; :meth:`save` writes ``manifest.json`` and lm-evaluation-harness's ``--samples`` file,
    :meth:`load` reads them back.

    Parameters
    ----------
    items : Index
        Ids of the chosen items, tasks in name order.
    tasks : DataFrame
        One row per task: ``n_items``, ``budget`` (items allotted there), ``n_chosen`` (distinct items chosen
        there: fewer than ``budget`` where an anchor-point method's cluster centres share a nearest item, see
        :attr:`shortfall`) and ``method`` (the method used there; ``"all"`` where every item is chosen, the
        chooser's pick under ``"auto"``).
    method : str
        The method asked for (one of :data:`effstats.workflow.METHODS`).
    budget : int
        Items asked for, all tasks together.
    seed : int
        The seed of the random choices.
    reference : dict
        Where the reference data came from, how it was read, its shape and SHA-256 content hash.
    item_info : DataFrame
        Per item, indexed by item id: its ``task`` and ``doc_id`` (the document number the harness's files use).
    budget_curve : DataFrame or None, default=None
        Cross-validated error by budget, when the budget came from a target error.
    created : str, default=""
        When the selection was made (ISO 8601, UTC).
    effstats_version : str, default=""
        The effstats that made it.
    helm_instances : dict or None, default=None
        For HELM runs, the chosen instance ids per run spec (``helm_instances.json``).
    new_results_note : str or None, default=None
        The tasks whose pick compares the new model's class probabilities or predicted classes on the chosen items
        (DISCO's signature, e.g. ``"auto"``'s pick): :func:`estimate` needs the new model's lm-eval logs (or a
        ResponseMatrix carrying them) there, not 0/1 results. None when 0/1 results do everywhere.
    task_seeds : {"by-name", "shared"}, default="by-name"
        How the tasks' random choices were seeded: ``"by-name"``, each task from its own stream derived from
        ``seed`` and its name (what :func:`select` does); ``"shared"``, every task with ``seed`` itself, as
        manifests without this field were made, so that :func:`estimate` refits them as they were chosen.
    weights : {"items", "tasks"}, default="items"
        The whole-benchmark score the budget was split over the tasks for (:func:`select`'s ``weights``); the
        default of :func:`estimate`'s. Manifests without this field were made for ``"items"``.

    Attributes
    ----------
    shortfall : str or None
        Why fewer items than the budget were chosen, naming the tasks (None when the budget was met).

    See Also
    --------
    effstats.workflow.select : makes it.
    effstats.workflow.estimate : estimates a new model from its results on the chosen items.

    Examples
    --------
    >>> import tempfile
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.workflow import Selection, select
    >>> sel = select(simulate_responses(30, 600, rng=0), 60, seed=1)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = sel.save(d)
    ...     again = Selection.load(d)
    >>> again, again.items.equals(sel.items)
    (Selection(60 of 600 items, method='stratified-aipw', 1 task(s), seed=1), True)
    """

    items: pd.Index
    tasks: pd.DataFrame
    method: str
    budget: int
    seed: int
    reference: dict
    item_info: pd.DataFrame = field(repr=False)
    budget_curve: pd.DataFrame | None = None
    created: str = ""
    effstats_version: str = ""
    helm_instances: dict | None = field(default=None, repr=False)
    # which tasks' estimates need the new model's class probabilities or predicted classes (None: 0/1 results do)
    new_results_note: str | None = field(default=None, repr=False)
    task_seeds: str = field(default="by-name", repr=False)
    weights: str = field(default="items", repr=False)
    _fits: dict | None = field(default=None, repr=False)
    _reference: ResponseMatrix | None = field(default=None, repr=False)
    _directory: Path | None = field(default=None, repr=False, compare=False)  # where it was loaded from

    def __repr__(self) -> str:
        return (f"Selection({len(self.items)} of {self.reference['n_items']} items, method={self.method!r}, "
                f"{len(self.tasks)} task(s), seed={self.seed})")

    @property
    def shortfall(self) -> str | None:
        """Why fewer items than the budget were chosen, naming the tasks (None when the budget was met)."""
        got = self.item_info["task"].reindex(self.items).astype(str).value_counts()
        short = [(str(t), int(got.get(str(t), 0)), int(b)) for t, b in self.tasks["budget"].items()
                 if int(got.get(str(t), 0)) < int(b)]
        if not short:
            return None
        methods = self.tasks["method"].astype(str)
        anchors = all("anchor" in methods[t] for t, _, _ in short)
        why = ("an anchor-point method takes the item nearest each of its budget's cluster centres over the items "
               "(embedded by the reference models' results), and some centres share a nearest item: items the "
               "reference models answer alike are one point" if anchors else
               "the method chose fewer distinct items than allotted")
        per = ", ".join(f"{line_text(str(t))}: {n} of {b} ({methods[t]})" for t, n, b in short)
        return (f"{len(self.items)} of the budget's {self.budget} items: {why} ({per}); the estimate uses the "
                "items chosen")

    @property
    def lm_eval_samples(self) -> dict[str, list[int]] | None:
        """``{task: [doc_id, ...]}`` for ``lm_eval --samples``, or None when the items are not lm-eval documents
        (HELM instances among them, whose ids may end in a number: ``helm_instances`` lists those)."""
        if self.helm_instances is not None:
            return None
        info = self.item_info.reindex(self.items)
        return samples_by_task(info["task"], info["doc_id"])

    def to_frame(self) -> pd.DataFrame:
        """The chosen items.

        Returns
        -------
        DataFrame
            Indexed by item id, columns ``task`` and ``doc_id`` (-1 where the id names no lm-eval document).
        """
        return self.item_info.reindex(self.items).copy()

    def to_dict(self) -> dict:
        """The manifest as written to ``manifest.json`` (plain JSON types).

        Returns
        -------
        dict
            The manifest's fields (``format``, ``effstats_version``, ``created``, ``method``, ``budget``, ``seed``,
            ``reference``, ``tasks``, ``items``, ...), which :meth:`load` reads back.
        """
        return {
            "format": _FORMAT,
            "effstats_version": self.effstats_version,
            "created": self.created,
            "method": self.method,
            "budget": self.budget,
            "seed": self.seed,
            "reference": self.reference,
            "tasks": {t: {k: (int(v) if isinstance(v, (int, np.integer)) else v) for k, v in row.items()}
                      for t, row in self.tasks.to_dict("index").items()},
            "items": [str(i) for i in self.items],
            "item_tasks": [str(t) for t in self.item_info["task"].reindex(self.items)],
            "doc_ids": [int(d) for d in self.item_info["doc_id"].reindex(self.items)],
            "lm_eval_samples": self.lm_eval_samples,
            "helm_instances": self.helm_instances,
            "budget_curve": None if self.budget_curve is None else self.budget_curve.to_dict("records"),
            "shortfall": self.shortfall,
            "new_results_note": self.new_results_note,
            "task_seeds": self.task_seeds,
            "weights": self.weights,
        }

    def save(self, directory: str | Path) -> Path:
        """Write ``manifest.json`` and (for lm-eval documents) ``lm_eval_samples.json`` or (for HELM runs)
        ``helm_instances.json``, ``{run spec: [instance id, ...]}``, into ``directory``.

        Items are lm-eval documents when read from lm-eval logs, or from a table whose item ids read
        ``<task>/<doc_id>``. Where the selection holds the reference data, a compact copy of it,
        ``reference.npz``, is written too when it gives the data back exactly: a refit reads it instead of the
        reference files.

        Parameters
        ----------
        directory : path
            Created if needed; each file is written to a temporary file and renamed, so an interrupted save leaves
            the previous files whole.

        Returns
        -------
        Path
            The manifest's path.
        """
        return self._save(directory)

    def _save(self, directory: str | Path, replaced: list[str] | None = None) -> Path:
        """:meth:`save`; ``replaced``: the files (relative to the folder) of the selection this one replaces
        (``select --force``), removed as this one's are put in place."""
        d = output_dir(directory)
        samples = self.lm_eval_samples
        # the files this selection owns: replacing it (select --force) removes these and nothing else
        # a refit reads the copy of the reference data rather than the reference files again: written first, once,
        # to a temporary file beside its place (it may be large)
        copy = None if self._reference is None else stage_reference(d / REFERENCE_CACHE, self._reference,
                                                                    self.reference["sha256"])
        # then the files the harness reads; all are put in place together with the manifest (last), with the
        # replaced selection's files this one does not write removed: a kill leaves the previous selection whole or,
        # once the next command has completed the swap, this one
        writes = [(d / REFERENCE_CACHE, copy)] if copy is not None else []
        writes += [(d / name, json_text(doc)) for name, doc in (
            (LM_EVAL_SAMPLES, samples), (HELM_INSTANCES, self.helm_instances)) if doc is not None]
        files = [str(path.relative_to(d)) for path, _ in writes] + [MANIFEST]
        swap_files(d, writes + [(d / MANIFEST, json_text({**self.to_dict(), "files": files}))],
                   [f for f in replaced or () if f not in files])
        return d / MANIFEST

    @classmethod
    def load(cls, directory: str | Path) -> "Selection":
        """Read a selection saved by :meth:`save`.

        Parameters
        ----------
        directory : path
            The folder holding ``manifest.json``, or the file itself.

        Returns
        -------
        Selection
            Without the fitted estimators: :func:`estimate` refits them from the reference data, checked against the
            manifest's content hash.
        """
        from ._files import recover_unlocked, run_folder

        # a replacement (select --force) or an estimate a kill cut short: completed before the manifest is read,
        # so that the clean-up of stale temporary files never takes a file the swap still has to put in place
        recover_unlocked(run_folder(check_path(directory, "directory"), MANIFEST))
        p, m = read_saved(directory, MANIFEST, _FORMAT, "manifest")
        task_seeds = m.get("task_seeds", "shared")  # manifests without the field seeded every task alike
        if task_seeds not in _TASK_SEEDS:
            raise ValueError(f"directory: {p} is a damaged manifest (task_seeds {task_seeds!r}, expected one of "
                             f"{', '.join(map(repr, _TASK_SEEDS))})")
        weights = m.get("weights", "items")  # manifests without the field split their budget by task sizes
        if weights not in WEIGHTS:
            raise ValueError(f"directory: {p} is a damaged manifest (weights {_plain(weights)!r}, expected one of "
                             f"{', '.join(map(repr, WEIGHTS))})")
        try:
            items = pd.Index(m["items"], name="item")
            tasks = pd.DataFrame.from_dict(m["tasks"], orient="index")
            tasks.index.name = "task"
            return cls(items=items, tasks=tasks, method=m["method"], budget=int(m["budget"]), seed=int(m["seed"]),
                       reference=m["reference"],
                       item_info=pd.DataFrame({"task": m["item_tasks"], "doc_id": np.asarray(m["doc_ids"], np.int64)},
                                              index=items),
                       budget_curve=None if m.get("budget_curve") is None else pd.DataFrame(m["budget_curve"]),
                       created=m.get("created", ""), effstats_version=m.get("effstats_version", ""),
                       helm_instances=m.get("helm_instances"), new_results_note=m.get("new_results_note"),
                       task_seeds=task_seeds, weights=weights, _directory=p if p.is_dir() else p.parent)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"directory: {p} is an incomplete or damaged manifest "
                             f"({type(exc).__name__}: {exc})") from None

    def _repr_html_(self) -> str:
        head = (f"<p><b>{len(self.items)}</b> of {self.reference['n_items']:,} items chosen by "
                f"<code>{html_text(self.method)}</code> (seed {self.seed}) from {self.reference['n_models']} reference "
                "models.</p>")
        note = "" if self.new_results_note is None else f"<p>{html_text(self.new_results_note)}</p>"
        return head + html_safe(self.tasks).to_html() + note


def _reference_info(rm: ResponseMatrix, source: Any, fmt: str, metric: Any, filter: Any = None,
                    duplicates: str = "last", helm: dict | None = None) -> dict:
    src = None if isinstance(source, IN_MEMORY) else str(Path(source).expanduser().resolve())
    n_missing = 0 if rm.missing is None else int(rm.missing.sum())
    layout = detect_format(source) if fmt == "auto" else fmt
    out = {"source": src, "format": fmt, "layout": layout, "metric": metric or default_metric(layout),
           "filter": filter, "duplicates": duplicates, "sha256": content_hash(rm), "n_models": rm.n_models,
           "n_items": rm.n_items, "n_missing": n_missing, "kind": rm.kind}
    if layout == "helm":  # how the runs were read, so that the new model's runs are read alike
        out["helm"] = helm or dict(HELM_DEFAULTS)
    kinds = task_kinds(rm) if layout == "lm-eval" else None
    if kinds:  # a new model's logs of another kind of task are refused, whatever metrics they log
        out["task_kinds"] = kinds
    cells = cells_digest(rm)
    if cells is not None:  # the class probabilities a refit reads, which the content hash does not cover
        out["arrays_sha256"] = cells
    return out


def _with_provenance(info: dict, rm: ResponseMatrix, items: Any = None, hashes: bool = True) -> dict:
    """``info`` with the lm-eval logs' record of ``items`` (:func:`lm_eval_provenance`) where they log one."""
    got = lm_eval_provenance(rm, items, hashes)
    return info if got is None else {**info, "lm_eval": got}


def helm_instances(rm: ResponseMatrix, items: Any) -> dict[str, list[str]] | None:
    """``{run spec (the run name without its model): [instance id, ...]}`` of ``items``, for HELM runs (items with
    ``task`` and ``instance_id`` columns); None for other data. Instances are listed once (also when each train trial
    is an item) in their order in ``items``."""
    if not {"task", "instance_id"} <= set(rm.items.columns):
        return None
    info = rm.items.reindex(pd.Index(items))
    out: dict[str, dict[str, None]] = {}
    for t, i in zip(info["task"].astype(str), info["instance_id"].astype(str)):
        out.setdefault(t, {})[i] = None
    return {t: list(out[t]) for t in sorted(out)}


def _fit_tasks(rm: ResponseMatrix, tasks: pd.Series, alloc: pd.Series, method: str, seed: int,
               chosen: pd.Series | None = None, progress: bool = False, task_seeds: str = "by-name"
               ) -> dict[str, _TaskFit]:
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        fits = _fit_each_task(rm, tasks, alloc, method, seed, chosen, progress, task_seeds)
    missing: dict[str, tuple[int, int, str]] = {}  # the estimators' missing-cells warning, one per task
    for w in said:
        m = _MISSING_CELLS.match(str(w.message))
        if m is None or not issubclass(w.category, UserWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            continue
        missing.setdefault(getattr(w.message, "_task", "?"), (int(m["n"]), int(m["of"]), m["what"]))
    if missing:
        warnings.warn(f"reference: {sum(v[0] for v in missing.values())} of {rm.n_models * rm.n_items} cells are "
                      f"missing ({_missing_by_task(rm, tasks, missing)}); items are chosen and models compared on the "
                      "observed cells, and a reference model's whole-benchmark score is the task-weighted sum of its "
                      "mean over each task's items it has results on (its standard error counts the items it lacks)",
                      UserWarning, stacklevel=3)
    return fits


def _missing_by_task(rm: ResponseMatrix, tasks: pd.Series, missing: dict) -> str:
    """``task 'a' 1500 of 120000: model 'm' 500 of 2000 items, ...`` for the tasks of ``missing`` ({task: (cells
    missing, cells, ...)}): the models run on part of each task's items, with how many they have."""
    codes, obs = tasks.astype(str).to_numpy(), rm.observed
    parts = []
    for t, (n, of, _) in missing.items():
        cols = codes == t
        have = obs[:, cols].sum(1)
        part = np.flatnonzero((have > 0) & (have < cols.sum()))
        who = _name_list([f"model {_plain(rm.model_ids[i])!r} {int(have[i])} of {int(cols.sum())} items"
                          for i in part], 3, "and {} more models")
        parts.append(f"task {t!r} {n} of {of}" + (f": {who}" if who else ""))
    return "; ".join(parts)


_TASK_SEEDS = ("by-name", "shared")
_MISSING_CELLS = re.compile(r"^\w+: (?P<n>\d+) of (?P<of>\d+) cells are missing; (?P<what>.*)$", re.S)


def _fit_each_task(rm: ResponseMatrix, tasks: pd.Series, alloc: pd.Series, method: str, seed: int,
                   chosen: pd.Series | None, progress: bool, task_seeds: str = "by-name") -> dict[str, _TaskFit]:
    fits = {}
    for t, b in _progress(progress, iterable=alloc.items(), total=len(alloc), desc=f"fitting {method}",
                          unit="task"):
        sub = rm._take(items=np.flatnonzero(tasks.to_numpy() == t))
        answered = sub.observed.any(1)
        if answered.sum() < 3:
            raise ValueError(f"reference: only {int(answered.sum())} reference model(s) have results in task {t!r}; "
                             "at least 3 are needed")
        if method == "auto" and chosen is None and answered.sum() < _AUTO_MIN_MODELS:
            raise ValueError(_auto_too_few(int(answered.sum()), f" with results in task {t!r}"))
        if not answered.all():  # a model not run on this task says nothing about its items
            sub = sub._take(models=np.flatnonzero(answered))
        pick = None if chosen is None or method != "auto" or chosen[t] == "all" else str(chosen[t])
        how = method
        seen = sub.values[sub.observed]
        if method not in ("sortsearch", "random") and b < sub.n_items and seen.size and (seen == seen[0]).all():
            # a saturated task (every reference model right, or wrong, on every item) gives the methods that choose
            # or learn by differences between the references nothing to work with; random items and their plain
            # mean stay design-unbiased, and the refit of estimate decides the same way from the same data
            warnings.warn(f"reference: every reference model scores {float(seen[0]):g} on every item of task {t!r}; "
                          f"its {int(b)} items are drawn at random and scored by their plain mean ('random') there",
                          UserWarning, stacklevel=3)
            how, pick = "random", None
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            fits[t] = _TaskFit.fit(how, sub, int(b), _task_seed(seed, t) if task_seeds == "by-name" else seed, pick)
        for w in said:  # tagged with the task, for the one warning _fit_tasks gives
            w.message._task = str(t)
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return fits


# "auto" compares its candidates by cross-validation over the reference models, and a candidate's ridge penalty is
# itself chosen by cross-validation over the models of each training fold: 3 of them, hence 4 reference models
_AUTO_MIN_MODELS = 4


def _auto_too_few(n: int, where: str = "") -> str:
    return (f"method: 'auto' chooses its method by cross-validation over the reference models and needs at least "
            f"{_AUTO_MIN_MODELS} reference models{where}, got {n}: add reference models, or choose a method that "
            "needs 3 (e.g. sortsearch)")


def _fold_min_models(need: int, n_splits: int = 5) -> int:
    """The fewest models whose every training fold, in ``min(n_splits, models)``-fold cross-validation, holds
    ``need`` of them."""
    m = need
    while m - math.ceil(m / min(n_splits, m)) < need:
        m += 1
    return m


def _method_needs(method: str) -> tuple[int, str] | None:
    """The reference models a method's fit needs, and why (None: the 3 every method needs)."""
    if method == "mrmr":
        from ..disco import MRMR

        k = MRMR(1).get_params()["n_neighbors"]
        return k + 2, f"its relevance estimate compares each model with its {k} nearest neighbours among them"
    if method == "random-learn":
        return 3, "its regression's penalty is chosen by cross-validation over them"
    return None


def _refuse_too_few_for_method(rm: ResponseMatrix, tasks: pd.Series, method: str, search: bool = False) -> None:
    """Refuse, before fitting, a method whose fit needs more reference models with results in a task than there
    are, counting the training folds of the cross-validation its interval runs over them (``_TaskFit.predict``'s,
    5-fold): the fit would pass and :func:`estimate` fail. ``search``: the budget search for a target error, which
    cross-validates the estimate over them (``_cv_error``, 5-fold), so that each training fold needs as many."""
    needs = _method_needs("stratified-aipw" if method == "auto" else method)
    fit, why = needs if needs is not None else (3, "")
    need = _fold_min_models(fit) if needs is not None else fit
    codes = tasks.to_numpy()
    several = len(pd.unique(codes)) > 1
    for t in pd.unique(codes):
        n = int(rm.observed[:, codes == t].any(1).sum())
        where = f" with results in task {t!r}" if several else ""
        if n == 0 and several:  # no method helps: the task has no data
            others = [str(u) for u in pd.unique(codes) if u != t]
            raise ValueError(f"reference: no reference model has a result in task {t!r} (every score of its "
                             f"{int((codes == t).sum())} items is missing): leave it out with tasks={others} "
                             f"(--tasks {_tasks_option(others)}) or give its results")
        if n < need and needs is None:  # every method needs as many
            raise ValueError(f"method: {method!r} needs at least {need} reference models{where}, got {n}, as every "
                             "method does: add reference models")
        if n < need:
            raise ValueError(f"method: {method!r} needs at least {need} reference models{where}, got {n} (its fit "
                             f"needs {fit}: {why}; its interval refits it on each cross-validation fold of the "
                             "reference models): add reference models, or choose another method (e.g. "
                             "stratified-aipw, the default)")
        if search and n < _fold_min_models(need):
            raise ValueError(f"target_error: the budget search cross-validates the estimate of method {method!r} over "
                             f"the reference models and needs at least {_fold_min_models(need)} of them{where} (each "
                             f"training fold needs {need}), got {n}: add reference models, give a budget instead, or "
                             "choose another method")


def _refuse_unestimable(fits: dict[str, _TaskFit], method: str) -> None:
    """Run now the cross-validation over the reference models that a model-based interval needs (cached: an
    estimate from this selection reuses it), and refuse the selection when it fails: :func:`estimate` would."""
    for t, f in fits.items():
        est = f.est
        if f.method in ("all", "auto") or not hasattr(est, "cv_residuals") or est.interval_kind == "design":
            continue
        try:
            est.cv_residuals(5)  # the folds of _TaskFit.predict's predict_interval
        except ValueError as exc:
            why = str(exc).split(": ", 1)[-1].replace("source model", "reference model")
            where = f" in task {t!r}" if len(fits) > 1 else ""
            raise ValueError(f"method: {method!r} could not estimate a new model from these reference models{where}: "
                             "its interval refits it on cross-validation folds of them, and on one fold "
                             f"{why}: add reference models, raise the budget, or choose another method (e.g. "
                             "stratified-aipw, the default)") from None


def _observed_scores(rm: ResponseMatrix, tasks: pd.Series, weights: str = "items") -> tuple[np.ndarray, np.ndarray]:
    """Each model's whole-benchmark score from its observed items: the task-weighted sum of its mean in each task,
    and the finite-population standard error of that sum (0 for a model with every item). A model with no item of
    some task has no whole-benchmark score: NaN."""
    v, obs = rm.values_with_nan(), rm.observed
    w = _task_weights(tasks, weights)
    codes = tasks.to_numpy()
    score = np.zeros(rm.n_models)
    var = np.zeros(rm.n_models)
    for t, wt in w.items():
        cols = codes == t
        n = obs[:, cols].sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.nansum(v[:, cols], axis=1) / n
            s2 = np.nan_to_num(np.nanvar(v[:, cols], axis=1, ddof=1)) if cols.sum() > 1 else np.zeros(rm.n_models)
            var += wt ** 2 * s2 / n * (1 - n / cols.sum())
        score += wt * np.where(n > 0, p, np.nan)
    return score, np.sqrt(var)


def neyman_shares(rm: ResponseMatrix, tasks: pd.Series, weights: str = "tasks") -> pd.Series:
    r"""Each task's share of the budget that minimises the variance of the whole-benchmark score ``weights``
    names, on average over new models like the reference models: :math:`a_t = w_t \bar S_t`.

    The score is :math:`\theta = \sum_t w_t \theta_t`, :math:`\theta_t` the mean over task :math:`t`'s
    :math:`N_t` items and :math:`w_t` its weight (``1 / T`` each under ``"tasks"``, :math:`N_t / N` under
    ``"items"``). From :math:`n_t` items drawn at random in each task,

    .. math:: \operatorname{Var} \hat\theta = \sum_t w_t^2 \Bigl(1 - \frac{n_t}{N_t}\Bigr)
              \frac{S_t^2}{n_t} = \sum_t \frac{w_t^2 S_t^2}{n_t} - \sum_t \frac{w_t^2 S_t^2}{N_t},

    :math:`S_t^2` the new model's per-item variance on the task (:math:`\frac{N_t}{N_t - 1} p_t (1 - p_t)` for
    0/1 results at accuracy :math:`p_t`). The second sum does not depend on the :math:`n_t`, so under
    :math:`\sum_t n_t = n` the variance is least at :math:`n_t \propto w_t S_t` (Neyman allocation;
    :func:`allocate_budget` keeps it within each task's bounds). The new model's :math:`S_t` is unknown before
    it is run; averaged over models like the references the variance is
    :math:`\sum_t w_t^2 \overline{S_t^2} / n_t` up to that constant, least at :math:`n_t \propto w_t
    \bar S_t` with

    .. math:: \bar S_t = \Bigl(\frac{1}{M_t} \sum_m S_{mt}^2\Bigr)^{1/2},

    the root mean square over the :math:`M_t` reference models with two or more results in the task of their
    per-item standard deviation there (:math:`S_{mt}^2` the sample variance of model :math:`m`'s results on its
    observed items of task :math:`t`). The mean of the standard deviations, :math:`\frac{1}{M_t}\sum_m S_{mt}`,
    would minimise no average of the variance. Stratification within a task (``stratified-aipw``,
    ``sortsearch``) lowers each task's variance below the simple random sample's; the allocation assumes it lowers
    them alike. A task every reference model scores alike on every item gets a share of 0, hence
    :func:`allocate_budget`'s minimum.

    Parameters
    ----------
    rm : ResponseMatrix
        The reference models' results.
    tasks : sequence of str
        The task of each item of ``rm``, in its order.
    weights : {"items", "tasks"}, default="tasks"
        The score whose variance is minimised.

    Returns
    -------
    pandas.Series of float
        :math:`w_t \bar S_t` per task, indexed by task name in sorted order.

    See Also
    --------
    allocate_budget : splits a budget in proportion to these shares.
    select : uses them under ``weights="tasks"``.

    References
    ----------
    Neyman, J. (1934). On the two different aspects of the representative method. *Journal of the Royal
    Statistical Society* 97(4), 558-625.

    Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley, Section 5.5.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from effstats import ResponseMatrix
    >>> y = np.array([[1, 0, 1, 0, 1, 1, 1, 1], [0, 1, 1, 0, 1, 1, 1, 1], [1, 1, 0, 0, 1, 1, 1, 0]], bool)
    >>> tasks = pd.Series(["a"] * 4 + ["b"] * 4)
    >>> neyman_shares(ResponseMatrix(y), tasks).round(4).to_dict()   # a: each model half right; b: two all right
    {'a': 0.2887, 'b': 0.1443}
    """
    if not isinstance(rm, ResponseMatrix):
        raise ValueError(f"rm: expected a ResponseMatrix of the reference models' results, got {type(rm).__name__}")
    if isinstance(tasks, (str, bytes)) or not pd.api.types.is_list_like(tasks) or len(tasks) != rm.n_items:
        raise ValueError(f"tasks: expected the task of each of rm's {rm.n_items} items, got "
                         f"{len(tasks) if pd.api.types.is_list_like(tasks) else type(tasks).__name__}"
                         f"{' tasks' if pd.api.types.is_list_like(tasks) else ''}")
    if not isinstance(weights, str) or weights not in WEIGHTS:
        raise ValueError(f"weights: expected 'items' or 'tasks', got {_plain(weights)!r}")
    codes = pd.Series(np.asarray(tasks, dtype=object)).astype(str).to_numpy()
    w = _task_weights(pd.Series(codes), weights)
    v = rm.values_with_nan().astype(float)
    out = {}
    for t, wt in w.items():
        cols = v[:, codes == t]
        n = np.isfinite(cols).sum(1)
        with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)  # a model with fewer than two results in the task
            var = np.nanvar(cols, axis=1, ddof=1)
        var = var[n >= 2]
        out[t] = float(wt) * (float(np.sqrt(var.mean())) if len(var) else 0.0)
    return pd.Series(out, name="share", dtype=float)


def _allocation(rm: ResponseMatrix, tasks: pd.Series, budget: int, weights: str = "items") -> pd.Series:
    """The budget per task: in proportion to the tasks' sizes for the mean over all items, the Neyman allocation
    (:func:`neyman_shares`) for the mean of the task means."""
    sizes = tasks.value_counts().sort_index()
    if weights == "items":
        return allocate_budget(sizes, budget)
    shares = neyman_shares(rm, tasks, weights)
    if not (shares > 0).any():  # every task alike on every item: no spread to allocate by, the weights decide
        shares = _task_weights(tasks, weights)
    return allocate_budget(sizes, budget, shares=shares)


def _cv_error(rm: ResponseMatrix, tasks: pd.Series, budget: int, method: str, seed: int, n_splits: int = 5,
              weights: str = "items") -> float:
    """Cross-validated MAE (points) of the whole-benchmark estimate ``weights`` names over the reference models."""
    from sklearn.model_selection import KFold

    alloc = _allocation(rm, tasks, budget, weights)
    truth, _ = _observed_scores(rm, tasks, weights)
    err = []
    for tr, va in KFold(min(n_splits, rm.n_models), shuffle=True, random_state=seed).split(np.arange(rm.n_models)):
        fits = _fit_tasks(rm._take(models=tr), tasks, alloc, method, seed)
        with warnings.catch_warnings():
            # what estimate says of new results (held-out models outside the others' range, ...) is about reference
            # models here, whose errors the cross-validated error already counts: select has no new results
            warnings.filterwarnings("ignore", message="new_results: ")
            est, _ = _combine(fits, rm._take(models=va), tasks, weights)
        err.append(np.abs(est.statistic - truth[va]))
    e = np.concatenate(err)
    return float(100 * e[np.isfinite(e)].mean())


def _say_averaged_runs_graded(rm: ResponseMatrix, one_run: ResponseMatrix, method: str) -> None:
    """Under ``duplicates="mean"``: where one run per model gives 0/1 results, averaging the repeated runs is what
    made the reference graded. A method that needs 0/1 correctness is refused naming ``duplicates`` as the cause;
    any other method is told, with a warning naming the models, that it estimates graded scores."""
    if one_run.kind != "binary":
        return
    vals = rm.values_with_nan()
    graded = rm.model_ids[((vals > 0) & (vals < 1)).any(axis=1)]
    names = _name_list([str(m) for m in graded], 5, "and {} more")
    said = (f"averaging the reference's repeated 0/1 runs gives graded scores for {len(graded)} model(s) "
            f"({names})")
    if method in ("sortsearch", "hybrid", "tinybenchmarks"):
        raise ValueError(f"duplicates: {said}, which method {method!r} cannot use (it needs 0/1 correctness): pass "
                         "duplicates='last' or 'first' to take one run")
    warnings.warn(f"duplicates: {said}: the reference is read as graded scores; pass duplicates='last' or 'first' "
                  "to keep 0/1 results", UserWarning, stacklevel=3)


def select(reference: Any, budget: int | None = None, *, method: str = "stratified-aipw",
           target_error: float | None = None, seed: int = 0, format: str = "auto", metric: Any = None,
           duplicates: str = "last", filter: str | None = None, tasks: Any = None, budgets: Any = None,
           progress: bool = False, split: str | None = "test", perturbation: Any = None,
           trials: Any = "mean", weights: str = "items") -> Selection:
    """Choose the items to evaluate a new model on, from the reference models' per-item results.

    Each of the benchmark's tasks gets 2 items (all of a smaller task's), then the rest of the budget is split
    over the tasks in proportion to their sizes, or for the mean of the task means by Neyman allocation
    (``weights``; :func:`allocate_budget`); within each task ``method`` chooses the items from
    the reference models. :meth:`Selection.save` writes the manifest
    and lm-evaluation-harness's ``--samples`` file; :func:`estimate` reads the new model's results back.

    Parameters
    ----------
    reference : path, ResponseMatrix or DataFrame
        The reference models' results: a folder of lm-eval ``samples_*.jsonl`` logs, HELM run folders, a long or
        wide CSV/Parquet table of item scores (see :func:`read_results`), a ResponseMatrix or a pandas
        DataFrame in a table's layout.
    budget : int, optional
        Items to evaluate the new model on (all tasks together). Give this or ``target_error``.
    method : str, default="stratified-aipw"
        One of :data:`effstats.workflow.METHODS`.
        ``"stratified-aipw"`` (the default): random items within strata of the reference models' difficulty order,
        corrected within strata by a logistic model on the items' difficulty and first principal-component loading
        (:class:`~effstats.disco.StratifiedAIPW`: a design-unbiased estimate and interval whatever the new model,
        also one better than every reference model; 0/1 results or graded scores; at 100 items its error is
        0.47–0.98 times the plain mean's of random items on ImageNet, CIFAR-10, digits and AlpacaEval, in and out
        of the references' range, and below ``"sortsearch"``'s at 100 and 500 items on ImageNet and CIFAR-10).
        ``"sortsearch"``: Sort & Search's order with one random item per equal cell (a stratified random sample:
        design-unbiased estimate and interval whatever the new model; 0/1 results only). ``"aipw"``: random items
        and a ridge regression from the reference models' outputs on each item to the new model's, corrected by its
        cross-fitted residuals on the sampled items (augmented inverse probability weighting / prediction-powered
        inference: design-unbiased too, and more precise where the references predict the new model;
        :class:`~effstats.disco.AIPW`). ``"hybrid"``: the cells' centres of Sort & Search's order (the paper's
        items, chosen deterministically), each item's prediction corrected by the nearest reference models
        (:class:`~effstats.sortsearch.HybridSearch`); :func:`estimate` reports Sort & Search's stratified mean of the
        chosen items and its Korn–Graubard interval, systematic (coverage on average over models, not for each
        model): the correction changes only the per-item predictions; over several tasks their weighted standard
        errors add linearly (fixed items leave no task's error independent of another's). The model-based methods
        fit the reference models and their intervals (cross-validated over the reference models) assume the new
        model resembles them: ``"disco"``: items the models disagree on most and a signature regressor
        (:class:`~effstats.disco.DISCO`); ``"mrmr"``: items by minimum
        redundancy and maximum relevance and a ridge regression of the score on them (:class:`~effstats.disco.MRMR`;
        at least 7 reference models a task, as its interval refits it on folds of them);
        ``"random-learn"``: random items and the same regression (:class:`~effstats.disco.RandomLearn`; at least 4);
        ``"tinybenchmarks"``:
        anchor items + gp-IRT (:class:`~effstats.irt.TinyBenchmarks`); ``"anchor"``: anchor items with weights
        (:class:`~effstats.disco.AnchorCorr`); ``"stratified"``: confidence strata + Horvitz–Thompson
        (:class:`~effstats.disco.StratifiedHT`); ``"random"``: random items and their mean
        (:class:`~effstats.disco.RandomDirect`); ``"auto"``: in each task, the candidate with the smallest
        cross-validated error on the reference models (:class:`~effstats.disco.MethodChooser`) among those that
        draw their items at random (``default_candidates(random_items=True)``: random + direct, AIPW, stratified
        AIPW, random + ridge, SSEPY strata, DISCO's defaults, and Sort & Search on 0/1 results), so that a new model
        outside the reference models' range gets a design-based estimate on its items. The chooser keeps stratified AIPW
        (the default ``"stratified-aipw"``) unless another candidate beats it by more than its cross-validation noise
        (:class:`~effstats.disco.MethodChooser`'s ``reference``), so that ``"auto"`` is never worse than the default by
        more than that noise. The design-based estimate is the pick's own when it is design-based, else AIPW's on the
        same random items
        (:func:`~effstats.disco.fallback_candidate`). Outside the range means outside the reference models' results
        on the chosen items, or with a model-based pick's estimate beyond their scores on the task (the pick
        extrapolates there as much; :func:`~effstats.disco.with_fallback`'s ``score_range``).
    target_error : float, optional
        Instead of ``budget``: the smallest budget (from ``budgets``) whose cross-validated mean absolute error on
        the reference models, in percentage points, is at most this. The curve it used is kept in
        ``budget_curve``. Under ``"auto"`` the curve is that of stratified AIPW, which the chooser keeps unless
        another candidate beats it by more than its cross-validation noise: the chosen budget meets the target for
        ``"auto"`` too. Each training fold of that cross-validation (5-fold over the reference models) needs as many
        reference models as the method does: 4 in all (``"mrmr"`` 9, ``"random-learn"`` 5).
    seed : int, default=0
        Seeds every random choice; the same data and seed give the same items. Each task draws from its own stream,
        derived from ``seed`` and the task's name: tasks that share documents (translations, prompt variants) draw
        independently, as the combined interval assumes, and a task keeps its items when other tasks are added or
        reordered. ``"hybrid"`` (Sort & Search's uniform positions on the reference models' order) and ``"mrmr"``
        (a greedy order) choose their items deterministically: at a given ``budget`` the seed changes nothing for
        them.
    format : {"auto", "lm-eval", "helm", "csv", "parquet"}, default="auto"
        The layout of ``reference``, as :func:`read_results` takes it. This and the next six parameters say how to
        read ``reference``; they are recorded in the manifest, and the new results are read the same way.
    metric : str or dict, default=None
        The per-item metric of lm-eval logs (``acc``) or HELM runs (``exact_match``), or per task.
    duplicates : {"last", "first", "mean", "error"}, default="last"
        Two runs of one model: keep the latest (with a warning), the first, average them, or refuse.
    filter : str or dict, default=None
        lm-eval logs with several filters: the one to read (or per task).
    split : str or None, default="test"
        HELM runs: the split to read (``"valid"`` for a scenario such as HellaSwag that HELM evaluates on its
        validation split; None: every split).
    perturbation : str or dict, default=None
        HELM runs: read the instances with this perturbation instead of the unperturbed ones.
    trials : {"mean", "separate"} or int, default="mean"
        HELM runs with several train trials: averaged (``"mean"``), kept as items of their own (``"separate"``) or
        one of them (an index). For HELM runs :meth:`Selection.save` also writes ``helm_instances.json``, the
        chosen instance ids per run spec.
    tasks : sequence of str, optional
        Only these tasks of the reference data; a HELM scenario's name before its arguments (``mmlu``) names
        each of its run specs.
    budgets : sequence of int, optional
        Budgets tried for ``target_error`` (default 25, 50, 100, 200, ... up to the number of items).
    progress : bool, default=False
        Show the progress of the read, the budget search and the fits on a terminal (standard error), each once
        it has taken 2 s.
    weights : {"items", "tasks"}, default="items"
        The whole-benchmark score the budget is split for, recorded in the manifest as :func:`estimate`'s default.
        ``"items"``, the mean over all items: each task gets 2 items, the rest in proportion to its size (the
        variance of that mean is then least when every item varies alike). ``"tasks"``, the mean of the task means: task
        :math:`t` gets items in proportion to :math:`w_t \\bar S_t`, its weight :math:`1/T` times the root mean
        square over the reference models of their per-item standard deviation on its items (Neyman allocation,
        :func:`neyman_shares` derives it), which minimises that mean's variance on average over new models like
        the references: a large task gets no more items than a small one as spread, a task every reference
        model gets right or wrong alike only its 2. Either score can be estimated from either selection; the
        other one is only less precise. Under ``target_error`` the budget search cross-validates the error of
        this score.

    Returns
    -------
    Selection

    See Also
    --------
    estimate : the new model's score, interval and rank from its results on the chosen items.
    SequentialRun : batches of items until a stopping rule decides.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. NeurIPS 2024.

    Rubinstein, A., Raible, B., Gubri, M. and Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
    Efficient Model Evaluation. arXiv:2510.07959.

    Polo, F. M., Weber, L., Choshen, L., Sun, Y., Xu, G. and Yurochkin, M. (2024). tinyBenchmarks: evaluating
    LLMs with fewer examples. ICML 2024.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.workflow import select
    >>> ref = simulate_responses(30, 600, rng=0)
    >>> sel = select(ref, 60, method="sortsearch", seed=1)
    >>> sel
    Selection(60 of 600 items, method='sortsearch', 1 task(s), seed=1)
    >>> [int(sel.tasks.loc["all", c]) for c in ("n_items", "budget")], sel.tasks.loc["all", "method"]
    ([600, 60], 'sortsearch')
    >>> len(sel.items), bool(sel.items.isin(ref.item_ids).all())  # the ids of the chosen items
    (60, True)
    """
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method: expected one of {list(METHODS)}, got {_plain(method)!r}")
    method = str(method)  # an np.str_ would be kept (and shown as np.str_('random') on numpy 2)
    if not isinstance(weights, str) or weights not in WEIGHTS:
        raise ValueError(f"weights: expected 'items' (the mean over all items) or 'tasks' (the mean of the task "
                         f"means), got {_plain(weights)!r}")
    weights = str(weights)
    if (budget is None) == (target_error is None):
        raise ValueError("budget: give either a budget or a target_error, not both or neither")
    seed = _number(seed)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: expected a non-negative integer, got {_plain(seed)!r}")
    seed = int(seed)
    wanted = None if tasks is None else [tasks] if isinstance(tasks, str) else list(tasks)
    helm = helm_options(split, perturbation, trials)
    # lm-eval logs of the named tasks only: another task's logs need not carry the metric
    with noting_results_without_samples() as lone:  # named in the manifest as well as the warning
        rm = kept_reference(read_results(
            reference, format=format, metric=metric, duplicates=duplicates, filter=filter, name="reference",
            tasks=None if wanted is None or not wanted else [str(t) for t in wanted], progress=progress, **helm),
            reference)
    if duplicates == "mean" and rm.kind != "binary":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one_run = read_results(reference, format=format, metric=metric, duplicates="last", filter=filter,
                                   name="reference", tasks=None if not wanted else [str(t) for t in wanted], **helm)
        _say_averaged_runs_graded(rm, one_run, method)
    check_task_keys(rm, metric=metric, filter=filter)
    rm = _keep_tasks(rm, wanted)
    if rm.n_models < 3:
        raise ValueError(f"reference: at least 3 reference models are needed, got {rm.n_models}")
    if method == "auto" and rm.n_models < _AUTO_MIN_MODELS:
        raise ValueError(_auto_too_few(rm.n_models))
    info = item_tasks(rm)
    _refuse_too_few_for_method(rm, info["task"], method, search=target_error is not None)
    sizes = info["task"].value_counts().sort_index()
    _warn_models_missing_tasks(rm, info["task"].to_numpy())
    curve = None
    if target_error is not None:
        target_error = _number(target_error)  # np.array(20.0) as its scalar; numpy's scalars are Real
        if isinstance(target_error, bool) or not isinstance(target_error, Real) or not 0 < target_error < 100:
            raise ValueError(f"target_error: expected percentage points in (0, 100), got {_plain(target_error)!r}")
        target_error = float(target_error)
        grid = _budget_grid(rm.n_items, len(sizes)) if budgets is None else sorted({int(b) for b in budgets})
        if not grid or min(grid) < 1 or max(grid) > rm.n_items:
            raise ValueError(f"budgets: expected budgets in [1, {rm.n_items}], got {budgets!r}")
        rows = []
        it = _progress(progress, iterable=grid, desc="budgets")
        budget = grid[-1]
        for b in it:
            cv_method = method if method != "auto" else "stratified-aipw"
            with warnings.catch_warnings():
                # the folds' fits on part of the reference models: their missing cells are said once, of the
                # whole reference data, by the selection's own fit below
                warnings.filterwarnings("ignore", message=r"\w+: \d+ of \d+ cells are missing", category=UserWarning)
                e = (_cv_error(rm, info["task"], b, cv_method, seed, weights=weights) if b < rm.n_items
                     else 0.0)
            rows.append({"budget": b, "cv_mae_points": e})
            if e <= target_error:
                budget = b
                if b >= rm.n_items and len(rows) > 1:  # only the census reaches it: say so, it is no subset
                    best = min(rows[:-1], key=lambda r: r["cv_mae_points"])
                    warnings.warn(f"target_error: no budget below the whole benchmark reaches {target_error:g} points "
                                  f"(the smallest cross-validated error, {best['cv_mae_points']:.2f} points, at "
                                  f"{best['budget']} items); selecting every one of the {rm.n_items} items",
                                  UserWarning, stacklevel=2)
                break
        else:
            warnings.warn(f"target_error: no budget up to {grid[-1]} reaches {target_error} points; using {grid[-1]}",
                          UserWarning, stacklevel=2)
        curve = pd.DataFrame(rows)
    if isinstance(budget, bool) or not isinstance(budget, Integral) or not 1 <= budget <= rm.n_items:
        # the range states allocate_budget's true minimum (two items a task) on either side, with its reason;
        # budgets from 1 up to that minimum get allocate_budget's own message
        low = int(np.minimum(sizes.to_numpy(), 2).sum())
        smaller = ", all of a smaller task's" if (sizes < 2).any() else ""
        try:
            check_positive_int(budget, "budget", minimum=low, maximum=rm.n_items)
        except ValueError as e:
            raise ValueError(f"{e} (at least 2 items in each of the {len(sizes)} task{'s' if len(sizes) > 1 else ''}"
                             f"{smaller}; at most the reference's {rm.n_items} items)") from None
    budget = check_positive_int(budget, "budget", maximum=rm.n_items)
    alloc = _allocation(rm, info["task"], budget, weights)
    _warn_small_tasks(alloc, sizes)
    fits = _fit_tasks(rm, info["task"], alloc, method, seed, progress=progress)
    _refuse_unestimable(fits, method)
    chosen = [f.chosen or f.method for f in fits.values()]
    table = pd.DataFrame({"n_items": sizes, "budget": alloc, "n_chosen": [len(f.items) for f in fits.values()],
                          "method": chosen})
    table.index.name = "task"
    items = pd.Index(np.concatenate([f.items.to_numpy(dtype=object) for f in fits.values()]), name="item")
    return Selection(items=items, tasks=table, method=method, budget=budget, seed=seed,
                     reference=_with_provenance({**_reference_info(rm, reference, format, metric, filter, duplicates,
                                                                   helm), "tasks": sorted(sizes.index),
                                                 **({"without_samples": lone} if lone else {})}, rm, items),
                     item_info=info.reindex(items),
                     budget_curve=curve, created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                     effstats_version=_version(), helm_instances=helm_instances(rm, items),
                     new_results_note=_new_results_note(fits), weights=weights, _fits=fits, _reference=rm)


# Fewest items a task sampled in part needs for an interval that says something, whatever its method. With b items
# all right the 95 % Clopper-Pearson interval is [0.025^(1/b), 1]: 0.31 wide at b = 10, 0.52 at b = 5; and a variance
# estimate from fewer than 10 items has under 9 degrees of freedom (t quantile above 2.26 against the normal 1.96).
# The stratified designs keep at least 2 items a stratum (``_strata``), so 10 items a task bounds them as well.
_MIN_TASK_ITEMS = 10


def _warn_small_tasks(alloc: pd.Series, sizes: pd.Series) -> None:
    """Warn, naming them, of the tasks given fewer than :data:`_MIN_TASK_ITEMS` items and not all of theirs."""
    small = alloc[(alloc < _MIN_TASK_ITEMS) & (alloc < sizes)]
    if len(small):
        shown = _name_list([f"{line_text(str(t))}: {int(b)}" for t, b in small.items()], 10, "and {} more")
        warnings.warn(f"budget: {len(small)} task(s) get fewer than {_MIN_TASK_ITEMS} items ({shown}): too few for "
                      f"a meaningful interval (all {_MIN_TASK_ITEMS} items right still leave a 95 % interval of "
                      f"[0.69, 1]); raise the budget or pass fewer tasks", UserWarning, stacklevel=3)


def _new_results_note(fits: dict[str, _TaskFit]) -> str | None:
    """One sentence naming the tasks whose pick compares the new model's class probabilities or predicted classes
    (DISCO's signature): a table of 0/1 results will not do there, and the time to say so is before the model is
    run."""
    by_need: dict[str, list[str]] = {}
    for t, f in fits.items():
        if f.method != "all" and f.new_outputs is not None:
            by_need.setdefault(f.new_outputs, []).append(f"{line_text(str(t))} ({f.chosen or f.method})")
    if not by_need:
        return None
    give = {"class probabilities": "its lm-eval logs of the --samples run (the per-choice log-likelihoods)",
            "predicted classes": "results carrying them or class probabilities (lm-eval logs of the --samples run)"}
    parts = [f"task(s) {_name_list(tasks, 10, 'and {} more')} compare the new model's {need} on the chosen items: "
             f"estimate needs {give[need]} there, not a table of 0/1 results" for need, tasks in by_need.items()]
    return "; ".join(parts) + ("; method stratified-aipw (the default), sortsearch or aipw estimates from 0/1 "
                               "results")


def _keep_tasks(rm: ResponseMatrix, tasks: Any) -> ResponseMatrix:
    """``rm`` on the items of ``tasks`` only (None: all)."""
    if tasks is None:
        return rm
    wanted = list(map(str, [tasks] if isinstance(tasks, str) else tasks))
    have = item_tasks(rm)["task"]
    # HELM: a scenario's name before its arguments names every run spec of it (mmlu: its 57 subjects), as in
    # the per-task options
    head = have.str.partition(":")[0]
    unknown = sorted(set(wanted) - set(have) - set(head))
    if not wanted or unknown:
        raise ValueError(f"tasks: {unknown or 'none given'} not among the reference's tasks "
                         f"{sorted(set(have))[:10]}{' …' if have.nunique() > 10 else ''}"
                         f"{comma_hint(unknown, set(have))}{twin_note(unknown, set(have))}")
    return rm._take(items=np.flatnonzero((have.isin(wanted) | head.isin(wanted)).to_numpy()))


def _budget_grid(n_items: int, n_tasks: int) -> list[int]:
    b, out = max(25, 2 * n_tasks), []
    while b < n_items:
        out.append(b)
        b *= 2
    return out + [n_items]
