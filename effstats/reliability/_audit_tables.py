"""The tables of a benchmark reliability audit (:func:`effstats.reliability.audit`) drawn from the scores and their
resamples: the ranking with its rank intervals, the DIoR rows, the per-scenario agreement, the curves against the
number of examples and the agreement with a published aggregate or ranking.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._shared import _tie_ranks
from ._benchmark import Benchmark
from ._curves import rank_switch_curve
from ._dior import dior, efficiency_curve
from ._metametrics import kendall_tau, kendall_tau_rows
from ._render import _SCORE_NAME
from ._winrate import _mwr_one_out, _scenario_table, _scorer, _win_counts

if TYPE_CHECKING:
    from ._report import AuditResult

__all__: list[str] = []


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Competition ranks (1 = best) along the last axis; NaN ranks last."""
    return _tie_ranks(-np.where(np.isnan(scores), -np.inf, scores), methods=("min",))[0]


_DIOR_OBJECTIVES = ("kendall", "weighted_tau", "best_model", "model_quality")
# the level of the ranking's rank intervals, written beside them (``confidence_level``): their bounds are the resampled
# ranks' 2.5 % and 97.5 % order statistics, kept as those literals ((1 - 0.95) / 2 is 0.025000000000000022 in floating
# point, which can move an order statistic by one)
_RANK_LEVEL = 0.95


def _dior_rows(bench: Benchmark, granularity: str, n_boot: int, boot: dict, main: np.ndarray,
               notes: list[str]) -> tuple[list[dict], Any]:
    """One row per objective of the DIoR of resampling ``granularity``, and the Kendall τ result.

    The scenario-level *model_quality* (1 − mean |Δ score|) is left out, with a note, for an aggregate that leaves
    [0, 1]: the difference of two such scores is not a quality loss on a common scale.
    """
    rows, kendall_res = [], None
    for obj in _objectives(bench, granularity, boot["score"], main, notes):
        r = dior(bench, granularity, obj, n_boot=n_boot, **boot)
        if obj == "kendall":
            kendall_res = r
        rows.append(_dior_row(granularity, r))
    return rows, kendall_res


def _objectives(bench: Benchmark, granularity: str, aggregate: str, main: np.ndarray, notes: list[str]) -> list[str]:
    """The DIoR objectives of ``granularity``, Kendall's τ first (see :func:`_dior_rows` for the one left out)."""
    if (granularity == "scenarios" and aggregate != "mwr" and np.nanmax(np.abs(main)) > 1):
        notes.append(f"The *model_quality* DIoR (1 − mean |Δ score|) is left out: it is meant for scores in "
                     f"[0, 1] and the {_SCORE_NAME[aggregate]} reaches {np.nanmax(np.abs(main)):.3g}.")
        return [o for o in _DIOR_OBJECTIVES if o != "model_quality"]
    return list(_DIOR_OBJECTIVES)


def _dior_row(granularity: str, r: Any) -> dict:
    return dict(granularity=granularity, objective=r.objective, dior=r.dior, mean=r.statistic,
                standard_error=r.standard_error, error_rate=np.nan if r.error_rate is None else r.error_rate)


