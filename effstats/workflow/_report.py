"""The words of a sequential run: its status, its looks and decision as Markdown, and why it stopped."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._escape import md_text
from .._shared import _apart, _level_percent
from ._provenance import protocol_note
from ._sizes import _cap_reason
from ._strata import _CORRECTION_STRATA

# A run takes the bank's item parameters as known (AdaptiveTest's default, calibration_error=False): in simulations
# (300 items) its 95 % interval covered 0.77 with 40 reference models, 0.90 with 100 and 0.93 with 250.
_FEW_MODELS_KNOWN_ITEMS = 200
# those simulated coverages of a 95 % interval, by reference models (hold-outs of 25 CIFAR-10 models covered 0.77)
_KNOWN_ITEMS_COVERAGE = ((40, 0.77), (100, 0.90), (250, 0.93))
# A saved state with "calibration_error": true carries the bank's estimation error and is replayed so (its items were
# chosen so); that correction covered near its level in simulations with 40 or more reference models but diverges on
# real banks with near-separable items, so new runs do not use it.
_FEW_MODELS = 40


class _Report:
    """What a :class:`~effstats.workflow.SequentialRun` says of itself: its status, its looks, its decision."""

    def _status(self) -> dict:
        """The run so far in plain values: its rule, model, looks, items used (of at most ``max_n``), the estimate
        with its standard error and interval after the last look (None before the first), the decision
        (``"continue"`` while it goes on) and why a stopped run stopped, the items of the next batch, the items
        dropped after returning no result (``dropped``, ``n_dropped``: ``skip_failed``); for an
        adaptive run also whether its model is out of the reference models' range and ``interval_note``, why its
        interval is not valid at its level (None where it is)."""
        st, res = self.state, self.result
        rule = st["rule"]
        # each rule's own target only: an efficacy run's state keeps the precision rule's default half-width too
        out = {"rule": rule["kind"], "against": rule.get("against"),
               "half_width": rule.get("half_width") if rule["kind"] == "precision" else None,
               "target_se": rule.get("target_se") if rule["kind"] == "adaptive" else None,
               "model": st["model"], "looks": len(st["looks"]),
               "items_used": self.n_evaluated, "max_n": st["max_n"],
               "decision": st["result"]["decision"] if self.stopped else "continue",
               "reason": st["result"].get("reason") if self.stopped else None, "next_items": len(self.next_items),
               "protocol_changes": _protocol_changes(st),
               "dropped": [d["order"] for d in st.get("dropped") or ()]}
        out["n_dropped"] = len(out["dropped"])
        # an adaptive run records its reason in words already
        out["why"] = (None if not self.stopped else out["reason"] if rule["kind"] == "adaptive"
                      else _stop_reason(st, out["reason"]))
        est = st["result"] if self.stopped else None
        if est is None and res is not None:
            if rule["kind"] == "adaptive":
                lo, hi = res.confidence_interval(1 - st["alpha"])
                est = {"estimate": res.accuracy, "standard_error": res.accuracy_se, "ci_low": lo, "ci_high": hi,
                       "confidence_level": 1 - st["alpha"], "theta": res.theta, "theta_se": res.standard_error}
            else:
                est = _result_dict(res)
                if self._one_sided():  # the one-sided test's repeated interval, as its decision's
                    est.update(ci_low=float(res.low1), ci_high=float(res.high1),
                               confidence_level=1 - 2 * float(st["alpha"]))
        for k in ("estimate", "standard_error", "ci_low", "ci_high", "confidence_level", "theta", "theta_se"):
            v = None if est is None else est.get(k)
            out[k] = None if v is None or not np.isfinite(v) else float(v)
        if rule["kind"] == "adaptive":
            why = self._adaptive_range_reason(out["estimate"])
            out["out_of_range"] = None if out["estimate"] is None else bool(why)
            out["out_of_range_reason"] = why or None
            # as decision.md's first line: an interval from a bank fitted on too few reference models does not hold
            out["interval_note"] = _few_models_note(st)
        return out

    def _adaptive_range_reason(self, estimate: float | None) -> str:
        """Why an adaptive run's model lies outside the reference models' range ("" where it does not): its
        accuracy estimate beyond their scores (the check ``effstats estimate`` applies to every method), or its
        answers on the items given beyond theirs there (the check of the estimators fitted to the reference
        models, :func:`effstats._range.range_check`). The IRT estimate extrapolates there and its interval does
        not hold."""
        from .._range import range_check

        ref = self._reference
        if estimate is None or ref is None or not self.state["looks"]:
            return ""
        vals = np.where(ref.observed, ref.values, np.nan).astype(float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a reference model without any result
            scores = np.nanmean(vals, axis=1)
            lo, hi = float(np.nanmin(scores)), float(np.nanmax(scores))
            items = [i for look in self.state["looks"] for i in look["items"]]
            answers = np.array([[y for look in self.state["looks"] for y in look["scores"]]], float)
            chk = range_check(vals[:, ref.item_ids.get_indexer(items)], answers)
        why = []
        if estimate < lo - 1e-12 or estimate > hi + 1e-12:
            why.append("accuracy estimate {} outside [{}, {}], the reference models' scores".format(
                *_apart(estimate, lo, hi)))
        if chk.above[0] or chk.below[0]:
            v, a, b = _apart(float(chk.subset_score[0]), *chk.source_range)
            why.append(f"mean {v} outside [{a}, {b}] on the {len(items)} items given, the reference models' means "
                       "there")
        if chk.far[0]:
            why.append(f"answers on the items given farther from every reference model ({chk.distance[0]:.3f}) than "
                       f"any reference model is from its nearest other one ({chk.distance_limit:.3f})")
        return "; ".join(why)

    def _one_sided(self) -> bool:
        """Whether the run tests one-sided (``--alternative greater`` or ``less``): its intervals are then the
        one-sided test's, at level ``1 - 2 alpha`` (each end on the tested side a one-sided ``1 - alpha`` bound)."""
        rule = self.state["rule"]
        return rule["kind"] == "efficacy" and rule.get("alternative", "two-sided") != "two-sided"

    def _trace(self) -> pd.DataFrame:
        """One row per look: the estimates after it, and the level of its interval (``ci_low``, ``ci_high``: the
        two-sided repeated interval at ``1 - alpha``, or a one-sided run's at ``1 - 2 alpha``, as its decision's)."""
        if self.state["rule"]["kind"] != "adaptive":
            trace = self.result.trace.copy()
            level = 1 - self.state["alpha"]
            if self._one_sided() and "ci_low_one_sided" in trace:
                trace["ci_low"], trace["ci_high"] = trace.pop("ci_low_one_sided"), trace.pop("ci_high_one_sided")
                level = 1 - 2 * self.state["alpha"]
            trace.insert(trace.columns.get_loc("ci_low"), "confidence_level", level)
            return trace
        rows = [{"look": k + 1, "n": sum(len(lk["items"]) for lk in self.state["looks"][: k + 1]),
                 **{c: lk[c] for c in ("theta", "theta_se", "accuracy", "accuracy_se")}}
                for k, lk in enumerate(self.state["looks"])]
        return pd.DataFrame(rows).set_index("look")

    def to_markdown(self) -> str:
        """The decision (or the state so far) as Markdown: what ``decision.md`` holds."""
        return self._render(md_text)

    def _render(self, text: Any) -> str:
        """The decision with the names from the data written by ``text``: :func:`effstats._escape.md_text` for the
        Markdown file, :func:`effstats._escape.line_text` for a terminal (which shows Markdown's escapes as typed:
        ``rotate\\_+30``)."""
        st, res = self.state, self.result
        rule = st["rule"]
        if rule["kind"] == "adaptive":
            return self._adaptive_render(text)
        what = (f"{text(st['model'])} against {text(rule['against'])} ({rule['alternative']})"
                if rule["kind"] == "efficacy"
                else f"{text(st['model'])}: precision, half-width ≤ {rule['half_width']:g}")
        lines = [f"# Sequential evaluation: {what}", ""]
        if res is None:
            return "\n".join(lines + ["No batch evaluated yet.", ""])
        pct = _level_percent(res.confidence_level)
        what_est = "Difference (new − reference)" if rule["kind"] == "efficacy" else "Score"
        looks = f"{len(st['looks'])} look{'s' if len(st['looks']) != 1 else ''}"
        # max_n is the run's cap (for the precision rule the worst-case fixed design), not the benchmark's size
        n_elig, n_all = st.get("n_eligible", st["max_n"]), st["reference"]["n_items"]
        of = (f"the benchmark's {n_all:,} items" if n_elig >= n_all
              else f"the {n_elig:,} eligible items of the benchmark's {n_all:,}")
        size = (f"{res.n:,} of {of} ({looks})" if st["max_n"] >= n_elig
                else f"{res.n:,} items ({looks}; cap {st['max_n']:,} of {of}{_cap_reason(st)})")
        why = "" if res.decision == "continue" else f" ({_stop_reason(st, res.reason)})"
        lines += [f"Decision: **{res.decision}**{why} after {size}.", ""]
        lines += protocol_note(_protocol_changes(st), "The estimate and its interval", text)
        if st.get("dropped"):
            gone = [d["order"] for d in st["dropped"]]
            lines += [f"{len(gone)} item(s) dropped after returning no result (skip_failed, --skip-failed), e.g. "
                      f"{text(', '.join(gone[:5]))}: the estimate and interval are about the benchmark without "
                      "them.", ""]
        if rule.get("correction"):
            lines += [f"Items drawn in stratified batches ({_CORRECTION_STRATA} strata of the reference models' "
                      "difficulty order), each look's estimate corrected by a logistic model on the items' features "
                      f"from the reference models (correction {rule['correction']!r}).", ""]
        lines += [f"{what_est} {res.estimate:.4f} (s.e. {res.standard_error:.4f}); {pct} % interval "
                  f"[{res.ci_low:.4f}, {res.ci_high:.4f}] " + (
                      f"(fixed-sample interval at the stop, half its width at most {rule['half_width']:g}, not "
                      "necessarily centred on the score: Chow & Robbins's fixed-width rule)."
                      if res.reason == "precision"
                      else "(repeated confidence interval: valid at any look).")]
        if res.pvalue is not None and res.decision != "continue":
            lines.append(f"Stage-wise p-value {res.pvalue:.4g}.")
        exact = (st.get("result") or {}).get("exact")
        if exact is not None:
            lines += ["", f"Every item of the benchmark was evaluated: the {what_est.lower()} on this benchmark is "
                      f"{exact:.4f} exactly (no sampling error; the interval above is the sequential test's, for the "
                      "population of such items)."]
        return "\n".join(lines) + "\n"

    def _adaptive_render(self, text: Any) -> str:
        st, res = self.state, self.result
        target = st["rule"]["target_se"]
        lines = [f"# Adaptive IRT evaluation: {text(st['model'])}: ability standard error ≤ {target:g}", ""]
        if res is None:
            return "\n".join(lines + ["No batch evaluated yet.", ""])
        level = 1 - st["alpha"]
        lo, hi = res.confidence_interval(level)
        carried = st["rule"].get("calibration_error", False)
        note = _few_models_note(st)
        n_ref = st["reference"].get("n_models")
        few = _FEW_MODELS if carried else _FEW_MODELS_KNOWN_ITEMS
        if note is not None:  # first, before any number: the interval below does not hold at its level
            lines += [f"**Not a valid {_level_percent(level)} % interval:** the item bank was fitted on {n_ref} "
                      f"reference models (fewer than {few}) and the adaptive test takes its item parameters as "
                      "known; the interval leaves out the bank's own estimation error and covered below its level "
                      "in simulations with so few, for new models within the reference models' range (0.77 with 40 "
                      "reference models, 0.90 with 100; 0.77 in hold-outs of 25 CIFAR-10 models). A new model better "
                      "(or worse) than every reference model is estimated towards them, and its interval holds less "
                      "often still. Use `--rule precision` (random items, a valid interval) for a decision that must "
                      "hold.", ""]
        outside = self._adaptive_range_reason(res.accuracy)
        if outside:  # as estimate's out-of-range flag: the model-based interval does not hold there
            lines += [f"**Outside the reference models' range:** {outside}. The IRT estimate extrapolates there "
                      f"and its {_level_percent(level)} % interval does not hold for this model. Use `--rule "
                      "precision` (random items, an interval valid for any model).", ""]
        lines += [f"Decision: **{res.stopped_by}** ({_adaptive_reason(st, res.stopped_by)}) after {res.n_items:,} "
                  f"of at most {st['max_n']:,} items ({len(st['looks'])} look{'s' if len(st['looks']) != 1 else ''}; "
                  f"{st['reference']['n_items']:,} items in the bank)"
                  + (f" — **{note}**." if note is not None else "."), "",
                  *protocol_note(_protocol_changes(st), "The estimate and its interval", text),
                  f"Accuracy on the whole benchmark {res.accuracy:.4f} (s.e. {res.accuracy_se:.4f}); "
                  f"{_level_percent(level)} % interval [{lo:.4f}, {hi:.4f}] (model-based: it assumes the new model "
                  "answers as a 2PL IRT model does" + (", and carries the estimation error of the item parameters "
                  "fitted on the reference models)." if carried else ", with the item parameters fitted on the "
                  "reference models taken as known)."), "",
                  f"Ability {res.theta:.3f} (s.e. {res.standard_error:.3f}) on the reference models' scale (mean 0, "
                  "standard deviation 1)."]
        if n_ref is not None and n_ref < few and carried:
            lines += ["", f"**Coverage below its level possible:** the item bank was fitted on {n_ref} reference "
                      f"models; the interval carries the bank's estimation error and covered about its level in "
                      f"simulations with {_FEW_MODELS} or more, but with 20 a 95 % interval covered 0.93 of new models "
                      "like the references and 0.91 of models better than all of them. Use `--rule precision` "
                      "(random items, a valid interval) for a decision that must hold."]
        return "\n".join(lines) + "\n"


