"""The per-task estimates of new models and their weighted combination into the benchmark's score.

Both :func:`select` (its cross-validated error for a target error) and :func:`estimate` combine the tasks' estimates
this way, so the combination lives below them both.
"""
from __future__ import annotations

import dataclasses
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from .._range import beyond_scores, score_range
from .._results import ConfidenceInterval, check_confidence_level
from .._shared import _apart, _name_list, _plain
from ..responses import ResponseMatrix
from ._reference_copy import known_ids
from ._tasks import _TaskFit, design_methods


def graded_cells(values: np.ndarray) -> np.ndarray:
    """The cells of ``values`` (float, NaN where missing) that hold a graded score: finite, neither 0 nor 1.

    A matrix's 0/1 results are exact once read (its reading snaps floating-point noise, unless a value far from
    both makes it graded, when none moves), so this is :func:`effstats._validation.is_zero_one`'s answer cell by
    cell; the one test of graded results on the items an estimate reads (the chosen ones).
    """
    return np.isfinite(values) & (values != 0) & (values != 1)


def _on_items(new: ResponseMatrix, items: pd.Index, task: str = "", reference: ResponseMatrix | None = None
              ) -> ResponseMatrix:
    """``new`` on exactly ``items`` (in that order); items it has no column for are missing cells. Its kind is that
    of its results there: graded scores on items not chosen leave 0/1 results on the chosen ones 0/1.

    Every per-cell array comes along for the methods whose item signature uses it: the class probabilities
    (lm-eval's log-likelihoods, as wide as the reference's; an item without a column gets a uniform distribution),
    the predicted classes (class 0 there: the cell is missing) and the labels (the reference's where ``new`` has
    none); the model and item metadata too.
    """
    have = new.item_ids.get_indexer(items)
    vals = np.zeros((new.n_models, len(items)))
    miss = np.ones((new.n_models, len(items)), bool)
    ok = have >= 0
    vals[:, ok] = new.values[:, have[ok]]
    miss[:, ok] = ~new.observed[:, have[ok]]
    if miss.all(1).any():
        raise ValueError(f"new_results: model {_plain(new.model_ids[int(np.argmax(miss.all(1)))])!r} has no result "
                         "on any of "
                         f"the {len(items)} items chosen in task {task!r} (first: {_plain(items[0])!r})")
    proba = labels = pred = None
    if new.probabilities is not None:
        width = new.probabilities.shape[2]
        if reference is not None and reference.probabilities is not None:
            width = max(width, reference.probabilities.shape[2])
        proba = np.full((new.n_models, len(items), width), 1.0 / width)
        proba[:, ok] = 0.0
        proba[:, ok, :new.probabilities.shape[2]] = new.probabilities[:, have[ok]]
    if new.predictions is not None:
        pred = np.zeros((new.n_models, len(items)) + new.predictions.shape[2:], new.predictions.dtype)
        pred[:, ok] = new.predictions[:, have[ok]]
    if new.labels is not None:
        labels = np.zeros(len(items), np.int64)
        labels[ok] = new.labels[have[ok]]
        if reference is not None and reference.labels is not None and not ok.all():
            pos = reference.item_ids.get_indexer(items[~ok])
            labels[~ok] = np.where(pos >= 0, reference.labels[np.maximum(pos, 0)], 0)
    graded = new.kind != "binary" and graded_cells(np.where(miss, np.nan, vals)).any()
    with known_ids():  # the manifest's items, and the results' ids, were warned about when read
        return ResponseMatrix(vals, kind="score" if graded else "binary", missing=miss if miss.any() else None,
                              probabilities=proba,
                              labels=labels, predictions=pred, model_ids=new.model_ids, item_ids=items,
                              models=new.models, items=new.items.reindex(items))


def _task_weights(tasks: pd.Series, weights: str) -> pd.Series:
    """Each task's weight in the whole-benchmark score: its share of the items, or equal shares."""
    sizes = tasks.value_counts().sort_index()
    w = sizes / sizes.sum() if weights == "items" else pd.Series(1.0 / len(sizes), index=sizes.index)
    return w.astype(float)


# the workflow's methods that draw one simple random sample of a task's items (``_tasks._estimator``: RandomDirect,
# AIPW without strata), whose count of right items is hypergeometric
_SRS_METHODS = ("random", "aipw")


def _degenerate(p: "_TaskResult") -> np.ndarray:
    """Per new model: whether task ``p``, sampled in part, has a degenerate standard error, one whose per-item
    variance (se^2 times the items evaluated) is below 1e-6 (every sampled item alike, or a fitted model that
    predicts each within 1e-3; a 0/1 sample that is not all alike has a per-item variance of 1/b or more)."""
    k = np.asarray(p.n_evaluated, float)
    return (np.asarray(p.result.standard_error, float) ** 2 * k < 1e-6) & (k < p.n_items)