def _score_table(bench: Benchmark, scores: dict, aggregate: str, resampled: np.ndarray,
                 published: pd.Series | None) -> tuple[pd.DataFrame, np.ndarray]:
    """The ranking, best first, with rank intervals at ``_RANK_LEVEL`` (its ``confidence_level`` column) and
    pairwise stability from the scenario resamples.

    Returns the table and, per adjacent pair, the probability that the higher-ranked model stays ahead.
    """
    main = scores[aggregate]
    # resamples that drew the same scenarios have the same scores (about 320 distinct rows in 1,000 resamples of
    # six scenarios): each distinct row is ranked and compared once, and counts as often as it was drawn
    rows = np.ascontiguousarray(resampled, dtype=float)
    _, first, counts = np.unique(rows.view(np.dtype((np.void, 8 * rows.shape[1]))).reshape(-1), return_index=True,
                                 return_counts=True)
    distinct = rows[first]
    rank = _ranks(main)
    # ranks are integers: take order statistics, not interpolated quantiles (a rank of 8.025 means nothing), those
    # numpy's quantile methods "lower" and "higher" take from the B resampled rows: per model, the distinct rows'
    # ranks sorted (each key a rank and, in its low bits, its row), each counted as often as it was drawn
    rk = _ranks(distinct)
    D, M = rk.shape
    bits = max(1, (D - 1).bit_length())
    keys = np.sort((rk.T.astype(np.int64) << bits) | np.arange(D), axis=1)  # (M, D)
    drawn = np.cumsum(counts[keys & ((1 << bits) - 1)], axis=1)  # resamples up to each sorted position
    B = len(rows)
    lo, hi = (keys[np.arange(M), (drawn <= k).sum(1)] >> bits
              for k in (np.floor((B - 1) * 0.025), np.ceil((B - 1) * 0.975)))
    tab = pd.DataFrame({"model": bench.model_ids, "rank": rank, "confidence_level": _RANK_LEVEL, "rank_low": lo,
                        "rank_high": hi, aggregate: main, **{k: v for k, v in scores.items() if k != aggregate}})
    if published is not None:
        tab["published"] = published.reindex(bench.model_ids).to_numpy()
    tab = tab.sort_values(["rank", "model"]).reset_index(drop=True)
    # adjacent pairs: how often the higher-ranked model stays ahead when scenarios are resampled (ties = half)
    pos = {m: i for i, m in enumerate(bench.model_ids)}
    R = distinct[:, tab["model"].map(pos).to_numpy()]
    # the shares as sums over the distinct rows weighted by their counts: halves and integers, exact in any order
    p_hold = counts @ ((R[:, :-1] > R[:, 1:]) + 0.5 * (R[:, :-1] == R[:, 1:])) / len(rows)
    tab["p_ahead_of_next"] = np.append(p_hold, np.nan)
    # the leader's group: models the leader does not stay ahead of in >= target of the resamples (a chain of
    # unresolved adjacent pairs is NOT a group of tied models: the first and the last may differ clearly)
    lead = counts @ ((R[:, :1] > R) + 0.5 * (R[:, :1] == R)) / len(rows)
    lead[0] = np.nan  # the leader against itself is no comparison (it would read 0.5)
    tab["p_leader_ahead"] = lead
    return tab, p_hold


def _curve_sizes(n: int) -> list[int]:
    """Sizes of the ranking DIoR curve against the number of scenarios drawn: up to six from 2 to all ``n``."""
    if n < 2:
        return []
    return sorted({int(s) for s in np.unique(np.linspace(2, n, min(n - 1, 6)).round()) if 2 <= s <= n})


# scenarios scored at once for the per-scenario agreement: a block's weights and scores stay within ~32 MB each
_AGREEMENT_CELLS = 2**22


def _scenario_agreement(bench: Benchmark, num: np.ndarray, den: np.ndarray, main: np.ndarray, aggregate: str,
                        ties: str) -> pd.DataFrame:
    """Per scenario: τ of its ranking with the rest's, τ of the full ranking with the one without it, and how many
    models it alone scores (dropping it leaves them unranked); the least agreeing scenario first."""
    scen_obs = bench.scenario_observed()
    without, alone = _one_out_scores(bench, num, den, aggregate, ties)
    others = scen_obs.sum(1, keepdims=True) - scen_obs  # per model and scenario: its other scenarios
    per_scen = pd.DataFrame(dict(scenario=list(bench.scenario_names), models=scen_obs.sum(0).astype(int),
                                 only_scenario_of=(others == 0).sum(0),  # models left unscored without it
                                 tau_with_rest=kendall_tau_rows(without, alone),
                                 tau_full_vs_without=kendall_tau(main, without)))
    return per_scen.sort_values("tau_with_rest").reset_index(drop=True)