def _protocol_changes(state: dict) -> list[str]:
    """What the looks' new runs were made otherwise than the reference runs (``"look 2: task arc_easy: ..."``),
    scored under ``allow_protocol_change``."""
    return [f"look {k}: {msg}" for k, look in enumerate(state["looks"], 1) for msg in look.get("protocol_changes", ())]


def _stop_reason(state: dict, reason: str) -> str:
    """Why a run stopped, in words, from its rule and the reason it stopped with (``"precision"``, ``"efficacy"``,
    ``"max_n"``; an adaptive run's ``"precision"``, ``"max_n"`` or ``"bank"``): decision.md and ``sequential
    status`` both say it."""
    rule = state["rule"]
    if rule["kind"] == "adaptive":
        return _adaptive_reason(state, reason)
    return {"precision": f"the interval's half-width is at most {rule.get('half_width', 0):g}",
            "efficacy": "the difference crossed the efficacy bound",
            "max_n": f"every item allowed was used, {state['max_n']:,}"}.get(reason, f"the rule {reason!r} fired")


def _adaptive_reason(state: dict, stopped_by: str) -> str:
    """Why an adaptive run stopped, in words (its decision is the rule that stopped it: ``"precision"``,
    ``"max_n"`` or ``"bank"``)."""
    return {"precision": f"the ability's standard error reached target_se={state['rule']['target_se']:g}",
            "max_n": f"max_n: {state['max_n']:,} items given", "bank": "every item of the bank given"}[stopped_by]


def _few_models_note(state: dict) -> str | None:
    """``"not a valid 95 % interval with N reference models (…)"`` when the run's interval takes the item parameters
    of a bank fitted on too few reference models as known; None otherwise."""
    rule, n_ref = state["rule"], state["reference"].get("n_models")
    if rule["kind"] != "adaptive" or rule.get("calibration_error", False) or n_ref is None \
            or n_ref >= _FEW_MODELS_KNOWN_ITEMS:
        return None
    k, cov = min(_KNOWN_ITEMS_COVERAGE, key=lambda kc: abs(np.log(kc[0] / max(n_ref, 1))))
    return (f"not a valid {_level_percent(1 - state['alpha'])} % interval with {n_ref} reference models (in "
            f"simulations a 95 % interval covered {cov:.2f} of new models within the reference models' range with "
            f"{k}, less often beyond it; --rule precision gives a valid one)")


def _result_dict(res) -> dict:
    out = {k: getattr(res, k) for k in ("decision", "reason", "n", "estimate", "standard_error", "z", "ci_low",
                                         "ci_high", "confidence_level", "alpha", "pvalue")}
    return {k: (float(v) if isinstance(v, (np.floating, float)) else v) for k, v in out.items()}
