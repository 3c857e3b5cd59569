"""Group-sequential designs (gsDesign through rpy2, or native) and adaptive evaluation.

Modules
-------
design      :func:`effstats.sequential.design` and its frozen result :class:`effstats.sequential.GroupSequentialDesign` (both backends)
spending    spending functions (Lan-DeMets Pocock / O'Brien-Fleming, Hwang-Shih-DeCani, Kim-DeMets power)
            and classic Wang-Tsiatis boundary shapes (Pocock, O'Brien-Fleming)
native      Armitage-McPherson-Rowe recursive integration on gsDesign's grid (no R needed)
gsdesign    the gsDesign backend (``gsDesign::gsDesign`` through ``effstats.rbridge``)
rules       composable stopping rules (efficacy, equivalence, precision, threshold, futility, diminishing returns)
evaluator   :class:`effstats.sequential.SequentialEvaluator`: offline (``fit``), vectorised simulation (``simulate``), online (``update``)
ranking     pairwise sequential ranking with Holm / Bonferroni-corrected stops, offline and online (``SequentialRanking``)
inference   after stopping: stage-wise ordering p-values, median-unbiased estimates, final confidence intervals
planning    :func:`effstats.sequential.plan` (maximum / expected items, looks and bounds for a target), :func:`effstats.sequential.detectable_effect`
            and :func:`effstats.sequential.conditional_power`
"""
from .design import GroupSequentialDesign, design
from .evaluator import SequentialEvaluator, SequentialResult, SimulationResult, mean_of_means
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
    "SequentialEvaluator", "SequentialResult", "SimulationResult", "mean_of_means",
    "PairwiseRanking", "SequentialRanking", "rank_models", "sequential_pvalue",
    "StagewiseInference", "stagewise_inference", "stagewise_pvalue",
    "SequentialPlan", "plan", "detectable_effect", "conditional_power",
    "StoppingRule", "LookStats", "Efficacy", "Equivalence", "Precision", "Threshold", "Futility",
    "BetaSpendingFutility", "DiminishingReturns",
]