def _floored(p: "_TaskResult") -> np.ndarray:
    """Per new model: whether task ``p``'s design-based interval of graded scores is its floor's (StratifiedHT's
    interval of scores at the bounds, wider at 95 % than the t interval: the sampled scores alike within every
    stratum say nothing of the strata's spread), whose standard error is then its interval's, on the normal
    quantile."""
    res = _design_result(p)
    floor = getattr(res, "floor", None)
    n = len(np.atleast_1d(p.result.statistic))
    if floor is None:
        return np.zeros(n, bool)
    df = getattr(res, "df", None)
    q = special.ndtri(0.975) if df is None else special.stdtrit(np.maximum(np.asarray(df, float), 1.0), 0.975)
    return special.ndtri(0.975) * np.asarray(floor, float) > q * np.asarray(res.standard_error, float)


def _design_rows(p: "_TaskResult") -> np.ndarray:
    """Per new model: whether task ``p``'s number rests on the random draw of its items, the task's method being
    design-based or the model having the out-of-range fallback's design-based estimate there."""
    n = len(np.atleast_1d(p.result.statistic))
    if p.design_based:
        return np.ones(n, bool)
    kinds = getattr(p.result, "interval_kinds", None)
    return np.zeros(n, bool) if kinds is None else np.asarray(kinds, dtype=object) == "design"


def _interval_se(p: "_TaskResult", se: Any = None) -> np.ndarray:
    """Task ``p``'s standard errors ``se`` (default: its result's), a degenerate one of a design-based estimate
    (:func:`_degenerate`: every sampled item alike, whose interval is the exact one of their count) replaced by the
    half-width of its 95 % interval over the normal 97.5 % quantile, the standard error that interval implies."""
    se = np.asarray(p.result.standard_error if se is None else se, float)
    deg = _degenerate(p) & _design_rows(p)
    if p.method == "all" or not deg.any():
        return se
    ci = _design_result(p).confidence_interval(0.95)
    return np.where(deg, (np.asarray(ci.high, float) - np.asarray(ci.low, float)) / (2 * stats.norm.ppf(0.975)), se)


def _count_task_se(p: "_TaskResult", b: np.ndarray) -> np.ndarray:
    """Task ``p``'s standard error as a simple random sample of its items evaluated (finite-population-corrected)
    at its proportion shrunk towards 1/2 by half an item of ``b`` items, ``(b p + 1/2) / (b + 1)``: the standard
    error of a degenerate task of 0/1 scores (:func:`_degenerate`), whose own says nothing of its spread."""
    k = np.asarray(p.n_evaluated, float)
    q = (b * np.clip(np.asarray(p.result.statistic, float), 0.0, 1.0) + 0.5) / (b + 1)
    return np.sqrt(q * (1 - q) / np.maximum(k, 1.0) * np.clip(1 - k / max(p.n_items, 1), 0.0, 1.0))


def _design_result(p: "_TaskResult") -> Any:
    """The design-based prediction behind task ``p``'s design-based rows: its own, or its fallback's."""
    return p.result if p.design_based else getattr(p.result, "fallback", None)


@dataclass
class _TaskResult:
    task: str
    weight: float
    result: Any
    design_based: bool
    n_selected: int
    n_evaluated: np.ndarray
    n_items: int = 0
    method: str = ""
    # per new model: the estimator that made its number, and whether it lies outside the reference models' range
    # on the task's chosen items (None: the method does not check)
    estimator: np.ndarray | None = None
    out_of_range: np.ndarray | None = None
    base: str = ""  # the task's estimator for targets in range
    # method "anchor": its heaviest anchor (item id, share of the task's items, the reference models' mean on it) and
    # per new model whether it answers that item unlike every reference model (None: no such anchor)
    heavy_anchor: tuple | None = None
    # per new model: 1 where every chosen item it has a result on scored 1, -1 where every one scored 0, else 0 (a
    # degenerate standard error is no sign of that: strata alike within themselves give one too)
    alike: np.ndarray | None = None
    # per new model: which check put it out of range, with the numbers ("" where none did), for the report
    range_reason: np.ndarray | None = None

    @property
    def fell_back(self) -> np.ndarray:
        """New models whose number here is the out-of-range fallback's."""
        from ..disco import FallbackPrediction

        if isinstance(self.result, FallbackPrediction):
            return self.result.fell_back
        return np.zeros(len(self.estimator), bool)


# the workflow's methods as the report names their estimators (auto: the chooser's candidate names)
_ESTIMATOR_NAMES = {"sortsearch": "Sort & Search", "aipw": "AIPW + ridge", "hybrid": "HybridSearch",
                    "disco": "DISCO", "mrmr": "mRMR + ridge", "random-learn": "random + ridge",
                    "tinybenchmarks": "anchor-corr + gp-IRT", "anchor": "anchor-corr + weighted",
                    "stratified": "SSEPY strata + HT", "random": "random + direct",
                    "stratified-aipw": "stratified AIPW", "all": "every item"}
# the chooser's candidates (auto) by the method (--method) that fits the same estimator on its own
_CANDIDATE_METHODS = {**{name: m for m, name in _ESTIMATOR_NAMES.items() if m != "all"},
                      "stratified AIPW + logistic": "stratified-aipw", "DISCO difference + ridge": "disco"}


# auto's picks that are the estimator a --method fits on its own (the same class and parameters; only the seed that
# draws the items differs, the chooser's derived one): the report names them as that method's report does
_SAME_AS_METHOD = {"stratified AIPW + logistic": "stratified-aipw"}


