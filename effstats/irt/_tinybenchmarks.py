"""The tinyBenchmarks estimators (Polo et al. 2024) on a selected subset of items.

References
----------
Polo, F. M., Weber, L., Choshen, L., Sun, Y., Xu, G. & Yurochkin, M. (2024). tinyBenchmarks: evaluating LLMs with
fewer examples. *Proceedings of the 41st International Conference on Machine Learning (ICML)*, arXiv:2402.14992.
"""
from __future__ import annotations

import copy
import hashlib
import warnings
from collections import OrderedDict
from typing import Any

import numpy as np

from .._items import _started_anchor_runs
from .._outputs import _impute, _some
from .._subset import _SubsetEstimator, _weighted_anchors, select_random
from .._shared import _plain
from .._validation import check_option, check_positive_int, check_rng, is_zero_one
from ..exceptions import ConvergenceWarning
from ._model import IRT2PL, _canonical_rotation, _cpus, _item_map, _newton_abilities

__all__ = ["TinyBenchmarks", "REFERENCE_DIMS"]

#: IRT dimensions the reference tries (efficbench ``run_experiment.py``: ``Ds = [2, 5, 10, 15]``), and
#: :class:`effstats.irt.TinyBenchmarks` validates by default.
#:
#: Examples
#: --------
#: >>> from effstats.irt import REFERENCE_DIMS
#: >>> REFERENCE_DIMS
#: (2, 5, 10, 15)
REFERENCE_DIMS = (2, 5, 10, 15)
#: The reference keeps the smallest dimension whose validation error is within this of the best one.
_DIMS_TOL = 0.0025
#: Draws of the validation's items (random, or anchors of a k-means from another start) per held-out model.
_VALIDATION_DRAWS = 5
_VALIDATIONS = ("selected", "reference")
_SELECTIONS = ("random", "anchor-corr", "anchor-irt")
_ESTIMATORS = ("gp-irt", "p-irt", "weighted")


def _stratified_items(p: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k of the items, one drawn at random from each of k equal strata of the items ranked by ``p`` (ties in a
    random order): a sample that spans the difficulties as all the items do. Ascending positions."""
    n = len(p)
    order = np.lexsort((rng.random(n), p))
    return np.sort(order[((np.arange(k) + rng.random(k)) * (n / k)).astype(np.int64)])


class _Holdout:
    """The validation's held-out models: their answers on the even-numbered items give the abilities, and
    :meth:`error` is the MAE of the predicted mean over the odd-numbered ones (observed cells only when some are
    missing; a model with nothing observed on either half is left out)."""

    def __init__(self, Y: np.ndarray, missing: np.ndarray | None, ability: str) -> None:
        n = Y.shape[1]
        self.seen, self.unseen, self.ability = np.arange(0, n, 2), np.arange(1, n, 2), ability
        if missing is None:
            self.y, self.w = Y[:, self.seen], None
            self.truth = Y[:, self.unseen].mean(1)
            return
        obs_seen, obs_unseen = ~missing[:, self.seen], ~missing[:, self.unseen]
        ok = obs_seen.any(1) & obs_unseen.any(1)
        if not ok.any():
            raise ValueError(
                f"source_outputs: the IRT validation needs at least 3 source models and 4 items, with outputs on both "
                f"halves of the items, got {Y.shape[0]} held-out models without"
            )
        self.y = np.where(obs_seen, Y[:, self.seen], np.nan)[ok]
        self.w, self.cnt = obs_unseen[ok], obs_unseen[ok].sum(1)
        self.truth = np.where(self.w, Y[:, self.unseen][ok], 0).sum(1) / self.cnt

    def error(self, irt: IRT2PL) -> float:
        th = irt.abilities(self.y, self.seen, method=self.ability)
        p = irt.predict_proba(th, self.unseen)
        pred = p.mean(1) if self.w is None else (p * self.w).sum(1) / self.cnt
        return float(np.abs(pred - self.truth).mean())


class _SelectedHoldout:
    """The validation's held-out models scored as the estimator is used: each draw selects ``k`` items from the
    training models as the estimator selects them, the held-out models' abilities come from their answers on those
    items alone, and :meth:`errors` is each held-out model's absolute error of the resulting score estimate (the
    items seen, the IRT prediction elsewhere; observed cells only when some are missing) against its mean over
    the validation's items, averaged over the draws."""

    def __init__(self, Y: np.ndarray, missing: np.ndarray | None, train: np.ndarray, val: np.ndarray, k: int,
                 ability: str) -> None:
        obs = None if missing is None else ~missing
        if obs is not None:  # held-out models with nothing observed say nothing
            val = val[obs[val].any(1)]
        self.n, self.k, self.prior, self.val = Y.shape[1], k, ability == "map", val
        self.y = Y[val].astype(float)
        self.w = None if obs is None else obs[val].astype(float)
        self.truth = self.y.mean(1) if obs is None else (self.y * self.w).sum(1) / self.w.sum(1)
        tr = Y[train].astype(float)
        if obs is None:
            self.answered, self.fill, self.x = np.arange(self.n), tr.mean(0), tr.T
        else:  # items no training model answered are never selected, as in the fit
            seen = obs[train].sum(0)
            self.answered = np.flatnonzero(seen > 0)
            self.fill = np.where(obs[train], tr, 0).sum(0) / np.maximum(seen, 1)
            self.x = _impute(tr, missing[train], self.fill).T

    def draw(self, selection: str, irt: IRT2PL, seed: int, n_init: int) -> tuple[np.ndarray, np.ndarray]:
        """The items (positions among the validation's) and weights of one draw: ``seed`` fixes the draw, so that
        random items and anchor-corr's anchors are the same for every candidate dimension."""
        rng = np.random.default_rng(seed)
        pool, k = self.answered, min(self.k, len(self.answered))
        if selection == "random":
            return np.sort(pool[select_random(len(pool), k, rng=rng)]), np.full(k, 1.0 / k)
        sel, w = _weighted_anchors(*self.anchor_run(selection, irt, seed, n_init))
        return pool[sel], w

    def anchor_run(self, selection: str, irt: IRT2PL | None, seed: int,
                   n_init: int) -> tuple[np.ndarray, int, np.random.Generator, int]:
        """The arguments of the anchor k-means of :meth:`draw` (the embedding of the items that can be drawn,
        ``k``, the draw's generator, ``n_init``); anchor-corr's needs no fit (``irt`` None)."""
        X = self.x if selection == "anchor-corr" else np.column_stack([irt.a_, irt.b_])
        return X[self.answered], min(self.k, len(self.answered)), np.random.default_rng(seed), n_init

    def errors(self, irt: IRT2PL, sel: np.ndarray, w: np.ndarray, estimate: str) -> np.ndarray:
        """Each held-out model's absolute error of the ``estimate`` ("weighted" or "p-irt") from the items
        ``sel`` with weights ``w``."""
        y, W = self.y, self.w
        if estimate == "weighted":
            ys = y[:, sel] if W is None else np.where(W[:, sel] > 0, y[:, sel], self.fill[sel])
            return np.abs(ys @ w - self.truth)
        # IRT2PL.abilities' own solver, not the method: the method refuses a model with no observed answer on the
        # items, which the validation keeps (at ability 0, the prior mean: the batched Newton leaves a row of zero
        # weights there), so that every draw and every candidate dimension scores the same held-out models; and it
        # would check the answers again and warn of their missing cells at each draw of each dimension
        th = _newton_abilities(y[:, sel], irt.a_[sel], irt.b_[sel], prior=self.prior,
                               W=None if W is None else W[:, sel])[0]
        unseen = np.setdiff1d(np.arange(self.n), sel)
        p = irt.predict_proba(th, unseen)
        if W is None:
            est = (y[:, sel].sum(1) + p.sum(1)) / self.n
        else:
            est = ((y[:, sel] * W[:, sel]).sum(1) + (p * W[:, unseen]).sum(1)) / W.sum(1)
        return np.abs(est - self.truth)


