"""Read a new model's results back, estimate its score and rank: :func:`estimate` and its :class:`Estimate`."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._escape import csv_safe, html_safe, md_text, md_to_html
from .._results import ConfidenceInterval, check_confidence_level
from .._response_meta import twin_note
from .._shared import _level_percent, _name_list, _plain, swap_files
from ..responses import ResponseMatrix
from ..datasets._lm_eval_files import noting_results_without_samples
from ..datasets._lm_eval_records import EmptySamplesFile
from ._io import output_dir, read_new_results
from ._provenance import check_lm_eval_provenance, protocol_note
from ._combine import (_CANDIDATE_METHODS, _ESTIMATOR_NAMES, _combine, _Combined, _count_task_se, _degenerate,
                       _design_rows, _interval_se, _pick_name, _TaskResult, warn_unobserved_strata)
from ._files import REPORT_FILES, REPORT_RECORD, report_in_manifest, report_record
from ._refit import _refit
from ._task_kinds import with_task_kinds
from ._select import Selection, _observed_scores
from ._names import MANIFEST, SCORES
from ._new_results import (_id_hint, _refuse_missing_tasks, _refuse_transposed_results, empty_log_advice,
                           lookalike_note, models_named, reference_models_advice, refuse_unicode_twins, str_id_set,
                           warn_graded_against_binary, zero_one_where_read)
from ._tasks import comma_hint, design_methods, item_tasks

__all__ = ["Estimate", "estimate"]

# the estimators whose interval is systematic (HybridSearch: Sort & Search's on the cells' centres, items fixed by
# the references' order), as the report names them, and what the report says of such an interval
_SYSTEMATIC = {_ESTIMATOR_NAMES["hybrid"]}
_SYSTEMATIC_WORDS = "systematic (on fixed items: it holds on average over models like the references)"

# --------------------------------------------------------------------------------------------------- estimate
@dataclass
class Estimate:
    """A new model's (or several new models') score from its results on the chosen items, and its place among the
    reference models.

    ``statistic`` / ``standard_error`` / :meth:`confidence_interval` follow scipy.stats' result protocol, one value
    per new model; :meth:`rank_interval` places each new model in the leaderboard of the reference models;
    :meth:`to_frame`, :meth:`tasks` and :meth:`save` (CSV, Markdown, HTML) report it.

    Parameters
    ----------
    model_ids : Index
        The new models, in the order of the results (or of the names ``estimate``'s ``models`` gave): every
        per-model array and table follows it.
    leaderboard : DataFrame
        The reference models' scores on the whole benchmark (``score``: the task-weighted mean of their observed
        items, ``standard_error``: 0 for a model with every item, else the finite-population error of that mean).
    selection : Selection
        The selection whose items were scored.
    n_missing : Series
        Chosen items each new model has no result on (estimated from the others).
    weights : {"items", "tasks"}, default="items"
        How tasks are weighted in the whole-benchmark score.
    unranked : Index, default=empty
        Reference models left out of the ranking: they have no result on some task.
    scored_tasks : Index, default=None
        The tasks the score covers: every task of the manifest (the default, None) unless :func:`estimate` was
        given ``tasks``.
    n_left_out : int, default=0
        Items of the new results outside the manifest that ``restrict_to_manifest=True`` left out.
    protocol_changes : tuple of str, default=()
        How the new runs were made otherwise than the reference runs, where ``allow_protocol_change=True`` scored
        them (another prompt or few-shot count in lm-eval logs, another HELM adapter spec): the report says so.
    without_samples : tuple of str, default=()
        Models of the new results left out unscored: their lm-eval output holds a results file but no samples
        (a run without ``--log_samples``); the report names them.

    Attributes
    ----------
    omitted_tasks : Index
        The manifest's tasks left out of the score (empty unless ``tasks`` was given).
    statistic, standard_error : ndarray of shape (n_new_models,)
        The whole-benchmark score per new model and its standard error.

    See Also
    --------
    effstats.workflow.estimate : makes it.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.workflow import estimate, select
    >>> data = simulate_responses(41, 800, rng=0)
    >>> ref, new = data.subset(models=range(40)), data.subset(models=[40])
    >>> sel = select(ref, 100, seed=0)
    >>> est = estimate(sel, new.subset(items=sel.items))
    >>> est.statistic.round(3), est.confidence_interval(0.95).low.round(3)   # its accuracy on all 800: 0.238
    (array([0.188]), array([0.117]))
    >>> est.rank_interval()   # 1 = best of the 40 reference models and the new one
               rank  rank_low  rank_high  of
    model
    sim40        40        39         41  41
    """

    model_ids: pd.Index
    leaderboard: pd.DataFrame
    selection: Selection
    n_missing: pd.Series
    weights: str = "items"
    unranked: pd.Index = field(default_factory=lambda: pd.Index([]))
    scored_tasks: pd.Index = None
    n_left_out: int = 0
    protocol_changes: tuple = ()
    without_samples: tuple = ()
    _combined: _Combined = field(default=None, repr=False)
    _parts: list = field(default=None, repr=False)

    def __repr__(self) -> str:
        est = ", ".join(f"{m}: {s:.3f}" for m, s in zip(self.model_ids[:3], self.statistic[:3]))
        more = f", … ({len(self.model_ids)} models)" if len(self.model_ids) > 3 else ""
        return f"Estimate({est}{more}; method={self.selection.method!r}, {len(self.selection.items)} items)"

    def __post_init__(self) -> None:
        if self.scored_tasks is None:
            self.scored_tasks = pd.Index(list(self.selection.tasks.index))

    @property
    def omitted_tasks(self) -> pd.Index:
        """The selection's tasks without a new result (left out of the estimate, with a warning)."""
        return pd.Index([t for t in self.selection.tasks.index if t not in set(self.scored_tasks)])

    @property
    def statistic(self) -> np.ndarray:
        """Estimated whole-benchmark score (mean over all items of all scored tasks) per new model."""
        return self._combined.statistic

    @property
    def standard_error(self) -> np.ndarray:
        """Standard error of each new model's whole-benchmark score, shape (n_new_models,): the estimators' own
        (design-based, systematic for ``hybrid``, or cross-validated over the reference models), except where a
        task's evaluated items are all alike with 0/1 scores and design-based methods. There the estimator's own is
        0 (a degenerate variance estimate) and the interval comes from the count of those items (Clopper-Pearson,
        Korn-Graubard), so that task counts with its count's standard error, a simple random sample of its
        evaluated items at the proportion shrunk towards 1/2 by half an item: the standard error the interval
        implies, never 0 beside an interval that is not a point."""
        return self._combined.standard_error

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval for each new model's whole-benchmark score.

        One task: the method's own interval (Wilson / Korn–Graubard for random designs, cross-validated
        conformal for model-based predictors; the exact hypergeometric interval of the count where every chosen
        item of a simple random sample is alike, and of a stratified one, such as stratified AIPW's, the exact
        interval of the worst placement of the wrong items among its strata; one to five wrong items, or right ones
        of a model mostly wrong, at least the limit of their worst placement on the side towards all alike,
        ``stratified_minority_limit``). Several tasks: the size-weighted sum
        of the tasks' estimates. Per model, the weighted standard errors of its design-based task estimates (the
        method's own, or the out-of-range fallback's) add in quadrature (independent samples per task, so their
        errors are uncorrelated with every other task's), those of its model-based ones linearly (the errors of one
        model may share a sign across tasks: the bound for any correlation), and the two parts in quadrature:
        :math:`\\mathrm{se}^2 = \\sum_{t \\in D} (w_t s_t)^2 + (\\sum_{t \\in M} w_t s_t)^2` (:math:`D`, :math:`M`:
        its design-based and model-based task estimates; :math:`w_t`, :math:`s_t`: a task's weight and standard
        error). With 0/1 scores and every task estimate of a model design-based its interval is Korn–Graubard's
        (Clopper–Pearson at the design's effective sample size, so not symmetric about the estimate), or, where every
        chosen item of every task is alike and the tasks weigh by their items, the exact interval of the tasks'
        strata as one stratified sample (one to five minority items over the tasks: at least their worst
        placement's limit, as for one task); otherwise it is the normal interval ``estimate ± z·se``.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Level of the interval, in (0, 1).

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high``, arrays of shape (n_new_models,) in the order of ``model_ids``.
        """
        return self._combined.confidence_interval(confidence_level)

    def rank_interval(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """Each new model's rank among the reference models (1 = best) and a confidence interval for it.

        The rank is one plus the number of reference models scoring above the estimate. The interval comes from
        simultaneous intervals (Bonferroni): the new model's score interval at level ``1 - alpha/2`` and each
        uncertain reference score (a model with missing items) at ``1 - alpha / (2 m)``; rank ``low`` counts the
        reference models surely above, ``high`` those possibly above. Since the rank is monotone in the scores,
        the interval covers the true rank whenever the simultaneous intervals cover the scores. With complete
        reference data only the new model's interval matters and it is used at level ``1 - alpha``.

        Parameters
        ----------
        confidence_level : float, default=0.95
            The rank interval's level, in (0, 1).

        Returns
        -------
        pandas.DataFrame
            One row per new model, indexed by ``model_ids``: ``rank``, ``rank_low`` and ``rank_high`` (1 = best)
            and ``of``, the number of places (the ranked reference models and the new model).

        See Also
        --------
        effstats.workflow.Estimate.confidence_interval : the score interval the rank interval comes from.

        References
        ----------
        Klein, M., Wright, T. and Wieczorek, J. (2020). A joint confidence region for an overall ranking of
        populations. *Journal of the Royal Statistical Society C* 69(3), 589–606.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.workflow import estimate, select
        >>> data = simulate_responses(33, 600, rng=1)   # 30 reference models and 3 new ones
        >>> sel = select(data.subset(models=range(30)), 80, seed=1)
        >>> est = estimate(sel, data.subset(models=[30, 31, 32], items=sel.items))
        >>> est.rank_interval(0.9)   # 1 = best of 31 places: the reference models and the new model
               rank  rank_low  rank_high  of
        model
        sim30         1         1          1  31
        sim31        28        26         29  31
        sim32        16         8         23  31
        """
        level = check_confidence_level(confidence_level)
        alpha = 1 - level
        ref, se_ref = self.leaderboard["score"].to_numpy(), self.leaderboard["standard_error"].to_numpy()
        uncertain = se_ref > 0
        m = int(uncertain.sum())
        new_level = 1 - alpha / 2 if m else level
        ci = self.confidence_interval(new_level)
        if m:
            z = stats.norm.ppf(1 - alpha / (4 * m))
            r_lo, r_hi = ref - z * se_ref, ref + z * se_ref
        else:
            r_lo = r_hi = ref
        est = self.statistic
        rank = 1 + (ref[None, :] > est[:, None]).sum(1)
        low = 1 + (r_lo[None, :] > np.asarray(ci.high)[:, None]).sum(1)
        high = 1 + (r_hi[None, :] >= np.asarray(ci.low)[:, None]).sum(1)
        return pd.DataFrame({"rank": rank, "rank_low": low, "rank_high": high, "of": len(ref) + 1},
                            index=self.model_ids.rename("model"))

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """The estimates, one row per new model.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Level of the score and rank intervals, in (0, 1).

        Returns
        -------
        DataFrame
            ``estimate``, ``standard_error`` (:attr:`standard_error`: where the evaluated items of a task are
            all alike, their count's, as the interval), ``weights`` (the score estimated: ``"items"``, the mean
            over all items, or ``"tasks"``, the mean of the task means), ``confidence_level`` (the level of the
            score interval and of the rank interval, so that a table read later says it), ``low``, ``high`` (the
            score interval),
            ``rank``, ``rank_low``, ``rank_high`` (the rank interval, 1 = best), ``of`` (the ranked models),
            ``n_evaluated`` (chosen items with a result), ``n_missing`` (chosen items without one),
            ``out_of_range`` (in some task the model's estimate lies beyond the reference models' task scores (a
            design-based one by more than its sampling error), or its results on the chosen items beyond theirs,
            the check of the methods fitted to the reference models) and ``estimator`` (the estimator that made the
            number: the method's, the chooser's pick, or ``"AIPW + ridge (out-of-range
            fallback)"`` for an out-of-range model under ``"auto"``; with several tasks of different estimators,
            each with its tasks); last ``n_items``, the same as ``n_evaluated`` under its former name (not the
            benchmark's size, which ``Selection.tasks``' ``n_items`` is).
        """
        level = check_confidence_level(confidence_level)
        ci = self.confidence_interval(level)
        out = pd.DataFrame({"estimate": self.statistic, "standard_error": self.standard_error,
                            "weights": self.weights, "confidence_level": level, "low": ci.low, "high": ci.high},
                           index=self.model_ids)
        out = out.join(self.rank_interval(level))
        out["n_evaluated"] = sum(p.n_selected for p in self._parts) - self.n_missing.to_numpy()
        out["n_missing"] = self.n_missing.to_numpy()
        out["out_of_range"] = pd.array([_any_flag([p.out_of_range for p in self._parts], j)
                                        for j in range(len(self.model_ids))], dtype="boolean")
        out["estimator"] = [_estimators([(p.task, p.estimator[j]) for p in self._parts])
                            for j in range(len(self.model_ids))]
        out["n_items"] = out["n_evaluated"]
        out.index.name = "model"
        return out

    def tasks(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """The estimates per task.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Level of the intervals, in (0, 1).

        Returns
        -------
        DataFrame
            Indexed by (model, task): ``weight`` (the task's weight in the whole-benchmark score), ``estimate``,
            ``standard_error`` (the task estimator's own; where the task's evaluated items are all alike, whose own
            standard error is then 0 or within rounding of it, with 0/1 scores their count's, as in
            :attr:`standard_error`: a simple random sample of its items evaluated at the proportion shrunk towards
            1/2 by half an item, so that a one-task benchmark's standard error is its task's; with graded scores the
            half-width of its 95 % interval over 1.96, the standard error the interval implies),
            ``confidence_level`` (the level of the interval), ``low``, ``high``, ``n_evaluated`` (chosen items with
            a result), ``n_chosen``, ``out_of_range`` and ``estimator`` (as in :meth:`to_frame`, for the task); last
            ``n_items``, the same as ``n_evaluated`` under its former name (not the task's size, which
            ``Selection.tasks``' ``n_items`` is).
        """
        level = check_confidence_level(confidence_level)
        rows = []
        for p in self._parts:
            ci = p.result.confidence_interval(level)
            se = _interval_se(p)
            if p.method != "all":  # with 0/1 scores, as the whole benchmark's, the task's own count's
                se = np.where(_degenerate(p) & _design_rows(p) & self._combined.binary,
                              _count_task_se(p, np.asarray(p.n_evaluated, float)), se)
            for j, mid in enumerate(self.model_ids):
                rows.append({"model": mid, "task": p.task, "weight": p.weight,
                             "estimate": float(np.asarray(p.result.statistic)[j]),
                             "standard_error": float(se[j]), "confidence_level": level,
                             "low": float(np.asarray(ci.low)[j]), "high": float(np.asarray(ci.high)[j]),
                             "n_evaluated": int(p.n_evaluated[j]), "n_chosen": p.n_selected,
                             "out_of_range": pd.NA if p.out_of_range is None else bool(p.out_of_range[j]),
                             "estimator": p.estimator[j]})
        out = pd.DataFrame(rows).set_index(["model", "task"])
        out["out_of_range"] = out["out_of_range"].astype("boolean")
        out["n_items"] = out["n_evaluated"]
        return out

    def to_markdown(self, confidence_level: float = 0.95) -> str:
        """The report as Markdown: the estimate table, per-task estimates, chosen items without a result.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Level of the intervals in the tables, in (0, 1).

        Returns
        -------
        str
            What ``effstats estimate`` writes to ``estimate.md``.
        """
        return self._render(confidence_level, md_text)

    def _render(self, confidence_level: float, text: Any) -> str:
        """The report with the names from the data written by ``text``: :func:`effstats._escape.md_text` for the
        Markdown file, :func:`effstats._escape.line_text` for a terminal (which shows Markdown's escapes as
        typed: ``rotate\\_+30``)."""
        confidence_level = check_confidence_level(confidence_level)
        sel = self.selection
        pct = _level_percent(confidence_level)
        if len(self.omitted_tasks):  # the score covers the scored tasks' items, and so does the title
            scored = sel.tasks.loc[list(self.scored_tasks)]
            chosen, of = int(scored["n_chosen"].sum()), int(scored["n_items"].sum())
        else:
            chosen, of = len(sel.items), int(sel.reference["n_items"])
        lines = [f"# Estimate from {chosen} of {of:,} items", ""]
        if len(self.omitted_tasks):
            lines += [f"**Scored on {len(self.scored_tasks)} of the manifest's {len(sel.tasks)} tasks only** "
                      f"({', '.join(map(text, self.scored_tasks))}); left out: "
                      f"{', '.join(map(text, self.omitted_tasks))}. "
                      "The score, its interval and the rank (against the reference models on the same tasks) are not "
                      "the whole benchmark's.", ""]
        lines += [
                 f"Method `{text(sel.method)}` (seed {sel.seed}), {sel.reference['n_models']} reference models, "
                 f"{len(self.scored_tasks)} task(s), the score "
                 f"{SCORES[self.weights]} "
                 f"(weights `{self.weights}`). "
                 f"Intervals at {pct} %; rank 1 is the best of {len(self.leaderboard) + 1} models (the ranked "
                 "references and the new model).",
                 ""]
        lines += protocol_note(self.protocol_changes, "The estimate and the rank", text)
        if sel.method == "auto":
            kinds = {p.task: ("design-based interval" if p.design_based else
                              "model-based interval, cross-validated over the reference models")
                     + (f"; {int(p.fell_back.sum())} of {len(self.model_ids)} new model(s) out of range: "
                        f"{_fallback_name(p)}'s design-based interval" if p.fell_back.any() else "")
                     for p in self._parts}
            # each pick by the --method that fits it on its own, the chooser's name for it beside
            picks = "; ".join(f"{text(t)}: " + (f"`--method {_CANDIDATE_METHODS[m]}` ({text(m)}; "
                                                   if m in _CANDIDATE_METHODS else f"{text(m)} (")
                              + f"{text(kinds.get(t, 'every item'))})" for t, m in sel.tasks["method"].items())
            same = sorted({_CANDIDATE_METHODS[m] for m in sel.tasks["method"] if _pick_name(m) != m})
            seed = (f" A pick that is a method's own estimator ({', '.join(f'`--method {m}`' for m in same)}) draws "
                    "its items with the chooser's seed, derived from the selection's, so other items than that "
                    "method at the same `--seed`: the same design on another random draw." if same else "")
            lines += [f"The chooser picked, per task: {picks}.{seed}", ""]
        if sel.shortfall is not None:
            lines += [f"Fewer items than the budget: {text(sel.shortfall)}.", ""]
        range_notes = self._range_notes()
        notes = range_notes + self._anchor_notes() + self._combination_notes()
        if notes:
            lines += [text(" ".join(notes)), ""]
        f = self.to_frame(confidence_level)
        lines.append("| model | estimate | s.e. | interval | rank | rank interval | items | out of range | estimator |")
        lines.append("|---|---|---|---|---|---|---|---|---|")
        for mid, r in f.iterrows():
            oor = "n/a" if pd.isna(r.out_of_range) else "yes" if r.out_of_range else "no"
            lines.append(f"| {text(mid)} | {r.estimate:.4f} | {r.standard_error:.4f} | "
                         f"[{r.low:.4f}, {r.high:.4f}] | {int(r['rank'])} | [{int(r.rank_low)}, {int(r.rank_high)}] | "
                         f"{int(r.n_evaluated)} | {oor} | "
                         f"{text(r.estimator)} |")
        # the check is made on the 95 % interval, whatever the report's level
        check = ("its 95 % interval" if abs(confidence_level - 0.95) < 1e-12 else
                 "its 95 % interval, whatever the level of the intervals above,")
        lines += ["", "*Out of range*: yes if the model's estimate on some task lies outside the reference models' "
                  f"range of scores on it (a design-based one by more than its sampling error: {check} "
                  "clear of the range), or the method's checks on the chosen items fire: its mean there lies "
                  "outside the references' means there, or its distance to the nearest reference (root mean squared "
                  "difference) exceeds the largest distance of a reference to its nearest other one (there a "
                  "model-based estimate extrapolates); no if none."
                  + (" The note above names the check per model." if range_notes else "")]
        if len(self._parts) > 1:
            lines += ["", "## Per task", "", "| model | task | estimate | interval | items |", "|---|---|---|---|---|"]
            for (mid, t), r in self.tasks(confidence_level).iterrows():
                lines.append(f"| {text(mid)} | {text(t)} | {r.estimate:.4f} | [{r.low:.4f}, {r.high:.4f}] | "
                             f"{int(r.n_evaluated)} |")
        if self.without_samples:
            lines += ["", "**New models left out, no per-document results (run without `--log_samples`): "
                      f"{', '.join(map(text, self.without_samples))}.** Rerun lm_eval with `--log_samples` to "
                      "estimate them."]
        if len(self.unranked):
            lines += ["", "Left out of the ranking (no result on some task): "
                      f"{', '.join(map(text, self.unranked))}."]
        if self.n_missing.sum():
            lines += ["", "Chosen items without a result (estimated from the others): "
                      + ", ".join(f"{text(m)}: {int(n)}" for m, n in self.n_missing.items() if n) + "."]
        return "\n".join(lines) + "\n"

    def _range_notes(self) -> list[str]:
        """Sentences naming the new models outside the reference models' range on a task's chosen items, and what
        their estimate there is: the out-of-range fallback's, a model-based extrapolation, or a design-based
        estimate (which holds there)."""
        groups: dict[str, tuple[dict, set, set]] = {k: ({}, set(), set()) for k in ("fallback", "model", "design")}
        for p in self._parts:
            if p.out_of_range is None:
                continue
            fell = p.fell_back
            for j, mid in enumerate(self.model_ids):
                if not p.out_of_range[j]:
                    continue
                kind = "fallback" if fell[j] else "design" if p.design_based else "model"
                where, bases, fbs = groups[kind]
                reason = "" if p.range_reason is None else str(p.range_reason[j])
                where.setdefault(str(mid), []).append((str(p.task), reason))
                bases.add(p.base)
                if fell[j]:
                    fbs.add(_fallback_name(p))
        several = len(self._parts) > 1

        def one(task: str, reason: str) -> str:
            return ": ".join(x for x in ((task if several else ""), reason) if x)

        def who(where: dict) -> str:
            return _name_list([f"{m} ({'; '.join(one(*tr) for tr in ts)})" if several or any(r for _, r in ts)
                               else m for m, ts in where.items()], 10, "and {} more")

        # the flag is any of three checks, named per model with its numbers: the task estimate outside the
        # reference models' task scores, or (the subset estimators' own checks on the chosen items) the new model's
        # mean there outside theirs, or its distance to the nearest reference beyond any reference's to its nearest
        head = "Outside the reference models' range (the check that fired, per model" + (
            " and task)" if several else ")")
        notes = []

        def lead() -> str:  # the range is said once: a model in several groups is not told it twice
            return head if not notes else "Also outside it"

        where, bases, fbs = groups["fallback"]
        if where:
            notes.append(f"{lead()}: {who(where)}; their estimate and interval there are {' or '.join(sorted(fbs))}'s "
                         f"(design-unbiased, on the same random items), not {' or '.join(sorted(bases))}'s, whose "
                         "model-based interval is calibrated on the reference models and need not hold beyond their "
                         "range.")
        where, bases, _ = groups["model"]
        if where:
            verb = "extrapolates" if len(bases) == 1 else "extrapolate"
            kinds = sorted({_SYSTEMATIC_WORDS if b in _SYSTEMATIC else "cross-validated over the reference models"
                            for b in bases})
            notes.append(f"{lead()}: {who(where)}; {' and '.join(sorted(bases))} {verb} there and the interval, "
                         f"{' or '.join(kinds)}, may not hold (a design-based method, "
                         f"{', '.join(design_methods())}, stays valid).")
        where, bases, _ = groups["design"]
        if where:
            notes.append(f"{lead()}: {who(where)}; {' and '.join(sorted(bases))}'s design-based estimate and interval "
                         "hold there too.")
        return notes

    def _combination_notes(self) -> list[str]:
        """Several tasks, some estimated on fixed items (systematic) or by a fitted model: how their standard errors
        combine, which the interval's width rests on."""
        if len(self._parts) < 2 or all(p.design_based for p in self._parts):
            return []
        systematic = any(p.base in _SYSTEMATIC for p in self._parts if not p.design_based)
        which = ("systematic" if systematic and all(p.base in _SYSTEMATIC for p in self._parts if not p.design_based)
                 else "systematic or model-based" if systematic else "model-based")
        design = ("; the design-based ones, whose items are drawn independently per task, add in quadrature"
                  if any(p.design_based for p in self._parts) else "")
        return [f"Across tasks, the weighted standard errors of the {which} task estimates add linearly: the bound "
                "whatever the correlation of their errors, which no random draw makes independent (a model unlike "
                f"the references may err the same way on every task){design}. The whole-benchmark interval is the "
                "normal one of that standard error."]

    def _anchor_notes(self) -> list[str]:
        """Method "anchor": its interval is model-based, and a heavy anchor stands for many items on its own."""
        heavy = [p for p in self._parts if p.heavy_anchor is not None]
        if not heavy:
            return []
        notes = ["Method anchor's interval is model-based (cross-validated over the reference models): it holds on "
                 f"average over models like the references, not for each model; the design-based methods "
                 f"({', '.join(design_methods())}) give intervals that hold for every model."]
        for p in heavy:
            item, share, ref_mean, unlike = p.heavy_anchor
            points = 100 * share * p.weight
            if points < 1:
                continue
            alike = (f"every reference model answered it {'right' if ref_mean == 1 else 'wrong'}"
                     if ref_mean in (0.0, 1.0) else f"the reference models' mean on it is {ref_mean:.2f}")
            who = [str(m) for m, u in zip(self.model_ids, unlike) if u]
            notes.append(f"Task {p.task}: one anchor, item {item}, stands for {100 * share:.0f} % of the task's items "
                         f"({alike}); a model that answers it otherwise is off by up to {points:.1f} points of the "
                         "score" + (f", as {_name_list(who, 10, 'and {} more')} did." if who else "."))
        return notes

    def _repr_html_(self) -> str:
        return html_safe(self.to_frame()).to_html(float_format=lambda x: f"{x:.4f}")

    def save(self, directory: str | Path, confidence_level: float = 0.95) -> dict[str, Path]:
        """Write the report: ``estimate.csv`` (:meth:`to_frame`), ``tasks.csv`` (:meth:`tasks`), ``estimate.md``
        (:meth:`to_markdown`) and ``estimate.html``, each atomically, and ``.effstats_estimate.json``, the record of
        the files written (``effstats estimate --force`` replaces only the files a record lists) and of the level of
        their intervals (``confidence_level``, as in the tables).

        Parameters
        ----------
        directory : path
            Created if needed.
        confidence_level : float, default=0.95
            Level of the intervals in every file, in (0, 1).

        Returns
        -------
        dict
            ``{"csv", "tasks", "markdown", "html"}`` -> the paths written.
        """
        return self._save(directory, confidence_level)

    def _save(self, directory: str | Path, confidence_level: float = 0.95,
              selection: Path | None = None, results: str | None = None,
              results_path: str | None = None) -> dict[str, Path]:
        """:meth:`save`; ``selection``: the folder of the selection whose folder holds ``directory`` (``effstats
        estimate`` holds its lock), whose manifest lists a report written into its report folders; ``results``
        and ``results_path``: the results' name and resolved path, recorded where ``directory`` is the default
        folder named after them."""
        d = output_dir(directory)
        confidence_level = check_confidence_level(confidence_level)
        frame, tasks = self.to_frame(confidence_level), self.tasks(confidence_level)
        md = self.to_markdown(confidence_level)
        # the page says what the Markdown says: its explanations, legends and table headings
        html = ("<!doctype html><meta charset='utf-8'><title>effstats estimate</title>"
                "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
                "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}</style>\n" + md_to_html(md))
        # the four files and their record put in place together: a kill leaves the previous report whole or, once
        # the next command has completed the swap, this one
        paths = {"csv": d / "estimate.csv", "tasks": d / "tasks.csv", "markdown": d / "estimate.md",
                 "html": d / "estimate.html"}
        files = [(paths["csv"], csv_safe(frame).to_csv()), (paths["tasks"], csv_safe(tasks).to_csv()),
                 (paths["markdown"], md), (paths["html"], html),
                 (d / REPORT_RECORD, report_record(REPORT_FILES, results, results_path, confidence_level))]
        manifest = None if selection is None else report_in_manifest(selection, [f for f, _ in files], self.selection)
        if manifest is None:
            swap_files(d, files)
        else:  # with the manifest's version that lists them, last, under the selection's journal: both or neither
            root = selection.resolve()
            swap_files(root, [(root / f.resolve().relative_to(root), text) for f, text in files]
                       + [(root / MANIFEST, manifest)])
        return paths


def _any_flag(flags: list, j: int) -> Any:
    """Model ``j`` out of range on some task (True), on none where every task checked (False), else unknown."""
    known = [bool(f[j]) for f in flags if f is not None]
    return True if any(known) else False if len(known) == len(flags) else pd.NA


def _estimators(per_task: list[tuple[str, str]]) -> str:
    """One name when every task's estimator is the same, else each name with its tasks."""
    by: dict[str, list[str]] = {}
    for t, e in per_task:
        by.setdefault(str(e), []).append(str(t))
    if len(by) == 1:
        return next(iter(by))
    return "; ".join(f"{e} on {', '.join(ts)}" for e, ts in by.items())


def _fallback_name(p: _TaskResult) -> str:
    return _pick_name(p.result.fallback_name)


def estimate(selection: Any, new_results: Any, *, reference: Any = None, metric: Any = None,
             duplicates: str = "last", weights: str | None = None, tasks: Any = None,
             restrict_to_manifest: bool = False, allow_protocol_change: bool = False,
             models: Any = None, progress: bool = False) -> Estimate:
    """Estimate new models' whole-benchmark scores from their results on the chosen items, and rank them.

    Parameters
    ----------
    selection : Selection or path
        A :class:`Selection` from :func:`select`, or the folder (or ``manifest.json``) it was saved to. A loaded
        manifest is refitted from the reference data, which must be the data it was made from (same content
        hash); the refit must choose the same items.
    new_results : path, ResponseMatrix or DataFrame
        The new models' results on the chosen items: lm-eval's output folder of the ``--samples`` run, a CSV of
        item scores, ... (see :func:`read_results`). Items are matched by id. Results on items outside the
        selection are refused; chosen items without a result are estimated from the other items of their task,
        with a warning naming them; under the methods stratified-aipw and stratified, a stratum where a model has
        no result on any chosen item is estimated from its nearest stratum's chosen items (collapsed strata), with
        a warning naming the model, the task and the stratum's items. A task of the manifest with no result at
        all for some model (the task was not run, or its output file is missing) is refused, naming the task: the
        whole-benchmark score would otherwise silently leave it out, or count it as 0. HELM runs are read with the
        manifest's split, perturbation and train-trial choice.
    reference : path or ResponseMatrix, optional
        The reference data, read instead of the manifest's copy (``reference.npz``) and of the path it records:
        a ResponseMatrix, or files in the layout the manifest was made from (its lm-eval logs moved or copied;
        the same scores as a table are refused, as its content hash covers the ids and scores only, not the
        logs' class probabilities and document ids).
    metric : str, optional
        Per-item metric to read from ``new_results`` (default: the reference's).
    duplicates : {"last", "first", "mean", "error"}, default="last"
        Two runs of one model in ``new_results``.
    weights : {"items", "tasks"}, optional
        The whole-benchmark score: each item counts once (the mean over all items, lm-eval's micro average), or each
        task counts once (the mean of the task means, as leaderboards that average tasks). Reference models and new
        models are scored the same way. Default: the score the selection split its budget for (its ``weights``;
        ``"items"`` for manifests that do not record it). The other one is estimated too, with a warning: the
        estimate and its interval stay valid, only less precise than from a selection made for it.
    tasks : str or list of str, optional
        Score on these tasks of the manifest only (default: every task). The estimate, its interval, the
        reference models' scores and hence the rank then cover these tasks only, and the report names the tasks
        left out; results on the other tasks are not read. A HELM scenario's name before its arguments
        (``mmlu``) names each of its run specs.
    restrict_to_manifest : bool, default=False
        Read only the manifest's items of ``new_results`` and ignore the others (e.g. a full HELM run or lm-eval
        run of the new model). Items are matched by their whole id, which names the task (HELM: the run spec
        without the model, and the train trial where trials are separate items), with the split, perturbation
        and trials the manifest records, so that one instance id in two scenarios is two items. An estimate from
        the chosen items of a full run is the estimate from a run on the chosen items: the selection does not
        depend on the new model's results.
    allow_protocol_change : bool, default=False
        lm-eval logs carry each document's digests (``doc_hash``, ``prompt_hash``, ``target_hash``) and each
        task's version and few-shot count; the manifest keeps the reference logs' for the chosen documents. New
        logs on other documents or targets (another dataset revision, another document order) are refused; other
        prompts or another few-shot count (another protocol, which moves every score) are refused unless this is
        True, then said in a warning; another task version alone is a warning. HELM runs: another adapter spec
        (method, prompt parts, few-shot count, temperature; not the model's own fields, the train-trial or
        instance count) in a scenario is refused unless this is True, naming the fields. Logs without digests
        (older harness versions) and tables are not checked.
    models : str or list of str, optional
        The models of ``new_results`` to score (default: every model in it). For a folder that holds the
        reference models' runs beside the new model's (HELM's ``benchmark_output/runs/SUITE`` after ``helm-run
        --suite`` for both, an lm-eval output folder of every model): name the new model(s), and the others are
        not read. A name not in ``new_results`` is refused, naming the model it differs from by letter case or
        Unicode normalisation. The estimate's rows follow the order of the names given; a set of names, which
        has no order, gives them in the order of ``new_results`` (as ``models=None`` does).
    progress : bool, default=False
        Show the progress of reading the reference data and of the refit on a terminal (standard error), each once
        it has taken 2 s.

    Returns
    -------
    Estimate

    Raises
    ------
    ValueError
        Naming the argument: among others, a new model without any result on a task to score (the message names
        the task and how to proceed), results on items outside the manifest, a transposed results table, a
        new model with the name of a reference model (its reference row would be ranked against it and enter the
        fit that estimates it: select again without it, or rename the new run; beside other models, the message
        names those to pass as ``models``), or lm-eval logs on other
        documents than the manifest's (``"new_results: task arc_easy doc 17: doc_hash differs from the reference
        logs' ..."``).

    See Also
    --------
    select : chooses the items and writes the manifest.
    effstats.workflow.Estimate.rank_interval : the rank among the reference models and its interval.

    References
    ----------
    Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data. *Survey Methodology* 24(2), 193–201 (the intervals of the
    design-based estimates on 0/1 results).

    Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley (stratified sampling, Ch. 5; regression and
    difference estimators, Ch. 7: stratified AIPW).

    Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. and Zrnic, T. (2023). Prediction-powered
    inference. *Science* 382(6671), 669–674.

    Zhang, G., Dorner, F. E. and Hardt, M. (2025). How benchmark prediction from fewer data misses the mark.
    arXiv:2506.07673 (AIPW on benchmarks).

    Klein, M., Wright, T. and Wieczorek, J. (2020). A joint confidence region for an overall ranking of
    populations. *Journal of the Royal Statistical Society C* 69(3), 589–606 (the rank interval).

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.workflow import select, estimate
    >>> data = simulate_responses(41, 800, rng=0)
    >>> ref, new = data.subset(models=range(40)), data.subset(models=[40])
    >>> sel = select(ref, 100, method="sortsearch", seed=0)
    >>> est = estimate(sel, new.subset(items=sel.items))
    >>> frame = est.to_frame()
    >>> bool(frame["low"].iloc[0] <= new.accuracy().iloc[0] <= frame["high"].iloc[0])
    True
    >>> list(frame.columns)
    ['estimate', 'standard_error', 'weights', 'confidence_level', 'low', 'high', 'rank', 'rank_low', 'rank_high',
     'of', 'n_evaluated', 'n_missing', 'out_of_range', 'estimator', 'n_items']
    """
    if not isinstance(selection, Selection):
        if isinstance(selection, bool) or not isinstance(selection, (str, Path)):
            raise ValueError("selection: expected a Selection or the folder it was saved to, "
                             f"got {type(selection).__name__}")
        try:
            selection = Selection.load(selection)
        except ValueError as exc:
            raise ValueError(f"selection: {str(exc).split(': ', 1)[-1]}") from None
    if weights is not None and (not isinstance(weights, str) or weights not in ("items", "tasks")):
        raise ValueError(f"weights: expected 'items' (each item counts once) or 'tasks' (each task counts once), "
                         f"got {_plain(weights)!r}")
    # one task: both splits give it the whole budget, and both scores are its mean
    if weights is not None and weights != selection.weights and len(selection.tasks) > 1:
        made = {"items": "in proportion to the tasks' sizes, for the mean over all items",
                "tasks": "by Neyman allocation, for the mean of the task means"}[selection.weights]
        warnings.warn(f"weights: the selection split its budget over the tasks {made} (weights={selection.weights!r}"
                      f"); the estimate with weights={str(weights)!r} stays valid, only less precise than from a "
                      f"selection made for it (select with weights={str(weights)!r})", UserWarning, stacklevel=2)
    # an np.str_ is kept as given otherwise (np.str_('tasks') in reprs on numpy 2)
    weights = selection.weights if weights is None else str(weights)
    fits, rm = _refit(selection, reference, progress=progress)
    fits, scored = _scored_tasks(fits, tasks)
    if not isinstance(restrict_to_manifest, (bool, np.bool_)):
        raise ValueError(f"restrict_to_manifest: expected True or False, got {_plain(restrict_to_manifest)!r}")
    zero_one = _zero_one_method(fits, rm)
    try:
        # a manifest written before the tasks' kinds were recorded: those of the reference data refitted from
        with noting_results_without_samples() as lone:
            new, failed = read_new_results(new_results, with_task_kinds(selection.reference, rm), metric=metric,
                                           duplicates=duplicates)
    except EmptySamplesFile as exc:
        raise ValueError(empty_log_advice(exc, list(selection.tasks.index), tasks is not None)) from None
    except ValueError as exc:
        said = "pass duplicates='last', 'first' or 'mean' to choose or average them"
        if zero_one is None or said not in str(exc):
            raise
        raise ValueError(str(exc).replace(said, f"pass duplicates='last' or 'first' to choose one (averaging 0/1 "
                                          f"runs gives graded scores, which the selection's method {zero_one!r} "
                                          "cannot use)")) from None
    # a reference model's id in another Unicode normalisation prints as that model and would be ranked beside it
    refuse_unicode_twins(new.model_ids, rm.model_ids, "the reference data", what="model")
    if models is not None:  # the new models of a folder that holds the reference runs too (a HELM suite)
        named = models_named(new.model_ids, models, without_samples=lone)
        new = new._take(models=[list(map(str, new.model_ids)).index(m) for m in named])
    twins = new.model_ids.intersection(rm.model_ids)
    if len(twins):
        # its own reference row would be ranked against it and, the items and strata being chosen from the
        # references, enter the fit that estimates it; leaving it out needs a selection made without it
        of = f" ({len(twins)} of its {new.n_models} models)" if len(twins) < new.n_models else ""
        raise ValueError(f"new_results: model(s) {_name_list(map(repr, _plain(list(twins))))}{of} are reference "
                         "models too: their own reference results would rank them against themselves and enter the "
                         "fit that estimates them" + reference_models_advice(new.model_ids, twins))
    info = item_tasks(rm)["task"]
    chosen = pd.Index(selection.items)
    refuse_unicode_twins(new.item_ids, rm.item_ids, "the reference data")
    given_ids = new.item_ids
    n_left_out = 0
    if restrict_to_manifest:
        on = new.item_ids.isin(chosen)
        if not on.any():
            raise ValueError(f"new_results: none of its {new.n_items} items is in the manifest"
                             f"{_id_hint(new.item_ids, chosen)}")
        n_left_out = int((~on).sum())
        new = new._take(items=np.flatnonzero(on))
    _refuse_transposed_results(new, chosen, rm)
    new_ids = new.item_ids
    outside = new_ids.difference(chosen)
    restrict = "read only those with restrict_to_manifest=True (--restrict-to-manifest)"
    how = (f"HELM runs hold whole run specs: {restrict}" if selection.helm_instances is not None else
           f"give the results on the manifest's items only (the --samples file it wrote), or {restrict}")
    if len(outside) and chosen.isin(new_ids).all():  # e.g. the whole benchmark run: the chosen items are there
        raise ValueError(f"new_results: besides the manifest's {len(chosen)} items they hold {len(outside)} other "
                         f"item{'s' if len(outside) > 1 else ''}, "
                         f"e.g. {_plain(outside[:3])}; {how}")
    if len(outside):
        whole = (f"; if they are a whole run, {restrict} (chosen items without a result are then estimated from "
                 "the others)" if len(new_ids.intersection(chosen)) else "")
        raise ValueError(f"new_results: {len(outside)} item(s) are not in the manifest, e.g. {_plain(outside[:3])}: "
                         f"results of another selection or another benchmark?{_id_hint(new_ids, chosen)}{whole}")
    kept = pd.Index(np.concatenate([f.items.to_numpy(dtype=object) for f in fits.values()]))
    _refuse_missing_tasks(new, fits, selection, tasks is not None, failed)
    new = new._take(items=np.flatnonzero(new_ids.isin(kept)))  # results on the tasks left out are not read
    new = zero_one_where_read(new)
    protocol = check_lm_eval_provenance(selection.reference, new, bool(allow_protocol_change))
    warn_unobserved_strata(fits, new)  # before the warning below says such items are estimated from the others
    obs = pd.DataFrame(new.observed, index=new.model_ids, columns=new.item_ids).reindex(columns=kept, fill_value=False)
    n_missing = (~obs).sum(1)
    if n_missing.any():
        lacking = kept[~obs.all(0).to_numpy()]
        shown = _name_list(_plain(list(lacking)), 5, "and {} more")
        twin = lookalike_note(lacking, given_ids, str_id_set(rm.item_ids))
        warnings.warn(f"new_results: {len(lacking)} chosen item(s) have no result for some model ({shown}); "
                      f"estimated from the other items of their task{twin}", UserWarning, stacklevel=2)
    on = info.isin(list(fits)).to_numpy()
    rm, info = rm._take(items=np.flatnonzero(on)), info[on]  # the references are scored on the same tasks
    try:
        combined, parts = _combine(fits, new, info, weights, rm)
    except ValueError as exc:
        if duplicates != "mean" or zero_one is None or not str(exc).startswith("new_results: graded scores"):
            raise
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one_run = read_new_results(new_results, selection.reference, metric=metric, duplicates="last")[0]
        if one_run.kind != "binary":
            raise
        raise ValueError(f"duplicates: averaging the new results' repeated 0/1 runs gives graded scores "
                         f"{str(exc).split('graded scores', 1)[1].split(',', 1)[0].strip()}, which the selection's "
                         f"method {zero_one!r} cannot use (it estimates from 0/1 correctness): pass "
                         "duplicates='last' or 'first' to take one run") from None
    if rm.kind == "binary" and new.kind != "binary" and duplicates != "mean":  # averaged 0/1 runs are graded
        warn_graded_against_binary(new.model_ids, new.item_ids, new.values_with_nan())
    scores, se = _observed_scores(rm, info, weights)
    board = pd.DataFrame({"score": scores, "standard_error": se}, index=rm.model_ids.rename("model"))
    unranked = board.index[board["score"].isna()]
    if len(unranked):  # a model not run on a whole task has no whole-benchmark score to rank against
        warnings.warn(f"reference: {len(unranked)} reference model(s) have no result on some task and are left out "
                      f"of the ranking: {', '.join(map(str, unranked[:5]))}{' …' if len(unranked) > 5 else ''}",
                      UserWarning, stacklevel=2)
    board = board.drop(index=unranked).sort_values("score", ascending=False)
    return Estimate(model_ids=new.model_ids, leaderboard=board, selection=selection,
                    n_missing=pd.Series(n_missing.to_numpy(), index=new.model_ids), weights=weights,
                    unranked=pd.Index(unranked), scored_tasks=scored, n_left_out=n_left_out,
                    protocol_changes=tuple(protocol), without_samples=tuple(lone),
                    _combined=combined, _parts=parts)


def _zero_one_method(fits: dict, rm: ResponseMatrix) -> str | None:
    """The method of a task that estimates from 0/1 correctness only, on 0/1 reference data (None: no such
    task): averaging a new model's repeated runs cannot serve it."""
    if rm.kind != "binary":
        return None
    for f in fits.values():
        if f.method in ("sortsearch", "hybrid", "tinybenchmarks"):
            return f.method
        if f.method == "auto" and f.chosen == "Sort & Search":
            return f"auto ({f.chosen})"
    return None


def _scored_tasks(fits: dict, tasks: Any) -> tuple[dict, pd.Index]:
    """The fits of the tasks to score (``tasks``; None: every task of the manifest) and their names."""
    if tasks is None:
        return fits, pd.Index(list(fits))
    wanted = [tasks] if isinstance(tasks, str) else tasks
    if isinstance(wanted, (bytes, dict)) or not hasattr(wanted, "__iter__"):
        raise ValueError(f"tasks: expected task names of the manifest, got {type(tasks).__name__}")
    wanted = list(dict.fromkeys(map(str, wanted)))
    heads = {t.partition(":")[0] for t in fits}  # HELM: a scenario's name names each of its run specs
    unknown = [t for t in wanted if t not in fits and t not in heads]
    if not wanted or unknown:
        raise ValueError(f"tasks: {unknown or 'none given'} not among the manifest's tasks {list(fits)[:10]}"
                         f"{comma_hint(unknown, fits)}{twin_note(unknown, fits)}")
    kept = [t for t in fits if t in wanted or t.partition(":")[0] in wanted]
    return {t: fits[t] for t in kept}, pd.Index(kept)
