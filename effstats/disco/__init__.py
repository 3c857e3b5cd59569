"""DISCO: disagreement-based sample selection and model-signature performance prediction.

Rubinstein, Raible, Gubri & Oh, "DISCO: Diversifying Sample Condensation for Efficient Model Evaluation"
(arXiv preprint, 2025). The pipeline has two steps:

1. **Selection.** Score every item by how much a pool of source models disagrees on it and keep the
   top-k: the predictive diversity score (:func:`pds`, Eq. 1) or the generalised Jensen–Shannon
   divergence (:func:`jsd`), which equals the mutual information between the model index and the
   prediction (Prop. 1) and is sandwiched by PDS (Prop. 2, :func:`pds_jsd_bounds`).
2. **Prediction.** A model's *signature* is its concatenated outputs on the selected items; a
   scikit-learn regressor (kNN, random forest, ... of Table 2), optionally after PCA, maps signatures
   of source models to their full-benchmark accuracy (:class:`DISCO`).

:class:`DISCO`'s defaults are not the paper's: random items and a ridge regression, on the signature, of the
difference between a model's score and its mean on those items (``estimate="difference"``). That setting beat
random items with their plain mean on every benchmark effstats reads (``figures/disco_defaults.csv``); the
paper's PDS selection with a random forest on the signature lost to them on three of five. On 0/1 correctness
PDS and JSD select the same items (see :class:`DISCO`).

Baselines under the same protocol: :class:`RandomDirect` (random subset + direct accuracy),
:class:`AnchorCorr` (correctness clustering + weighted sum, Vivek et al. / Polo et al.),
:class:`StratifiedHT` (SSEPY-style k-means strata on confidence + Horvitz–Thompson),
:class:`SortSearchDirect` (Lifelong-Bench's Sort & Search, via :mod:`effstats.sortsearch`) and the IRT
family (Anchor-IRT, p-IRT, gp-IRT) in :mod:`effstats.irt`.

Every estimator follows one protocol: ``fit(source_outputs, source_scores=None)`` on the source models'
outputs on all items (a :class:`~effstats.responses.ResponseMatrix`, a DataFrame or arrays), ``selected_`` item
positions (``selected_ids_``), and ``predict(target_outputs, items=None)`` from the targets' outputs on the
selected items, **aligned by item id** (ResponseMatrix ids, DataFrame columns or ``items=``; bare arrays in
``selected_`` order, shape-checked) → estimated full-benchmark scores. ``predict_interval`` adds an interval to
every predicted score (:class:`SubsetPrediction`: cross-validated conformal residuals over the source models,
or the design-based variance of random subsets); ``evaluate`` reports MAE, Spearman and coverage; ``score`` is
the negative MAE. :func:`evaluate_split` / :func:`run_protocol` score any of them on source/target model splits
from :mod:`effstats.splits`; :func:`compare_methods` runs every candidate and the cross-validated
:class:`MethodChooser` under one protocol.

Layout: :mod:`._selection` (disagreement scores, top-k / random selection), :mod:`._predictors`
(signature regressors), :mod:`._estimator` (:class:`DISCO`: signatures and prediction), :mod:`._baselines`,
:mod:`._protocol`, :mod:`._chooser`;
the shared subset-estimator base lives in :mod:`effstats._subset` (used by :mod:`effstats.irt` too).
"""
from .._subset import (
    PredictionMetrics,
    SubsetPrediction,
    _Outputs,
    _SubsetEstimator,
    _as_outputs,
    _weighted_anchors,
    align_items,
    prediction_metrics,
)
from ._aipw import AIPW
from ._baselines import AnchorCorr, RandomDirect, SortSearchDirect, StratifiedHT
from ._estimator import DISCO
from ._mrmr import MRMR, RandomLearn, mutual_information_relevance, select_mrmr
from ._predictors import PREDICTORS, make_predictor
from ._chooser import MethodChooser, default_candidates
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
    "SubsetPrediction",
]
