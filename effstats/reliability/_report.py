"""The ``effstats audit`` report: what a benchmark maintainer should add, drop, and trust.

:func:`effstats.reliability.audit` computes an :class:`effstats.reliability.AuditResult` (tables, advice, figures);
rendering it is separate
(:meth:`effstats.reliability.AuditResult.to_markdown`, :meth:`effstats.reliability.AuditResult.to_html`,
:meth:`effstats.reliability.AuditResult.save`, which writes
``report.md`` and ``report.html`` with PNG figures and CSV tables as the command line does). The report
holds the ranking under the chosen aggregate, which adjacent rank differences are resolved, DIoR of scenarios
(and examples), how reliability grows with scenarios / examples, which scenarios agree least with the rest,
and the Mean Win Rate's sensitivity to clones and removals.

The tables are drawn in :mod:`effstats.reliability._audit_tables`; the report's folder (what an audit writes
there, and may replace) is kept in :mod:`effstats.reliability._report_files`.
"""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._escape import csv_safe
from .._shared import SWAP, _cpus, _Forked, finish_swap, folder_lock, free_folder_lock, remove_staged, swap_files
from .._user_files import refuse_url
from .._validation import check_flag, check_fraction, check_option, check_positive_int
from ..datasets import DUPLICATE_POLICIES
from ._advice import _recommendations
from ._audit_tables import (_curve_sizes, _dior_row, _dior_rows, _example_curves, _objectives, _published_agreement,
                            _rank_agreement, _rank_note, _scenario_agreement, _score_table)
from ._benchmark import Benchmark
from ._inputs import (_drop_unweighted, _is_raw_mean, _mixed_scales, _prepare_frame, _published_weights, _raw_table,
                      _per_example_layouts, _read_file, _read_frame, _rescale_percent, _warn_lookalikes)
from ._dior import _check_n_boot, _curve_row, _drawn, _plan_bytes, _scored, dior_plan
from ._pathologies import clone_flips, removal_flips
from ._render import _SCORE_NAME, _Doc, _plot_curve, _plot_ranks, _plot_switch, _render
from ._report_files import _OUTPUTS, _RECORD, _RECORD_FORMAT, _check_out, _ours, _refuse_foreign
from ._winrate import _score

_PNG_DPI = 110  # the figures' PNG files
_HTML_DPI = 90  # the figures embedded in the HTML page


