"""Subset estimators: choose a few items, predict the full-benchmark score of new models from them.

DISCO (Rubinstein, Raible, Gubri & Oh 2025, "DISCO: Diversifying Sample Condensation for Efficient Model
Evaluation", arXiv:2510.07959) in two steps:

1. **Selection.** Score every item by how much a pool of source models disagrees on it and keep the top-k: the
   predictive diversity score (:func:`effstats.disco.pds`, Eq. 1) or the generalised Jensen–Shannon divergence
   (:func:`effstats.disco.jsd`), which equals the mutual information between the model index and the prediction
   (Prop. 1) and is sandwiched by PDS (Prop. 2, :func:`effstats.disco.pds_jsd_bounds`).
2. **Prediction.** A model's *signature* is its concatenated outputs on the selected items; a scikit-learn
   regressor (kNN, random forest, ... of Table 2), optionally after PCA, maps the source models' signatures to
   their full-benchmark accuracy (:class:`effstats.disco.DISCO`).

:class:`effstats.disco.DISCO`'s defaults are not the paper's: random items and a ridge regression, on the
signature, of the difference between a model's score and its mean on those items (``estimate="difference"``);
``benchmarks/disco_defaults.py`` compares them with the paper's setting and with random items.

Beside DISCO, under the same protocol: :class:`effstats.disco.RandomDirect` (random items, their mean),
:class:`effstats.disco.AIPW` (random items with a cross-fitted regression correction; design-unbiased, also for a
model better than every source), :class:`effstats.disco.RandomLearn` and :class:`effstats.disco.MRMR` (a ridge
regression of the score on random or mRMR-chosen items), :class:`effstats.disco.AnchorCorr` (correctness
clustering + weighted sum), :class:`effstats.disco.StratifiedHT` (k-means strata on confidence +
Horvitz–Thompson), :class:`effstats.disco.SortSearchDirect` (Sort & Search) and the IRT family in
:mod:`effstats.irt`; :class:`effstats.disco.MethodChooser` picks among them by cross-validation over the source
models, in range and on the best sources held out.

Every estimator follows one protocol: ``fit(source_outputs, source_scores=None)`` on the source models' outputs on
all items (a :class:`effstats.responses.ResponseMatrix`, a DataFrame or arrays: an integer 0/1 matrix is
correctness, other integers are class ids and need ``labels=``), ``selected_`` item positions in ascending order
(``selected_ids_``), and ``predict(target_outputs, items=None)`` from the targets' outputs on the selected items,
aligned by item id (ResponseMatrix ids, DataFrame columns or ``items=``; bare arrays in ``selected_`` order or
over all items, shape-checked). ``predict_interval`` adds an interval to every predicted score
(:class:`effstats.disco.SubsetPrediction`: cross-validated conformal residuals over the source models, or the
design-based variance of random items) and flags targets outside the sources' range; ``evaluate`` reports MAE,
Spearman and coverage; ``score`` is the negative MAE. :func:`effstats.disco.evaluate_split` and
:func:`effstats.disco.run_protocol` score any of them on model splits from :mod:`effstats.splits`;
:func:`effstats.disco.compare_methods` runs every candidate and the chooser under one protocol.
"""
from .._subset_results import (
    PredictionMetrics,
    SubsetPrediction,
    prediction_metrics,
)
from ._aipw import AIPW, difficulty_regressor
from ._baselines import AnchorCorr, RandomDirect, SortSearchDirect, StratifiedHT
from ._estimator import DISCO
from ._mrmr import MRMR, RandomLearn, mutual_information_relevance, select_mrmr
from ._predictors import PREDICTORS, make_predictor
from ._chooser import FallbackPrediction, MethodChooser, default_candidates, fallback_candidate, with_fallback
from ._stratified_aipw import StratifiedAIPW
from ._protocol import compare_methods, evaluate_split, run_protocol, summarize_comparison
from ._selection import (
    disagreement,
    jsd,
    jsd_from_predictions,
    pds,
    pds_from_predictions,
    pds_jsd_bounds,
    select_random,
    select_top_k,
)

__all__ = [
    "pds",
    "jsd",
    "pds_from_predictions",
    "jsd_from_predictions",
    "pds_jsd_bounds",
    "disagreement",
    "select_top_k",
    "select_random",
    "make_predictor",
    "PREDICTORS",
    "DISCO",
    "RandomDirect",
    "AIPW",
    "difficulty_regressor",
    "StratifiedAIPW",
    "MRMR",
    "RandomLearn",
    "select_mrmr",
    "mutual_information_relevance",
    "AnchorCorr",
    "StratifiedHT",
    "SortSearchDirect",
    "PredictionMetrics",
    "prediction_metrics",
    "evaluate_split",
    "run_protocol",
    "compare_methods",
    "summarize_comparison",
    "MethodChooser",
    "default_candidates",
    "fallback_candidate",
    "with_fallback",
    "SubsetPrediction",
    "FallbackPrediction",
]
