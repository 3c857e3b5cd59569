"""The audit report's writers: a document of blocks rendered to Markdown and HTML, the figures, and the report
laid out from an :class:`effstats.reliability.AuditResult`."""
from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._escape import html_text, line_text, md_prose, md_text
from .._shared import _name_list
from .._published import _weights_text

if TYPE_CHECKING:
    from ._report import AuditResult

_SCORE_NAME = {"mwr": "Mean Win Rate", "mean": "mean score", "mean_of_means": "mean of scenario means"}
_FIGURES = {"rank_intervals.png": "rank intervals", "efficiency_scenarios.png": "DIoR vs scenarios",
            "efficiency_examples.png": "DIoR vs examples", "rank_switch.png": "rank switches"}


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
            # the prose keeps its emphasis and code spans; names in it (models, scenarios, the source) cannot
            # open HTML, links or tables, nor a line of their own
            if b[0] == "h":
                out += ["#" * b[1] + " " + md_prose(b[2]), ""]
            elif b[0] == "p":
                out += [md_prose(b[1]), ""]
            elif b[0] == "ul":
                out += [f"- {md_prose(i)}" for i in b[1]] + [""]
            elif b[0] == "table":
                df, fmt = b[1], b[2]
                out.append("| " + " | ".join(map(md_text, df.columns)) + " |")
                out.append("|" + "---|" * df.shape[1])
                for row in df.itertuples(index=False):
                    out.append("| " + " | ".join(md_text(self._cell(v, fmt)) for v in row) + " |")
                out.append("")
            elif b[0] == "img":
                out += [f"![{b[2]}]({b[1]})", ""]
        return "\n".join(out)

    def html(self, title: str, *, images: dict[str, str] | None = None, full: bool = True) -> str:
        """HTML text; ``images`` maps a figure's file name to the ``src`` to use (a data URI when self-contained)."""
        def inline(t: str) -> str:
            t = html.escape(line_text(t), quote=True)  # prose: its spaces are the report's, as in md_prose
            for mark, tag in (("**", "strong"), ("*", "em"), ("`", "code")):
                parts = t.split(mark)
                t = "".join(p if i % 2 == 0 else f"<{tag}>{p}</{tag}>" for i, p in enumerate(parts)) \
                    if len(parts) % 2 == 1 else t
            return t

        style = ("table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
                 "img{max-width:100%}")
        out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>", f"<title>{html_text(title)}</title>",
               "<style>body{font-family:sans-serif;max-width:60em;margin:auto;padding:1em}" + style
               + "</style></head><body>"] if full else ["<div class='effstats-audit'>"]
        for b in self.blocks:
            if b[0] == "h":
                out.append(f"<h{b[1]}>{inline(b[2])}</h{b[1]}>")
            elif b[0] == "p":
                out.append(f"<p>{inline(b[1])}</p>")
            elif b[0] == "ul":
                out.append("<ul>" + "".join(f"<li>{inline(i)}</li>" for i in b[1]) + "</ul>")
            elif b[0] == "table":
                df, fmt = b[1], b[2]
                rows = ["<tr>" + "".join(f"<th>{html_text(str(c))}</th>" for c in df.columns) + "</tr>"]
                for row in df.itertuples(index=False):
                    rows.append("<tr>" + "".join(f"<td>{html_text(self._cell(v, fmt))}</td>" for v in row) + "</tr>")
                out.append("<table>" + "".join(rows) + "</table>")
            elif b[0] == "img":
                src = (images or {}).get(b[1], b[1])
                out.append(f"<p><img src='{html_text(src)}' alt='{html_text(b[2])}'></p>")
        out.append("</body></html>" if full else "</div>")
        return "\n".join(out)


