"""The "What to do" items of the ``effstats audit`` report: the advice prose built from an audit's tables.

:func:`_recommendations` turns an :class:`effstats.reliability.AuditResult`'s reliability, scores and
scenario tables into Markdown items, most important first (too few models, scales, scenario count, the
leader, scenarios to review or drop, examples, resolved rank differences, MWR manipulability).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._shared import _name_list
from ._benchmark import Benchmark
from ._render import _SCORE_NAME

if TYPE_CHECKING:
    from ._report import AuditResult

_MIN_MODELS_FOR_TAU = 5  # below this, Kendall τ between two rankings takes few values and ±1 from one swap


def _recommendations(res: AuditResult, bench: Benchmark, num: np.ndarray, den: np.ndarray) -> list[str]:
    """The "What to do" items (Markdown), most important first."""
    st = res.settings
    todo = []
    if st["n_models"] < _MIN_MODELS_FOR_TAU:
        m = st["n_models"]
        todo.append(f"**Too few models for τ-based advice**: with {m} models Kendall τ takes only "
                    f"{m * (m - 1) // 2 + 1} values and one swapped pair moves it by {4 / (m * (m - 1)):.2f}, so "
                    "τ = ±1 is no evidence that a scenario is redundant or odd; no scenario is recommended for "
                    f"dropping or review, and the DIoR values below are coarse. Audit at least {_MIN_MODELS_FOR_TAU} "
                    "models.")
    if (res.scores["rank"] == 1).all():
        # nothing separates the models: more scenarios like these, fewer, or resolved pairs are no advice
        return todo + _leader_advice(res)
    if st["aggregate"] != "mwr":
        todo += _scale_advice(bench, num, den, st["aggregate"])
    todo += _scenario_count_advice(res)
    todo += _leader_advice(res)
    if st["n_models"] >= _MIN_MODELS_FOR_TAU:
        todo += _scenario_advice(res.scenarios, bench.n_scen)
    if res.efficiency_examples is not None:
        todo += _example_advice(res, int(bench.group_sizes().max()))
    todo.append(_resolution_advice(st["n_resolved"], st["n_pairs"], st["target"]))
    if st["aggregate"] == "mwr" and len(res.clones):
        todo.append(f"**MWR is manipulable here**: adding one dominated clone of {_name_list(res.clones.clone_of, 3)} "
                    f"reverses the order of top-{st['k_top']} models; consider `--aggregate mean`.")
    pub = res.published
    if pub is not None and pub["kendall_tau"] < 0.5:
        # the table does not reproduce its own leaderboard: the rest of the report is not about it
        todo.insert(0, f"**Check the input first**: the recomputed ranking disagrees with the published aggregate "
                       f"(Kendall τ {pub['kendall_tau']:.2f}). Are some columns lower-is-better (times, error rates, "
                       "toxicity; mark them with ↓ or leave them out with --exclude), or is the aggregate computed "
                       "differently? The findings below describe the table as read, not the published leaderboard.")
    return todo


def _dior_of(res: AuditResult, granularity: str, objective: str) -> float:
    rel = res.reliability
    g = rel[(rel.granularity == granularity) & (rel.objective == objective)]
    return float(g["dior"].iloc[0]) if len(g) else float("nan")


def _scale_advice(bench: Benchmark, num: np.ndarray, den: np.ndarray, aggregate: str) -> list[str]:
    """A mean over scenarios on different scales is dominated by the widest one (a column in percent among
    fractions); the win rate is scale-free."""
    with np.errstate(invalid="ignore"):
        sub = np.where(den[0] > 0, num[0] / np.maximum(den[0], 1e-300), np.nan)
    ranges = np.nanmax(sub, 0) - np.nanmin(sub, 0)
    spread = ranges[np.isfinite(ranges) & (ranges > 0)]
    if spread.size < 2 or spread.max() <= 10 * np.median(spread):
        return []
    wide_s = [bench.subscenario_names[j] for j in np.flatnonzero(ranges > 10 * np.median(spread))]
    return [f"**Scales differ**: the scores of {_name_list(wide_s, 5)} span more than 10× the median "
            f"score range of the columns, so the {_SCORE_NAME[aggregate]} mostly follows them. "
            "Rescale (a percent column among fractions?) or rank by win rate (`--aggregate mwr`)."]


def _scenario_count_advice(res: AuditResult) -> list[str]:
    """Add scenarios when the scenario-level ranking DIoR misses the target (with the curve's last slope)."""
    target, curve_s = res.settings["target"], res.efficiency_scenarios
    k_dior = _dior_of(res, "scenarios", "kendall")
    if k_dior >= target:
        return [f"The ranking is robust to the choice of scenarios (DIoR {k_dior:.3f} ≥ {target:g})."]
    slope = ""
    if len(curve_s) >= 2:
        a, b = curve_s.iloc[-2], curve_s.iloc[-1]
        gain = (b.dior - a.dior) / max(b["size"] - a["size"], 1)
        slope = (f"; the curve still rises by {gain:+.3f} per added scenario at {int(b['size'])} scenarios"
                 if gain > 0.005 else f"; the curve is flat at {int(b['size'])} scenarios ({gain:+.3f} per added "
                 "scenario)")
    return [f"**Add scenarios**: ranking DIoR over scenarios is {k_dior:.3f} < {target:g}: which scenarios are "
            f"included changes the ranking{slope}."]


def _leader_advice(res: AuditResult) -> list[str]:
    """How often the top two swap, the best-model error rate, and which models the leader does not stay ahead of."""
    rel, tab, target = res.reliability, res.scores, res.settings["target"]
    first = tab["model"][tab["rank"] == 1].tolist()
    score = _SCORE_NAME.get(res.settings["aggregate"], res.settings["aggregate"])
    if len(first) == len(tab):
        return [f"**No leader**: every model ties, with the same {score} for all {len(tab)} models: the scores do "
                "not separate the models, so no model leads, and adding or dropping scenarios like these would not "
                "change that (no resampling advice follows). Check that the table holds each model's own scores."]
    bm = rel[(rel.granularity == "scenarios") & (rel.objective == "best_model")]
    if not len(bm):
        return []
    er, n_top = float(bm.error_rate.iloc[0]), int(res.settings["n_top"])
    # the best-model error rate is the mean over n_top pairs (the top two, then the top two once the leader is
    # removed, ...), not the top two's own swap rate: both are named
    pairs = (f"over the top pairs of {n_top} rankings, each without the previous one's leader, a pair swaps in "
             f"{er:.0%} of scenario resamples on average (best-model DIoR {float(bm.dior.iloc[0]):.3f})")
    if len(first) > 1:
        return [f"**No single leader**: {len(first)} models tie for first with the same {score}: "
                f"{_name_list(first)}; {pairs}."]
    p = float(tab["p_ahead_of_next"].iloc[0])
    top = (f"the top two, {tab['model'].iloc[0]} and {tab['model'].iloc[1]}, swap in {1 - p:.0%} of scenario "
           f"resamples (`p_ahead_of_next` {p:.3f})")
    if n_top > 1:
        top += f"; {pairs}"
    else:
        top += f" (best-model DIoR {float(bm.dior.iloc[0]):.3f})"
    group = tab["model"][tab["p_leader_ahead"] < target].tolist()  # NaN for the leader itself: never listed
    lead = (f"the leader {tab['model'].iloc[0]} stays ahead in fewer than {target:.0%} of the resamples of "
            f"{len(group)} model(s): {_name_list(group)}" if group else
            f"the leader {tab['model'].iloc[0]} stays ahead of every other model in at least {target:.0%} of "
            "the resamples")
    return [f"**The leader**: {top}; {lead} (`scores.csv`, columns `p_ahead_of_next`, `p_leader_ahead`)."]


def _scenario_advice(per_scen: pd.DataFrame, n_scen: int) -> list[str]:
    """Scenarios to review (they rank unlike the rest) and candidates to drop (redundant with the rest)."""
    todo = []
    odd = per_scen[per_scen.tau_with_rest < 0.3]
    if len(odd) > n_scen / 2:
        # most scenarios disagree with the rest: no single outlier to review, the benchmark is heterogeneous
        todo.append(f"**Scenarios disagree broadly**: {len(odd)} of {n_scen} scenarios rank models unlike "
                    f"the rest (Kendall τ with the others' ranking < 0.3; median τ "
                    f"{per_scen.tau_with_rest.median():.2f}). No single scenario is the outlier: they measure "
                    "different things, so report per-scenario results beside the aggregate (dropping scenarios "
                    "would change what the benchmark measures).")
    elif len(odd):
        todo.append(f"**Review or report separately**: {_name_list(odd.scenario, 5)} rank models unlike the "
                    "rest (Kendall τ with the others' ranking < 0.3); they drive the scenario-level instability.")
    # a drop candidate agrees with the rest, leaves the ranking in place and leaves no model unscored;
    # with two scenarios, dropping one leaves a single-scenario benchmark: never recommended
    redundant = per_scen[(per_scen.tau_full_vs_without >= 0.99) & (per_scen.tau_with_rest >= 0.8)
                         & (per_scen.only_scenario_of == 0)] if n_scen > 2 else per_scen.iloc[:0]
    if len(redundant):
        todo.append(f"**Candidates to drop** (to save compute): {_name_list(redundant.scenario, 5)} — "
                    "each agrees with the others (τ ≥ 0.8), leaving it out keeps the ranking (τ ≥ 0.99) and "
                    "every model keeps a score. Drop one at a time and re-run: two redundant scenarios may be "
                    "redundant only with each other.")
    return todo


def _example_advice(res: AuditResult, largest: int) -> list[str]:
    """The fewest examples per scenario that reach the target, or that even all of them do not."""
    target, curve_e = res.settings["target"], res.efficiency_examples
    ok = curve_e[curve_e["dior"] >= target]
    if len(ok) and int(ok["size"].min()) < largest:
        return [f"**Drop examples**: ranking DIoR reaches {target:g} with {int(ok['size'].min())} examples per "
                f"scenario ({ok['compute_fraction'].min():.1%} of the evaluation cost)."]
    if not len(ok):
        # the number of the table's row of every example, on which the advice is decided (the reliability
        # table's examples DIoR is another resampling of the same decision)
        every = curve_e.loc[curve_e["size"].idxmax()]
        return [f"**Add examples**: ranking DIoR stays below {target:g} even with every example "
                f"({every['dior']:.3f} at {int(every['size'])} examples per scenario, `efficiency_examples.csv`)."]
    return []


def _resolution_advice(n_res: int, n_pairs: int, target: float) -> str:
    return (f"**Resolved rank differences**: {n_res} of {n_pairs} adjacent pairs keep their order in ≥ "
            f"{target:.0%} of scenario resamples" + (
                ": neighbours in the ranking are not resolved, so report ranks with their intervals "
                "(`rank_low`–`rank_high`) rather than as exact positions" if n_res == 0 else
                f"; the resolved differences cut the ranking into {n_res + 1} blocks whose neighbours are not "
                "resolved") + " (`scores.csv`, column `p_ahead_of_next`).")