def _correctness_vectors(Y: np.ndarray, missing: np.ndarray | None, fill: np.ndarray) -> np.ndarray:
    """Anchor-corr's item embedding (n_items, n_models): the items' correctness over the source models, a missing
    cell imputed by its item's ``fill``; the boolean Y's transpose itself when no cell is missing (the k-means
    reads booleans as their 0/1 floats, in an eighth of the memory)."""
    return Y.T if missing is None else _impute(Y.astype(float), missing, fill).T


def _digest(Y: np.ndarray) -> Any:
    """The SHA-1 of the boolean matrix Y's packed bits (the key of its fits in the caches)."""
    return hashlib.sha1(np.packbits(Y, axis=None).tobytes())


def _one_se_choice(errors: np.ndarray, grid: tuple[int, ...]) -> int:
    """The smallest dimension whose mean error over the held-out models is within one standard error of the best
    one's, the standard error that of the paired per-model differences (``errors``: models × dimensions)."""
    mean = errors.mean(0)
    best = int(np.argmin(mean))
    diff = errors - errors[:, [best]]
    se = diff.std(0, ddof=1) / np.sqrt(len(errors)) if len(errors) > 1 else np.zeros(len(grid))
    return grid[int(np.flatnonzero(mean - mean[best] <= se)[0])]


def _with_items(irt: IRT2PL, a: np.ndarray, b: np.ndarray) -> IRT2PL:
    """A copy of the fitted ``irt`` with other items' parameters (positions, no ids)."""
    out = copy.copy(irt)
    out.a_, out.b_, out.n_items_, out.item_ids_ = a, b, len(b), None
    return out


