"""The (multidimensional) two-parameter logistic IRT model, :class:`effstats.irt.IRT2PL`: fitting (marginal or
joint maximum likelihood), abilities of new models, and the standardisation that fixes what the data do not identify
(the class's Notes)."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from .._shared import _child_python, _cpus, _plain, _scratch_file
from .._validation import (check_array, check_binary, check_flag, check_option, check_positive, check_positive_int,
                           check_rng, frame_values,
                           warn_missing_cells)
from ..exceptions import ConvergenceWarning, check_is_fitted
from ..sortsearch._inputs import check_unique_ids
from . import _jml_blocks
from ._gauge import gauge_step
from ._jml_blocks import _capped, _InProcess, _item_blocks, _Pass, _residuals, _sigmoid, _Workers

__all__ = ["IRT2PL"]

_METHODS = ("auto", "mml", "jml")
_ABILITY = ("map", "mle")


def _as_binary_matrix(x: Any, name: str) -> tuple[np.ndarray, pd.Index | None, pd.Index | None]:
    """A binary (n_models, n_items) matrix from a ResponseMatrix, a DataFrame (columns = item ids) or an array."""
    from ..responses import ResponseMatrix

    if isinstance(x, ResponseMatrix):
        return x.require_binary(name), x.item_ids, x.model_ids
    if isinstance(x, pd.DataFrame):
        return check_binary(frame_values(x), name, ndim=2), pd.Index(x.columns), pd.Index(x.index)
    return check_binary(x, name, ndim=2), None, None


def _binary_with_mask(x: Any, name: str) -> tuple[np.ndarray, np.ndarray | None, pd.Index | None, pd.Index | None]:
    """:func:`_as_binary_matrix` that accepts missing cells (a ResponseMatrix's mask, NaN in a DataFrame or float
    array): (Y with 0 at missing cells, observed mask or None when complete, item ids, model ids)."""
    from ..responses import ResponseMatrix

    if isinstance(x, ResponseMatrix):
        if x.missing is None or not x.missing.any():
            return _as_binary_matrix(x, name)[0], None, x.item_ids, x.model_ids
        if x.kind == "binary":  # read as 0/1 when it was made: no second scan of its values
            obs = ~x.missing
            return x.values & obs, obs, x.item_ids, x.model_ids
        raw, items, models = x.values_with_nan(), x.item_ids, x.model_ids
    elif isinstance(x, pd.DataFrame):
        raw, items, models = np.asarray(frame_values(x), float), pd.Index(x.columns), pd.Index(x.index)
    else:
        raw, items, models = x, None, None
    arr = check_array(raw, name, ndim=2, dtype=None, allow_nan=True)
    if arr.dtype.kind != "f" or not np.isnan(arr).any():
        return check_binary(arr, name, ndim=2), None, items, models
    obs = ~np.isnan(arr)
    Y = check_binary(np.where(obs, arr, 0.0), name, ndim=2)
    return Y, obs, items, models


def _newton_abilities(
    Y: np.ndarray, a: np.ndarray, b: np.ndarray, prior: bool, max_iter: int = 100, gtol: float = 1e-5,
    W: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Abilities of every row of Y (n, k) for items (a (k, d), b (k,)): batched Newton, all models at once.

    ``prior``: MAP with θ ~ N(0, I) (a concave problem with a unique maximum); otherwise maximum likelihood, which
    does not exist for all-correct / all-wrong (separable) answer patterns: Newton then walks out in capped steps
    until the gradient is below ``gtol`` (scipy BFGS's default stopping rule), as an optimiser of the likelihood does.
    Returns θ (n, d), the Hessian of the negative log-posterior (n, d, d) and a converged flag per model.
    ``W`` (n, k), 1 at observed cells and 0 at missing ones, drops the missing cells from the likelihood; as weights
    of the cells (any shape that broadcasts to Y's), it also counts a column that stands for several items.
    """
    n, d = Y.shape[0], a.shape[1]
    eye = np.eye(d)
    ridge = eye if prior else 1e-8 * eye
    aa = (a[:, :, None] * a[:, None, :]).reshape(len(a), d * d)
    th = np.zeros((n, d))
    done = np.zeros(n, bool)
    for _ in range(max_iter):
        p = _sigmoid(th @ a.T - b)
        if W is None:
            g = (Y - p) @ a - (th if prior else 0.0)
            H = ((p * (1 - p)) @ aa).reshape(n, d, d) + ridge
        else:
            g = ((Y - p) * W) @ a - (th if prior else 0.0)
            H = ((p * (1 - p) * W) @ aa).reshape(n, d, d) + ridge
        done = np.abs(g).max(axis=1) < gtol
        if done.all():
            break
        step = np.linalg.solve(H, g[..., None])[..., 0]
        # Cap each model's step at 1 logit unit in max-norm: Newton overshoots where p saturates.
        scale = np.minimum(1.0, 1.0 / np.maximum(np.abs(step).max(axis=1, keepdims=True), 1e-300))
        th = th + np.where(done[:, None], 0.0, step * scale)
    p = _sigmoid(th @ a.T - b)
    H = ((p * (1 - p) * (1.0 if W is None else W)) @ aa).reshape(n, d, d) + ridge
    return th, H, done


def _logistic_parts(z: np.ndarray, e: np.ndarray, r: np.ndarray, p: np.ndarray) -> None:
    """From logits ``z``, one exp per cell: ``e = exp(−|z|)``, ``r = 1 / (1 + e)`` and ``p = σ(z)`` (``r`` where
    z ≥ 0, ``e r`` where z < 0: ``max(e, [z ≥ 0]) r``), into e, r and p. With them ``σ(z)(1 − σ(z)) = e r²`` and
    ``log(1 − σ(z)) = −(max(z, 0) + log1p(e))`` (``log σ(z)`` is that plus z), without the cancellation of 1 − p
    where p is near 1. Branch-free passes: a masked (``where=``) pass costs as much as the exp."""
    np.abs(z, out=e)
    np.negative(e, out=e)
    np.exp(e, out=e)
    np.add(e, 1.0, out=r)
    np.reciprocal(r, out=r)
    np.greater_equal(z, 0.0, out=p)
    np.maximum(p, e, out=p)
    p *= r