def _one_out_scores(bench: Benchmark, num: np.ndarray, den: np.ndarray, aggregate: str,
                    ties: str) -> tuple[np.ndarray, np.ndarray]:
    """The scores (n_scen, n_models) of the table without each scenario, and of each scenario alone: the MWR's
    from its exact win counts, each scenario's term taken from their sums; the means' as the scorer weighs the
    scenarios, a block of scenarios at once (BLAS products)."""
    S, M = bench.n_scen, bench.n_models
    if aggregate == "mwr":
        return _mwr_one_out(*_win_counts(_scenario_table(num, den, bench.scen_of_sub, S), ties))
    score = _scorer(bench, num, den, aggregate, ties)
    without, alone = np.empty((S, M)), np.empty((S, M))
    rows = max(2, _AGREEMENT_CELLS // max(S, num.shape[-1], M))
    for a in range(0, S, rows):
        n = min(S, a + rows) - a
        one = np.zeros((max(n, 2), S))  # one scenario is scored as two rows: a single row would not take BLAS
        one[np.arange(n), a + np.arange(n)] = 1.0
        one[n:] = one[0]
        alone[a:a + n] = score(one)[:n]
        try:
            without[a:a + n] = score(1.0 - one)[:n]
        except Exception:  # pragma: no cover - degenerate tables: scenario by scenario, NaN where one fails
            for k in range(n):
                try:
                    without[a + k] = score(np.repeat(1.0 - one[k:k + 1], 2, axis=0))[0]
                except Exception:
                    without[a + k] = np.nan
    return without, alone


def _example_curves(bench: Benchmark, n_boot: int, boot: dict, bar: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ranking DIoR and rank-switch probabilities against the number of examples per scenario (8 sizes,
    geometric from 5 to the largest scenario)."""
    bar.set_postfix_str("example curve")
    gmax = int(bench.group_sizes().max())
    sizes = sorted({int(s) for s in np.unique(np.geomspace(min(5, gmax), gmax, 8).round()) if 1 <= s <= gmax})
    small = max(n_boot // 4, 50)
    kw = {k: v for k, v in boot.items() if k != "n_top"}  # the curve is a ranking DIoR: no best-model repeats
    curve = efficiency_curve(bench, "examples", "kendall", sizes, n_boot=small, **kw)
    bar.update()
    bar.set_postfix_str("rank switches")
    sw = rank_switch_curve(bench, sizes, n_boot=small,
                           cluster_sizes=[c for c in (2, 3, 5, 10) if c <= bench.n_models], **kw)
    bar.update()
    return curve, sw


def _published_agreement(bench: Benchmark, published: pd.Series | None, pub_info: dict | None, aggregate: str,
                         scores: dict) -> dict | None:
    """How closely the recomputed aggregate follows the published one (max / median |Δ|, Kendall τ), or None."""
    if published is None or not published.notna().any():
        return None
    kind = (pub_info or {}).get("kind") or published.attrs.get("kind") or ("mwr" if aggregate == "mwr" else "mean")
    main = scores[aggregate]
    weights = (pub_info or {}).get("weights") or (published.attrs.get("info") or {}).get("weights") or {}
    names = {str(c) for c in bench.subscenario_names}
    missing = [str(c) for c in weights if str(c) not in names] if kind == "weighted" else []
    if missing:  # weighted columns not audited (--scenarios): the mean of the audited ones is what can be compared
        ref = scores["mean"]
    elif kind == "weighted":  # the published weights applied to the scenario scores as read
        num, den = bench.sub_sums()
        with np.errstate(invalid="ignore", divide="ignore"):
            sub = pd.DataFrame(num[0] / den[0], columns=[str(c) for c in bench.subscenario_names])
        ref = sum(float(w) * sub[str(c)].to_numpy() for c, w in weights.items())
    else:
        ref = scores[kind]
    p = published.reindex(bench.model_ids).to_numpy(dtype=float)
    ok = ~np.isnan(p)
    scale = 100.0 if np.nanmax(np.abs(p)) > 1.5 and np.nanmax(np.abs(ref)) <= 1.5 else 1.0
    dd = np.abs(ref[ok] * scale - p[ok])
    return dict(pub_info or {}, kind=kind, scale=scale, max_abs_diff=float(dd.max()), not_audited=missing,
                median_abs_diff=float(np.median(dd)), kendall_tau=float(kendall_tau(p[ok], ref[ok][None])[0]),
                kendall_tau_ranked=float(kendall_tau(p[ok], main[ok][None])[0]))


def _rank_agreement(res: "AuditResult", rank_info: dict) -> dict | None:
    """The published ranking column against the recomputed ranks (competition ranks, 1 = best)."""
    from scipy.stats import kendalltau

    tab = res.scores.set_index("model")
    pub = pd.to_numeric(rank_info["rank"], errors="coerce").reindex(tab.index)
    ok = pub.notna().to_numpy()
    if ok.sum() < 2:
        return None
    got, want = tab["rank"].to_numpy(dtype=float)[ok], pub.to_numpy(dtype=float)[ok]
    # the published ranks may number models the table leaves out: compare orders, and positions after re-ranking
    want_rank = pd.Series(want).rank(method="min").to_numpy()
    moved = {str(m): (int(w), int(g)) for m, w, g, wr in zip(tab.index[ok], want, got, want_rank) if wr != g}
    tau = float(kendalltau(got, want).statistic) if np.ptp(got) and np.ptp(want) else float("nan")
    return dict(column=rank_info["column"], kendall_tau=tau, n_compared=int(ok.sum()), n_moved=len(moved),
                moved=moved)


def _rank_note(r: dict) -> str:
    head = (f"Published ranking {r['column']!r} vs the recomputed ranking: Kendall τ {r['kendall_tau']:.3f} over "
            f"{r['n_compared']} models; ")
    if not r["n_moved"]:
        return head + "every model keeps its place."
    eg = "; ".join(f"{m}: published {p}, recomputed {g}" for m, (p, g) in list(r["moved"].items())[:3])
    return head + f"{r['n_moved']} placed differently (e.g. {eg})."
