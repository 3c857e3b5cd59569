"""Group-sequential designs (gsDesign through rpy2, or native) and adaptive evaluation.

An adaptive evaluation scores models on a benchmark in batches and stops as soon as the question asked (is
A better than B? is the accuracy known to +-2 points? which of these models is best?) is answered, with the
error rates of a group-sequential test (Jennison & Turnbull 2000). The pieces:

- designs: :func:`effstats.sequential.design` and its frozen result
  :class:`effstats.sequential.GroupSequentialDesign`, natively (Armitage-McPherson-Rowe recursive integration
  on gsDesign's grid, no R needed) or by calling ``gsDesign::gsDesign``;
- spending functions: :class:`effstats.sequential.SpendingFunction` (Lan-DeMets Pocock / O'Brien-Fleming,
  Hwang-Shih-DeCani, Kim-DeMets power) and the classic Wang-Tsiatis shapes (Pocock, O'Brien-Fleming);
- stopping rules: :class:`effstats.sequential.Efficacy`, :class:`effstats.sequential.Equivalence`,
  :class:`effstats.sequential.Precision`, :class:`effstats.sequential.Threshold`,
  :class:`effstats.sequential.Futility`, :class:`effstats.sequential.BetaSpendingFutility`,
  :class:`effstats.sequential.DiminishingReturns`;
- evaluation: :class:`effstats.sequential.SequentialEvaluator`, offline (``fit``), vectorised simulation
  (``simulate``) and online (``update``);
- ranking: :func:`effstats.sequential.rank_models` and :class:`effstats.sequential.SequentialRanking`,
  pairwise comparisons with Holm / Bonferroni-corrected stops;
- inference after stopping: :func:`effstats.sequential.stagewise_inference` (stage-wise ordering p-value,
  median-unbiased estimate, final confidence interval);
- planning: :func:`effstats.sequential.plan`, :func:`effstats.sequential.detectable_effect` and
  :func:`effstats.sequential.conditional_power`.

References
----------
Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
Chapman & Hall/CRC, Boca Raton.

Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0.

Wassmer, G. & Pahlke, F. (2023). *rpact: Confirmatory Adaptive Clinical Trial Design and Analysis*. R package
version 3.3.4.

Anonymous authors (under review). Stop guessing when to stop testing: efficient model evaluation with just
enough data. Manuscript under double-blind review.

Examples
--------
>>> from effstats.sequential import plan
>>> p = plan(0.02, disagreement=0.10, looks=5, power=0.9)  # detect 2 points between two models
>>> p.max_n, p.looks.tolist()
(2677, [536, 1071, 1607, 2142, 2677])
"""
from ._design import GroupSequentialDesign, design
from .evaluator import SequentialEvaluator, SequentialResult, SimulationResult, stratified_mean
from .inference import StagewiseInference, sequential_pvalue, stagewise_inference, stagewise_pvalue
from .planning import SequentialPlan, conditional_power, detectable_effect, plan
from .ranking import PairwiseRanking, SequentialRanking, rank_models
from .rules import (BetaSpendingFutility, DiminishingReturns, Efficacy, Equivalence, Futility, LookStats, Precision,
                    StoppingRule, Threshold)
from .spending import (SpendingFunction, get_spending, hwang_shih_decani, kim_demets_power, ld_obrien_fleming,
                       ld_pocock, obrien_fleming, pocock, wang_tsiatis)

__all__ = [
    "GroupSequentialDesign", "design",
    "SpendingFunction", "get_spending", "ld_pocock", "ld_obrien_fleming", "hwang_shih_decani", "kim_demets_power",
    "pocock", "obrien_fleming", "wang_tsiatis",
    "SequentialEvaluator", "SequentialResult", "SimulationResult", "stratified_mean",
    "PairwiseRanking", "SequentialRanking", "rank_models", "sequential_pvalue",
    "StagewiseInference", "stagewise_inference", "stagewise_pvalue",
    "SequentialPlan", "plan", "detectable_effect", "conditional_power",
    "StoppingRule", "LookStats", "Efficacy", "Equivalence", "Precision", "Threshold", "Futility",
    "BetaSpendingFutility", "DiminishingReturns",
]