class TinyBenchmarks(_SubsetEstimator):
    """tinyBenchmarks (Polo et al. 2024): a full-benchmark score from ``n_items`` anchor items and an IRT model.

    The items are random, or anchor points: k-means clusters of the items' correctness vectors over the source
    models (Anchor-corr) or of their fitted IRT parameters (Anchor-IRT), each anchor weighted by its cluster's
    share of the items. A new model's score is the weighted sum of its anchor answers, the p-IRT estimate (its
    answers where seen, the IRT prediction from its estimated ability elsewhere), or their mix gp-IRT. The defaults
    are those of the authors' experiment code, except one k-means run instead of their best of five, and the IRT
    dimension validated from the items the estimator selects rather than from half of all items (Notes).

    Parameters
    ----------
    n_items : int, default=100
        Number of selected items K.
    selection : {"random", "anchor-corr", "anchor-irt"}, default="anchor-corr"
        Random items (uniform weights 1/K), or anchor points from k-means on item embeddings — the correctness
        vector over source models (Anchor-corr) or the IRT parameters ``(a_i, b_i)`` (Anchor-IRT) — each anchor
        weighted by its cluster's share of items.
    estimator : {"gp-irt", "p-irt", "weighted"}, default="gp-irt"
        ``weighted``: ``Σ_k w_k y_k``; ``p-irt``: ``(K/N) mean_seen y + (1 − K/N) mean_unseen p̂_i(θ̂)``;
        ``gp-irt``: ``λ · weighted + (1 − λ) · p-irt``.
    n_dims : int or "validate", default="validate"
        IRT dimension. ``"validate"``: fit the IRT model for each of ``dims_grid`` on the source models except every
        fifth and score each on the held-out fifth as ``validation`` says (Notes). An integer fixes the dimension
        (1: marginal ML, the fastest fit; the reference validation error is still computed for λ). Validation
        costs one IRT fit per candidate dimension besides the final one, and multidimensional fits are joint ML
        (:class:`effstats.irt.IRT2PL`), much slower than the 1-D marginal ML on large matrices
        (``benchmarks/bench_irt_scale.py``): hence ``validation_items``. The cross-validation folds of
        :meth:`predict_interval` keep the dimension chosen here, and λ: each fold selects its items and fits the
        IRT model on its own sources without validating again.
    dims_grid : tuple of int, default=(2, 5, 10, 15)
        Candidate dimensions for ``n_dims="validate"``.
    validation : {"selected", "reference"}, default="selected"
        How ``n_dims="validate"`` scores a candidate dimension on the held-out models. ``"selected"``: as the
        estimator is used — their abilities from ``n_items`` items selected from the training models as this
        estimator selects them (random items, or anchors), the mean absolute error of the resulting score
        estimate, over 5 draws of the items; the smallest dimension within one standard error of the best
        (Notes). ``"reference"``: the reference's rule — abilities from the even-numbered items, the error of
        the predicted mean of the odd-numbered ones, the smallest dimension within 0.0025 of the best. The
        reference's abilities come from thousands of items where the estimator has ``n_items``, so it rewards
        dimensions the estimator cannot estimate (Notes).
    validation_items : int or None, default=4000
        Items the validation fits use: a sample of this many items stratified by the items' mean correctness
        over the source models, drawn by a generator seeded with the source outputs (the same sample whatever
        ``random_state``); None: all items, as the reference. Which dimension fits best is a property of the
        models-by-items structure that a few thousand items show as well as all of them, while the
        multidimensional validation fits cost in proportion to the items. The chosen dimension's error, which
        gives λ, is measured on all items (Notes), and the final IRT model is fitted on all items. A lone 1-D
        candidate (``n_dims=1``, or ``dims_grid=(1,)``) fitted by marginal ML has nothing to be compared with and
        a fit on all items is cheap: it is validated on all items, as with None.
    ability : {"mle", "map"}, default="mle"
        How target abilities are estimated from the selected items: maximum likelihood (the reference, which its
        BFGS fit matches to 3e-8 in the p-IRT score) or the posterior mode under θ ~ N(0, I). On simulated 2PL
        data (100 random items, 12 targets) the two differ by 0.004 (1-D) to 0.0055 (3-D) in the score on
        average, with no systematic difference in accuracy.
    n_init : int, default=1
        k-means runs from independent k-means++ starts; the one with the lowest inertia is kept. The first run
        does not depend on ``n_init``, so more runs can only lower the inertia. One run is as accurate on ImageNet
        (Notes) and takes a fifth of the time of the reference's five.
    gp_lambda : float in [0, 1] or None, default=None
        gp-IRT weight; ``None`` estimates it as the reference does (Notes), from the validation error of the
        chosen dimension (above).
    irt_params : dict, default=None
        Extra arguments of :class:`effstats.irt.IRT2PL` (priors, ``max_iter``, ``tol``).
    n_jobs : int or None, default=None
        Processes sharing each joint IRT fit's passes over the items (:class:`effstats.irt.IRT2PL`'s ``n_jobs``,
        which this one sets); None: one per core. With more than one, the anchor k-means of ``"anchor-corr"`` on a
        large matrix runs in a process of its own while the IRT models are fitted. The estimates do not depend on
        it.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=None
        Seeds the random items / k-means.

    Attributes
    ----------
    interval_kind : str
        ``"conformal"`` (class attribute): the interval comes from the cross-validated residuals of the source
        models, so it holds for models like them, not necessarily for one outside their range.
    selected_ : ndarray of shape (K',)
        Selected item positions (K' ≤ K: two centroids can share their nearest item), ascending.
    selected_ids_ : pandas.Index or None
        Their item ids when fitted on a ResponseMatrix or DataFrame.
    weights_ : ndarray of shape (K',)
        Weight of each selected item in the ``weighted`` estimate (cluster shares, or 1/K for random items).
    irt_ : effstats.irt.IRT2PL or None
        The IRT model fitted on all source models with the chosen dimension (None for ``selection="random"`` or
        ``"anchor-corr"`` with ``estimator="weighted"``).
    n_dims_ : int or None
        The IRT dimension used.
    validation_errors_ : dict
        Dimension → validation MAE (fraction, not percentage points) on the validation items: of the estimate
        from ``n_items`` selected items (``validation="selected"`` with more than one candidate), else of the
        reference's IRT part; empty when no validation was needed (fixed ``n_dims`` and no λ to estimate). On all
        items for a lone 1-D marginal-ML candidate (``validation_items``), then equal to ``validation_error_``.
    validation_error_ : float
        The chosen dimension's reference validation MAE on all items, λ's bias term (``validation_errors_[n_dims_]``
        when the reference rule used all items; NaN without validation).
    lambda_ : float
        The gp-IRT weight used (NaN unless ``estimator="gp-irt"``).
    n_missing_ : int
        Missing cells of the source outputs.

    See Also
    --------
    effstats.irt.IRT2PL : The IRT model fitted on the source models.
    effstats.disco.AnchorCorr : Anchor points with the weighted estimate alone.
    effstats.disco.DISCO : Items by model disagreement and a learned score predictor.
    effstats.disco.MethodChooser : Cross-validates this and the other subset estimators on the source models.

    Notes
    -----
    The dimension validation (``n_dims="validate"``) holds out every fifth source model (in the order given; the
    reference's split, so one IRT fit per candidate serves both rules) and fits each candidate dimension on the
    others. With ``validation="selected"`` it then draws the estimator's items 5 times from those training
    models — ``n_items`` random items, or the anchors of a k-means from another start — with a generator seeded
    by the source outputs, so that the choice does not depend on ``random_state`` and the same draws score every
    dimension. For held-out model :math:`m`, draw :math:`r` and dimension :math:`d`, the abilities
    :math:`\\hat\\theta_{mrd}` come from the model's answers on the drawn items :math:`S_r` alone, as they do for
    a target, and the error is that of the estimate the dimension changes (p-IRT for ``"p-irt"`` and
    ``"gp-irt"``; the weighted sum of ``"anchor-irt"`` anchors for ``"weighted"``) against the model's mean
    :math:`\\bar y_m` over the validation's items :math:`I`:

    .. math::

        e_{md} = \\frac{1}{5} \\sum_r \\Bigl| \\frac{1}{|I|} \\Bigl(\\sum_{i \\in S_r} y_{mi}
        + \\sum_{i \\in I \\setminus S_r} \\hat p_i(\\hat\\theta_{mrd})\\Bigr) - \\bar y_m \\Bigr|.

    With :math:`\\bar e_d` the mean over the held-out models and :math:`d^*` its minimiser, the chosen dimension
    is the smallest :math:`d` with :math:`\\bar e_d - \\bar e_{d^*} \\le \\mathrm{se}_d`, the standard error of the
    paired differences :math:`e_{md} - e_{md^*}` over the held-out models: the one-standard-error rule of
    cross-validation (Breiman et al. 1984; Hastie, Tibshirani & Friedman 2009, Sect. 7.10), which prefers the
    cheaper and more stable model when the held-out models cannot tell the two apart. The reference's rule
    (``validation="reference"``) estimates the held-out models' abilities from half of the validation's items
    (about 2,000 of a 4,000-item sample), where a target's come from ``n_items``: a dimension that pays with
    many items can lose with 100, the estimate of a 15-dimensional ability from 100 answers being too noisy.
    On ImageNet's 67 models × 80,000 items the reference's rule picks 15 of 2/5/10/15 and this one 2 (on 54 of
    the models a 15-dimensional fit's held-out gp-IRT error is 5.4 points, a 2-dimensional one's 1.7); over 10
    random model splits, the held-out gp-IRT error goes from 1.58 to 1.21 points on CIFAR-10 (30 models) and from
    2.93 to 2.48 on 100 lifelong-digits models, and stays within noise on AlpacaEval and on ImageNet's 54-model
    splits, where both rules mostly pick 2 (``benchmarks/tinybenchmarks_dimension_validation.py``).

    The gp-IRT weight, when ``gp_lambda`` is None, is the reference's

    .. math::

        \\lambda = \\frac{\\hat b^2}{\\hat b^2 + \\hat v}, \\qquad
        \\hat v = \\frac{\\langle \\operatorname{Var}_i(y_{mi}) \\rangle_m}{c K},

    with :math:`\\hat b` the validation error of the chosen dimension (``validation_error_``), :math:`K` the number
    of items evaluated, :math:`\\langle \\cdot \\rangle_m` the mean over source models, and :math:`c = 1` for random
    items, :math:`c = 4` for anchor points (the reference's constants).

    With more items than ``validation_items``, the candidate dimensions are fitted and compared on a sample of
    the items, one from each of ``validation_items`` strata of the items ranked by mean correctness (held-out
    abilities from the sample's even-numbered items, errors on its odd-numbered ones). The held-out means over
    a few thousand items carry a binomial noise (s.d. up to 0.5 / √(items / 2) per model) that the comparison
    between dimensions shares but that would inflate :math:`\\hat b`: so the chosen dimension's error is measured
    again on all items, with every item's parameters fitted (a MAP logistic regression per item, the item step of
    the joint fit) at the training models' abilities of the sampled fit. On ImageNet (67 × 80,000), CIFAR-10
    (30 × 14,021) and simulated 4-dimensional responses (90 × 20,000) the sample of 4,000 items chooses the
    dimension that all items choose (15, 2 and 5 among 2/5/10/15; ``benchmarks/bench_tinybenchmarks.py
    --agreement``).

    The anchor k-means runs on the distinct correctness vectors weighted by their counts, which has the same
    objective and the same k-means++ start distribution as k-means on all items (many items are answered alike by
    every source model). With one k-means run (``n_init=1``) against the reference's best of five (scikit-learn's
    Lloyd on all items), the mean absolute error over 10 random 50/17 model splits of ImageNet (80,000 items,
    ``n_dims=1``) is the same within its seed-to-seed spread (``benchmarks/bench_tinybenchmarks.py``). Each run
    stops after at most 30 Lloyd (Elkan) iterations, where its inertia is within about 0.1 % of convergence: the
    estimates then differ from the converged runs' by less than the runs of two k-means++ starts differ. With
    fewer (15, 10 or 5), 10 anchor seeds on ImageNet do not bound the rise of the weighted estimate's error within
    its Monte-Carlo noise (``benchmarks/tinybenchmarks_kmeans_noise.py``).

    The joint-ML fits run their passes over the (models × items) cells in float32 (sums over blocks of items, the
    Newton solves and the parameters in float64): the same sweeps as in float64, fitted probabilities within about
    1e-5 of them, in about 70 % of the time. The final fit on all items ends each sweep with a gauge step: the
    abilities and item parameters move, every logit unchanged, to where the priors' penalty is lowest (the
    parameter expansion of PX-EM; Liu, Rubin & Wu 1998). Run to convergence, it reaches the optimum of the plain
    alternating sweeps (on simulated 90 × 2,000, d = 2, at ``tol=1e-13``: 132 sweeps against 636), and at the
    default ``tol`` it stops nearer that optimum than they do, in fewer sweeps.

    Differences from the reference:

    * The IRT model is fitted by marginal ML (1-D) or regularised joint ML (:class:`effstats.irt.IRT2PL`), not by
      py-irt's variational inference with hierarchical priors (2,000 Adam epochs, lr 0.1). Both fit the same 2PL
      likelihood (py-irt's multidimensional model has one difficulty per dimension, ``Σ_d a_d (θ_d − b_d)``,
      which is this model with ``b = Σ_d a_d b_d``). With the same anchor items and estimator, on held-out models
      of ImageNet, CIFAR-10 and AlpacaEval (2,376 random items, 5 splits each), the p-IRT error with these fits is
      6–15 % below py-irt's at the dimension each validation chooses (``benchmarks/pyirt_fit_quality.py``).
    * No scenario stratification or balance weights (one benchmark at a time); random items are not stratified.

    Missing cells: the IRT model is fitted on the observed cells only (the likelihood skips the others), the
    anchor-corr embedding imputes a source model's missing entry by the item's observed mean, items no source
    model answered are never selected, and the dimension validation and λ use observed cells. A target without
    outputs on some selected items gets its ability from the items it has, p-IRT's observed part over them
    (the IRT prediction covers every other item), and, in the weighted sum, the source models' observed mean on
    a missing anchor. ``n_missing_`` counts the missing source cells.

    References
    ----------
    Polo, F. M., Weber, L., Choshen, L., Sun, Y., Xu, G. & Yurochkin, M. (2024). tinyBenchmarks: evaluating LLMs
    with fewer examples. *Proceedings of the 41st International Conference on Machine Learning (ICML)*,
    arXiv:2402.14992.

    Vivek, R., Ethayarajh, K., Yang, D. & Kiela, D. (2024). Anchor points: benchmarking models with much fewer
    examples. *Proceedings of EACL 2024*, arXiv:2309.08638.

    Birnbaum, A. (1968). Some latent trait models and their use in inferring an examinee's ability. In F. M. Lord
    & M. R. Novick, *Statistical Theories of Mental Test Scores*, chapters 17–20. Addison-Wesley, Reading, MA.

    Bock, R. D. & Aitkin, M. (1981). Marginal maximum likelihood estimation of item parameters: application of an
    EM algorithm. *Psychometrika* 46(4), 443–459.

    Arthur, D. & Vassilvitskii, S. (2007). k-means++: the advantages of careful seeding. *Proceedings of the 18th
    ACM-SIAM Symposium on Discrete Algorithms (SODA)*, 1027–1035.

    Liu, C., Rubin, D. B. & Wu, Y. N. (1998). Parameter expansion to accelerate EM: the PX-EM algorithm.
    *Biometrika* 85(4), 755–770.

    Breiman, L., Friedman, J. H., Olshen, R. A. & Stone, C. J. (1984). *Classification and Regression Trees*,
    chapter 3 (the one-standard-error rule). Wadsworth, Belmont, CA.

    Hastie, T., Tibshirani, R. & Friedman, J. (2009). *The Elements of Statistical Learning*, 2nd ed., Sect. 7.10
    (cross-validation). Springer, New York.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.irt import TinyBenchmarks
    >>> Y = simulate_responses(40, 500, rng=0).values.astype(bool)  # 40 models x 500 items, 0/1
    >>> tb = TinyBenchmarks(30, n_dims=1, random_state=0).fit(Y[:32])
    >>> len(tb.selected_), round(float(tb.weights_.sum()), 6)
    (30, 1.0)
    >>> est = tb.predict(Y[32:, tb.selected_])  # 8 new models, answers on the 30 selected items
    >>> round(float(abs(est - Y[32:].mean(axis=1)).mean()), 3)  # mean absolute error
    0.038

    The dimension validated on 300 of the 500 items (a sample stratified by difficulty) and on all of them; λ
    comes from the chosen dimension's error on all items either way:

    >>> fast = TinyBenchmarks(30, dims_grid=(1, 2), validation_items=300, random_state=0).fit(Y[:32])
    >>> full = TinyBenchmarks(30, dims_grid=(1, 2), validation_items=None, random_state=0).fit(Y[:32])
    >>> fast.n_dims_, full.n_dims_, round(fast.validation_error_, 4), round(full.validation_error_, 4)
    (1, 1, 0.0408, 0.0408)
    """

    def __init__(
        self,
        n_items: int = 100,
        selection: str = "anchor-corr",
        estimator: str = "gp-irt",
        n_dims: int | str = "validate",
        *,
        dims_grid: tuple[int, ...] = REFERENCE_DIMS,
        validation: str = "selected",
        validation_items: int | None = 4000,
        ability: str = "mle",
        n_init: int = 1,
        gp_lambda: float | None = None,
        irt_params: dict | None = None,
        n_jobs: int | None = None,
        random_state: Any = None,
    ) -> None:
        self.n_items = n_items
        self.selection = selection
        self.estimator = estimator
        self.n_dims = n_dims
        self.dims_grid = dims_grid
        self.validation = validation
        self.validation_items = validation_items
        self.ability = ability
        self.n_init = n_init
        self.gp_lambda = gp_lambda
        self.irt_params = irt_params
        self.n_jobs = n_jobs
        self.random_state = random_state

    # Fitted IRT models keyed by (data digest, settings). The fits are deterministic (SVD start), so a refit on
    # the same source matrix is identical; protocols that fit several selections or seeds on one split
    # (3 selections × 5 seeds) then pay for each IRT fit once.
    _fit_cache: "OrderedDict[tuple, IRT2PL]" = OrderedDict()
    _CACHE_SIZE = 32
    # (data digest, settings but the seed) of recent fits -> the keys of the IRT fits each used: a refit with
    # another seed that finds them all in the cache runs no fit beside its anchor k-means, which then stays in
    # this process (a process of its own costs a Python start, about a CPU second, and would overlap nothing)
    _fitted: "OrderedDict[tuple, tuple]" = OrderedDict()

    def _check_params(self) -> tuple[str, str, tuple[int, ...], str]:
        selection = check_option(self.selection, "selection", _SELECTIONS)
        estimator = check_option(self.estimator, "estimator", _ESTIMATORS)
        if isinstance(self.n_dims, str):
            check_option(self.n_dims, "n_dims", ("validate",))
            grid = self.dims_grid
            if isinstance(grid, (int, np.integer)) or len(grid) == 0:
                raise ValueError(f"dims_grid: expected a non-empty sequence of positive integers, got {grid!r}")
            grid = tuple(sorted({check_positive_int(g, "dims_grid") for g in grid}))
        else:
            grid = (check_positive_int(self.n_dims, "n_dims"),)
        ability = check_option(self.ability, "ability", ("mle", "map"))
        check_option(self.validation, "validation", _VALIDATIONS)
        check_positive_int(self.n_init, "n_init")
        if self.validation_items is not None:
            check_positive_int(self.validation_items, "validation_items", minimum=4)
        if self.n_jobs is not None:
            check_positive_int(self.n_jobs, "n_jobs")
        if self.gp_lambda is not None:
            lam = self.gp_lambda
            if isinstance(lam, bool) or not isinstance(lam, (int, float, np.number)) or not 0 <= lam <= 1:
                raise ValueError(f"gp_lambda: expected a number in [0, 1] or None, got {_plain(lam)!r}")
        return selection, estimator, grid, ability

    def _fit_irt(self, Y: np.ndarray, d: int, what: str, missing: np.ndarray | None = None, *,
                 data: str | None = None, keys: list | None = None) -> IRT2PL:
        """IRT2PL(d) on Y (``missing`` cells left out of the likelihood), from the cache when the same matrix was
        fitted with the same settings; warns (once per call, saying which fit) when the fit did not converge.
        ``data`` and ``keys`` as in :meth:`_fit_irts`."""
        return self._fit_irts(Y, (d,), what, missing, data=data, keys=keys)[d]

    def _fit_irts(self, Y: np.ndarray, dims: tuple[int, ...], what: str, missing: np.ndarray | None = None, *,
                  data: str | None = None, keys: list | None = None) -> dict[int, IRT2PL]:
        """IRT2PL(d) on Y for each d of ``dims`` (as :meth:`_fit_irt`), each with ``n_jobs`` processes (a joint fit
        of a large matrix shares its passes over the items among them).

        ``data``: the hex SHA-1 of Y's packed bits (then of ``missing``'s, when given), where the caller has it
        (:meth:`fit` hashes its matrix once for its own key); ``keys``: a list that the cache keys of the fits
        are appended to."""
        if data is None:
            data = _digest(Y).hexdigest() + ("" if missing is None else _digest(missing).hexdigest())
        if missing is not None:
            Y = np.where(missing, np.nan, Y)
        cache = TinyBenchmarks._fit_cache
        fits, key, todo = {}, {}, []
        for d in dims:
            irt = IRT2PL(d, **{**(self.irt_params or {}), "n_jobs": self.n_jobs})
            irt._sweep_dtype = np.float32  # the same sweeps and estimates to about 1e-6, in 70 % of the time
            # the final fit on all items moves along the logits' invariant transforms at each sweep: the sweeps'
            # optimum in about a third of the sweeps (effstats.irt._gauge)
            irt._gauge = what == "the final model"
            # n_jobs is left out of the key: the estimates do not depend on it
            key[d] = (Y.shape, data, d, irt._gauge,
                      tuple(sorted((k, v) for k, v in irt.get_params().items() if k != "n_jobs")))
            if keys is not None:
                keys.append(key[d])
            if key[d] in cache:
                cache.move_to_end(key[d])
                fits[d] = cache[key[d]]
            else:
                fits[d] = irt
                todo.append(irt)
        # One fit after the other: side by side in threads, the validation fits of 90 x 80,000 took other
        # iterations than alone in about one run in three (numpy 1.24 with Debian's serial OpenBLAS 0.3.21; its
        # BLAS and LAPACK called from two threads at once are the likely cause). A large fit shares its passes
        # over the items among processes instead.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for irt in todo:
                irt.fit(Y)
        for d in dims:
            if key[d] not in cache:
                cache[key[d]] = fits[d]
                if len(cache) > self._CACHE_SIZE:
                    cache.popitem(last=False)
            # each fit its own copy: one estimator's irt_ edited in place or refitted leaves the cache and the
            # other estimators fitted on the same data alone
            fits[d] = copy.deepcopy(fits[d])
        for d in dims:
            self._warn_unconverged(fits[d], d, what)
        return fits

    def _warn_unconverged(self, irt: IRT2PL, d: int, what: str) -> None:
        if not irt.converged_:
            warnings.warn(
                f"TinyBenchmarks: the {d}-dimensional IRT fit used for {what} stopped at max_iter={irt.max_iter} "
                f"without converging (n_iter_={irt.n_iter_}; see its loss_curve_); its estimates are used as they "
                "are. Raise irt_params['max_iter'].",
                ConvergenceWarning,
                stacklevel=4,
            )

    def _validate_dims(self, Y: np.ndarray, grid: tuple[int, ...], ability: str,
                       missing: np.ndarray | None = None, launch: Any = None, *, digest: bytes | None = None,
                       keys: list | None = None) -> tuple[int, dict, float]:
        """The dimension choice: train on all source models but every fifth, then score each candidate on the
        held-out ones, and return the chosen dimension, the error of each, and the chosen one's reference error
        on all items (λ's bias term).

        ``validation="selected"`` (with more than one candidate): :class:`_SelectedHoldout` over
        ``_VALIDATION_DRAWS`` draws of the estimator's items, the smallest dimension within one standard error of
        the best (:func:`_one_se_choice`). ``"reference"``: abilities of the held-out models from the
        even-numbered items, MAE of the predicted mean over the odd-numbered items (observed cells only when some
        are missing), the smallest dimension within 0.0025 of the best. λ's bias term is the reference error in
        both.

        With more items than ``validation_items`` (and other candidates than a lone 1-D marginal-ML one), the
        candidates are fitted and compared on a sample of them (:func:`_stratified_items`, drawn by a generator
        seeded with the data, so that fits with other seeds on the same source models share the validation fits in
        the cache; the selected rule's draws are seeded by the data too). The chosen dimension's reference error is
        then measured on all items: its fit's abilities of the training models give every item's parameters (one
        MAP logistic regression per item), since the error on a sample's few held-out items is inflated by their
        binomial noise (≈ 0.5 / √(items / 2)).

        ``launch`` (given by :meth:`fit`, which runs its own anchor k-means in a process beside the fits) is called
        before the fits with the selected rule's anchor-corr k-means runs, which need no fit, and returns them
        started in that process, first (their results kept in the anchors' cache, where the draws find them).
        ``digest``: the SHA-1 of Y's packed bits, where the caller has it; ``keys``: as in :meth:`_fit_irts`."""
        m, n = Y.shape
        val = np.arange(0, m, 5)
        train = np.setdiff1d(np.arange(m), val)
        if train.size < 2 or n < 4:
            raise ValueError(
                f"source_outputs: the IRT validation needs at least 3 source models and 4 items, got shape {Y.shape}"
            )
        k = self.validation_items
        cols = None
        seed = np.frombuffer(_digest(Y).digest() if digest is None else digest, np.uint32)
        # a lone 1-D marginal-ML candidate needs no comparison, and its error is measured on all items by a fit on
        # all items (cheap): a fit on the sample would only be fitted again
        lone_mml = len(grid) == 1 and grid[0] == 1 and (self.irt_params or {}).get("method", "auto") != "jml"
        if k is not None and k < n and not lone_mml:
            obs = None if missing is None else ~missing
            p = Y.mean(0) if obs is None else np.where(obs, Y, 0).sum(0) / np.maximum(obs.sum(0), 1)
            cols = _stratified_items(p, k, np.random.default_rng(seed))
        full = _Holdout(Y[val], None if missing is None else missing[val], ability)
        sub = full if cols is None else _Holdout(Y[np.ix_(val, cols)], None if missing is None
                                                 else missing[np.ix_(val, cols)], ability)
        Ys, Ms = (Y, missing) if cols is None else (Y[:, cols], None if missing is None else missing[:, cols])
        selected = self.validation == "selected" and len(grid) > 1
        if selected:
            hold = _SelectedHoldout(Ys, _some(Ms) if Ms is not None else None, train, val,
                                    min(self.n_items, Ys.shape[1] - 1), ability)
            draws = np.random.default_rng(np.append(seed, 1)).integers(2**31 - 1, size=_VALIDATION_DRAWS)
        early = []
        if launch is not None:
            early = launch([hold.anchor_run(self.selection, None, int(s), self.n_init) for s in draws]
                           if selected and self.selection == "anchor-corr" else [])
        # the sample's fits converge as tightly as the final fit: stopped at tol=1e-4, the 15-dimensional fit on
        # 4,000 ImageNet items lost the margin by which all items choose it
        fits = self._fit_irts(Ys[train], grid, "validation", None if Ms is None else _some(Ms[train]), keys=keys)
        if selected:
            for run in early:  # into the anchors' cache
                run.result()
            errors, chosen = self._selected_errors(hold, fits, grid, draws)
            if cols is None:
                return chosen, errors, full.error(fits[chosen])
        else:
            errors = {d: sub.error(irt) for d, irt in fits.items()}
            best = min(errors.values())
            chosen = next(d for d in grid if errors[d] - best < _DIMS_TOL)
            if cols is None:
                return chosen, errors, errors[chosen]
        irt = fits[chosen]
        if irt.method_ != "jml":  # the 1-D marginal-ML fit: cheap enough to fit on all items
            return chosen, errors, full.error(self._fit_irt(Y[train], chosen, "validation",
                                                            None if missing is None else _some(missing[train]),
                                                            keys=keys))
        # the item step of the joint fit at its abilities, in its own coordinates (where the priors apply), then
        # the fit's canonical rotation, which depends on the abilities alone for d > 1
        W = None if missing is None else (~missing[train]).astype(float)
        th = irt._theta_jml
        a, b = _item_map(Y[train].astype(float), th, irt.prior_sd_a, irt.prior_sd_b, W)
        _, a, b = _canonical_rotation(th, a, b, Y[train], W)
        return chosen, errors, full.error(_with_items(irt, a, b))

    def _selected_errors(self, hold: _SelectedHoldout, fits: dict[int, IRT2PL], grid: tuple[int, ...],
                         draws: np.ndarray) -> tuple[dict[int, float], int]:
        """The held-out models' (``hold``) MAE of the estimate from ``n_items`` items selected as the fit selects
        them, for each candidate dimension (a draw for each seed of ``draws``, the same draws for every
        dimension), and the dimension chosen by the one-standard-error rule. The estimate scored is the one the
        dimension changes: p-IRT for ``"p-irt"`` and ``"gp-irt"`` (gp-IRT's other part, the weighted sum, does not
        depend on it, and its λ is estimated once the dimension is chosen), the weighted sum for ``"weighted"``
        (with ``"anchor-irt"``, whose anchors cluster the fitted item parameters)."""
        estimate = "weighted" if self.estimator == "weighted" else "p-irt"
        err = np.zeros((len(hold.val), len(grid)))
        for s in draws:
            picked = None
            for j, d in enumerate(grid):
                if picked is None or self.selection == "anchor-irt":  # the other selections ignore the fit
                    picked = hold.draw(self.selection, fits[d], int(s), self.n_init)
                err[:, j] += hold.errors(fits[d], *picked, estimate) / len(draws)
        return {d: float(e) for d, e in zip(grid, err.mean(0))}, _one_se_choice(err, grid)

    def _fold_params(self) -> dict[str, Any]:
        """The choices of this fit that the cross-validation folds of ``predict_interval`` keep: the IRT dimension
        validated on all sources (``n_dims="validate"``) and gp-IRT's λ estimated from its validation error. A fold
        then skips the validation (``len(dims_grid)`` IRT fits, joint ML above one dimension) but still selects its
        items and fits the IRT model (items and abilities) on its own sources, so its residuals stay out of fold."""
        fixed: dict[str, Any] = {}
        if isinstance(self.n_dims, str) and self.n_dims_ is not None:
            fixed["n_dims"] = int(self.n_dims_)
        if self.estimator == "gp-irt" and self.gp_lambda is None and np.isfinite(self.lambda_):
            fixed["gp_lambda"] = float(self.lambda_)
        return fixed

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "TinyBenchmarks":
        """Select the items and fit the IRT model on the source models.

        Parameters
        ----------
        source_outputs : ResponseMatrix, DataFrame or array-like of shape (n_models, n_items)
            Source models' outputs on all items: binary correctness (bool or float 0/1), or probabilities
            (n_models, n_items, n_classes) / class ids with ``labels``.
        source_scores : None
            Ignored: the IRT estimators model binary correctness; accepted for the common subset-estimator
            signature.
        labels : array-like of shape (n_items,), default=None
            True class of each item, with probabilities or class ids.

        Returns
        -------
        self : TinyBenchmarks
            The fitted estimator.

        Raises
        ------
        ValueError
            Correctness other than 0/1, or too few models or items for the dimension validation.
        """
        selection, estimator, grid, ability = self._check_params()
        src, _ = self._fit_source(source_outputs, source_scores, labels)
        Y = src.correctness("source_outputs")
        if not is_zero_one(Y):
            raise ValueError("source_outputs: IRT needs binary correctness (0/1), got other values")
        Y = Y.astype(bool)
        miss = src.missing
        self._fill = src.item_means("source_outputs")
        rng = check_rng(self.random_state, "random_state")
        k = self.n_items
        need_irt = selection == "anchor-irt" or estimator != "weighted"
        self.irt_, self.n_dims_, self.validation_errors_, self.validation_error_ = None, None, {}, np.nan
        started = launch = None
        digest = _digest(Y)  # hashed once: the key of this fit, the validation's seed, the final fit's cache key
        fitted = (digest.hexdigest(), None if miss is None else _digest(miss).hexdigest(),
                  repr(sorted((k, v) for k, v in self.get_params().items() if k != "random_state")))
        cached = fitted in self._fitted and all(key in self._fit_cache for key in self._fitted[fitted])
        irt_keys: list = []  # the cache keys of the IRT fits this fit uses (_fit_irts appends them)
        if selection == "anchor-corr" and need_irt and (self.n_jobs or _cpus()) > 1 and not cached:
            # the k-means needs no IRT fit (and the fits draw nothing from rng): a large one runs meanwhile in a
            # process of its own, after the validation's anchor-corr k-means runs (which need no fit either)
            corr = _correctness_vectors(Y, miss, self._fill)
            corr = corr if self._answered is None else corr[self._answered]

            def launch(first: list) -> list:
                nonlocal started
                *early, started = _started_anchor_runs([*first, (corr, k, rng, self.n_init)])
                return early
        try:
            if need_irt:
                # The validation fits choose the dimension and give λ's bias term; with a fixed dimension and no λ
                # to estimate they are skipped (e.g. in the cross-validation folds of predict_interval, which keep
                # the dimension and λ of the fit on all sources: _fold_params).
                if isinstance(self.n_dims, str) or (estimator == "gp-irt" and self.gp_lambda is None):
                    self.n_dims_, self.validation_errors_, self.validation_error_ = self._validate_dims(
                        Y, grid, ability, miss, launch, digest=digest.digest(), keys=irt_keys)
                else:
                    self.n_dims_ = grid[0]
                if launch is not None and started is None:
                    launch([])
                self.irt_ = self._fit_irt(Y, self.n_dims_, "the final model", miss,
                                          data=fitted[0] + ("" if miss is None else fitted[1]), keys=irt_keys)
        except BaseException:
            if started is not None:
                started.cancel()
            raise
        weights = []
        if selection == "random":
            def pick(n: int, _: Any) -> np.ndarray:
                weights.append(np.full(k, 1.0 / k))
                return select_random(n, k, rng=rng)
        else:
            X = None  # the k-means started has its own
            if started is None:
                X = (_correctness_vectors(Y, miss, self._fill) if selection == "anchor-corr"
                     else np.column_stack([self.irt_.a_, self.irt_.b_]))

            def pick(n: int, _: Any) -> np.ndarray:
                if started is not None:
                    sel, w = started.result()
                else:
                    sel, w = _weighted_anchors(X if n == len(X) else X[self._answered], k, rng, self.n_init)
                weights.append(w)
                return sel
        sel = self._select_answered(pick, src)  # items no source model answered are never chosen
        order = np.argsort(sel)
        self._set_selected(np.asarray(sel)[order])
        self.weights_ = np.asarray(weights[0], dtype=float)[order]
        self._fill = self._fill[self.selected_]
        self.lambda_ = np.nan
        if estimator == "gp-irt":
            if self.gp_lambda is not None:
                self.lambda_ = float(self.gp_lambda)
            else:
                b = self.validation_error_
                c = 1.0 if selection == "random" else 4.0
                if miss is None:
                    v = Y.var(axis=1).mean() / (c * k)
                else:  # each model's variance over its observed items
                    p = src.model_means("source_outputs")
                    v = (p * (1 - p)).mean() / (c * k)
                self.lambda_ = float(b**2 / (b**2 + v)) if b**2 + v > 0 else 1.0
        TinyBenchmarks._fitted[fitted] = tuple(irt_keys)
        TinyBenchmarks._fitted.move_to_end(fitted)
        if len(TinyBenchmarks._fitted) > self._CACHE_SIZE:
            TinyBenchmarks._fitted.popitem(last=False)
        return self

    def _all(self, outputs: Any) -> dict[str, np.ndarray]:
        y = outputs.correctness("target_outputs")
        if not is_zero_one(y):
            raise ValueError("target_outputs: IRT needs binary correctness (0/1) on the selected items")
        if outputs.missing is not None:
            return self._all_missing(y, outputs.missing)
        out = {"weighted": y @ self.weights_}
        if self.irt_ is not None:
            n, k = self.n_items_total_, len(self.selected_)
            unseen = np.setdiff1d(np.arange(n), self.selected_)
            th = self.irt_.abilities(y, self.selected_, method=self.ability)
            irt_part = self.irt_.predict_proba(th, unseen).mean(1) if unseen.size else np.zeros(len(y))
            out["p-irt"] = (k / n) * y.mean(1) + (1 - k / n) * irt_part
            if not np.isnan(self.lambda_):
                out["gp-irt"] = self.lambda_ * out["weighted"] + (1 - self.lambda_) * out["p-irt"]
        return out

    def _all_missing(self, y: np.ndarray, missing: np.ndarray) -> dict[str, np.ndarray]:
        """The estimates of targets without outputs on some selected items: the weighted sum with those imputed by
        the source models' observed mean on the item; abilities from the observed items only, and p-IRT's observed
        part over them (the IRT prediction covers every other item)."""
        out = {"weighted": _impute(y, missing, self._fill) @ self.weights_}
        if self.irt_ is not None:
            obs = ~missing
            with np.errstate(invalid="ignore"):
                th = self.irt_.abilities(np.where(obs, y, np.nan), self.selected_, method=self.ability)
            p = self.irt_.predict_proba(th)  # (T, N)
            seen = np.where(obs, y, 0.0).sum(1) - np.where(obs, p[:, self.selected_], 0.0).sum(1)
            out["p-irt"] = (p.sum(1) + seen) / self.n_items_total_
            if not np.isnan(self.lambda_):
                out["gp-irt"] = self.lambda_ * out["weighted"] + (1 - self.lambda_) * out["p-irt"]
        return out

    def predict_all(self, target_outputs: Any, *, items: Any = None) -> dict[str, np.ndarray]:
        """All available estimates of the targets' full-benchmark scores.

        Parameters
        ----------
        target_outputs : ResponseMatrix, DataFrame or array-like of shape (n_target, K')
            The targets' outputs on the selected items. A ResponseMatrix or DataFrame (columns = item ids) is
            aligned by item id; a bare array holds the selected items in ``selected_`` order (or all fitted items)
            in axis 1.
        items : sequence, default=None
            Item ids (positions when fitted on arrays) of the columns of an array ``target_outputs``.

        Returns
        -------
        dict of str to ndarray of shape (n_target,)
            ``"weighted"``, and with an IRT model ``"p-irt"`` and ``"gp-irt"``.

        See Also
        --------
        effstats.irt.TinyBenchmarks.predict : The estimate named by ``estimator``.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.irt import TinyBenchmarks
        >>> Y = simulate_responses(40, 500, rng=0).values.astype(bool)
        >>> tb = TinyBenchmarks(30, n_dims=1, random_state=0).fit(Y[:32])
        >>> sorted(tb.predict_all(Y[32:, tb.selected_]))
        ['gp-irt', 'p-irt', 'weighted']
        """
        return self._all(self._target(target_outputs, items))

    def _predict(self, outputs: Any) -> np.ndarray:
        return self._all(outputs)[self.estimator]