def _pick_name(name: str) -> str:
    """The chooser's name ``name`` of an estimator (a candidate, or ``"<candidate> (out-of-range fallback)"``) as
    the report names it: the label of the ``--method`` that fits the same estimator, where :data:`_SAME_AS_METHOD`
    has one."""
    for cand, method in _SAME_AS_METHOD.items():
        if name == cand or name.startswith(cand + " ("):
            return _ESTIMATOR_NAMES[method] + name[len(cand):]
    return name


def _fit_name(f: Any) -> str:
    """The report's name of the estimator a task's fit ``f`` uses: its method's, or under auto its pick's."""
    return _pick_name(f.chosen) if f.method == "auto" and f.chosen else _ESTIMATOR_NAMES.get(f.method, f.method)


# the estimators' names for the results they predict from: in ``estimate`` those are NEW_RESULTS
_PREDICT_ARGS = re.compile(r"^(responses|target_outputs|target_responses|new): ")


# the estimators' out-of-range warning in the words of the workflow's report (new and reference models, chosen
# items, the method's name from _ESTIMATOR_NAMES, the workflow's design-based methods)
_RANGE_WORDS = ((re.compile(r"\btarget model\(s\)"), "new model(s)"),
                (re.compile(r"\bthe source models' range"), "the reference models' range"),
                (re.compile(r"\bon the selected items"), "on the chosen items"),
                (re.compile(r"\ba design-based estimator \(effstats\.disco\.AIPW[^)]*\)"),
                 "a design-based method (stratified-aipw, aipw or sortsearch)"))


def _range_words(msg: str, name: str, task: str | None = None) -> str:
    """The out-of-range warning of an estimator named ``name`` in the report's words, naming ``task`` (each task
    warns on its own); other messages unchanged."""
    if "outside the source models' range" not in msg:
        return msg
    msg = re.sub(r"\b\w+'s estimate extrapolates there", lambda _: f"{name} extrapolates there", msg)
    for pat, words in _RANGE_WORDS:
        msg = pat.sub(words, msg)
    return msg if task is None else msg.replace("the reference models' range", f"the reference models' range in task "
                                                f"{task!r}", 1)


