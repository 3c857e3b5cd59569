"""Benchmark reliability: Mean Win Rate, DIoR, rank-switch curves, MWR pathologies and Flash-HELM.

Implements Perlitz et al., "Efficient Benchmarking (of Language Models)" (NAACL 2024):

* :func:`~effstats.reliability.mean_win_rate` (App. A, exact: ties stay ties), :func:`~effstats.reliability.mean_score`,
  :func:`~effstats.reliability.mean_of_means`, :func:`~effstats.reliability.comparison_components` — vectorised
  over any number of leading "resample" axes;
* :func:`~effstats.reliability.dior` — Decision Impact on Reliability (Sect. 2.1): resample a design decision
  (scenarios, subscenarios, examples, prompts) with replacement, score the benchmark under each instantiation,
  compare with the original by a meta-metric (Kendall τ in O(n log n), weighted τ, best-model error rate,
  ``|Δ score|``) and report the lower bound of the confidence interval, with the whole distribution;
  :func:`~effstats.reliability.dior_plan` / :class:`~effstats.reliability.DIoRPlan` expose the batch steps (draw
  index arrays, score a batch);
* :func:`~effstats.reliability.efficiency_curve` (Fig. 2, App. C), :func:`~effstats.reliability.rank_trajectories`
  (Fig. 1), :func:`~effstats.reliability.rank_switch_curve` (Fig. 3), :func:`~effstats.reliability.prompt_strategies`
  (Fig. 4), :func:`~effstats.reliability.rank_resolution` (Fig. 6);
* App. B counterexamples and the clone / removal detectors on real tables
  (:func:`~effstats.reliability.clone_flips`, :func:`~effstats.reliability.removal_flips`);
* :func:`~effstats.reliability.flash_helm` — the coarse-to-fine tournament (Algorithm 1) with a guarantee for the
  top-k models, :func:`~effstats.reliability.flash_helm_orders` (its behaviour over random example orders) and
  :func:`~effstats.reliability.simulate_examples`.

Modules
-------
- ``_benchmark``: the validated models × items table (:class:`~effstats.reliability.Benchmark`) and the comparison
  graph
- ``_winrate``: Mean Win Rate (exact integer counts), mean score, mean of means
- ``_metametrics``: Kendall τ-b (merge-sort inversion counting across resamples), weighted τ, switches
- ``_dior``: DIoR, its batch plan and efficiency curves
- ``_resample``: a benchmark's bootstrap resamples (index arrays, score sums, scores), shared by DIoR, the curves
  and Flash-HELM
- ``_curves``: rank switches, prompt strategies, rank trajectories and resolution, subscenario correlations
- ``_pathologies``: App. B counterexamples and the clone / removal detectors
- ``_flash_helm``: Flash-HELM
- ``_report``: :func:`~effstats.reliability.audit` and its :class:`~effstats.reliability.AuditResult` (the
  ``effstats audit`` report's computation, its advice and its files); ``_audit_tables``: the report's tables (rank
  intervals, DIoR rows, per-scenario agreement, curves); ``_report_files``: the report's folder and its record
- ``_inputs``: the audit's reading of score files and frames, published aggregates and score scales
- ``_render``: the report's writers: Markdown and HTML blocks, figures, the report's layout

Data layout
-----------
A benchmark is a models × items table of scores. Items belong to subscenarios which belong to
scenarios (``ResponseMatrix.items`` columns ``scenario`` / ``subscenario`` / ``prompt``). A plain
leaderboard (models × scenarios, e.g. the HELM table) is the special case "one item per scenario".
Missing cells (not evaluated) are omitted per model as in App. A — never replaced by 0.

References
----------
Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N., Shmueli-Scheuer, M. and
Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024 (arXiv:2308.11696).
"""
from ._benchmark import Benchmark
from ._curves import prompt_strategies, rank_resolution, rank_switch_curve, rank_trajectories, subscenario_correlations
from ._dior import DIoRPlan, DIoRResult, dior, dior_plan, efficiency_curve
from ._flash_helm import FlashHELMResult, flash_helm, flash_helm_orders, simulate_examples
from ._metametrics import kendall_tau
from ._pathologies import (Counterexample, clone_flips, counterexample_grouping, counterexample_partial_reporting,
                           counterexample_weaker_model, removal_flips)
from ._report import AuditResult, audit
from ._winrate import comparison_components, mean_of_means, mean_score, mean_win_rate

__all__ = [
    "mean_win_rate",
    "mean_score",
    "mean_of_means",
    "comparison_components",
    "kendall_tau",
    "dior",
    "dior_plan",
    "DIoRPlan",
    "DIoRResult",
    "efficiency_curve",
    "rank_switch_curve",
    "prompt_strategies",
    "rank_resolution",
    "rank_trajectories",
    "subscenario_correlations",
    "Counterexample",
    "counterexample_weaker_model",
    "counterexample_grouping",
    "counterexample_partial_reporting",
    "clone_flips",
    "removal_flips",
    "flash_helm",
    "flash_helm_orders",
    "simulate_examples",
    "FlashHELMResult",
    "Benchmark",
    "audit",
    "AuditResult",
]