class _MMLStep:
    """One EM iteration of the 1-D marginal-ML fit (:meth:`IRT2PL._fit_mml`), called with the item parameters
    ``par = (a, b)``: returns the parameters after the E-step and two Newton steps of every item's MAP logistic
    regression, and the loss at ``par``. The (nodes × items) work arrays are allocated once per fit and each cell's
    logistic terms come from one exp (:func:`_logistic_parts`).

    ``count`` (n_items,): each column of Y (and W) stands for that many items answered alike (the distinct columns,
    :func:`_distinct_columns`). The E-step's sums over items then count each column that often; the M-step's
    regressions are per item and need no count; the loss's prior terms count each column's parameters that often."""

    def __init__(self, Y: np.ndarray, W: np.ndarray | None, x: np.ndarray, logw: np.ndarray, la: float,
                 lb: float, count: np.ndarray | None = None) -> None:
        self.Y, self.W, self.x, self.logw, self.la, self.lb, self.count = Y, W, x, logw, la, lb, count
        # the E-step's products with the answers and the observed cells, each column counted as often as it occurs
        self.Yc, self.Wc = (Y, W) if count is None else (Y * count, None if W is None else W * count)
        q, n = len(x), Y.shape[1]
        self.z, self.e, self.r, self.p, self.t, self.s = (np.empty((q, n)) for _ in range(6))
        self.x2 = np.vstack([x, np.ones(q)])  # x @ c and c.sum(0) as one product
        self.x3 = np.vstack([x**2, x, np.ones(q)])
        self.cells = Y.shape[0] * (n if count is None else count.sum())

    def _logits(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        np.multiply.outer(self.x, a, out=self.z)
        self.z -= b
        return self.z

    def _newton(self, a: np.ndarray, b: np.ndarray, nq: np.ndarray, rq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One Newton step of every item from the current logits (``_logistic_parts`` done), capped at 1 logit unit
        (Newton can overshoot where p saturates)."""
        e, r, p, t = self.e, self.r, self.p, self.t
        np.multiply(nq, p, out=t)
        np.subtract(rq, t, out=t)  # rq − nq p
        ga, gb = self.x2 @ t  # x @ res, res.sum(0)
        ga -= self.la * a
        gb = -gb - self.lb * b
        np.multiply(e, r, out=t)
        t *= r
        t *= nq  # nq p (1 − p)
        haa, hab, hbb = self.x3 @ t
        haa = -haa - self.la
        hbb = -hbb - self.lb
        det = haa * hbb - hab**2
        return (a - np.clip((hbb * ga - hab * gb) / det, -1.0, 1.0),
                b - np.clip((haa * gb - hab * ga) / det, -1.0, 1.0))

    def __call__(self, par: np.ndarray) -> tuple[np.ndarray, float]:
        Y, W, c, n = self.Y, self.W, self.count, self.Y.shape[1]
        a, b = par[:n], par[n:]
        z = self._logits(a, b)
        _logistic_parts(z, self.e, self.r, self.p)
        # softplus(z) = −log(1 − p) = max(z, 0) + log1p(e) into t; log p − log(1 − p) = z, so the (M, Q) joint
        # log-likelihood is one matmul of Y with z minus the softplus sums (missing cells, W = 0, add nothing)
        np.maximum(z, 0.0, out=self.t)
        self.t += np.log1p(self.e, out=self.s)
        soft = (self.t.sum(1) if c is None else self.t @ c) if W is None else self.Wc @ self.t.T  # (Q,) or (M, Q)
        ll = self.Yc @ z.T + (self.logw - soft)
        norm = np.logaddexp.reduce(ll, axis=1, keepdims=True)
        post = np.exp(ll - norm)
        if c is None:
            prior = self.la * (a**2).sum() + self.lb * (b**2).sum()
        else:  # each column's parameters counted as often as it occurs
            prior = self.la * (c @ a**2) + self.lb * (c @ b**2)
        f = -(norm.sum() - 0.5 * prior) / self.cells
        # expected counts per node (per node and item when cells are missing), and correct ones per item
        nq, rq = (post.sum(0)[:, None] if W is None else post.T @ W), post.T @ Y
        a, b = self._newton(a, b, nq, rq)
        _logistic_parts(self._logits(a, b), self.e, self.r, self.p)
        a, b = self._newton(a, b, nq, rq)
        return np.concatenate([a, b]), f


class IRT2PL(BaseEstimator):
    r"""Two-parameter logistic IRT model (``n_dims`` > 1: multidimensional), fitted by regularised ML.

    Model :math:`m` answers item :math:`i` correctly with probability :math:`\sigma(\theta_m \cdot a_i - b_i)`
    (Notes), with abilities :math:`\theta_m`, discriminations :math:`a_i` and difficulties :math:`b_i`. Fitted on
    the 0/1 answers of many models; then estimates the abilities of new models from their answers on a few items and
    predicts their answers on the rest.

    Parameters
    ----------
    n_dims : int, default=1
        Dimension of abilities θ and discriminations a.
    method : {"auto", "mml", "jml"}, default="auto"
        ``mml``: marginal maximum likelihood by the Bock–Aitkin EM algorithm over Gauss–Hermite quadrature of
        θ ~ N(0, 1) (one dimension only), with Gaussian priors on a and b (the M-step is a MAP: two Newton steps of
        every item's logistic regression, vectorised over items). ``jml``: joint MAP with θ ~ N(0, I),
        a ~ N(0, σ_a² I), b ~ N(0, σ_b²), by alternating exact Newton steps on the abilities (all models at once)
        and on the item parameters (all items at once) from a rank-d SVD start of the smoothed logit matrix.
        With either method, items that every model answers alike (the same column, missing cells included) keep
        equal parameters: where the distinct columns are at most three quarters of the items, the EM iterations or
        the passes run over those alone, each counted as often as it occurs (the same iterations and estimates, up
        to rounding).
        ``auto`` resolves to ``mml`` when ``n_dims == 1`` and ``jml`` otherwise (fitted attribute ``method_``).
    prior_sd_a : float, default=2.0
        Standard deviation σ_a of the Gaussian prior on discriminations.
    prior_sd_b : float, default=3.0
        Standard deviation σ_b of the Gaussian prior on difficulties (abilities: standard normal).
    max_iter : int, default=500
        EM iterations (mml, SQUAREM-accelerated) or alternating Newton sweeps (jml).
    tol : float, default=1e-6
        Convergence when the relative change of the objective (``loss_curve_``) between iterations is below ``tol``.
    n_jobs : int or None, default=None
        Processes sharing the joint fit's passes over the items (``method="jml"``, from 2M cells: below, starting a
        worker costs more than it saves); None: one per core the process may use. The items are cut into blocks of about
        65,000 cells, handed out one at a time: each process, the calling one included, takes the next free block as it
        finishes one (from about 4,090 blocks, some 265 million cells, each takes an equal range of them instead). Each
        block's sums are added up in the same order whichever process computed them, so the estimates do not depend on
        ``n_jobs``. The processes share the data in a file without a name (in /dev/shm where it has room, else the
        temporary directory), freed however the fit ends; without room for it, without a writable temporary directory,
        or on systems other than POSIX, the fit runs in this process alone.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the start of latent dimensions beyond the rank of the data (otherwise the fit is deterministic).

    Attributes
    ----------
    interval_kind : str
        ``"none"`` (class attribute): the model fits item and ability parameters and makes no interval for a
        model's benchmark score.
    method_ : str
        ``"mml"`` or ``"jml"``.
    theta_ : ndarray of shape (n_models, n_dims)
        Abilities of the fitted models (mml: MAP given the fitted items), reported standardised (mean 0, sd 1,
        uncorrelated components) with a and b transformed to keep every logit θ aᵀ − b unchanged.
    a_ : ndarray of shape (n_items, n_dims)
    b_ : ndarray of shape (n_items,)
    converged_ : bool
    n_iter_ : int
    loss_curve_ : ndarray
        Objective per iteration (jml: per sweep, length ``n_iter_``; mml: per SQUAREM cycle of 2–3 EM iterations),
        per response: negative log marginal posterior (mml) or negative log joint posterior (jml) divided by
        n_models × n_items, before the standardisation of the reported parameters (Notes).
    item_ids_, model_ids_ : pandas.Index or None
        Ids from a ResponseMatrix or a DataFrame (columns = items); None for bare arrays.
    n_items_ : int
    n_missing_ : int
        Missing cells of the fitted responses (skipped by the likelihood).

    See Also
    --------
    effstats.irt.TinyBenchmarks : Full-benchmark scores from a few items with this model (p-IRT, gp-IRT).
    effstats.datasets.simulate_responses : Responses drawn from a (multidimensional) 2PL model.

    Notes
    -----
    The model, with abilities :math:`\theta_m \in \mathbb{R}^d`, discriminations :math:`a_i \in \mathbb{R}^d` and
    difficulties :math:`b_i`:

    .. math::

        P(Y_{mi} = 1) = \sigma(\theta_m \cdot a_i - b_i), \qquad \sigma(x) = \frac{1}{1 + e^{-x}}.

    DISCO writes the same model as :math:`\sigma(-\alpha^\top \theta + \beta)`: :math:`a = -\alpha`,
    :math:`b = -\beta`.

    What the data identify:

    * :math:`d = 1`: location and scale are fixed by reporting abilities standardised over the fitted models
      (mean 0, sd 1), the sign by orienting :math:`\theta` with accuracy, so :math:`\hat a \approx a \cdot
      \mathrm{sd}(\theta_\mathrm{true})`. How well :math:`a` is recovered is limited by the number of *models*
      answering each item: with 50 models an item's slope is a logistic regression on 50 points, whose standard
      error (about 0.3-0.5) is as large as the spread of the slopes under the package simulator's log-normal(0, 0.3),
      so :math:`\mathrm{corr}(\hat a, a) \approx 0.55` even for an oracle that knows the true abilities (measured:
      estimator 0.545, oracle 0.549; with 400 models 0.898 / 0.900). Abilities, estimated from thousands of items,
      reach :math:`r \approx 0.99`.
    * :math:`d > 1`: the likelihood and the isotropic Gaussian priors are unchanged by :math:`\theta \to \theta R`,
      :math:`a \to a R` for any orthogonal :math:`R`, so discriminations are identified only up to a rotation (and
      sign flips). The fit returns the rotation whose abilities have uncorrelated components in decreasing
      variance, each oriented so that its mean discrimination is positive, standardised to
      :math:`\theta \sim N(0, I)` over the fitted models; compare with a truth after orthogonal Procrustes alignment
      (measured, 300 models x 1,500 items, 3-D: :math:`r(\hat a, a)` 0.76 against 0.78 for the oracle), or compare
      rotation-invariant quantities (the logits :math:`\theta a^\top - b`, the probabilities).
    * More dimensions than the models can support overfit: on 50 models x 10,000 items drawn from the package's
      5-D simulator (whose positive slopes make it nearly one-dimensional) the mean :math:`|\hat P - P|` is 0.076
      for a 1-D fit, 0.088 for 2-D and 0.124 for 5-D. Choose the dimension by validation (as
      :class:`effstats.irt.TinyBenchmarks` does).
    * Joint ML (``method="jml"``) estimates :math:`\theta` and :math:`(a, b)` together; the Gaussian priors fix the
      scale that plain JML leaves free and keep all-correct / all-wrong rows and columns finite, but JML still
      shrinks or inflates slopes somewhat compared with marginal ML.

    References
    ----------
    Birnbaum, A. (1968). Some latent trait models and their use in inferring an examinee's ability. In F. M. Lord
    & M. R. Novick, *Statistical Theories of Mental Test Scores*, chapters 17–20. Addison-Wesley, Reading, MA.

    Bock, R. D. & Aitkin, M. (1981). Marginal maximum likelihood estimation of item parameters: application of an
    EM algorithm. *Psychometrika* 46(4), 443–459.

    Reckase, M. D. (2009). *Multidimensional Item Response Theory*. Springer, New York.

    Varadhan, R. & Roland, C. (2008). Simple and globally convergent methods for accelerating the convergence of
    any EM algorithm. *Scandinavian Journal of Statistics* 35(2), 335–353.

    Polo, F. M., Weber, L., Choshen, L., Sun, Y., Xu, G. & Yurochkin, M. (2024). tinyBenchmarks: evaluating LLMs
    with fewer examples. *Proceedings of the 41st International Conference on Machine Learning (ICML)*,
    arXiv:2402.14992.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.irt import IRT2PL
    >>> Y = simulate_responses(30, 200, rng=0).values.astype(bool)  # 30 models x 200 items, 0/1
    >>> irt = IRT2PL().fit(Y[:25])
    >>> irt.method_, irt.a_.shape, irt.theta_.shape
    ('mml', (200, 1), (25, 1))
    >>> items = np.arange(0, 200, 4)  # 5 new models answer 50 of the items
    >>> theta = irt.abilities(Y[25:, items], items, method="map")
    >>> predicted = irt.predict_proba(theta).mean(axis=1)  # expected accuracy on all 200 items
    >>> np.round(predicted, 2)
    array([0.44, 0.29, 0.35, 0.42, 0.52])
    >>> np.round(predicted - Y[25:].mean(axis=1), 2)  # error against the observed accuracy
    array([-0.07, -0.02,  0.07,  0.05, -0.06])
    """

    interval_kind = "none"
    #: dtype of the joint fit's passes over the cells. TinyBenchmarks sets float32 on its fits: the same sweeps
    #: (float32 rounding moves the fitted probabilities by about 1e-6) at about 70 % of float64's time.
    _sweep_dtype = np.float64
    #: Whether each sweep of the joint fit ends with the gauge step (:func:`effstats.irt._gauge.gauge_step`), which
    #: TinyBenchmarks sets on its final fit: the sweeps' optimum in fewer sweeps, where the plain sweeps stop at
    #: ``tol`` farther from it. ``IRT2PL`` on its own keeps the plain sweeps and their pinned values.
    _gauge = False

    def __init__(
        self,
        n_dims: int = 1,
        *,
        method: str = "auto",
        prior_sd_a: float = 2.0,
        prior_sd_b: float = 3.0,
        max_iter: int = 500,
        tol: float = 1e-6,
        n_jobs: int | None = None,
        random_state: Any = None,
    ) -> None:
        self.n_dims = n_dims
        self.method = method
        self.prior_sd_a = prior_sd_a
        self.prior_sd_b = prior_sd_b
        self.max_iter = max_iter
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    def _check_params(self) -> tuple[int, str]:
        d = check_positive_int(self.n_dims, "n_dims")
        method = check_option(self.method, "method", _METHODS)
        if method == "mml" and d != 1:
            raise ValueError("method: 'mml' is implemented for n_dims=1; use 'jml' for multidimensional models")
        check_positive(self.prior_sd_a, "prior_sd_a")
        check_positive(self.prior_sd_b, "prior_sd_b")
        check_positive_int(self.max_iter, "max_iter")
        check_positive(self.tol, "tol")
        if self.n_jobs is not None:
            check_positive_int(self.n_jobs, "n_jobs")
        return d, ("mml" if d == 1 else "jml") if method == "auto" else method

    def fit(self, responses: Any, y: Any = None) -> "IRT2PL":
        """Fit on binary responses.

        Parameters
        ----------
        responses : ResponseMatrix, DataFrame or array of shape (n_models, n_items)
            Binary correctness; a DataFrame's columns (a ResponseMatrix's ``item_ids``) are remembered as item ids.
            Missing cells (a ResponseMatrix's ``missing`` mask, NaN) are left out of the likelihood: the model is
            fitted on the observed cells only (``n_missing_`` counts the others).
        y : None
            Ignored; present for scikit-learn's estimator API.

        Returns
        -------
        self : IRT2PL
            The fitted model.

        Raises
        ------
        ValueError
            Non-binary responses, repeated item ids, fewer than 2 models or items, a model without any observed
            response, or responses all correct or all wrong.
        """
        d, method = self._check_params()
        Y, obs, item_ids, model_ids = _binary_with_mask(responses, "responses")
        check_unique_ids(None if item_ids is None else pd.Index(item_ids))
        m, n = Y.shape
        if m < 2 or n < 2:
            raise ValueError(f"responses: need at least 2 models and 2 items, got shape {Y.shape}")
        W = None if obs is None else obs.astype(float)
        if W is not None and (W.sum(axis=1) == 0).any():
            raise ValueError(f"responses: models at positions {np.flatnonzero(W.sum(axis=1) == 0)[:5].tolist()} have "
                             "no "
                             "observed response; drop them")
        seen = Y if obs is None else Y[obs]
        if seen.all() or not seen.any():  # as LogisticRegression refuses a target of one class
            raise ValueError(f"responses: every observed response is {int(seen.flat[0])} (all "
                             f"{'correct' if seen.flat[0] else 'wrong'}); a 2PL model needs right and wrong answers "
                             "to place models and items on a scale")
        self.method_ = method
        self.item_ids_, self.model_ids_, self.n_items_ = item_ids, model_ids, n
        self.n_missing_ = 0 if W is None else int(m * n - W.sum())
        warn_missing_cells("responses", self.n_missing_, m * n, "the likelihood uses the observed cells")
        Y = Y.astype(float)
        if method == "mml":
            self._fit_mml(Y, W=W)
        else:
            self._fit_jml(Y, d, W=W)
        if not self.converged_:
            warnings.warn(
                f"IRT2PL ({self.method_}, n_dims={d}) stopped at max_iter={self.max_iter} before the relative change "
                f"of the objective fell below tol={self.tol:g} (last change {self._last_change:.2g}); inspect "
                "converged_, n_iter_ and loss_curve_, and raise max_iter (or tol).",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _fit_mml(self, Y: np.ndarray, n_quad: int = 31, W: np.ndarray | None = None) -> None:
        la, lb = 1.0 / self.prior_sd_a**2, 1.0 / self.prior_sd_b**2
        x, wq = np.polynomial.hermite_e.hermegauss(n_quad)  # nodes/weights for the N(0, 1) density
        logw = np.log(wq / wq.sum())
        # Start from the rank-1 SVD of the smoothed logits (slopes and intercepts of a linearised model); with the
        # SQUAREM steps below, 60 EM iterations instead of 92 reach the same loss on 50 ImageNet models x 10,000 items.
        _, a0, b0 = _svd_start(Y, 1, check_rng(self.random_state, "random_state"), W)
        # Items answered alike by every model (the same column of Y and of W) have the same start, posterior terms
        # and Newton steps: where they are many, the EM runs over the distinct columns, each counted as often as it
        # occurs (the E-step's sums over items and the prior), and so do the abilities at the end
        first, inverse, count = _distinct_columns(Y, W)
        Yf, Wf, par = Y, W, np.concatenate([a0[:, 0], b0])
        if count is not None:
            Yf, Wf, par = Y[:, first], None if W is None else W[:, first], np.concatenate([a0[first, 0], b0[first]])
            cc = np.concatenate([count, count])
        nf = Yf.shape[1]
        em = _MMLStep(Yf, Wf, x, logw, la, lb, count)

        def sq(u: np.ndarray) -> float:  # SQUAREM's squared norms over every item's (a, b)
            return float(u @ u) if count is None else float(cc @ u**2)

        # EM converges linearly with a long tail; SQUAREM (Varadhan & Roland 2008) extrapolates two EM steps along
        # their difference and falls back to plain EM whenever the jump does not lower the loss (monotone).
        loss, change, n_em = [], np.inf, 0
        while n_em < self.max_iter:
            p1, f0 = em(par)
            n_em += 1
            if n_em == self.max_iter:  # budget spent: keep the last EM step (not converged)
                par = p1
                break
            p2, f1 = em(p1)
            n_em += 1
            r, v = p1 - par, p2 - 2 * p1 + par
            vv = sq(v)
            new, f_new = p2, None
            if vv > 0 and n_em < self.max_iter:
                alpha = min(-1.0, -np.sqrt(sq(r) / vv))
                p3, f3 = em(par - 2 * alpha * r + alpha**2 * v)  # f3: loss at the extrapolated point
                n_em += 1
                if f3 <= f1:
                    new, f_new = p3, f3
            loss.append(f1 if f_new is None else f_new)
            change = abs(f0 - loss[-1]) / max(1.0, abs(loss[-1]))
            par = new
            if change < self.tol:
                break
        a, b = par[:nf], par[nf:]
        self.converged_ = bool(change < self.tol)
        self._last_change = change
        self.n_iter_ = n_em
        self.loss_curve_ = np.asarray(loss)
        if count is None:
            th = _newton_abilities(Y, a[:, None], b, prior=True, W=W)[0]
        else:  # each distinct column's terms counted as often as it occurs
            th = _newton_abilities(Yf, a[:, None], b, prior=True, W=count[None, :] if Wf is None else Wf * count)[0]
            a, b = a[inverse], b[inverse]
        self.theta_, self.a_, self.b_ = _canonical_rotation(th, a[:, None], b, Y, W)

    def _fit_jml(self, Y: np.ndarray, d: int, W: np.ndarray | None = None) -> None:
        m, n = Y.shape
        la, lb = 1.0 / self.prior_sd_a**2, 1.0 / self.prior_sd_b**2
        eye_d = np.eye(d)
        th, a, b = _svd_start(Y, d, check_rng(self.random_state, "random_state"), W)
        # Items answered alike by every model (the same column of Y and of W) have the same start and the same
        # Newton steps: where they are many, the passes fit each distinct column once, counted as often as it occurs
        first, inverse, count = _distinct_columns(Y, W)
        Yf, Wf = (Y, W) if count is None else (Y[:, first], None if W is None else W[:, first])
        if count is not None:
            a, b = a[first], b[first]
        n_fit = Yf.shape[1]
        n_blocks = len(_item_blocks(m, n_fit))
        # The passes over the (models × items) cells and the sums within a block of items run in ``_sweep_dtype``;
        # the sums over blocks, the Newton solves and the parameters stay in float64.
        layout = _Pass.layout(m, n_fit, d, n_blocks, self._sweep_dtype, W is not None, count is not None)
        fill = {"Y": Yf, "a": a, "b": b, **({} if Wf is None else {"W": Wf}),
                **({} if count is None else {"c": count})}
        procs = min(self.n_jobs or _cpus(), n_blocks // 2) if m * n_fit >= _jml_blocks._PROCESS_CELLS else 1
        work = None
        if procs > 1:
            worker = _child_python("import runpy; runpy.run_path(sys.argv[2], run_name='__main__')")
            try:
                work = _Workers(layout, fill, self.prior_sd_a, self.prior_sd_b, procs - 1, _scratch_file, worker)
            except OSError:  # no room, or no writable directory, for the shared file: this process fits alone
                pass
        with work or _InProcess(layout, fill, self.prior_sd_a, self.prior_sd_b) as work:
            P = work.pass_

            def item_pass(th: np.ndarray, newton: bool) -> tuple[float, np.ndarray, np.ndarray]:
                """One pass over the items at abilities ``th`` (:meth:`_Pass.run`, with ``newton`` a Newton step
                of every item first): −Σ log P(observed answer), and per model Σ_i (p − y) a_i and
                Σ_i p (1 − p) a_i a_iᵀ, summed over the blocks in their order."""
                X = np.hstack([th, -np.ones((m, 1))])
                P.X[...] = X
                P.XX[...] = (X[:, :, None] * X[:, None, :]).reshape(m, (d + 1) ** 2)
                work.run(newton)
                nll, g, h = 0.0, np.zeros((m, d)), np.zeros((m, d * d))
                for j in range(n_blocks):
                    nll -= P.nll[j]
                    g += P.g[j]
                    h += P.h[j]
                return nll, g, h

            def objective(nll: float, th: np.ndarray) -> float:
                if count is None:
                    return (nll + 0.5 * (np.sum(th**2) + la * np.sum(P.a**2) + lb * np.sum(P.b**2))) / (m * n)
                return (nll + 0.5 * (np.sum(th**2) + la * (count @ P.a**2).sum() + lb * (count @ P.b**2))) / (m * n)

            nll, g, h = item_pass(th, False)
            loss, change, f = [], np.inf, objective(nll, th)
            for _ in range(self.max_iter):
                # Abilities: one exact Newton step of every model's d-dimensional MAP logistic regression; then the
                # items (alternating exact Newton steps, as a sweep).
                H = h.reshape(m, d, d) + eye_d
                th = th - _capped(np.linalg.solve(H, (g + th)[..., None])[..., 0])
                nll, g, h = item_pass(th, True)
                if self._gauge:
                    th = gauge_step(th, P.a, P.b, count, la, lb, g, h)
                f_prev, f = f, objective(nll, th)
                loss.append(f)
                change = abs(f_prev - f) / max(1.0, abs(f))
                if change < self.tol:
                    break
            a, b = np.array(P.a), np.array(P.b)
        if count is not None:
            a, b = a[inverse], b[inverse]
        self.converged_ = bool(change < self.tol)
        self._last_change = change
        self.n_iter_ = len(loss)
        self.loss_curve_ = np.asarray(loss)
        self._theta_jml = th  # the abilities in the fit's own coordinates, where the priors apply (_item_map)
        self.theta_, self.a_, self.b_ = _canonical_rotation(th, a, b, Y, W)

    # ------------------------------------------------------------------ items and abilities
    def _item_positions(self, items: Any, name: str = "items") -> np.ndarray:
        """Positions of ``items`` (item ids when the model was fitted with ids and they are not all integers
        in range, else positions), validated."""
        n = self.n_items_
        if items is None:
            return np.arange(n)
        if isinstance(items, (str, bytes)) or np.ndim(items) == 0:
            items = [items]
        arr = np.asarray(list(items) if not isinstance(items, (np.ndarray, pd.Index)) else items)
        if arr.ndim != 1:
            raise ValueError(f"{name}: expected a 1-D list of item ids or positions, got shape {arr.shape}")
        ids = self.item_ids_
        if ids is not None and not ids.equals(pd.RangeIndex(n)):
            idx = ids.get_indexer(arr) if ids.is_unique else np.full(arr.shape, -1)
            if (idx < 0).any():
                unknown = _plain(arr[idx < 0][:10])
                raise ValueError(
                    f"{name}: {int((idx < 0).sum())} item id(s) not among the {n} fitted items, e.g. {unknown}"
                )
        else:
            if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(f"{name}: expected integer item positions in [0, {n}), got dtype {arr.dtype}")
            idx = arr.astype(int)
            bad = (idx < 0) | (idx >= n)
            if bad.any():
                raise ValueError(f"{name}: item positions must lie in [0, {n}), got {_plain(idx[bad][:10])}")
        if len(np.unique(idx)) != len(idx):
            raise ValueError(f"{name}: items are repeated")
        return idx

    def _responses_on_items(self, responses: Any, items: Any,
                            name: str = "responses") -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(Y, item positions, observed weights or None): a DataFrame's / ResponseMatrix's columns are item ids and
        are aligned to ``items``; missing cells (mask, NaN) get weight 0."""
        from ..responses import ResponseMatrix

        if isinstance(responses, (pd.DataFrame, ResponseMatrix)):
            Y, obs, cols, _ = _binary_with_mask(responses, name)
            warn_missing_cells(name, 0 if obs is None else int((~obs).sum()), Y.size,
                               "abilities use the observed cells")
            col_idx = self._item_positions(cols, f"{name} (columns)")
            if items is None:
                return Y.astype(float), col_idx, _weights(obs)
            want = self._item_positions(items)
            pos = pd.Index(col_idx).get_indexer(want)
            if (pos < 0).any():
                raise ValueError(f"{name}: no column for {int((pos < 0).sum())} of the requested items")
            return Y[:, pos].astype(float), want, _weights(None if obs is None else obs[:, pos])
        idx = self._item_positions(items)
        Y, obs, _, _ = _binary_with_mask(responses, name)
        if Y.shape[1] != idx.size:
            raise ValueError(f"{name}: expected shape (any, {idx.size}), got {Y.shape}")
        warn_missing_cells(name, 0 if obs is None else int((~obs).sum()), Y.size, "abilities use the observed cells")
        return Y.astype(float), idx, _weights(obs)

    def abilities(
        self, responses: Any, items: Any = None, *, method: str = "map", return_cov: bool = False, max_iter: int = 100
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Abilities of (new) models from their answers on some of the fitted items.

        Parameters
        ----------
        responses : array of shape (n_models, len(items)), DataFrame or ResponseMatrix
            Binary answers. A bare array is read positionally, column j answering ``items[j]``; a DataFrame's
            columns (a ResponseMatrix's ``item_ids``) are item ids and are aligned to the fitted items.
        items : sequence, optional
            Item ids (when fitted with ids) or positions of the answered items; default: all fitted items (arrays)
            or the columns (DataFrames).
        method : {"map", "mle"}, default="map"
            ``map``: posterior mode under θ ~ N(0, I); ``mle``: maximum likelihood (the tinyBenchmarks reference),
            which is infinite for all-correct / all-wrong patterns: the optimiser then stops where the gradient
            falls below 1e-5, as scipy's BFGS does in the reference.
        return_cov : bool, default=False
            Also return the inverse Hessian of the negative log-posterior (log-likelihood for ``mle``) at the
            estimate, shape (n_models, n_dims, n_dims): the asymptotic covariance of θ̂.
        max_iter : int, default=100
            Newton iterations.

        Returns
        -------
        theta : ndarray of shape (n_models, n_dims)
            The estimated abilities.
        cov : ndarray of shape (n_models, n_dims, n_dims)
            Their covariances; only with ``return_cov=True``.

        See Also
        --------
        effstats.irt.IRT2PL.predict_proba : Answers predicted from the abilities.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.irt import IRT2PL
        >>> Y = simulate_responses(30, 200, rng=0).values.astype(bool)
        >>> irt = IRT2PL().fit(Y[:25])
        >>> theta, cov = irt.abilities(Y[25:, :100], range(100), return_cov=True)
        >>> theta.shape, cov.shape
        ((5, 1), (5, 1, 1))
        """
        check_is_fitted(self, "a_")
        method = check_option(method, "method", _ABILITY)
        max_iter = check_positive_int(max_iter, "max_iter")
        return_cov = check_flag(return_cov, "return_cov")
        Y, idx, W = self._responses_on_items(responses, items)
        if W is not None and (W.sum(axis=1) == 0).any():
            raise ValueError(f"responses: models at positions {np.flatnonzero(W.sum(axis=1) == 0)[:5].tolist()} have "
                             "no "
                             "observed answer on the items")
        th, H, _ = _newton_abilities(Y, self.a_[idx], self.b_[idx], prior=method == "map", max_iter=max_iter, W=W)
        return (th, np.linalg.inv(H)) if return_cov else th

    def predict_proba(self, theta: Any = None, items: Any = None) -> np.ndarray:
        """Probability of a correct answer of each model on each item.

        Parameters
        ----------
        theta : array-like of shape (n_models, n_dims), default=None
            Abilities, e.g. from :meth:`abilities`; default the fitted models' ``theta_``.
        items : sequence, default=None
            Item ids (when fitted with ids) or positions; default all fitted items.

        Returns
        -------
        ndarray of shape (n_models, n_items)
            ``sigmoid(θ_m · a_i − b_i)``.
        """
        check_is_fitted(self, "a_")
        try:
            shape = () if theta is None else np.shape(theta)
        except ValueError:  # a ragged sequence: check_array below names it
            shape = ()
        if len(shape) == 2 and shape[1] not in (self.a_.shape[1], 0) and shape[1] == len(self._item_positions(items)):
            # answers where abilities are wanted (scikit-learn's predict_proba takes the data)
            raise ValueError(f"theta: expected abilities of shape (n_models, {self.a_.shape[1]}), got {shape}, one "
                             "column per item: pass abilities, IRT2PL.predict_proba(IRT2PL.abilities(responses))")
        th = self.theta_ if theta is None else check_array(theta, "theta", ndim=2, shape=(None, self.a_.shape[1]))
        idx = self._item_positions(items)
        return _sigmoid(th @ self.a_[idx].T - self.b_[idx])

    def score(self, responses: Any, y: Any = None) -> float:
        """Mean Bernoulli log-likelihood per response at the models' MAP abilities; higher is better.

        Parameters
        ----------
        responses : array-like of shape (n_models, n_items), DataFrame or ResponseMatrix
            Binary answers on all fitted items (an array), or on the items named by a DataFrame's columns.
        y : None
            Ignored; present for scikit-learn's estimator API.

        Returns
        -------
        float
            Mean log-likelihood of the observed responses.
        """
        check_is_fitted(self, "a_")
        Y, idx, W = self._responses_on_items(responses, None)
        th = _newton_abilities(Y, self.a_[idx], self.b_[idx], prior=True, W=W)[0]
        z = th @ self.a_[idx].T - self.b_[idx]
        ll = Y * z - np.logaddexp(0.0, z)
        return float(np.mean(ll) if W is None else (ll * W).sum() / W.sum())


def _weights(obs: np.ndarray | None) -> np.ndarray | None:
    return None if obs is None or obs.all() else obs.astype(float)


def _svd_start(Y: np.ndarray, d: int, rng: np.random.Generator,
               W: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start values from a rank-d SVD of the item-centred logits of the smoothed responses.

    Logits of 0.85/0.15 stand in for 1/0 (a 2PL with |z| ≈ 1.7 on a typical response); b = −(column mean),
    θ = √M U (unit-variance columns), a = V S / √M, so θ aᵀ − b is the best rank-d approximation of the logits.
    """
    m, n = Y.shape
    L = np.where(Y > 0.5, 1.0, -1.0) * np.log(0.85 / 0.15)
    if W is None:
        mu = L.mean(0)
        L -= mu
    else:  # missing cells sit at their item's observed mean: 0 after centring
        mu = (L * W).sum(0) / np.maximum(W.sum(0), 1)
        L = (L - mu) * W
    U, S, Vt = _top_svd(L, d)
    r = min(d, len(S))
    th = np.zeros((m, d))
    a = np.zeros((n, d))
    th[:, :r] = U[:, :r] * np.sqrt(m)
    a[:, :r] = Vt[:r].T * S[:r] / np.sqrt(m)
    if r < d:  # more dimensions than the data's rank: small random start for the rest
        th[:, r:] = 0.1 * rng.standard_normal((m, d - r))
        a[:, r:] = 0.1 * rng.standard_normal((n, d - r))
    return th, a, -mu


#: Share of the items below which the fits (the joint fit's passes, the marginal fit's EM, the item step) run over the
#: distinct columns of the responses (each counted as often as it occurs) instead of every item: above, the saving
#: does not repay finding them.
_DISTINCT_SHARE = 0.75


def _distinct_columns(Y: np.ndarray, W: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The distinct columns of the 0/1 matrix Y (m, n) (with those of the observed-cell weights W): the position of
    each one's first occurrence (ascending), each item's index among them and their counts (float64), or
    ``(None, None, None)`` when they are more than ``_DISTINCT_SHARE`` of the items."""
    key = np.packbits(Y > 0.5, axis=0) if W is None else np.packbits(np.vstack([Y > 0.5, W > 0.5]), axis=0)
    # each column's packed bytes as one scalar (an integer up to 8 bytes, else a byte string): a 1-D np.unique,
    # which sorts scalars instead of rows of bytes; the order of the groups is undone below
    n_bytes = key.shape[0]
    if n_bytes <= 8:
        cols = np.zeros((key.shape[1], 8), np.uint8)
        cols[:, :n_bytes] = key.T
        rows = cols.view(np.uint64).ravel()
    else:
        rows = np.ascontiguousarray(key.T).view(np.dtype((np.void, n_bytes))).ravel()
    _, first, inverse, count = np.unique(rows, return_index=True, return_inverse=True, return_counts=True)
    if len(first) > _DISTINCT_SHARE * Y.shape[1]:
        return None, None, None
    order = np.argsort(first)  # the items' order: a block holds neighbouring items, as without this
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.ravel()], count[order].astype(float)


def _top_svd(L: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The leading min(d, m) singular triplets of L (m, n), from the eigenvectors of the m × m Gram matrix L Lᵀ
    when m < n: one (m × n) product instead of an SVD of the whole matrix (0.6 s at 72 × 80,000). Singular vectors
    are defined up to sign (and rotation within repeated singular values), under which the fits are equivariant.
    The Gram route squares the condition number, so it is taken only when the last singular value kept is well
    clear of the rest's noise (S_r² ≥ 1e-6 S_1²); otherwise (rank-deficient data) the full SVD gives the vectors."""
    m, n = L.shape
    r = min(d, m)
    if m < n:
        lam, U = np.linalg.eigh(L @ L.T)
        lam, U = lam[::-1][:r], U[:, ::-1][:, :r]
        if lam[-1] >= 1e-6 * lam[0] > 0:
            S = np.sqrt(lam)
            return U, S, (L.T @ U).T / S[:, None]
    return np.linalg.svd(L, full_matrices=False)

def _item_map(Y: np.ndarray, th: np.ndarray, prior_sd_a: float, prior_sd_b: float, W: np.ndarray | None = None,
              max_steps: int = 50, tol: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Every item's MAP (a_i, b_i) given the abilities ``th`` (m, d) of the models answering Y (m, n): the item step
    of the joint fit, iterated to convergence (Newton from a = b = 0, capped steps, blocks of items as in
    :meth:`IRT2PL._fit_jml`). ``W`` (m, n): 1 at observed cells, 0 at missing ones. Returns a (n, d), b (n,).

    Items with the same column of Y (and of W) have the same MAP: where the distinct columns are at most
    ``_DISTINCT_SHARE`` of the items, each is fitted once (its first occurrence) and its parameters given to every
    item that has it. The blocks then hold other items, and a block iterates until all its items have converged,
    so an item's parameters can differ from the fit over all items within the tolerance of its last steps."""
    first, inverse, _ = _distinct_columns(Y, W)
    if first is None:
        return _item_map_each(Y, th, prior_sd_a, prior_sd_b, W, max_steps, tol)
    a, b = _item_map_each(Y[:, first], th, prior_sd_a, prior_sd_b, None if W is None else W[:, first], max_steps,
                          tol)
    return a[inverse], b[inverse]


def _item_map_each(Y: np.ndarray, th: np.ndarray, prior_sd_a: float, prior_sd_b: float, W: np.ndarray | None,
                   max_steps: int, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_item_map` fitted for each column of Y."""
    m, d = th.shape
    n = Y.shape[1]
    X = np.hstack([th, -np.ones((m, 1))])
    XX = (X[:, :, None] * X[:, None, :]).reshape(m, (d + 1) ** 2)
    pen = np.r_[np.full(d, 1.0 / prior_sd_a**2), 1.0 / prior_sd_b**2]
    par = np.zeros((n, d + 1))
    blocks = _item_blocks(m, n)
    buf = np.empty((3, m, blocks[0].stop))
    for s in blocks:
        k = s.stop - s.start
        Yk, Wk, p, r, v = Y[:, s], None if W is None else W[:, s], buf[0, :, :k], buf[1, :, :k], buf[2, :, :k]
        P = par[s]
        for _ in range(max_steps):
            _residuals(_sigmoid(np.matmul(X, P.T, out=p)), Yk, Wk, r, v)
            H = (v.T @ XX).reshape(k, d + 1, d + 1) + np.diag(pen)
            step = _capped(np.linalg.solve(H, (r.T @ X + pen * P)[..., None])[..., 0])
            P -= step
            if np.abs(step).max() < tol:
                break
    return par[:, :d], par[:, d]


def _canonical_rotation(th: np.ndarray, a: np.ndarray, b: np.ndarray, Y: np.ndarray,
                        W: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One representative of the fit's equivalence class, with the same likelihood (θ aᵀ − b is unchanged).

    Rotate (θ, a) by the orthogonal R that makes θ's components uncorrelated with decreasing variance; flip signs
    so that each component's mean discrimination is positive (one dimension: θ increases with accuracy); then
    standardise each component to mean 0 and variance 1 over the fitted models (θ' = (θ − μ)/s, a' = a s,
    b' = b − a μ), the usual MIRT convention θ ~ N(0, I). The standardisation fixes the scale where the fit leaves
    it soft: with thousands of items per model the marginal-ML posteriors collapse onto single quadrature nodes and
    the fitted abilities spread to sd ≈ 1.4 (slopes shrunk by ≈ 0.6), and joint ML shrinks abilities when items
    are few.
    """
    d = th.shape[1]
    if d > 1:
        w, V = np.linalg.eigh(np.cov(th, rowvar=False))
        R = V[:, np.argsort(w)[::-1]]
        th, a = th @ R, a @ R
        s = np.where(a.mean(0) < 0, -1.0, 1.0)
    else:
        acc = Y.mean(1) if W is None else (Y * W).sum(1) / W.sum(1)
        s = np.array([-1.0 if np.corrcoef(th[:, 0], acc)[0, 1] < 0 else 1.0])
    th, a = th * s, a * s
    mu, sd = th.mean(0), th.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    return (th - mu) / sd, a * sd, b - a @ mu