# ---------------------------------------------------------------------------------------- the result
@dataclass(frozen=True)
class AuditResult:
    """The tables, advice and figures of a benchmark reliability audit (:func:`effstats.reliability.audit`).

    Attributes
    ----------
    scores : DataFrame
        One row per model, best first: ``rank`` under the chosen aggregate, ``confidence_level`` (0.95) and its
        bootstrap interval at that level, ``rank_low``–``rank_high`` (resampling scenarios), the three aggregates
        (``mwr``, ``mean``, ``mean_of_means``), ``published`` when there is a published aggregate,
        ``p_ahead_of_next`` (how often the model stays ahead of the next one) and ``p_leader_ahead`` (how often the
        leader stays ahead of it; NaN for the leader itself).
    reliability : DataFrame
        DIoR per granularity (``scenarios``, ``examples``) and objective (``kendall``, ``weighted_tau``,
        ``best_model``, ``model_quality``).
    scenarios : DataFrame
        Per scenario: ``tau_with_rest``, ``tau_full_vs_without``, ``only_scenario_of``.
    efficiency_scenarios, efficiency_examples, rank_switch : DataFrame or None
        DIoR against the number of scenarios / examples per scenario, and rank-switch probabilities
        (the last two only with per-example scores).
    clones, removals : DataFrame
        Mean Win Rate sensitivity: dominated clones and removals that reorder the top models.
    recommendations : list of str
        "What to do", most important first (Markdown).
    notes : list of str
        How the input was read (columns left out, duplicates, percent scale, ...).
    published : dict or None
        The published aggregate: ``column``, ``kind`` ("mwr" / "mean"), ``rule`` (how it was recognised),
        ``max_abs_diff``, ``median_abs_diff`` and ``kendall_tau`` between the published and the recomputed
        rankings.
    settings : dict
        ``aggregate``, ``ties``, ``n_boot``, ``seed``, ``target``, ``source``, ``n_models``, ``n_scenarios``,
        ``n_items``, ``n_missing`` (models × scenarios cells without a score) and ``n_missing_items`` (per-example
        data: models × examples results not evaluated; None for a table).
    published_rank : dict or None
        A published ranking column (integers 1 … n, e.g. ``Rank``) compared with the recomputed ranking:
        ``column``, ``kendall_tau``, ``n_compared``, ``n_moved`` (models whose rank differs) and ``moved`` (model
        -> (published, recomputed)).

    See Also
    --------
    effstats.reliability.audit : Computes it.
    effstats.reliability.dior : One DIoR value with its bootstrap distribution.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from effstats.reliability import audit
    >>> x = np.linspace(0.9, 0.3, 6)[:, None] + np.random.default_rng(0).normal(0, 0.05, (6, 4))
    >>> table = pd.DataFrame(x, index=[f"m{i}" for i in range(6)], columns=["A", "B", "C", "D"])
    >>> res = audit(table, n_boot=50, progress=False)
    >>> res.leader
    'm0'
    >>> list(res.reliability.objective)
    ['kendall', 'weighted_tau', 'best_model', 'model_quality']
    >>> res.to_markdown().splitlines()[0]
    '# Benchmark reliability audit'
    """

    scores: pd.DataFrame
    reliability: pd.DataFrame
    scenarios: pd.DataFrame
    efficiency_scenarios: pd.DataFrame = field(repr=False)
    efficiency_examples: pd.DataFrame | None = field(repr=False)
    rank_switch: pd.DataFrame | None = field(repr=False)
    clones: pd.DataFrame = field(repr=False)
    removals: pd.DataFrame = field(repr=False)
    recommendations: list = field(repr=False)
    notes: list = field(repr=False)
    published: dict | None = field(repr=False)
    settings: dict = field(repr=False)
    published_rank: dict | None = field(default=None, repr=False)

    @property
    def leader(self) -> str:
        """The top-ranked model.

        Returns
        -------
        str

        See Also
        --------
        effstats.reliability.AuditResult : Its ``scores`` table ranks every model.

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import audit
        >>> res = audit(load_helm_lite(), n_boot=50, progress=False)
        >>> res.leader
        'GPT-4o (2024-05-13)'
        """
        return self.scores["model"].iloc[0]

    @property
    def figures(self) -> dict:
        """The report's figures, built on each access.

        Returns
        -------
        dict of str to matplotlib.figure.Figure
            Keyed by the file name :meth:`effstats.reliability.AuditResult.save` writes: ``rank_intervals.png``,
            ``efficiency_scenarios.png`` and,
            with per-example scores, ``efficiency_examples.png`` and ``rank_switch.png``.

        See Also
        --------
        effstats.reliability.AuditResult.save : Writes them as PNG files.

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import audit
        >>> res = audit(load_helm_lite(), n_boot=50, progress=False)
        >>> sorted(res.figures)
        ['efficiency_scenarios.png', 'rank_intervals.png']
        """
        return self._figures()

    def _figures(self, dpi: float | None = None) -> dict:
        """:attr:`figures`, at ``dpi`` (matplotlib's ``figure.dpi`` when None): laid out at the dpi they are saved
        at, their layout and their image share one renderer."""
        figs = {"rank_intervals.png": _plot_ranks(self.scores, dpi=dpi)}
        target = self.settings["target"]
        if len(self.efficiency_scenarios):
            figs["efficiency_scenarios.png"] = _plot_curve(
                self.efficiency_scenarios, "Ranking reliability vs number of scenarios",
                "scenarios drawn (with replacement)", target, dpi=dpi)
        if self.efficiency_examples is not None:
            figs["efficiency_examples.png"] = _plot_curve(
                self.efficiency_examples, "Ranking reliability vs examples per scenario", "examples per scenario",
                target, dpi=dpi)
            figs["rank_switch.png"] = _plot_switch(self.rank_switch, dpi=dpi)
        return figs

    def _doc(self) -> _Doc:
        return _render(self)

    def to_markdown(self) -> str:
        """The report as Markdown; figures are referenced by the file names
        :meth:`effstats.reliability.AuditResult.save` writes.

        Returns
        -------
        str

        See Also
        --------
        effstats.reliability.AuditResult.to_html : The same report as one HTML page.

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import audit
        >>> res = audit(load_helm_lite(), n_boot=50, progress=False)
        >>> md = res.to_markdown()
        >>> md.splitlines()[0], "## What to do" in md
        ('# Benchmark reliability audit', True)
        """
        return self._doc().markdown()

    def _inline_images(self) -> dict[str, str]:
        import base64
        import io

        out = {}
        for name, fig in self._figures(dpi=_HTML_DPI).items():
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=_HTML_DPI)
            out[name] = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
        return out

    def to_html(self, path: str | Path | None = None) -> str:
        """The report as one self-contained HTML page (figures embedded); written to ``path`` when given.

        Parameters
        ----------
        path : str or pathlib.Path, optional
            HTML file to write.

        Returns
        -------
        str
            The page.

        Raises
        ------
        ValueError
            ``path`` is a directory or not a path.

        See Also
        --------
        effstats.reliability.AuditResult.save : The report with its figures and tables as files.

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import audit
        >>> res = audit(load_helm_lite(), n_boot=50, progress=False)
        >>> page = res.to_html()
        >>> page.startswith("<!DOCTYPE html>"), "data:image/png;base64," in page
        (True, True)
        """
        if path is not None:
            if isinstance(path, bool) or not isinstance(path, (str, Path)) or Path(path).is_dir():
                raise ValueError(f"path: expected the path of an HTML file to write, got {path!r}")
        text = self._doc().html(self._title(), images=self._inline_images())
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def _repr_html_(self) -> str:
        return self._doc().html(self._title(), images=self._inline_images(), full=False)

    def _title(self) -> str:
        src = self.settings.get("source") or ""
        return f"Benchmark reliability audit {src}".strip()

    def save(self, out: str | Path, force: bool = False) -> Path:
        """Write ``report.md`` and ``report.html`` (figures as PNG files beside them) and the CSV tables to ``out``.

        Parameters
        ----------
        out : str or pathlib.Path
            Directory, created if needed. The files written are recorded in ``out/.effstats_audit.json``: a later
            save with ``force`` replaces them (and removes those it does not write again; a link is replaced, never
            written through), and refuses a file of those names that no audit wrote there, with or without
            ``force``. The folder is locked while the report is written (``out/.effstats.lock``, the lock every
            effstats command writing into a folder takes): a second save into it at the same time waits.
        force : bool, default=False
            Replace the report an earlier audit wrote into ``out`` (refused without it); a file no audit wrote is
            never replaced.

        Returns
        -------
        pathlib.Path
            The path of ``report.md``.

        Raises
        ------
        ValueError
            ``out`` is not a writable directory, holds a file of the report's names that no audit wrote
            there, or (without ``force``) holds an earlier audit's report.

        See Also
        --------
        effstats.reliability.AuditResult.to_html : The report as one self-contained page.

        Examples
        --------
        >>> from effstats.datasets import load_helm_lite
        >>> from effstats.reliability import audit
        >>> res = audit(load_helm_lite(), n_boot=50, progress=False)
        >>> import tempfile, pathlib
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = res.save(tmp)
        ...     files = sorted(p.name for p in pathlib.Path(tmp).iterdir())
        >>> path.name, files[:3]
        ('report.md', ['.effstats.lock', '.effstats_audit.json', 'efficiency_scenarios.csv'])
        """
        return self._save(out, force)

    def _save(self, out: str | Path, force: bool, source: Any = None) -> Path:
        """:meth:`save`, refusing also to write over the audited file ``source``."""
        import io
        import json

        if not isinstance(out, (str, Path)):
            raise ValueError(f"--out: expected a directory path, got {type(out).__name__}")
        out = _check_out(Path(out))
        force = check_flag(force, "force")
        # every file goes to a temporary file in ``out`` renamed over its name: a link of that name is replaced,
        # never written through (to a file outside ``out``), and an interrupted save leaves no half-written file
        tables = {"scores.csv": self.scores, "reliability.csv": self.reliability, "scenarios.csv": self.scenarios,
                  "efficiency_scenarios.csv": self.efficiency_scenarios,
                  "efficiency_examples.csv": self.efficiency_examples, "rank_switch.csv": self.rank_switch}
        tables = {k: t for k, t in tables.items()
                  if t is not None and (len(t) or k in ("scores.csv", "reliability.csv", "scenarios.csv"))}
        figures = self._figures(dpi=_PNG_DPI)
        names = [*tables, *figures, "report.html", "report.md"]
        # the folder's lock, the one every command writing into a folder takes: a second audit (or a select, an
        # estimate ...) into ``out`` at the same time waits, then finds this report in place, never a mix of two
        with folder_lock(out, "--out"):
            finish_swap(out, _ours)  # a save a kill cut short: completed before the folder is checked
            remove_staged(out, _ours)  # the files an audit killed before its journal staged
            owned = _refuse_foreign(out, names, source, force=force)
            # every file put in place together with its record, the earlier audit's files this one does not write
            # again removed: a kill leaves the earlier report whole or, once the next save has completed the swap,
            # this one
            writes = [(out / name, csv_safe(t).to_csv(index=False)) for name, t in tables.items()]
            for name, fig in figures.items():
                buf = io.BytesIO()
                fig.savefig(buf, format="png", dpi=_PNG_DPI)
                writes.append((out / name, buf.getvalue()))
            doc = self._doc()
            writes += [(out / "report.html", doc.html(self._title())), (out / "report.md", doc.markdown()),
                       (out / _RECORD, json.dumps({"format": _RECORD_FORMAT, "files": names}, indent=1) + "\n")]
            swap_files(out, writes, [f for f in owned if f not in names and f != _RECORD])
            return out / "report.md"