def _predicted(f: _TaskFit, sub: ResponseMatrix, task: str | None = None):
    """``f.predict(sub)``, its messages naming the new results (not the reference the estimator was fitted on) and
    the range warning naming ``task``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = f.predict(sub)
        except ValueError as exc:
            msg = str(exc)
            if "binary correctness is required" in msg:
                vals = sub.values_with_nan()
                odd = np.flatnonzero(graded_cells(vals))
                eg = f" (e.g. {vals.flat[odd[0]]:g})" if odd.size else ""
                msg = (f"new_results: graded scores{eg}, not 0/1 correctness; the selection's method {f.method!r} "
                       "estimates from 0/1 results like the reference models': give the new results with the "
                       "reference's metric")
            elif re.search(r"the signature uses (class|true-class) probabilities|predicted classes", msg):
                what = _fit_name(f)
                give = ("the models' predicted classes on the chosen items, and these results carry none: give "
                        "results with the new model's predicted classes or class probabilities (its lm-eval logs "
                        "of the --samples run)" if "predicted classes" in msg else
                        "the models' class probabilities on the chosen items (from the per-choice log-likelihoods "
                        "of the reference's lm-eval logs), and these results carry none: give the new model's "
                        "lm-eval logs of the --samples run")
                msg = (f"new_results: {what} compares {give}, or select with a method that uses 0/1 results only "
                       "(e.g. --method stratified-aipw, the default, or sortsearch or aipw)")
            raise ValueError(_PREDICT_ARGS.sub("new_results: ", msg, count=1)) from None
    for w in caught:
        msg = str(w.message)
        if _PREDICT_ARGS.match(msg) and ("cells missing" in msg or "selected items of stratum" in msg):
            continue  # estimate warns once, naming the chosen items without a result and the strata without any
        name = _fit_name(f)
        warnings.warn(_range_words(_PREDICT_ARGS.sub("new_results: ", msg, count=1), name, task), w.category,
                      stacklevel=3)
    return res


def _task_result(t: str, weight: float, f: _TaskFit, sub: ResponseMatrix, n_items: int,
                 several: bool = False) -> _TaskResult:
    from ..disco import FallbackPrediction, SubsetPrediction

    res = _predicted(f, sub, t if several else None)  # the task is named where there are several
    base = _fit_name(f)
    names = (np.asarray([_pick_name(str(n)) for n in res.estimator], dtype=object)
             if isinstance(res, FallbackPrediction) else np.full(sub.n_models, base, dtype=object))
    flags = res.out_of_range if isinstance(res, SubsetPrediction) else None
    obs, vals = sub.observed, np.asarray(sub.values, float)
    seen = obs.any(1)
    alike = (seen & np.where(obs, vals == 1, True).all(1)).astype(int) - (seen & np.where(obs, vals == 0, True).all(1))
    return _TaskResult(t, weight, res, f.design_based, len(f.items), obs.sum(1), n_items, f.method, names,
                       None if flags is None else np.asarray(flags, bool), base, _heavy_anchor(f, sub), alike)


def _heavy_anchor(f: _TaskFit, sub: ResponseMatrix) -> tuple | None:
    """Method "anchor": the anchor with the largest weight, its share, the reference models' mean on it, and per new
    model whether its answer there is one no reference model gave (the references answered it alike)."""
    est = f.est
    if f.method != "anchor" or getattr(est, "selected_ids_", None) is None:
        return None
    k = int(np.argmax(est.weights_))
    item, ref_mean = est.selected_ids_[k], float(est.anchor_means_[k])
    y = sub.values[:, sub.item_ids.get_loc(item)].astype(float)
    unlike = np.isin(ref_mean, (0.0, 1.0)) & ~np.isnan(y) & (y != ref_mean)
    return str(item), float(est.weights_[k]), ref_mean, unlike


def warn_unobserved_strata(fits: dict[str, _TaskFit], new: ResponseMatrix) -> None:
    """One UserWarning for new models without a result on any chosen item of a stratum of a stratified task.

    The task's stratified estimate (stratified-aipw, stratified; auto when it picks either) weighs each stratum by
    its share of the task and estimates its mean from its own chosen items; with none of them answered the stratum
    is collapsed with its nearest one in the difficulty order that has a result (Cochran 1977, Sect. 5A.12), its
    missing results assumed like that stratum's answered ones, as a chosen item without a result is assumed like
    the answered ones of its stratum. The results a model lacks are often the ones not run rather than a random
    part of the stratum, so the message names the models, the task, the stratum's chosen items, and one item per
    stratum that restores the design's own estimate.
    """
    gaps = {}  # task: (its models without a result in some stratum, the strata's items per stratum, their weight)
    for t, f in fits.items():
        est = getattr(f.est, "best_estimator_", f.est)  # auto fitted by select: its pick
        design = est._selected_strata() if hasattr(est, "_selected_strata") else None
        if design is None:
            continue
        sizes, h_sel = design
        ids = pd.Index(est.selected_ids_)
        have = new.item_ids.get_indexer(ids)
        seen = np.zeros((new.n_models, len(ids)), bool)
        seen[:, have >= 0] = new.observed[:, have[have >= 0]]
        onehot = np.eye(len(sizes), dtype=int)[h_sel]
        # a model without any result on the task is named by _on_items
        unseen = ((seen.astype(int) @ onehot) == 0) & (onehot.sum(axis=0) > 0) & seen.any(axis=1)[:, None]
        strata = np.flatnonzero(unseen.any(axis=0))
        if len(strata):
            gaps[t] = (new.model_ids[unseen.any(axis=1)], [ids[h_sel == h] for h in strata],
                       float(sizes[strata].sum() / sizes.sum()), len(sizes))
    if not gaps:
        return
    t, (who, per_stratum, weight, n_strata) = next(iter(gaps.items()))
    f = fits[t]
    method = f"auto's pick ({_fit_name(f)})" if f.method == "auto" and f.chosen else f.method
    names = _models(who)
    items = [i for part in per_stratum for i in part]
    one_each = _name_list(_plain([part[0] for part in per_stratum]), 5, "and {} more")
    where = f"{'one' if len(per_stratum) == 1 else len(per_stratum)} of the {n_strata}"
    also = "".join(f"; also task {u!r}: {_models(g[0])} in {len(g[1])} stratum(s)" for u, g in list(gaps.items())[1:])
    warnings.warn(
        f"new_results: {names} {'has' if len(who) == 1 else 'have'} no result on any chosen item of {where} strata of "
        f"task {t!r} ({weight:.0%} of the task's score; {len(items)} chosen items: "
        f"{_name_list(_plain(items), 5, 'and {} more')}){also}; {method} estimates such a stratum from its nearest "
        "stratum's chosen items, its missing results assumed like the answered ones. Evaluate "
        f"{names} on at least one chosen item of each such stratum (e.g. {one_each}) and add the results to the new "
        "results to estimate it from its own items", UserWarning, stacklevel=3)


def _models(ids: pd.Index) -> str:
    """``model 'a'`` or ``models 'a', 'b'``: new models for a message."""
    return f"model{'' if len(ids) == 1 else 's'} {_name_list(map(repr, _plain(list(ids))), 5, 'and {} more')}"


def _combine(fits: dict[str, _TaskFit], new: ResponseMatrix, tasks: pd.Series, weights: str = "items",
             reference: ResponseMatrix | None = None) -> tuple["_Combined", list[_TaskResult]]:
    w = _task_weights(tasks, weights)
    parts, binary = [], np.ones(new.n_models, bool)
    for t, f in fits.items():
        have = new.item_ids.intersection(f.items)
        if not len(have):
            raise ValueError(f"new_results: no result on any of the {len(f.items)} items chosen in task {t!r}")
        sub = _on_items(new, f.items, t, reference)
        # each model's own: another model's graded scores leave its 0/1 results the interval of 0/1 results
        binary &= sub.kind == "binary" or ~graded_cells(sub.values_with_nan()).any(axis=1)
        part = _task_result(t, float(w[t]), f, sub, int((tasks == t).sum()), len(fits) > 1)
        parts.append(part if reference is None else _score_range_flags(part, reference, (tasks == t).to_numpy(),
                                                                       new.model_ids, sub))
    return _Combined(parts, binary), parts


def _score_range_flags(part: _TaskResult, reference: ResponseMatrix, on: np.ndarray, ids: pd.Index,
                       sub: ResponseMatrix | None = None) -> _TaskResult:
    """``part`` with every method's out-of-range flag: the estimate outside the reference models' range of scores
    on the task (all its items), or the method's own check on the chosen items (``sub``: the new models there),
    and the check that fired per model (``range_reason``). A model-based method warns for the models only the score
    check flags (its own check warned for the others)."""
    lo, hi = score_range(np.where(reference.observed[:, on], reference.values[:, on], np.nan).astype(float))
    est = np.asarray(part.result.statistic, float)
    # a design-based estimate beyond them within its sampling error (its reported 95 % interval reaching them) is no
    # sign of a model out of range
    ci = part.result.confidence_interval(0.95) if part.design_based else None
    outside = beyond_scores(est, lo, hi, None if ci is None else (ci.low, ci.high))
    own = np.zeros(len(est), bool) if part.out_of_range is None else part.out_of_range
    newly = outside & ~own & ~part.fell_back
    if newly.any() and not part.design_based:
        names = [str(m) for m in ids[newly]]
        warnings.warn(f"new_results: {len(names)} new model(s) have an estimate outside the reference models' range "
                      f"of scores [{lo:.4f}, {hi:.4f}] on task {part.task!r} ({_name_list(names, 10, 'and {} more')}): "
                      f"{part.base}'s model-based estimate extrapolates there and its interval may not hold; a "
                      f"design-based method ({', '.join(design_methods())}) stays valid", UserWarning,
                      stacklevel=4)
    why = [["task estimate {} outside the references' task scores [{}, {}]".format(*_apart(e, lo, hi))] if o else []
           for e, o in zip(est, outside)]
    if own.any():
        for j, reason in _chosen_item_reasons(reference, sub, own).items():
            if reason or not outside[j]:  # the estimator's own flag includes the score check above
                why[j].append(reason or "results on the chosen items outside the references' (the method's check)")
    return dataclasses.replace(part, out_of_range=own | outside,
                               range_reason=np.array(["; ".join(w) for w in why], dtype=object))


def _chosen_item_reasons(reference: ResponseMatrix, sub: ResponseMatrix | None, flagged: np.ndarray) -> dict:
    """Per flagged new model (position), the check of :func:`effstats._range.range_check` that fired on the chosen
    items, with its numbers: the mean there beyond the references' means there, or the distance to the nearest
    reference beyond the largest distance of a reference to its nearest other one; "" where neither fired."""
    from .._range import range_check

    if sub is None:
        return {int(j): "results on the chosen items outside the references' (the method's own check)"
                for j in np.flatnonzero(flagged)}
    at = reference.item_ids.get_indexer(sub.item_ids)
    ok = at >= 0
    src = np.full((reference.n_models, len(sub.item_ids)), np.nan)
    src[:, ok] = np.where(reference.observed[:, at[ok]], reference.values[:, at[ok]], np.nan)
    tgt = np.where(sub.observed, np.asarray(sub.values, float), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a model without a result on every chosen item
        chk = range_check(src, tgt)
    lo, hi = chk.source_range
    out = {}
    for j in np.flatnonzero(flagged):
        parts = []
        if chk.above[j] or chk.below[j]:
            parts.append("mean {} on the chosen items outside the references' [{}, {}] there".format(
                *_apart(float(chk.subset_score[j]), lo, hi)))
        if chk.far[j]:
            parts.append(f"distance {chk.distance[j]:.3f} to the nearest reference on the chosen items above "
                         f"{chk.distance_limit:.3f}, the largest of a reference to its nearest other one")
        out[int(j)] = "; ".join(parts)
    return out


@dataclass
class _Combined:
    """The whole benchmark's estimate: the tasks' estimates weighted by their sizes."""

    parts: list
    binary: Any = True  # per new model (or one for all): its results on the chosen items are 0/1

    @property
    def statistic(self) -> np.ndarray:
        # the weights sum to one up to rounding: scores in [0, 1] stay there
        return np.clip(sum(p.weight * np.asarray(p.result.statistic, float) for p in self.parts), 0.0, 1.0)

    def _design(self) -> np.ndarray:
        """Bool array of shape (n_parts, n_new_models): which task estimates of each model are design-based."""
        return np.array([_design_rows(p) for p in self.parts], bool)

    def _all_design(self) -> np.ndarray:
        """Per new model: with 0/1 scores, every task's estimate design-based, so the count-based combination
        (Korn-Graubard, the exact interval of samples all alike) applies to it."""
        return self._design().all(0) & self.binary

    @property
    def standard_error(self) -> np.ndarray:
        """The standard error the interval implies: for a model with 0/1 scores and every task design-based, a
        degenerate task's (every sampled item alike) is its count's (:meth:`_count_se`), as the interval's; else
        the tasks' own (:meth:`_own_se`)."""
        every = self._all_design()
        if every.any():
            return np.where(every, self._count_se(), self._own_se())
        return self._own_se()

    def _own_se(self) -> np.ndarray:
        """Per new model, :math:`\\sqrt{\\sum_{t \\in D} (w_t s_t)^2 + (\\sum_{t \\in M} w_t s_t)^2}`, with
        :math:`D` its tasks whose estimate is design-based and :math:`M` the model-based ones. Tasks' items are
        drawn independently, so a design-based task's error has mean zero whatever the other tasks' draws: it is
        uncorrelated with every other task's error and the variances add. A model-based error is the fitted
        model's bias for that new model, which may share its sign across tasks (a model better than every reference
        is predicted low on each): their standard errors add linearly, the bound for any correlation
        (Cauchy-Schwarz)."""
        se = np.array([p.weight * self._task_se(p) for p in self.parts], float)
        design = self._design()
        return np.sqrt(np.sum(np.where(design, se, 0.0) ** 2, axis=0) + np.sum(np.where(design, 0.0, se), axis=0) ** 2)

    def _own_df(self) -> np.ndarray:
        """Per new model, Satterthwaite's effective degrees of freedom of :meth:`_own_se`'s variance (Cochran 1977,
        Sect. 5.4), :math:`(\\sum_t v_t)^2 / \\sum_t v_t^2 / \\nu_t` over its tasks' terms :math:`v_t`: a
        design-based task's own degrees of freedom (the t interval of StratifiedHT, AIPW and StratifiedAIPW; two or
        three sampled items a stratum give a task few), infinite for the others and for a degenerate standard error
        replaced by its interval's or its floor (:meth:`_task_se`), where the normal quantile stands."""
        se = np.array([p.weight * self._task_se(p) for p in self.parts], float)
        design = self._design()
        nu = np.full(se.shape, np.inf)
        for j, p in enumerate(self.parts):
            df = getattr(_design_result(p), "df", None)
            if df is not None and p.method != "all":
                nu[j] = np.where(design[j] & ~_degenerate(p) & ~_floored(p), np.asarray(df, float), np.inf)
        v = np.where(design, se, 0.0) ** 2
        total = v.sum(axis=0) + np.sum(np.where(design, 0.0, se), axis=0) ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, total**2 / (v**2 / nu).sum(axis=0), np.inf)

    def _task_se(self, p: "_TaskResult") -> np.ndarray:
        """A task's standard error; for graded scores of a design-based task whose standard error is degenerate
        (sampled scores all alike, whose residual variance says nothing of the items the sample missed), the
        half-width of its own interval (the exact one of a sample all alike) over the normal 97.5 % quantile; where
        the interval is its floor's (:func:`_floored`), the floor."""
        own = se = np.asarray(p.result.standard_error, float)
        graded = ~np.broadcast_to(self.binary, se.shape)
        if p.method == "all" or not graded.any():
            return se
        floored = _floored(p) & _design_rows(p)
        if floored.any():
            se = np.where(floored, np.asarray(_design_result(p).floor, float), se)
        return np.where(graded, _interval_se(p, se), own)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        level = check_confidence_level(confidence_level)
        if len(self.parts) == 1:
            p = self.parts[0]
            ci = p.result.confidence_interval(level)
            low, high = np.asarray(ci.low, float), np.asarray(ci.high, float)
            # a design-based interval of zero width from fewer than all items (every sampled item alike and, for
            # AIPW, no residual variance: a normal interval of se 0) would claim the score exactly; Korn-Graubard's
            # at the items evaluated, as for several tasks; so for a width below 1e-6 of the score's range or a
            # degenerate standard error
            point = ((((high - low) < 1e-6) & (np.asarray(p.n_evaluated) < p.n_items)) | _degenerate(p)) & self.binary
            if p.design_based and p.method != "all" and point.any():
                # a degenerate standard error says nothing of the spread: the count's interval (se 0: n* = b)
                kg = self._korn_graubard(self.statistic, np.where(point, 0.0, self._own_se()), level)
                low, high = np.where(point, kg.low, low), np.where(point, kg.high, high)
                low, high, alike = self._alike_exact(point, low, high, level)
                if p.method in _SRS_METHODS:
                    low, high = self._srs_count(p, point & ~alike, low, high, level)
            return ConfidenceInterval(low, high)
        est, se = self.statistic, self._own_se()
        z = stats.t.ppf(0.5 + level / 2, self._own_df())  # the normal quantile at infinite degrees of freedom
        low, high = np.clip(est - z * se, 0, 1), np.clip(est + z * se, 0, 1)
        every = self._all_design()
        if every.any():  # models whose every task is design-based: the count-based interval
            kg = self._korn_graubard(est, self._count_se(), level)
            point = every & np.logical_and.reduce([_degenerate(p) | (np.asarray(p.n_evaluated) >= p.n_items)
                                                   for p in self.parts])
            kl, kh = self._alike_exact(point, kg.low, kg.high, level)[:2]
            kl, kh = self._few_minority(every & ~point, kl, kh, level)
            low, high = np.where(every, kl, low), np.where(every, kh, high)
        return ConfidenceInterval(low, high)

    def _few_minority(self, rows: np.ndarray, low: np.ndarray, high: np.ndarray,
                      level: float) -> tuple[np.ndarray, np.ndarray]:
        """``low``/``high`` with the ``rows`` models whose sampled items over every task hold one to five minority
        responses (wrong items of a model mostly right) widened, on the side towards all alike, to the limit that
        holds wherever the population's minority items lie among the tasks' strata (``stratified_minority_limit``;
        as each task's own interval). As for ``_alike_exact``, only when the tasks weigh by their items and every
        task's design is a stratified simple random sample (or a census, whose minority items are all seen)."""
        from .._hypergeometric import stratified_minority_limit
        from .._subset_results import _FEW_MINORITY

        sizes = np.array([p.n_items for p in self.parts], float)
        if (not rows.any() or not np.any(self.binary)
                or not np.allclose([p.weight for p in self.parts], sizes / sizes.sum(), atol=1e-9)):
            return low, high
        k_parts, n_parts, wrong, right = [], [], 0.0, 0.0
        for p in self.parts:
            n_items = float(p.n_items)
            est = np.asarray(p.result.statistic, float)
            design = _design_result(p)
            pop, seen = getattr(design, "population", None), getattr(design, "n_minority", None)
            if p.method == "all":
                k_parts.append(np.full((len(est), 1), n_items))
                n_parts.append(np.full((len(est), 1), n_items))
                wrong, right = wrong + np.round((1 - est) * n_items), right + np.round(est * n_items)
                continue
            if pop is None or seen is None:
                return low, high
            k_h = np.asarray(design.n_sampled, float).reshape(len(est), -1)
            k_parts.append(k_h)
            n_parts.append(np.asarray(pop, float).reshape(len(est), -1))
            m, at = np.asarray(seen, float), np.asarray(design.alike_at, float)
            k = k_h.sum(axis=1)
            wrong, right = wrong + np.where(at > 0.5, m, k - m), right + np.where(at > 0.5, k - m, m)
        k_h, n_h = np.concatenate(k_parts, axis=1), np.concatenate(n_parts, axis=1)
        c = np.minimum(wrong, right)
        few = (rows & np.isfinite(c) & (c > 0) & (c <= _FEW_MINORITY) & (wrong != right)
               & (k_h.sum(axis=1) < n_h.sum(axis=1)))
        if not few.any():
            return low, high
        share = stratified_minority_limit(k_h[few], n_h[few], c[few], level)
        mostly_right = (wrong < right)[few]
        low, high = np.array(low, float), np.array(high, float)
        high[few] = np.where(mostly_right, np.maximum(high[few], 1.0 - share), high[few])
        low[few] = np.where(mostly_right, low[few], np.minimum(low[few], share))
        return low, high

    def _srs_count(self, p: "_TaskResult", point: np.ndarray, low: np.ndarray, high: np.ndarray,
                   level: float) -> tuple[np.ndarray, np.ndarray]:
        """``low``/``high`` with the ``point`` models of a task drawn as one simple random sample given the exact
        (hypergeometric) interval of their count: the count of 0/1 items drawn without replacement is
        hypergeometric, and its interval is contained in the Clopper-Pearson one at the items evaluated. The
        estimate of such a model (AIPW's fitted model predicting each sampled item within 1e-3) is its count's
        share; a model whose sampled items are all alike has the exact interval of ``_alike_exact`` instead."""
        from .._hypergeometric import hypergeometric_interval

        k = np.asarray(p.n_evaluated, float)
        srs = point & (k >= 1) & (k < p.n_items)
        if srs.any():
            x = np.clip(np.round(self.statistic[srs] * k[srs]), 0.0, k[srs])
            ci = hypergeometric_interval(x, k[srs], p.n_items, level)
            low, high = np.array(low, float), np.array(high, float)
            low[srs], high[srs] = ci.low, ci.high
        return low, high

    def _alike_exact(self, point: np.ndarray, low: np.ndarray, high: np.ndarray,
                     level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``low``/``high`` with the ``point`` models whose every task's sampled items are all right (or all
        wrong) given the exact interval of a stratified simple random sample all alike: the tasks' strata (a
        task drawn as one simple random sample is one stratum; a census, one sampled whole) are the strata of one
        stratified sample, and the worst placement of the wrong items among them bounds the score
        (``stratified_alike_interval``). The score is the share of all items right only when the tasks weigh
        by their items; tasks weighed alike, or a task whose design is not a stratified simple random sample
        (Sort & Search's cells, model-based methods), keep the interval they have. The third array marks the
        models given the exact interval (one task drawn as one simple random sample: ``hypergeometric_interval``
        of a count of none or all)."""
        from .._hypergeometric import stratified_alike_interval

        none = np.zeros(np.shape(point), bool)
        sizes = np.array([p.n_items for p in self.parts], float)
        if not np.any(self.binary) or not np.allclose([p.weight for p in self.parts], sizes / sizes.sum(), atol=1e-9):
            return low, high, none
        designs, right, wrong = [], np.array(point, bool), np.array(point, bool)
        for p in self.parts:
            k, n_items = np.asarray(p.n_evaluated, float), float(p.n_items)
            est = np.asarray(p.result.statistic, float)
            census = (k >= n_items) | (p.method == "all")
            design = _design_result(p)  # the ``point`` models' rows are design-based (their own or the fallback's)
            pop = getattr(design, "population", None)
            if census.all() and p.method == "all":
                designs.append((np.full((len(k), 1), n_items), np.full((len(k), 1), n_items)))
            elif pop is not None and np.ndim(pop) == 2:
                designs.append((np.asarray(design.n_sampled, float), np.asarray(pop, float)))
            elif p.method in _SRS_METHODS or pop is not None:
                designs.append((np.minimum(k, n_items)[:, None], np.full((len(k), 1), n_items)))
            else:
                return low, high, none
            # a census is all right (all wrong) only at a score of exactly 1 (0); a sample, where its responses are
            sign = np.zeros(len(k), int) if p.alike is None else np.asarray(p.alike, int)
            right &= np.where(census, est >= 1 - 1e-12, sign == 1)
            wrong &= np.where(census, est <= 1e-12, sign == -1)
        alike = (right | wrong) & (sum(np.asarray(p.n_evaluated, float) for p in self.parts) < sizes.sum())
        if alike.any():
            k_h = np.concatenate([d[0] for d in designs], axis=1)[alike]
            n_h = np.concatenate([d[1] for d in designs], axis=1)[alike]
            ci = stratified_alike_interval(k_h, n_h, right[alike], level)
            low, high = np.array(low, float), np.array(high, float)
            low[alike], high[alike] = ci.low, ci.high
        return low, high, alike

    def _count_se(self) -> np.ndarray:
        """The combined standard error with each task's degenerate one replaced by its count's.

        A task sampled in part whose standard error has a per-item variance (se^2 times the items evaluated) below
        1e-6 (every sampled item alike, or a fitted model that predicts each within 1e-3) says nothing of its
        spread; as zero it would leave the other tasks' variance alone to set the effective size, and a
        near-zero one lifts it to the design effect's floor of 1/4 (four times the items evaluated). It counts
        instead as a simple random sample of its items evaluated (finite-population-corrected) at its own
        proportion shrunk towards 1/2 by half an item of the items evaluated over every task (``b``), ``(b p + 1/2)
        / (b + 1)``: every task degenerate gives Kish's effective size of the
        allocation, at most the items evaluated (before the correction) and so never a narrower interval than
        the count of the sampled items.
        """
        b = sum(np.asarray(p.n_evaluated, float) for p in self.parts)
        var = np.zeros(len(b))
        for p in self.parts:
            se = np.asarray(p.result.standard_error, float)
            if p.method != "all":
                se = np.where(_degenerate(p), _count_task_se(p, b), se)
            var += (p.weight * se) ** 2
        return np.sqrt(var)

    def _korn_graubard(self, est: np.ndarray, se: np.ndarray, level: float) -> ConfidenceInterval:
        """Clopper-Pearson at the design's effective sample size, as Sort & Search's own interval: a task whose
        sampled items all agree (a zero variance estimate) cannot make the interval a point. Several tasks make a
        stratified sample (each task a stratum, weighted, sampled at its own rate), whose count follows no
        hypergeometric law: the effective size stands in for the exact interval of one simple random sample (where
        every sampled item is alike, ``_alike_exact`` gives the exact interval of the stratified sample)."""
        from ..sortsearch import korn_graubard_interval

        n_items = sum(p.n_items for p in self.parts)
        few = self._sortsearch_minority()
        low, high = np.empty(len(est)), np.empty(len(est))
        for j in range(len(est)):
            b = int(sum(p.n_evaluated[j] for p in self.parts))
            # Sort & Search's one item per cell pairs neighbouring cells: about half the items' degrees of freedom
            df = sum(p.n_evaluated[j] // 2 if p.method == "sortsearch" else max(p.n_evaluated[j] - 1, 1)
                     for p in self.parts if p.method != "all")
            if b >= n_items:
                low[j] = high[j] = est[j]
                continue
            ci = korn_graubard_interval(float(est[j]), float(se[j]), b, n_items, level, df=max(float(df), 1.0),
                                        minority=None if few is None else float(few[j]))
            low[j], high[j] = float(ci.low), float(ci.high)
        return ConfidenceInterval(low, high)

    def _sortsearch_minority(self) -> np.ndarray | None:
        """Per new model, the fewer of its right and wrong evaluated items over the tasks when every task is Sort &
        Search's (one item per cell: one or two of them bound Korn-Graubard's effective size, as in a task alone);
        None otherwise."""
        if not all(p.method == "sortsearch" and getattr(p.result, "minority", None) is not None for p in self.parts):
            return None
        wrong = right = 0.0
        for p in self.parts:
            m, k = np.asarray(p.result.minority, float), np.asarray(p.n_evaluated, float)
            w = np.where(np.asarray(p.result.statistic, float) >= 0.5, m, k - m)
            wrong, right = wrong + w, right + k - w
        return np.minimum(wrong, right)
