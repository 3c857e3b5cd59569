"""The ``effstats audit`` report: what a benchmark maintainer should add, drop, and trust.

Writes ``report.md`` and ``report.html`` (same content, figures embedded by reference), PNG figures and CSV
tables: the ranking under the chosen aggregate, which adjacent rank differences are resolved, DIoR of
scenarios (and examples), how reliability grows with scenarios / examples, which scenarios agree least with
the rest, and the Mean Win Rate's sensitivity to clones and removals.
"""
from __future__ import annotations

import html
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_fraction, check_positive_int
from ._benchmark import Benchmark
from ._curves import rank_switch_curve
from ._dior import dior, efficiency_curve
from ._metametrics import kendall_tau
from ._pathologies import clone_flips, removal_flips
from ._winrate import _score

_SCORE_NAME = {"mwr": "Mean Win Rate", "mean": "mean score", "mean_of_means": "mean of scenario means"}


class _Doc:
    """A report as blocks rendered to Markdown and to HTML."""

    def __init__(self) -> None:
        self.blocks: list[tuple] = []

    def h(self, level: int, text: str) -> None:
        self.blocks.append(("h", level, text))

    def p(self, text: str) -> None:
        self.blocks.append(("p", text))

    def ul(self, items: list[str]) -> None:
        if items:
            self.blocks.append(("ul", items))

    def table(self, df: pd.DataFrame, floatfmt: str = "{:.3f}") -> None:
        self.blocks.append(("table", df, floatfmt))

    def img(self, path: str, alt: str) -> None:
        self.blocks.append(("img", path, alt))

    @staticmethod
    def _cell(v: Any, fmt: str) -> str:
        if isinstance(v, (float, np.floating)):
            return "—" if np.isnan(v) else fmt.format(v)
        if isinstance(v, (list, tuple)):
            return " > ".join(map(str, v))
        return str(v)

    def markdown(self) -> str:
        out = []
        for b in self.blocks:
            if b[0] == "h":
                out += ["#" * b[1] + " " + b[2], ""]
            elif b[0] == "p":
                out += [b[1], ""]
            elif b[0] == "ul":
                out += [f"- {i}" for i in b[1]] + [""]
            elif b[0] == "table":
                df, fmt = b[1], b[2]
                out.append("| " + " | ".join(map(str, df.columns)) + " |")
                out.append("|" + "---|" * df.shape[1])
                for row in df.itertuples(index=False):
                    out.append("| " + " | ".join(self._cell(v, fmt).replace("|", "\\|") for v in row) + " |")
                out.append("")
            elif b[0] == "img":
                out += [f"![{b[2]}]({b[1]})", ""]
        return "\n".join(out)

    def html(self, title: str) -> str:
        def inline(t: str) -> str:
            t = html.escape(t)
            for mark, tag in (("**", "strong"), ("*", "em"), ("`", "code")):
                parts = t.split(mark)
                t = "".join(p if i % 2 == 0 else f"<{tag}>{p}</{tag}>" for i, p in enumerate(parts)) \
                    if len(parts) % 2 == 1 else t
            return t

        out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>", f"<title>{html.escape(title)}</title>",
               "<style>body{font-family:sans-serif;max-width:60em;margin:auto;padding:1em}"
               "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
               "img{max-width:100%}</style></head><body>"]
        for b in self.blocks:
            if b[0] == "h":
                out.append(f"<h{b[1]}>{inline(b[2])}</h{b[1]}>")
            elif b[0] == "p":
                out.append(f"<p>{inline(b[1])}</p>")
            elif b[0] == "ul":
                out.append("<ul>" + "".join(f"<li>{inline(i)}</li>" for i in b[1]) + "</ul>")
            elif b[0] == "table":
                df, fmt = b[1], b[2]
                rows = ["<tr>" + "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns) + "</tr>"]
                for row in df.itertuples(index=False):
                    rows.append("<tr>" + "".join(f"<td>{html.escape(self._cell(v, fmt))}</td>" for v in row) + "</tr>")
                out.append("<table>" + "".join(rows) + "</table>")
            elif b[0] == "img":
                out.append(f"<p><img src='{html.escape(b[1])}' alt='{html.escape(b[2])}'></p>")
        out.append("</body></html>")
        return "\n".join(out)


def _figure():
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    return Figure(figsize=(6, 3.8)), plt


def _plot_curve(df: pd.DataFrame, path: Path, title: str, xlabel: str, target: float) -> None:
    fig, _ = _figure()
    ax = fig.subplots()
    for obj, g in df.groupby("objective", sort=False):
        ax.plot(g["size"], g["dior"], marker="o", label=f"{obj} DIoR")
        ax.fill_between(g["size"], g["ci_low"], g["ci_high"], alpha=0.15)
    ax.axhline(target, color="green", ls="--", lw=1, label=f"target {target:g}")
    if df["size"].max() / max(df["size"].min(), 1) > 20:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("DIoR (lower 95% bound)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _plot_ranks(tab: pd.DataFrame, path: Path, n_show: int = 30) -> None:
    t = tab.head(n_show)
    fig, _ = _figure()
    fig.set_size_inches(6, max(3.0, 0.18 * len(t) + 1))
    ax = fig.subplots()
    y = np.arange(len(t))
    ax.errorbar(t["rank"], y, xerr=[t["rank"] - t["rank_low"], t["rank_high"] - t["rank"]], fmt="o", ms=3,
                color="tab:blue", ecolor="tab:gray", lw=1)
    ax.set_yticks(y, [str(m)[:40] for m in t["model"]], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("rank (95% bootstrap interval over scenarios)")
    ax.set_title(f"Top {len(t)} models: rank uncertainty", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _plot_switch(df: pd.DataFrame, path: Path) -> None:
    fig, _ = _figure()
    ax = fig.subplots()
    for c, g in df.groupby("cluster_size"):
        ax.plot(g["size"], g["p_switch"], marker="o", label=f"ranks i and i+{c - 1}")
        ax.fill_between(g["size"], g["ci_low"], g["ci_high"], alpha=0.2)
    ax.set_xscale("log")
    ax.set_xlabel("examples per scenario")
    ax.set_ylabel("P(order of the two switches)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Competition ranks (1 = best) along the last axis; NaN ranks last."""
    from scipy import stats

    return stats.rankdata(-np.where(np.isnan(scores), -np.inf, scores), method="min", axis=-1)


def _check_out(out: Path) -> Path:
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out: {str(out)!r} exists and is not a directory; give a directory for the report")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".effstats_write_test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"--out: cannot write to {str(out)!r} ({exc.strerror or exc})") from None
    return out


def audit(data: Any, out: str | Path, *, by: str = "scenario", published: pd.Series | None = None,
          published_kind: str | None = None, aggregate: str = "mwr", ties: str = "strict", n_boot: int = 1000,
          target: float = 0.95, seed: int | None = 0, progress: bool = True, source: str = "",
          notes: list[str] | None = None) -> Path:
    """Run the reliability audit on ``data`` (wide DataFrame or ResponseMatrix) and write ``out/report.md`` / ``.html``.

    Parameters
    ----------
    data : wide DataFrame (models × scenarios) or ResponseMatrix with a ``by`` item column
    out : directory for the report (created; must be writable)
    aggregate : {"mwr", "mean", "mean_of_means"}, default="mwr" — how the leaderboard ranks models
    ties : {"strict", "half"}, default="strict" — win-rate ties (HELM's code uses half credit)
    published : Series, optional — a published aggregate column to compare with; ``published_kind`` says
        whether it is a win rate ("mwr") or a mean ("mean"); percentages are rescaled.
    n_boot : int, default=1000; target : float in (0, 1), default=0.95; seed : int or None, default=0
    """
    import warnings

    from tqdm import tqdm  # text bars: widget bars break with Debian's ipywidgets 6 and nbclient

    from ..exceptions import DegenerateDataWarning

    n_boot = check_positive_int(n_boot, "--n-boot")
    target = check_fraction(target, "--target")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"--seed: expected a non-negative integer or None, got {seed!r}")
    if not isinstance(out, (str, Path)):
        raise ValueError(f"--out: expected a directory path, got {type(out).__name__}")
    if aggregate not in _SCORE_NAME:
        raise ValueError(f"--aggregate: expected one of {list(_SCORE_NAME)}, got {aggregate!r}")
    if ties not in ("strict", "half"):
        raise ValueError(f"--ties: expected 'strict' or 'half', got {ties!r}")
    out = _check_out(Path(out))
    with warnings.catch_warnings():  # too few resamples: said once, in the report itself (below)
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return _audit(data, out, by=by, published=published, published_kind=published_kind, aggregate=aggregate,
                      ties=ties, n_boot=n_boot, target=target, seed=seed, progress=progress, source=source, notes=notes)


def _audit(data: Any, out: Path, *, by: str, published: pd.Series | None, published_kind: str | None, aggregate: str,
           ties: str, n_boot: int, target: float, seed: int | None, progress: bool, source: str,
           notes: list[str] | None) -> Path:
    from tqdm import tqdm  # text bars: widget bars break with Debian's ipywidgets 6 and nbclient

    kw = dict(scenario=by, subscenario=None)
    bench = Benchmark.from_data(data, name="SCORES", **kw)
    bench.check_connected("SCORES")
    per_item = not bench.is_table
    n_top = min(5, bench.n_models - 1)
    rng = np.random.default_rng(seed)
    sc = dict(score=aggregate, ties=ties)
    steps = ["scores", "scenario DIoR", "scenario curve", "scenarios", "MWR sensitivity"] + (
        ["example DIoR", "example curve", "rank switches"] if per_item else [])
    bar = tqdm(total=len(steps), desc="effstats audit", disable=not progress, file=sys.stderr)
    doc = _Doc()
    doc.h(1, f"Benchmark reliability audit{': ' + source if source else ''}")
    doc.p(f"{bench.n_models} models, {bench.n_scen} scenarios" + (f", {bench.n_items} examples" if per_item else "")
          + f", {int((~bench.scenario_observed()).sum())} missing cells (omitted per model, never counted as 0). "
          f"Models ranked by the **{_SCORE_NAME[aggregate]}**" + (f" (ties: {ties})" if aggregate == "mwr" else "")
          + f". Bootstrap: {n_boot} resamples, seed {seed}. DIoR = lower end of the 95% interval of a meta-metric "
          f"(Perlitz et al. 2024); target {target:g}.")
    for n in notes or []:
        doc.p(n)
    if n_boot < 200:  # a 2.5% percentile from fewer than 200 draws rests on < 5 of them
        doc.p(f"**Warning**: {n_boot} bootstrap resamples are too few for stable 95% bounds below (the 2.5% tail "
              f"holds {0.025 * n_boot:.1f} draws); use `--n-boot 1000` before acting on this report.")

    # ---------------------------------------------------------------- 1. scores and rank intervals
    bar.set_postfix_str("scores")
    num, den = bench.sub_sums()
    scores = {s: _score(bench, num, den, s, ties)[0] for s in ("mwr", "mean", "mean_of_means")}
    main = scores[aggregate]
    bar.update()

    # ---------------------------------------------------------------- 2. scenario-level DIoR
    bar.set_postfix_str("scenario DIoR")
    rows, kendall_res = [], None
    for obj in ("kendall", "weighted_tau", "best_model", "model_quality"):
        if obj == "model_quality" and aggregate != "mwr" and np.nanmax(np.abs(main)) > 1:
            continue  # |Δ score| is meant for scores in [0, 1]
        r = dior(bench, "scenarios", obj, n_boot=n_boot, n_top=n_top, rng=rng, **sc, **kw)
        if obj == "kendall":
            kendall_res = r
        rows.append(dict(granularity="scenarios", objective=obj, dior=r.dior, mean=r.statistic,
                         standard_error=r.standard_error, error_rate=np.nan if r.error_rate is None else r.error_rate))
    bar.update()

    rk_boot = _ranks(kendall_res.resampled)  # (B, M)
    rank = _ranks(main)
    # ranks are integers: take order statistics, not interpolated quantiles (a rank of 8.025 means nothing)
    lo = np.quantile(rk_boot, 0.025, axis=0, method="lower")
    hi = np.quantile(rk_boot, 0.975, axis=0, method="higher")
    tab = pd.DataFrame({"model": bench.model_ids, "rank": rank, "rank_low": lo, "rank_high": hi,
                        aggregate: main, **{k: v for k, v in scores.items() if k != aggregate}})
    if published is not None:
        tab["published"] = published.reindex(bench.model_ids).to_numpy()
    tab = tab.sort_values(["rank", "model"]).reset_index(drop=True)
    # adjacent pairs: how often the higher-ranked model stays ahead when scenarios are resampled (ties = half)
    pos = {m: i for i, m in enumerate(bench.model_ids)}
    idx = tab["model"].map(pos).to_numpy()
    R = kendall_res.resampled[:, idx]
    p_hold = ((R[:, :-1] > R[:, 1:]) + 0.5 * (R[:, :-1] == R[:, 1:])).mean(0)
    tab["p_ahead_of_next"] = np.append(p_hold, np.nan)
    # the leader's group: models the leader does not stay ahead of in >= target of the resamples (a chain of
    # unresolved adjacent pairs is NOT a group of tied models: the first and the last may differ clearly)
    p_lead = ((R[:, :1] > R) + 0.5 * (R[:, :1] == R)).mean(0)
    tab["p_leader_ahead"] = p_lead
    tab.to_csv(out / "scores.csv", index=False)
    _plot_ranks(tab, out / "rank_intervals.png")
    resolved = p_hold >= target
    n_blocks = int(resolved.sum()) + 1  # runs of adjacent models separated by resolved adjacent differences
    top_group = tab["model"][p_lead < target].tolist()

    # ---------------------------------------------------------------- 3. scenario curve
    bar.set_postfix_str("scenario curve")
    k_sizes = sorted({int(s) for s in np.unique(np.linspace(2, bench.n_scen, min(bench.n_scen - 1, 6)).round())
                      if 2 <= s <= bench.n_scen}) if bench.n_scen >= 2 else []
    curve_s = efficiency_curve(bench, "scenarios", "kendall", k_sizes, n_boot=max(n_boot // 4, 50), rng=rng,
                               n_top=n_top, **sc, **kw) if k_sizes else pd.DataFrame()
    if len(curve_s):
        curve_s.to_csv(out / "efficiency_scenarios.csv", index=False)
        _plot_curve(curve_s, out / "efficiency_scenarios.png", "Ranking reliability vs number of scenarios",
                    "scenarios drawn (with replacement)", target)
    bar.update()

    # ---------------------------------------------------------------- 4. per-scenario agreement (drop candidates)
    bar.set_postfix_str("scenarios")
    scen_obs = bench.scenario_observed()
    per_scen = []
    ones = np.eye(bench.n_scen)
    for s in range(bench.n_scen):
        w = 1.0 - ones[s][None]  # leave scenario s out
        try:
            without = _score(bench, num, den, aggregate, ties, scen_w=np.repeat(w, 2, axis=0))[0]
        except Exception:  # pragma: no cover - degenerate tables
            without = np.full(bench.n_models, np.nan)
        alone = _score(bench, num, den, aggregate, ties, scen_w=np.repeat(ones[s][None], 2, axis=0))[0]
        others = scen_obs.sum(1) - scen_obs[:, s]
        per_scen.append(dict(scenario=bench.scenario_names[s], models=int(scen_obs[:, s].sum()),
                             only_scenario_of=int((others == 0).sum()),  # models left unscored without it
                             tau_with_rest=float(kendall_tau(without, alone[None])[0]),
                             tau_full_vs_without=float(kendall_tau(main, without[None])[0])))
    per_scen = pd.DataFrame(per_scen).sort_values("tau_with_rest").reset_index(drop=True)
    per_scen.to_csv(out / "scenarios.csv", index=False)
    bar.update()

    # ---------------------------------------------------------------- 5. MWR sensitivity
    bar.set_postfix_str("MWR sensitivity")
    k_top = min(5, bench.n_models)
    clones = clone_flips(bench, top_k=k_top, ties=ties, **kw)
    removals = removal_flips(bench, top_k=2, ties=ties, **kw) if bench.n_models > 2 else pd.DataFrame()
    bar.update()

    curve_e = sw = None
    if per_item:
        bar.set_postfix_str("example DIoR")
        for obj in ("kendall", "weighted_tau", "best_model", "model_quality"):
            r = dior(bench, "examples", obj, n_boot=n_boot, n_top=n_top, rng=rng, **sc, **kw)
            rows.append(dict(granularity="examples", objective=obj, dior=r.dior, mean=r.statistic,
                             standard_error=r.standard_error,
                             error_rate=np.nan if r.error_rate is None else r.error_rate))
        bar.update()
        bar.set_postfix_str("example curve")
        gmax = int(bench.group_sizes().max())
        ex_sizes = sorted({int(s) for s in np.unique(np.geomspace(min(5, gmax), gmax, 8).round()) if 1 <= s <= gmax})
        curve_e = efficiency_curve(bench, "examples", "kendall", ex_sizes, n_boot=max(n_boot // 4, 50), rng=rng,
                                   **sc, **kw)
        curve_e.to_csv(out / "efficiency_examples.csv", index=False)
        _plot_curve(curve_e, out / "efficiency_examples.png", "Ranking reliability vs examples per scenario",
                    "examples per scenario", target)
        bar.update()
        bar.set_postfix_str("rank switches")
        sw = rank_switch_curve(bench, ex_sizes, n_boot=max(n_boot // 4, 50), rng=rng,
                               cluster_sizes=[c for c in (2, 3, 5, 10) if c <= bench.n_models], **sc, **kw)
        sw.to_csv(out / "rank_switch.csv", index=False)
        _plot_switch(sw, out / "rank_switch.png")
        bar.update()
    bar.close()
    rel = pd.DataFrame(rows)
    rel.to_csv(out / "reliability.csv", index=False)

    # ---------------------------------------------------------------- recommendations
    def d(gran: str, obj: str) -> float:
        g = rel[(rel.granularity == gran) & (rel.objective == obj)]
        return float(g["dior"].iloc[0]) if len(g) else float("nan")

    todo = []
    if aggregate != "mwr":
        # a mean over scenarios on different scales is dominated by the widest one (a column in percent among
        # fractions); the win rate is scale-free
        with np.errstate(invalid="ignore"):
            sub = np.where(den[0] > 0, num[0] / np.maximum(den[0], 1e-300), np.nan)
        spread = np.nanmax(sub, 0) - np.nanmin(sub, 0)
        spread = spread[np.isfinite(spread) & (spread > 0)]
        if spread.size >= 2 and spread.max() > 10 * np.median(spread):
            wide_s = [bench.subscenario_names[j] for j in np.flatnonzero(
                (np.nanmax(sub, 0) - np.nanmin(sub, 0)) > 10 * np.median(spread))][:5]
            todo.append(f"**Scales differ**: the scores of {', '.join(map(str, wide_s))} span more than 10× the median "
                        f"score range of the columns, so the {_SCORE_NAME[aggregate]} mostly follows them. "
                        "Rescale (a percent column among fractions?) or rank by win rate (`--aggregate mwr`).")
    k_dior = d("scenarios", "kendall")
    if k_dior < target:
        slope = ""
        if len(curve_s) >= 2:
            a, b = curve_s.iloc[-2], curve_s.iloc[-1]
            gain = (b.dior - a.dior) / max(b["size"] - a["size"], 1)
            slope = (f"; the curve still rises by {gain:+.3f} per added scenario at {int(b['size'])} scenarios"
                     if gain > 0.005 else f"; the curve is flat at {int(b['size'])} scenarios ({gain:+.3f} per added "
                     "scenario)")
        todo.append(f"**Add scenarios**: ranking DIoR over scenarios is {k_dior:.3f} < {target:g}: which scenarios are "
                    f"included changes the ranking{slope}.")
    else:
        todo.append(f"The ranking is robust to the choice of scenarios (DIoR {k_dior:.3f} ≥ {target:g}).")
    bm = rel[(rel.granularity == "scenarios") & (rel.objective == "best_model")]
    if len(bm):
        er = float(bm.error_rate.iloc[0])
        todo.append(f"**The leader**: the top two swap in {er:.0%} of scenario resamples (best-model DIoR "
                    f"{float(bm.dior.iloc[0]):.3f}); the leader {tab['model'].iloc[0]} stays ahead in fewer than "
                    f"{target:.0%} of the resamples of {len(top_group) - 1} model(s)"
                    + (f": {', '.join(map(str, top_group[1:7]))}{' …' if len(top_group) > 7 else ''}" if
                       len(top_group) > 1 else "") + " (`scores.csv`, column `p_leader_ahead`).")
    odd = per_scen[per_scen.tau_with_rest < 0.3]
    if len(odd) > bench.n_scen / 2:
        # most scenarios disagree with the rest: no single outlier to review, the benchmark is heterogeneous
        todo.append(f"**Scenarios disagree broadly**: {len(odd)} of {bench.n_scen} scenarios rank models unlike the "
                    f"rest (Kendall τ with the others' ranking < 0.3; median τ {per_scen.tau_with_rest.median():.2f}). "
                    "No single scenario is the outlier: they measure different things, so report per-scenario "
                    "results beside the aggregate (dropping scenarios would change what the benchmark measures).")
    elif len(odd):
        todo.append(f"**Review or report separately**: {', '.join(map(str, odd.scenario[:5]))} rank models unlike the "
                    "rest (Kendall τ with the others' ranking < 0.3); they drive the scenario-level instability.")
    # a drop candidate agrees with the rest, leaves the ranking in place and leaves no model unscored;
    # with two scenarios, dropping one leaves a single-scenario benchmark: never recommended
    redundant = per_scen[(per_scen.tau_full_vs_without >= 0.99) & (per_scen.tau_with_rest >= 0.8)
                         & (per_scen.only_scenario_of == 0)] if bench.n_scen > 2 else per_scen.iloc[:0]
    if len(redundant):
        todo.append(f"**Candidates to drop** (to save compute): {', '.join(map(str, redundant.scenario[:5]))} — "
                    "each agrees with the others (τ ≥ 0.8), leaving it out keeps the ranking (τ ≥ 0.99) and every "
                    "model keeps a score. Drop one at a time and re-run: two redundant scenarios may be redundant "
                    "only with each other.")
    if per_item and curve_e is not None:
        ok = curve_e[curve_e["dior"] >= target]
        if len(ok) and int(ok["size"].min()) < int(bench.group_sizes().max()):
            todo.append(f"**Drop examples**: ranking DIoR reaches {target:g} with {int(ok['size'].min())} examples per "
                        f"scenario ({ok['compute_fraction'].min():.1%} of the evaluation cost).")
        elif not len(ok):
            todo.append(f"**Add examples**: ranking DIoR stays below {target:g} even with every example "
                        f"({d('examples', 'kendall'):.3f}).")
    n_res = int(resolved.sum())
    todo.append(f"**Resolved rank differences**: {n_res} of {len(p_hold)} adjacent pairs keep their order in ≥ "
                f"{target:.0%} of scenario resamples" + (
                    ": neighbours in the ranking are not resolved, so report ranks with their intervals "
                    "(`rank_low`–`rank_high`) rather than as exact positions" if n_res == 0 else
                    f"; the resolved differences cut the ranking into {n_blocks} blocks whose neighbours are not "
                    "resolved") + " (`scores.csv`, column `p_ahead_of_next`).")
    if aggregate == "mwr" and len(clones):
        todo.append(f"**MWR is manipulable here**: adding one dominated clone of {', '.join(map(str, clones.clone_of[:3]))} "
                    f"reverses the order of top-{k_top} models; consider `--aggregate mean`.")

    pub_text = None
    if published is not None and published.notna().any():
        kind = published_kind or ("mwr" if aggregate == "mwr" else "mean")
        ref = scores[kind]
        pub = published.reindex(bench.model_ids).to_numpy(dtype=float)
        ok = ~np.isnan(pub)
        scale = 100.0 if np.nanmax(np.abs(pub)) > 1.5 and np.nanmax(np.abs(ref)) <= 1.5 else 1.0
        dd = np.abs(ref[ok] * scale - pub[ok])
        tau = float(kendall_tau(pub[ok], ref[ok][None])[0])
        pub_text = (f"Recomputed {_SCORE_NAME[kind]} vs the published aggregate{' (in percent)' if scale == 100 else ''}: "
                    f"max |Δ| = {dd.max():.4f}, median {np.median(dd):.4f}; Kendall τ of the two rankings {tau:.3f}.")
        if tau < 0.5:  # the table does not reproduce its own leaderboard: the rest of the report is not about it
            todo.insert(0, f"**Check the input first**: the recomputed ranking disagrees with the published aggregate "
                           f"(Kendall τ {tau:.2f}). Are some columns lower-is-better (times, error rates, toxicity; mark "
                           "them with ↓ or leave them out with --exclude), or is the aggregate computed differently? "
                           "The findings below describe the table as read, not the published leaderboard.")

    doc.h(2, "What to do")
    doc.ul(todo)
    doc.h(2, "Ranking (top 15) and rank uncertainty")
    show = tab.head(15)[["rank", "model", aggregate, "rank_low", "rank_high", "p_ahead_of_next", "p_leader_ahead"]
                        + (["published"] if published is not None else [])]
    doc.table(show)
    if pub_text:
        doc.p(pub_text)
    doc.img("rank_intervals.png", "rank intervals")
    doc.h(2, "Reliability (DIoR)")
    doc.table(rel)
    doc.ul(["*kendall / weighted_tau*: ranking stability (τ between the original and resampled rankings; weighted τ "
            "stresses the top).",
            f"*best_model*: 1 − P(top two switch), repeated {n_top}× removing the current leader; error_rate = that "
            "switch probability.", "*model_quality*: 1 − mean |Δ score|."])
    if len(curve_s):
        doc.img("efficiency_scenarios.png", "DIoR vs scenarios")
    doc.h(2, "Scenarios")
    doc.p("tau_with_rest: Kendall τ between the scenario's own ranking and the ranking by all other scenarios; "
          "tau_full_vs_without: τ between the full ranking and the ranking without the scenario; only_scenario_of: "
          "models scored on no other scenario (dropping it leaves them unranked).")
    doc.table(per_scen)
    doc.h(2, "Mean Win Rate sensitivity")
    if len(clones):
        doc.p(f"{len(clones)} model(s) whose dominated clone (slightly worse everywhere) reverses the order of two of "
              f"the top {k_top} when added:")
        doc.table(clones[["clone_of", "old_top", "new_top"]])
    else:
        doc.p(f"No single weaker clone reverses the order of the top {k_top} models (becoming tied is not counted).")
    if len(removals):
        doc.p(f"Removing any of {', '.join(map(str, removals.removed))} reverses the top two.")
    else:
        doc.p("Removing any single lower-ranked model leaves the order of the top two in place.")
    doc.h(2, "Recommended number of examples per scenario")
    if per_item:
        doc.table(curve_e[["size", "compute_fraction", "dior", "statistic", "ci_low", "ci_high"]])
        doc.img("efficiency_examples.png", "DIoR vs examples")
        doc.img("rank_switch.png", "rank switches")
    else:
        doc.p("The table holds one score per scenario: per-example scores (long format with an `item` column) are "
              "needed to recommend a number of examples.")
    path = out / "report.md"
    path.write_text(doc.markdown(), encoding="utf-8")
    (out / "report.html").write_text(doc.html(f"Benchmark reliability audit {source}"), encoding="utf-8")
    return path