def _figure(dpi: float | None = None):
    """A figure off-screen on its own Agg canvas, at ``dpi`` (matplotlib's ``figure.dpi`` when None).

    No pyplot: the figure is never registered. With its canvas attached, ``tight_layout`` and a ``savefig`` at the
    figure's dpi share one renderer: no canvas is made for the layout and another for the image.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.8), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def _lay_out(fig, ax) -> None:
    """``tight_layout``, then the title pinned where matplotlib's automatic placement puts it.

    That placement sets the title at the top of the axes unless the y axis' offset text (a "1e-5" or "+0.999" above
    the axis) overlaps it, and checks so at every layout and every draw by laying out the y axis' ticks once more.
    The layout has just set the offset text: where it is empty, the title's place is the top of the axes at any
    size and dpi, and the image is drawn without that check.
    """
    fig.tight_layout()
    title = ax.title
    if title.get_text() and not ax.yaxis.offsetText.get_text():
        ax.set_title(title.get_text(), fontsize=title.get_fontsize(), y=1.0)


def _plot_curve(df: pd.DataFrame, title: str, xlabel: str, target: float, dpi: float | None = None):
    fig = _figure(dpi)
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
    _lay_out(fig, ax)
    return fig


def _labels(names: Any, width: int = 40) -> list[str]:
    """Axis labels of at most ``width`` characters that stay distinct when the names are.

    Long names are cut with "…"; names that would share a label keep their distinct tail instead
    ("org/very-long-model…-chat" and "…-base"), and an occurrence number is the last resort.
    """
    # control characters, tabs and line breaks as escapes (the font has no glyph for them, and a line break would
    # make a tick label of two lines), "$" literal (not mathtext)
    names = [line_text(str(n)).replace("$", r"\$") for n in names]
    short = [n if len(n) <= width else n[: width - 1] + "…" for n in names]
    clash = pd.Series(short).duplicated(keep=False).to_numpy() & pd.Series(names).ne("").to_numpy()
    for i in np.flatnonzero(clash):
        n = names[i]
        if len(n) > width:
            keep = width - 1
            head = (keep + 1) // 2
            short[i] = n[:head] + "…" + n[len(n) - (keep - head):]
    seen: dict[str, int] = {}
    for i, s in enumerate(short):
        if s in seen and names[i] != names[seen[s]]:
            short[i] = f"{s[: width - 6]}… #{i + 1}"
        seen.setdefault(short[i], i)
    return short


def _plot_ranks(tab: pd.DataFrame, n_show: int = 30, dpi: float | None = None):
    t = tab.head(n_show)
    fig = _figure(dpi)
    fig.set_size_inches(6, max(3.0, 0.18 * len(t) + 1))
    ax = fig.subplots()
    y = np.arange(len(t))
    # a percentile bootstrap interval need not contain the observed rank: drawn as a segment, not as error bars
    ax.hlines(y, t["rank_low"], t["rank_high"], color="tab:gray", lw=1)
    ax.plot(t["rank"], y, "o", ms=3, color="tab:blue")
    ax.set_yticks(y, _labels(t["model"]), fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("rank (95% bootstrap interval over scenarios)")
    ax.set_title(f"Top {len(t)} models: rank uncertainty", fontsize=10)
    _lay_out(fig, ax)
    return fig


def _plot_switch(df: pd.DataFrame, dpi: float | None = None):
    fig = _figure(dpi)
    ax = fig.subplots()
    for c, g in df.groupby("cluster_size"):
        ax.plot(g["size"], g["p_switch"], marker="o", label=f"ranks i and i+{c - 1}")
        ax.fill_between(g["size"], g["ci_low"], g["ci_high"], alpha=0.2)
    ax.set_xscale("log")
    ax.set_xlabel("examples per scenario")
    ax.set_ylabel("P(order of the two switches)")
    ax.legend(fontsize=8)
    _lay_out(fig, ax)
    return fig


# ---------------------------------------------------------------------------------------- rendering
def _render(res: AuditResult) -> _Doc:
    st = res.settings
    aggregate, ties, target = st["aggregate"], st["ties"], st["target"]
    per_item = st["n_items"] is not None
    doc = _Doc()
    doc.h(1, f"Benchmark reliability audit{': ' + st['source'] if st['source'] else ''}")
    doc.p(f"{st['n_models']} models, {st['n_scenarios']} scenarios"
          + (f", {st['n_items']} examples" if per_item else "")
          + (f" ({st['n_missing_items']} of {st['n_models'] * st['n_items']} results not evaluated, omitted)"
             if per_item and st.get("n_missing_items") else "")
          + f", {st['n_missing']} missing cells (omitted per model, never counted as 0). "
          + (f"Models ranked by the **weighted mean** of the scenarios with the published aggregate's weights "
             f"({_weights_text(st['weights'])}; resampled scenarios keep their weights)" if st.get("weights") else
             f"Models ranked by the **{_SCORE_NAME[aggregate]}**" + (f" (ties: {ties})" if aggregate == "mwr" else ""))
          + f". Bootstrap: {st['n_boot']} resamples, seed {st['seed']}. DIoR = lower end of the 95% interval of a "
          f"meta-metric (Perlitz et al. 2024); target {target:g}.")
    for n in res.notes:
        doc.p(n)
    if st["n_boot"] < 200:  # a 2.5% percentile from fewer than 200 draws rests on < 5 of them
        doc.p(f"**Warning**: {st['n_boot']} bootstrap resamples are too few for stable 95% bounds below (the 2.5% tail "
              f"holds {0.025 * st['n_boot']:.1f} draws); use `--n-boot 1000` before acting on this report.")
    doc.h(2, "What to do")
    doc.ul(res.recommendations)
    doc.h(2, "Ranking (top 15) and rank uncertainty")
    has_pub = "published" in res.scores.columns
    doc.table(res.scores.head(15)[["rank", "model", aggregate, "rank_low", "rank_high", "p_ahead_of_next",
                                   "p_leader_ahead"] + (["published"] if has_pub else [])])
    pub = res.published
    if pub is not None:
        col = f" {pub['column']!r}" if pub.get("column") else ""
        how = {"exact": " (recognised: it equals that aggregate of the other columns within rounding)",
               "close": " (recognised: it follows that aggregate of the other columns, r ≥ 0.999)",
               "name": " (recognised by its name, the table's name)"}.get(pub.get("rule"), "")
        if pub["kind"] == "weighted" and pub.get("not_audited"):
            how = (f" (recognised: a weighted mean, {_weights_text(pub['weights'])}; its column(s) "
                   f"{_name_list(map(repr, pub['not_audited']), 5)} are not among the score columns audited, so the "
                   "mean score of the audited columns is compared)")
        elif pub["kind"] == "weighted":
            how = (f" (recognised: a weighted mean of the scenarios, {_weights_text(pub['weights'])}, fitted by "
                   "non-negative least squares within rounding, or equal where equal weights reproduce it too; " + (
                       "the ranking and the resampling above use these weights)" if st.get("weights") else
                       "the ranking and the resampling above use the unweighted mean: the weighted mean leaves "
                       "out some of the score columns)"))
        what = _SCORE_NAME["mean"] if pub.get("not_audited") else _SCORE_NAME.get(pub["kind"], "weighted mean")
        lower = bool(pub.get("lower"))  # a mean rank, read negated: not on the aggregate's scale, only its ranking
        doc.p(f"Recomputed {what} vs the published aggregate{col}{how}"
              + (" (lower is better, read negated: only the rankings compare):" if lower else
                 f"{' (in percent)' if pub['scale'] == 100 else ''}: max |Δ| = {pub['max_abs_diff']:.4f}, median "
                 f"{pub['median_abs_diff']:.4f};")
              + f" Kendall τ of the two rankings {pub['kendall_tau']:.3f}"
              + (f" (the published ranking against the ranking shown above: {pub['kendall_tau_ranked']:.3f})"
                 if pub["kind"] == "weighted" and not st.get("weights") and not pub.get("not_audited")
                 and "kendall_tau_ranked" in pub else "")
              + ".")
    doc.img("rank_intervals.png", _FIGURES["rank_intervals.png"])
    doc.h(2, "Reliability (DIoR)")
    doc.table(res.reliability)
    doc.ul(["*kendall / weighted_tau*: ranking stability (τ between the original and resampled rankings; weighted τ "
            "stresses the top).",
            f"*best_model*: 1 − P(top two switch), repeated {st['n_top']}× removing the current leader; "
            "error_rate = that switch probability.", "*model_quality*: 1 − mean |Δ score|."])
    if len(res.efficiency_scenarios):
        doc.img("efficiency_scenarios.png", _FIGURES["efficiency_scenarios.png"])
    doc.h(2, "Scenarios")
    doc.p("tau_with_rest: Kendall τ between the scenario's own ranking and the ranking by all other scenarios; "
          "tau_full_vs_without: τ between the full ranking and the ranking without the scenario; only_scenario_of: "
          "models scored on no other scenario (dropping it leaves them unranked).")
    doc.table(res.scenarios)
    doc.h(2, "Mean Win Rate sensitivity")
    k_top = st["k_top"]
    if aggregate != "mwr":  # the checks below rank by the win rate whatever ranks the table above
        ranked = "weighted mean" if st.get("weights") else _SCORE_NAME[aggregate]
        doc.p(f"The leaderboard is ranked by the {ranked} here; the orders in this section are the Mean Win Rate's "
              f"(ties: {ties}), not the ranking above: what ranking by it would risk.")
    if len(res.clones):
        doc.p(f"{len(res.clones)} model(s) whose dominated clone (slightly worse everywhere) reverses the order of two "
              f"of the top {k_top} when added:")
        doc.table(res.clones[["clone_of", "old_top", "new_top"]])
    else:
        doc.p(f"No single weaker clone reverses the order of the top {k_top} models (becoming tied is not counted).")
    if len(res.removals):
        doc.p(f"Removing any of {_name_list(res.removals.removed)} reverses the top two.")
    else:
        doc.p("Removing any single lower-ranked model leaves the order of the top two in place.")
    doc.h(2, "Recommended number of examples per scenario")
    if per_item:
        doc.table(res.efficiency_examples[["size", "compute_fraction", "dior", "statistic", "ci_low", "ci_high"]])
        doc.img("efficiency_examples.png", _FIGURES["efficiency_examples.png"])
        doc.img("rank_switch.png", _FIGURES["rank_switch.png"])
    else:
        doc.p("The table holds one score per scenario: per-example scores (long format with an `item` column) are "
              "needed to recommend a number of examples.")
    return doc