# ---------------------------------------------------------------------------------------- computing
# resamples x models x scenarios from which the default n_jobs=None shares the scenario resampling with a forked
# process (about two CPU seconds of work)
_FORK_CELLS = 20_000_000


def _compute(data: Any, *, by: str, published: pd.Series | None, pub_info: dict | None, aggregate: str, ties: str,
             n_boot: int, target: float, seed: int | None, progress: bool | None, source: str,
             notes: list[str], n_jobs: int | None = None, weights: dict | None = None) -> AuditResult:
    """Every table of the audit, step by step (a text progress bar on stderr), and the advice drawn from them.

    ``weights`` (scenario name: weight, a published weighted mean's) weight the scenarios in the ``"mean"``
    score and its resamples: the weighted mean, ``sum(c_s w_s x_s) / sum(c_s w_s)`` over scenarios drawn ``c_s``
    times."""
    from tqdm import tqdm  # text bars: widget bars break with Debian's ipywidgets 6 and nbclient

    kw = dict(scenario=by, subscenario=None)
    bench = Benchmark.from_data(data, name="SCORES", **kw)
    bench.check_connected("SCORES")
    if weights:
        w_scen = np.array([float(weights.get(str(c), 0.0)) for c in bench.scenario_names])
        bench = dataclasses.replace(bench, item_weight=w_scen[bench.scen_of_sub[bench.sub_of_item]])
    per_item = not bench.is_table
    n_top = min(5, bench.n_models - 1)
    k_top = min(5, bench.n_models)
    rng = np.random.default_rng(seed)
    boot = dict(score=aggregate, ties=ties, n_top=n_top, rng=rng, **kw)
    steps = ["scores", "scenario DIoR", "scenario curve", "scenarios", "MWR sensitivity"] + (
        ["example DIoR", "example curve", "rank switches"] if per_item else [])
    # disable=None: tqdm shows the bar only when stderr is a terminal (not in a log file or a pipe)
    bar = tqdm(total=len(steps), desc="effstats audit", disable=None if progress is None else not progress,
               file=sys.stderr)
    notes = list(notes)

    def step(name: str) -> None:
        bar.set_postfix_str(name)

    step("scores")
    num, den = bench.sub_sums()
    scores = {s: _score(bench, num, den, s, ties)[0] for s in ("mwr", "mean", "mean_of_means")}
    main = scores[aggregate]
    bar.update()
    step("scenario DIoR")
    # every scenario resample is drawn first, in the order in which the steps, one after the other, would draw them
    # (the objectives', then the curve sizes'): the steps need no generator then, and two processes sharing them
    # compute the same numbers as one
    _check_n_boot(n_boot)
    objectives = _objectives(bench, "scenarios", aggregate, main, notes)
    opts = {k: v for k, v in boot.items() if k != "rng"}
    plans = {o: dior_plan(bench, "scenarios", o, **opts) for o in objectives}
    # every objective's draws are held at once, then one objective's statistic and scores beside them
    _check_n_boot(n_boot, sum(_plan_bytes(p, scored=False) for p in plans.values()) + 8 * (1 + bench.n_models))
    drawn = {o: list(_drawn(p, n_boot, rng)) for o, p in plans.items()}
    curve_plans = [dior_plan(bench, "scenarios", "kendall", size=s, **opts) for s in _curve_sizes(bench.n_scen)]
    curve_drawn = [list(_drawn(p, max(n_boot // 4, 50), rng)) for p in curve_plans]

    def other() -> tuple:
        """The DIoR objectives but Kendall's τ, the per-scenario agreement and the MWR's sensitivity: about half
        the work, independent of the rest (the rank table and the curve need Kendall's τ)."""
        rows = [_dior_row("scenarios", _scored(plans[o], drawn[o])) for o in objectives[1:]]
        per_scen = _scenario_agreement(bench, num, den, main, aggregate, ties)
        clones = clone_flips(bench, top_k=k_top, ties=ties, **kw)
        removals = removal_flips(bench, top_k=2, ties=ties, **kw) if bench.n_models > 2 else pd.DataFrame()
        return rows, per_scen, clones, removals

    # by default a forked process only where the resampling is large: the fork and the pages it copies on writing
    # cost about a CPU second, more than the half of a smaller audit it would take
    big = n_boot * bench.n_models * bench.n_scen >= _FORK_CELLS
    with _Forked(other, (n_jobs or (_cpus() if big else 1)) > 1) as others:
        kendall_res = _scored(plans["kendall"], drawn["kendall"])
        tab, p_hold = _score_table(bench, scores, aggregate, kendall_res.resampled, published)
        step("scenario curve")
        # the curve's draws of every scenario mostly repeat the Kendall DIoR's: their τ is taken from it
        known = plans["kendall"]._known(drawn["kendall"], kendall_res)
        curve_s = pd.DataFrame([_curve_row(_scored(p, d, known if p.size == bench.n_scen else None))
                                for p, d in zip(curve_plans, curve_drawn)])
        step("scenarios, MWR sensitivity")
        rest, per_scen, clones, removals = others()
    rows = [_dior_row("scenarios", kendall_res), *rest]
    bar.update(4)
    curve_e = sw = None
    if per_item:
        step("example DIoR")
        rows += _dior_rows(bench, "examples", n_boot, boot, main, notes)[0]
        bar.update()
        curve_e, sw = _example_curves(bench, n_boot, boot, bar)
    bar.close()

    pub = _published_agreement(bench, published, pub_info, aggregate, scores)
    settings = dict(aggregate=aggregate, weights=weights or None, ties=ties, n_boot=n_boot, seed=seed, target=target,
                    source=source,
                    n_models=bench.n_models, n_scenarios=bench.n_scen, n_items=bench.n_items if per_item else None,
                    n_missing=int((~bench.scenario_observed()).sum()),
                    n_missing_items=int((~bench.observed).sum()) if per_item else None, n_top=n_top, k_top=k_top,
                    n_resolved=int((p_hold >= target).sum()), n_pairs=len(p_hold))
    res = AuditResult(scores=tab, reliability=pd.DataFrame(rows), scenarios=per_scen, efficiency_scenarios=curve_s,
                      efficiency_examples=curve_e, rank_switch=sw, clones=clones, removals=removals,
                      recommendations=[], notes=notes, published=pub, settings=settings)
    res.recommendations.extend(_recommendations(res, bench, num, den))
    return res


# ---------------------------------------------------------------------------------------- the entry point
def audit(data: Any, out: str | Path | None = None, *, format: str = "auto", table: str | None = None,
          by: str = "scenario", model: str | None = None, item: str | None = None, score: str | None = None,
          scenarios: Any = None, exclude: Any = None, duplicates: str | None = None, published: Any = None,
          published_kind: str | None = None, aggregate: str = "auto", ties: str = "auto", n_boot: int = 1000,
          target: float = 0.95, seed: int | None = 0, progress: bool | None = None, source: str = "",
          notes: list[str] | None = None, force: bool = False, n_jobs: int | None = None,
          scale: str = "auto", metric: str | None = None, filter: str | None = None,
          higher_is_better: Any = None) -> AuditResult:
    """Audit a benchmark's reliability: what to add or drop, which rank differences are resolved, DIoR.

    Ranks the models as the leaderboard does, bootstraps the decisions of the benchmark's design (which
    scenarios, which examples) and reports DIoR (Decision Impact on Reliability, Sect. 2.1 of [1]_), the rank
    intervals, per-scenario agreement and the Mean Win Rate's sensitivity to clones and removals (Sect. 5.5).

    Parameters
    ----------
    data : path, DataFrame or ResponseMatrix
        A score file read as ``effstats audit`` reads it (wide or long CSV/TSV, HELM groups JSON, Open LLM
        Leaderboard results JSON or CSV; see :func:`effstats.cli.read_scores`), a wide DataFrame (models ×
        scenarios; a frame with text columns, e.g. straight from ``pd.read_csv``, or with ``model=`` naming its
        model column, is read as the command line reads the file) or a ResponseMatrix with a ``by`` item column
        (per-example scores).
    out : path, optional
        Directory for ``report.md``, ``report.html``, figures and CSV tables (created). None writes nothing:
        use :meth:`effstats.reliability.AuditResult.save` later.
    format : {"auto", "table", "helm-json", "openllm-json", "openllm-csv"}, default="auto"
        Layout of a file ``data``; auto recognises it from the suffix and the content.
    table : str, optional
        HELM JSON: title (or part of it) of the table to audit.
    by : str, default="scenario"
        Scenario column of a long table or of the ResponseMatrix's items.
    model, item, score : str, optional
        Column names of a long table (defaults "model", "item", "score"); ``model`` also names the model
        column of a wide table. An empty name (here and for ``by``) is refused, not read as the default.
    scenarios, exclude : list of str, optional
        Score columns to audit / to leave out.
    higher_is_better : list of str, optional
        Score columns of a table read as they are. Without it, a column marked ↓ or named like a lower-is-better
        metric ("Mean squared error", "WER", "val_loss"; one warning names those) is negated.
    duplicates : {"last", "first", "mean", "error"} or None, default=None
        Models listed more than once (resubmissions): keep the last row in file order (no date column is read),
        the first, average them, or refuse.
        Keeping one row is said in a warning and in the report. None keeps the last row too, but refuses a table
        whose repeated rows a text column naming every row tells apart (one row per weight of an architecture):
        those are distinct entries, audited with ``model=`` that column, or merged with ``duplicates="last"``.
    published : Series or str, optional
        The published aggregate (Series indexed by model) or, for a DataFrame ``data``, the name of its column.
        Without it, a column of a DataFrame that equals the mean or the Mean Win Rate of the others is found and
        used; files are searched the same way and by column name ("Mean win rate", "Average", the file's name).
    published_kind : {"mwr", "mean"}, optional
        What the published aggregate is, when it is not recognised.
    aggregate : {"auto", "mwr", "mean", "mean_of_means"}, default="auto"
        How the leaderboard ranks models; auto follows the published aggregate (the mean for Open LLM Leaderboard
        and lm-evaluation-harness results files, which publish none but rank by the average; Mean Win Rate for other
        data without one).
    ties : {"auto", "strict", "half"}, default="auto"
        Win-rate ties: strict (App. A of [1]_) or half credit, HELM's rule; auto = half for HELM inputs (HELM
        JSON, or a table with HELM's "Mean win rate" or "Model/adapter" column) and for a published win rate
        that half credit reproduces better, strict otherwise.
    n_boot : int, default=1000
        Bootstrap resamples.
    target : float in (0, 1), default=0.95
        DIoR the recommendations aim for.
    seed : int or None, default=0
        Seed of the resampling.
    progress : bool or None, default=None
        Show a progress bar on stderr: always (True), never (False) or only when stderr is a terminal (None).
    source : str, default=""
        Name of the data, shown in the title.
    notes : list of str, optional
        Extra paragraphs for the report.
    force : bool, default=False
        Replace the report an earlier audit wrote into ``out`` (the files its record lists; refused without it). A
        file of the report's names that no audit wrote there (and the audited file itself) is refused with or
        without it; see :meth:`effstats.reliability.AuditResult.save`.
    n_jobs : int or None, default=None
        Processes computing the resampling of scenarios: with more than one, half the work (every DIoR objective
        but Kendall's τ, the per-scenario agreement, the clone and removal checks) runs in a forked process beside
        the rest (on POSIX systems but macOS; elsewhere in this process). None: one per core the process may use
        where the resampling is large (``n_boot`` x models x scenarios of at least 2e7, some seconds of work; a
        forked process costs about a CPU second), else one.
        Each step computes the same numbers in either process (the resamples are drawn first, in one order), so
        the report does not depend on ``n_jobs``.
    scale : {"auto", "fraction", "percent", "as-is"}, default="auto"
        The scale of a wide table's scores. "auto" judges it by content, column by column: within [0, 1] is a
        fraction; within 0–100 and above 10 somewhere (above 1 under a header naming %) is percent, divided by 100
        when every column is; within 0–10 and above 1 (a 0–10 rating) cannot be told and is read as it is. Rows
        above 1 everywhere among fractions are refused, as are rows below 1 everywhere among percentages where the
        file's order (sorted by score) places them as fractions; other such rows are noted (a baseline near 0).
        "percent" divides every column by 100, "fraction" and "as-is" read the scores as they are; a stated scale
        skips those checks (values outside [0, 1] / [0, 100] are refused; "percent" on a table whose every
        score lies in [0, 1] is read as stated, with a warning). Rankings, win rates and DIoR do not
        depend on the scale; a mean across columns on different scales is refused naming them.
    metric, filter : str, optional
        lm-evaluation-harness / Open LLM Leaderboard results JSON files (``format="openllm-json"``): the metric
        to read for every task (``"acc"``) instead of the leaderboard's per task (acc_norm for ARC and HellaSwag,
        else the first of acc_norm, acc, ... an entry logs), and lm-eval 0.4's filter to read where a metric is
        logged under several (``"flexible-extract"``) instead of the first one logged; see
        :func:`effstats.cli.read_openllm_json`. Refused for other input.

    Returns
    -------
    AuditResult
        Tables as DataFrames, figures, ``to_markdown()``, ``to_html(path)``, ``save(out)``.

    Raises
    ------
    ValueError
        Bad input, with a message naming the argument (as the command line's ``--option``).

    Warns
    -----
    UserWarning
        Models listed more than once (``duplicates`` other than "error").

    See Also
    --------
    effstats.reliability.AuditResult : The result and its rendering.
    effstats.reliability.dior : DIoR of one design decision.
    effstats.reliability.clone_flips : The clone detector behind "MWR is manipulable".

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from effstats.reliability import audit
    >>> x = np.linspace(0.9, 0.3, 8)[:, None] + np.random.default_rng(1).normal(0, 0.03, (8, 5))
    >>> table = pd.DataFrame(x.round(3), index=[f"m{i}" for i in range(8)], columns=list("ABCDE"))
    >>> table.insert(0, "board", table.mean(axis=1).round(3))  # a published average under any name
    >>> res = audit(table, n_boot=50, progress=False)
    >>> res.published["column"], res.published["kind"], res.settings["aggregate"]
    ('board', 'mean', 'mean')
    >>> res.scores[["model", "rank"]].head(2).to_numpy().tolist()
    [['m0', 1], ['m1', 2]]
    """
    import warnings

    from .._plain_exceptions import DegenerateDataWarning

    n_boot, target, aggregate = _check_audit_args(n_boot, target, seed, out, aggregate, ties, duplicates,
                                                  published_kind)
    if n_jobs is not None:
        n_jobs = check_positive_int(n_jobs, "n_jobs")
    if scale not in ("auto", "fraction", "percent", "as-is"):
        raise ValueError(f"--scale: expected 'auto', 'fraction', 'percent' or 'as-is', got {scale!r}")
    for arg, v in (("--by", by), ("--model", model), ("--item", item), ("--score", score)):
        if isinstance(v, str) and not v.strip():  # not the default column: a name given empty is a mistake
            raise ValueError(f"{arg}: expected a column name, got {v!r}")
    if out is not None:  # before the bootstrap: a refused folder costs no waiting
        force = check_flag(force, "force")
        if (Path(out) / SWAP).is_file():  # a save a kill cut short: completed before the folder is judged by it
            with free_folder_lock(Path(out)) as held:
                if held:  # else another command holds the lock: the save checks again under it
                    finish_swap(Path(out), _ours)
        remove_staged(Path(out), _ours)  # a killed audit's staged files (its process gone), before any refusal
        _refuse_foreign(Path(out), _OUTPUTS, data, foreign=False)
        _refuse_foreign(Path(out), _OUTPUTS[:5] + ("rank_intervals.png",), force=force)
    given = data
    notes = list(notes or [])
    rank_info = ranked_by = None
    for arg, v in (("--metric", metric), ("--filter", filter)):
        if v is not None and not isinstance(data, (str, Path)):
            raise ValueError(f"{arg}: applies to lm-evaluation-harness / Open LLM Leaderboard results JSON files "
                             f"(--format openllm-json), not to a {type(data).__name__}; leave it out")
    if isinstance(data, (str, Path)):
        source = source or Path(data).name
        data, pub, read_notes, helm = _read_file(data, format=format, table=table, by=by, model=model, item=item,
                                                 score=score, scenarios=scenarios, exclude=exclude,
                                                 duplicates=duplicates, judge_scale=scale == "auto", metric=metric,
                                                 filter=filter, higher_is_better=higher_is_better)
        rank_info = data.attrs.get("published_rank") if isinstance(data, pd.DataFrame) else None
        ranked_by = data.attrs.get("ranked_by") if isinstance(data, pd.DataFrame) else None
        notes = read_notes + notes
        published = pub if published is None else published
        info = None if pub is None else pub.attrs.get("info")
    elif isinstance(data, pd.DataFrame) and _raw_table(data, model):
        data, pub, read_notes, helm = _read_frame(data, format=format, table=table, by=by, model=model, item=item,
                                                  score=score, scenarios=scenarios, exclude=exclude,
                                                  duplicates=duplicates, judge_scale=scale == "auto",
                                                  higher_is_better=higher_is_better)
        rank_info = data.attrs.get("published_rank") if isinstance(data, pd.DataFrame) else None
        notes = read_notes + notes
        if isinstance(published, str) and isinstance(data, pd.DataFrame) and published in data.columns:
            data, published, info = _prepare_frame(data, published, notes)
        else:
            if isinstance(published, str) and (pub is None or pub.name != published):
                raise ValueError(f"published: column {published!r} not in the table "
                                 f"(score columns: {list(map(str, getattr(data, 'columns', [])))})")
            published = pub if published is None or isinstance(published, str) else published
            info = None if pub is None else pub.attrs.get("info")
    elif isinstance(data, pd.DataFrame):
        data, published, info = _prepare_frame(data, published, notes)
        helm = bool(info) and "mean win rate" in str(info.get("column", "")).lower()
    else:
        info, helm = None, False
    _per_example_layouts(data, by, scenarios, notes)
    data, published, mixed = _rescale_percent(data, published, notes, scale)
    _warn_lookalikes(data, notes)
    if published is not None and not isinstance(published, pd.Series):
        raise ValueError(f"published: expected a Series indexed by model, got {type(published).__name__}")
    kind = published_kind or (None if published is None else published.attrs.get("kind"))
    if info is not None and kind:
        info = dict(info, kind=kind)
    if aggregate == "auto":
        # audit the ranking the leaderboard publishes: Open LLM / GLUE / BBH rank by a mean, HELM by win rate,
        # MTEB by a weighted mean (the mean with the weights recovered from the published column)
        aggregate = "mean" if kind == "weighted" else kind or ranked_by or "mwr"
        if kind is None and ranked_by == "mean":
            notes.append("Ranked by the mean of the scores: the results files publish no aggregate, and the Open LLM "
                         "Leaderboard ranks by their Average (lm-evaluation-harness aggregates a group by a mean); "
                         "`--aggregate mwr` ranks by the Mean Win Rate instead.")
        if kind == "weighted" and not scenarios:  # score columns the user names are kept
            data = _drop_unweighted(data, info, notes)
        weights = _published_weights(data, info) if kind == "weighted" else None
    else:
        weights = None
    _mixed_scales(mixed, aggregate, info, notes, raw_mean=bool(mixed) and _is_raw_mean(data, published, info))
    if ties == "auto":
        # HELM's rule for HELM tables; for a published win rate recognised by its values (under another name),
        # the tie rule it was reproduced with
        by_values = info is not None and info.get("kind") == "mwr" and info.get("rule") in ("exact", "close")
        ties = "half" if helm or (by_values and info.get("ties") == "half") else "strict"
    with warnings.catch_warnings():  # too few resamples: said once, in the report itself
        warnings.simplefilter("ignore", DegenerateDataWarning)
        res = _compute(data, by=by, published=published, pub_info=info, aggregate=aggregate, ties=ties,
                       n_boot=n_boot, target=target, seed=seed, progress=progress, source=source, notes=notes,
                       n_jobs=n_jobs, weights=weights)
    agreement = None if rank_info is None else _rank_agreement(res, rank_info)
    if agreement is not None:
        import dataclasses

        res.notes.append(_rank_note(agreement))
        res = dataclasses.replace(res, published_rank=agreement)
    if out is not None:
        res._save(out, force, source=given)
    return res


def _check_audit_args(n_boot: Any, target: Any, seed: Any, out: Any, aggregate: Any, ties: Any, duplicates: Any,
                      published_kind: Any) -> tuple[int, float, str]:
    """Refuse bad settings before reading anything, naming the command line's option; returns the checked
    ``n_boot``, ``target`` and ``aggregate`` (``-`` read as ``_``)."""
    n_boot = check_positive_int(n_boot, "--n-boot")
    target = check_fraction(target, "--target")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"--seed: expected a non-negative integer or None, got {seed!r}")
    if out is not None and not isinstance(out, (str, Path)):
        raise ValueError(f"--out: expected a directory path, got {type(out).__name__}")
    if out is not None:
        refuse_url(out, "--out", output=True)
    aggregate = aggregate.replace("-", "_") if isinstance(aggregate, str) else aggregate
    if aggregate != "auto" and aggregate not in _SCORE_NAME:
        raise ValueError(f"--aggregate: expected one of {['auto', *_SCORE_NAME]}, got {aggregate!r}")
    if ties not in ("auto", "strict", "half"):
        raise ValueError(f"--ties: expected 'auto', 'strict' or 'half', got {ties!r}")
    if duplicates is not None:  # None: not chosen
        check_option(duplicates, "--duplicates", DUPLICATE_POLICIES)
    if published_kind not in (None, "mwr", "mean"):
        raise ValueError(f"published_kind: expected 'mwr', 'mean' or None, got {published_kind!r}")
    if out is not None:
        _check_out(Path(out), keep=False)
    return n_boot, target, aggregate

