"""Command line: ``effstats audit SCORES.csv [--by scenario] [--out report_dir]``.

Writes a short benchmark-reliability report (``report.md`` + PNG figures + CSV tables) following
Perlitz et al., "Efficient Benchmarking (of Language Models)": ranking stability (DIoR, Kendall τ
and weighted τ), the best-model error rate, model-quality stability, the Mean Win Rate's sensitivity
to weaker clones and to removing a model, and — for per-example scores — the number of examples
per scenario that reaches a target DIoR.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

__all__ = ["main", "read_scores", "audit"]

_AGGREGATE = re.compile(r"^(mean win rate|mean score|average|avg|mean)$", re.I)


def read_scores(path: str | Path, *, by: str = "scenario", model: str = "model", item: str = "item",
                score: str = "score") -> tuple[Any, pd.Series | None]:
    """Read a long or wide score table.

    * long: columns ``model``, ``by`` and ``score``, one row per (model, scenario) — or, with an
      ``item`` column too, one row per (model, example), returned as a ResponseMatrix with the
      ``by`` column as item group;
    * wide: the ``model`` column (any case; else the first column) = model names, one column per
      scenario; ``'-'`` / empty = not evaluated; wholly non-numeric columns are dropped as metadata.
      A column named "Mean win rate" / "Average" / "Mean" is a published aggregate: it is set
      aside (returned second) and compared with the recomputed score.

    Returns
    -------
    (data, published) : a wide DataFrame (models × scenarios) or a ResponseMatrix, and the published
    aggregate (Series) or None.
    """
    from .responses import ResponseMatrix

    path = Path(path)
    if not path.exists():
        raise ValueError(f"SCORES: file {str(path)!r} does not exist")
    sep = "\t" if path.suffix.lower() in (".tsv", ".tab") else None
    try:
        df = pd.read_csv(path, sep=sep, engine="python")
    except Exception as exc:  # pandas' parser errors vary by version
        raise ValueError(f"SCORES: could not parse {str(path)!r} as CSV/TSV ({exc})") from None
    if df.empty or df.shape[1] < 2:
        raise ValueError(f"SCORES: expected a table with at least 2 columns, got shape {df.shape}")
    if {model, score} <= set(df.columns):  # long format
        if by not in df.columns:
            raise ValueError(f"--by: column {by!r} not in the table (columns: {list(df.columns)})")
        if item in df.columns:
            return ResponseMatrix.from_long(df, model=model, item=item, score=score, groups=[by]), None
        dup = df.duplicated([model, by])
        if dup.any():
            first = df.loc[dup, [model, by]].iloc[0].tolist()
            raise ValueError(f"SCORES: duplicate (model, {by}) rows, e.g. {first}")
        s = pd.to_numeric(df[score], errors="coerce")
        if (s.isna() & df[score].notna()).any():
            bad = df.loc[s.isna() & df[score].notna(), score].iloc[0]
            raise ValueError(f"SCORES: column {score!r} has non-numeric values, e.g. {bad!r}")
        wide = df.assign(**{score: s}).pivot(index=model, columns=by, values=score)
        return wide, None
    # Model column: one named like --model (any case), else the first column.
    named = [c for c in df.columns if str(c).strip().lower() == model.lower()]
    wide = df.set_index(named[0] if named else df.columns[0])
    # Wholly non-numeric columns (e.g. a type emoji or a licence) are metadata, not scores.
    num = wide.apply(pd.to_numeric, errors="coerce")
    meta = [c for c in wide.columns if num[c].isna().all() and not wide[c].astype(str).str.strip().eq("-").all()]
    wide = wide.drop(columns=meta)
    if wide.index.has_duplicates:
        dup = wide.index[wide.index.duplicated()].unique()[:5].tolist()
        raise ValueError(f"SCORES: duplicate model rows {dup}")
    agg = [c for c in wide.columns if _AGGREGATE.match(str(c).strip())]
    published = pd.to_numeric(wide[agg[0]], errors="coerce") if agg else None
    return wide.drop(columns=agg), published


def _plot_curve(df: pd.DataFrame, x: str, path: Path, title: str, xlabel: str, target: float | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for obj, g in df.groupby("objective", sort=False):
        ax.plot(g[x], g["dior"], marker="o", label=obj)
    if target is not None:
        ax.axhline(target, color="green", ls="--", lw=1, label=f"target {target:g}")
    if x == "size" and df[x].max() / max(df[x].min(), 1) > 20:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("DIoR (lower 95% bound)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_switch(df: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for c, g in df.groupby("cluster_size"):
        ax.plot(g["size"], g["p_switch"], marker="o", label=f"cluster {c}")
        ax.fill_between(g["size"], g["ci_low"], g["ci_high"], alpha=0.2)
    ax.set_xscale("log")
    ax.set_xlabel("examples per scenario")
    ax.set_ylabel("P(first and last switch)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _md_table(df: pd.DataFrame, floatfmt: str = "{:.3f}") -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        cells = [("—" if np.isnan(v) else floatfmt.format(v)) if isinstance(v, (float, np.floating)) else str(v) for v in r]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def audit(data: Any, out: str | Path, *, by: str = "scenario", published: pd.Series | None = None,
          n_boot: int = 1000, target: float = 0.95, seed: int | None = 0, progress: bool = True,
          source: str = "") -> Path:
    """Run the reliability audit on ``data`` (wide DataFrame or ResponseMatrix) and write ``out/report.md``."""
    from tqdm.auto import tqdm

    from . import reliability as R
    from ._validation import check_fraction, check_positive_int

    n_boot = check_positive_int(n_boot, "--n-boot")
    target = check_fraction(target, "--target")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    kw = dict(scenario=by, subscenario=None)
    bench = R.Benchmark.from_data(data, **kw)
    per_item = not bench.is_table
    n_top = min(5, bench.n_models - 1)  # best-model repeats (paper: 5), fewer for tiny benchmarks
    rng = np.random.default_rng(seed)
    steps = ["scores", "scenario DIoR", "scenario curve", "clones"] + (["example DIoR", "example curve", "rank switches"]
                                                                     if per_item else [])
    bar = tqdm(total=len(steps), desc="effstats audit", disable=not progress, file=sys.stderr)
    md: list[str] = [f"# Benchmark reliability audit{': ' + source if source else ''}", ""]
    md += [f"{bench.n_models} models, {bench.n_scen} scenarios"
           + (f", {bench.n_items} examples" if per_item else "")
           + f", {int((~bench.observed).sum())} missing cells (omitted per model, App. A). "
           f"Bootstrap: {n_boot} resamples, seed {seed}. DIoR = lower bound of the 95% interval of the "
           "meta-metric (Perlitz et al. 2024); ≥ 0.95 reads as reliable.", ""]

    # 1. scores
    bar.set_postfix_str("scores")
    num, den = bench.sub_sums()
    mwr = R._score(bench, num, den, "mwr", "strict")[0]
    mean = R._score(bench, num, den, "mean_of_means", "strict")[0]
    tab = pd.DataFrame({"model": bench.model_ids, "mwr": mwr, "mean_of_means": mean})
    tab = tab.sort_values("mwr", ascending=False).reset_index(drop=True)
    tab.insert(0, "rank", np.arange(1, len(tab) + 1))
    if published is not None:
        tab["published"] = published.reindex(tab["model"]).to_numpy()
    tab.to_csv(out / "scores.csv", index=False)
    md += ["## Scores (top 10)", "", _md_table(tab.head(10)), ""]
    if published is not None and published.notna().any():
        d = (tab["mwr"] - tab["published"]).abs()
        md += [f"Recomputed MWR vs the published aggregate: max |Δ| = {d.max():.4f}, median {d.median():.4f}.", ""]
    bar.update()

    # 2. ranking stability / best model / quality under scenario resampling
    bar.set_postfix_str("scenario DIoR")
    def dior_rows(decision: str) -> list[dict]:
        out = []
        for obj in ("kendall", "weighted_tau", "best_model", "model_quality"):
            r = R.dior(bench, decision, obj, n_boot=n_boot, n_top=n_top, rng=rng, **kw)
            out.append(dict(granularity=decision, objective=obj, dior=r.dior, mean=r.statistic,
                            error_rate=r.error_rate if r.error_rate is not None else np.nan))
        return out

    rows = dior_rows("scenarios")
    bar.update()
    bar.set_postfix_str("scenario curve")
    sizes = sorted({int(s) for s in np.unique(np.linspace(1, bench.n_scen, min(bench.n_scen, 8)).round())})
    curve_s = pd.concat([R.efficiency_curve(bench, "scenarios", o, sizes, n_boot=max(n_boot // 2, 50), rng=rng, **kw)
                         for o in ("kendall", "model_quality")])
    curve_s.to_csv(out / "efficiency_scenarios.csv", index=False)
    _plot_curve(curve_s, "size", out / "efficiency_scenarios.png", "DIoR vs number of scenarios",
                "scenarios drawn (with replacement)", target)
    bar.update()

    # 3. clones and removals
    bar.set_postfix_str("clones")
    clones = R.clone_flips(bench, top_k=min(5, bench.n_models), **kw)
    removals = R.removal_flips(bench, top_k=2, **kw) if bench.n_models > 2 else pd.DataFrame()
    bar.update()

    if per_item:
        bar.set_postfix_str("example DIoR")
        rows += dior_rows("examples")
        bar.update()
        bar.set_postfix_str("example curve")
        gmax = int(bench.group_sizes().max())
        ex_sizes = sorted({int(s) for s in np.unique(np.geomspace(5, gmax, 8).round()) if 1 <= s <= gmax})
        curve_e = R.efficiency_curve(bench, "examples", "kendall", ex_sizes, n_boot=max(n_boot // 4, 50), rng=rng, **kw)
        curve_e.to_csv(out / "efficiency_examples.csv", index=False)
        _plot_curve(curve_e, "size", out / "efficiency_examples.png", "DIoR (Kendall τ) vs examples per scenario",
                    "examples per scenario", target)
        bar.update()
        bar.set_postfix_str("rank switches")
        sw = R.rank_switch_curve(bench, ex_sizes, n_boot=max(n_boot // 4, 50), rng=rng,
                                 cluster_sizes=[c for c in (2, 3, 5, 10, 20) if c <= bench.n_models], **kw)
        sw.to_csv(out / "rank_switch.csv", index=False)
        _plot_switch(sw, out / "rank_switch.png")
        bar.update()
    bar.close()

    rel = pd.DataFrame(rows)
    rel.to_csv(out / "reliability.csv", index=False)
    md += ["## Reliability (DIoR)", "", _md_table(rel), "",
           "- *kendall / weighted_tau*: ranking stability (τ between original and resampled rankings).",
           f"- *best_model*: DIoR of 1 − P(top two switch), repeated {n_top}× removing the current leader; "
           "error_rate = that switch probability.",
           "- *model_quality*: 1 − mean |Δ MWR|.", "",
           "![DIoR vs scenarios](efficiency_scenarios.png)", ""]
    md += ["## Mean Win Rate sensitivity", ""]
    if len(clones):
        md += [f"{len(clones)} model(s) whose dominated clone (slightly worse everywhere) reorders the top "
               f"{min(5, bench.n_models)} when added:", "",
               _md_table(clones.assign(old_top=clones.old_top.map(" > ".join), new_top=clones.new_top.map(" > ".join))
                         [["clone_of", "old_top", "new_top"]]), ""]
    else:
        md += ["No single weaker clone reorders the top models.", ""]
    if len(removals):
        md += [f"Removing any of {', '.join(map(str, removals.removed))} swaps the top two.", ""]
    else:
        md += ["Removing any single lower-ranked model leaves the top two in place.", ""]
    md += ["## Recommended number of examples per scenario", ""]
    if per_item:
        ok = curve_e[curve_e["dior"] >= target]
        rec = int(ok["size"].min()) if len(ok) else None
        md += [(f"Kendall DIoR reaches {target:g} with **{rec} examples per scenario** "
                f"({ok['compute_fraction'].min():.1%} of the examples)." if rec is not None else
                f"Kendall DIoR stays below {target:g} even with all {gmax} examples per scenario: add examples."), "",
               _md_table(curve_e[["size", "compute_fraction", "dior", "statistic"]]), "",
               "![DIoR vs examples](efficiency_examples.png)", "", "![rank switches](rank_switch.png)", ""]
    else:
        md += ["The table holds one score per scenario: per-example scores (long format with an `item` "
               "column) are needed to recommend a number of examples.", ""]
    path = out / "report.md"
    path.write_text("\n".join(md), encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``effstats`` command."""
    parser = argparse.ArgumentParser(prog="effstats", description="effstats command line tools")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("audit", help="benchmark reliability report (DIoR, MWR sensitivity, examples needed)")
    p.add_argument("scores", metavar="SCORES.csv", help="long (model, <by>, score[, item]) or wide (models × scenarios) table")
    p.add_argument("--by", default="scenario", help="scenario column of a long table (default: scenario)")
    p.add_argument("--model", default="model", help="model column (default: model)")
    p.add_argument("--item", default="item", help="example column of a long per-example table (default: item)")
    p.add_argument("--score", default="score", help="score column of a long table (default: score)")
    p.add_argument("--out", default="reliability_report", help="output directory (default: reliability_report)")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples (default: 1000)")
    p.add_argument("--target", type=float, default=0.95, help="target DIoR for the recommendation (default: 0.95)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    try:
        data, published = read_scores(args.scores, by=args.by, model=args.model, item=args.item, score=args.score)
        path = audit(data, args.out, by=args.by, published=published, n_boot=args.n_boot, target=args.target,
                     seed=args.seed, progress=not args.no_progress, source=Path(args.scores).name)
    except ValueError as exc:
        print(f"effstats audit: error: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
