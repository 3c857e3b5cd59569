"""Design-based accuracy estimates from the items Sort & Search evaluates.

The evaluated items are a *sample* of the benchmark, so the new model's accuracy can be estimated from them
directly, with a standard error, instead of from the predicted "ones then zeros" vector (whose count ``k / n`` is
biased by the aleatoric errors and is not exact even when every item is evaluated).

Designs
-------
* ``"systematic"`` — one item in each of ``b`` equal cells of the sorted order (``sampling="uniform"``: the
  cell centres, a systematic sample with a fixed start; ``sampling="stratified"``: one random item per cell,
  a stratified sample with one unit per stratum). The estimate is the stratified mean ``Σ_h W_h y_h``
  (``W_h`` = cell size / n). One unit per stratum admits no unbiased variance estimator; we use the
  successive-difference estimator (Wolter 2007, Sect. 8.2; the collapsed-strata idea of Cochran 1977,
  Sect. 5A.12) ``v = (1 - f) Σ_{h>1} b² (W_h e_h - W_{h-1} e_{h-1})² / (2 b (b - 1))`` with ``f = b / n``,
  conservative when the cell means follow a smooth trend, as they do along a difficulty order.
* ``"srs"`` — items drawn at random without replacement (``sampling="random"``, or items chosen by the user that
  are not one per cell): the sample mean with ``v = (1 - f) s² / b``.

Both are exact (``v = 0``) when every item is evaluated. ``estimator="difference"`` is the model-assisted
difference estimator ``x̄ + Σ_h W_h (y_h - x_h)`` (Särndal, Swensson & Wretman 1992, Sect. 6.3) whose working
model ``x_i = expit(θ + logit easiness_i)`` is calibrated to the Sort & Search prediction (``mean(x) = k / n``),
so the S&S threshold enters as auxiliary information; its variance uses the residuals ``y - x`` and is floored
by the working model's own within-cell variance ``(1 - f) Σ_h W_h² x_h (1 - x_h)``.

Intervals are Clopper-Pearson intervals at the effective sample size ``p̂ (1 - p̂) / v`` (Korn & Graubard
1998), which stay valid near 0 and 1 where Wald intervals fail (8 items of a 95 %-accurate model are often all
correct, and then ``v = 0``).

References
----------
Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley.
Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
positive counts estimated from survey data. *Survey Methodology* 24(2), 193-201.
Särndal, C.-E., Swensson, B. and Wretman, J. (1992). *Model Assisted Survey Sampling*. Springer.
Wolter, K. M. (2007). *Introduction to Variance Estimation*, 2nd ed. Springer.
Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
Evaluation in an Era of Rapid Progress. NeurIPS 2024, arXiv:2402.19472.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats
from scipy.special import expit, logit

from .._results import ConfidenceInterval, check_confidence_level
from .._validation import check_array, check_binary, check_option, check_positive_int, check_unit_interval

__all__ = ["cell_edges", "design_of", "estimate_accuracy", "korn_graubard_interval"]

_DESIGNS = ("systematic", "srs")
_N_BINS = 256  # working-model bins along the order (keeps the difference estimator O(n_models × 256))


def cell_edges(n: int, budget: int) -> np.ndarray:
    """Edges of ``budget`` equal cells of ``n`` sorted positions, int64 (budget + 1,): cell j is [e_j, e_{j+1})."""
    return (np.arange(budget + 1, dtype=np.int64) * n) // budget


def design_of(positions: np.ndarray, n: int) -> str:
    """``"systematic"`` if the sorted ``positions`` hold exactly one item per equal cell, else ``"srs"``."""
    b = len(positions)
    e = cell_edges(n, b)
    return "systematic" if bool(np.all((positions >= e[:-1]) & (positions < e[1:]))) else "srs"


def _working_bins(easiness_sorted: np.ndarray, n_models: float) -> tuple[np.ndarray, np.ndarray]:
    """(bin of every sorted position, mean logit easiness of every bin) for the difference estimator."""
    n = len(easiness_sorted)
    nb = min(_N_BINS, n)
    # a Jeffreys-smoothed easiness keeps the logit finite for items every (or no) sort model answers
    lg = logit((np.asarray(easiness_sorted, float) * n_models + 0.5) / (n_models + 1.0))
    bins = (np.arange(n) * nb) // n
    return bins, np.bincount(bins, weights=lg, minlength=nb) / np.bincount(bins, minlength=nb)


_POPCOUNT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(1).astype(np.uint8)


def _popcount_rows(packed: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Ones per row of a bit-packed (rows, bytes) array, optionally within a packed column ``mask`` (bytes,)."""
    x = packed if mask is None else packed & mask
    return _POPCOUNT[x].sum(axis=1, dtype=np.int64)


def _stratified_sums(y: np.ndarray, n: int, design: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Stratified mean and the successive-difference sum ``Σ_{h>0} (c_h y_h - c_{h-1} y_{h-1})²`` (``c = b W``) of
    binary rows ``y`` (rows, b), from bit counts on the packed rows: no float copy of ``y``.

    Equal cells have ``q = n // b`` or ``q + 1`` items, so ``c`` takes two values and every sum is a weighted count of
    ones in (at most three) fixed column sets; with ``y² = y`` the squares expand into such counts.
    """
    b = y.shape[1]
    sizes = np.diff(cell_edges(n, b)) if design == "systematic" else np.full(b, n / b)
    c = sizes * b / n
    w = sizes / n
    big = c > c.min()
    P = np.packbits(y, axis=1)
    S = _popcount_rows(P)
    S_big = _popcount_rows(P, np.packbits(big)) if big.any() else np.zeros(len(y), np.int64)
    est = (w.min() * S + (w.max() - w.min()) * S_big) if big.any() else w[0] * S
    if design != "systematic" or b < 2:
        return est.astype(float), None
    c0, c1 = c.min(), c.max()
    all_sq = c0**2 * (S - S_big) + c1**2 * S_big  # Σ_h c_h² y_h
    ends = c[0] ** 2 * y[:, 0] + c[-1] ** 2 * y[:, -1]
    Q = np.packbits(y[:, 1:] & y[:, :-1], axis=1)  # y_h y_{h-1}, h = 1..b-1
    pair = c[1:] * c[:-1]
    cross = c0 * c0 * _popcount_rows(Q)
    for val in np.unique(pair):
        if val != c0 * c0:
            cross = cross + (val - c0 * c0) * _popcount_rows(Q, np.packbits(pair == val))
    return est.astype(float), 2 * all_sq - ends - 2 * cross


def estimate_accuracy(
    y: np.ndarray,
    positions: np.ndarray,
    n: int,
    design: str = "systematic",
    *,
    thresholds: np.ndarray | None = None,
    easiness_sorted: np.ndarray | None = None,
    n_models: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy estimate and standard error per model from responses on sampled sorted positions.

    Parameters
    ----------
    y : bool array (n_models, b)
        Responses on the sampled items, columns in increasing ``positions``.
    positions : int array (b,)
        Increasing sorted positions of the sampled items.
    n : int
        Number of items.
    design : {"systematic", "srs"}, default="systematic"
    thresholds : int array (n_models,), optional
        Sort & Search thresholds ``k``; with ``easiness_sorted`` selects the difference estimator.
    easiness_sorted : float array (n,), optional
        Fraction of sort models answering each sorted position correctly.
    n_models : float, default=1.0
        Number of sort models behind ``easiness_sorted`` (for its smoothing).

    Returns
    -------
    estimate, standard_error : float arrays (n_models,)
    """
    n = check_positive_int(n, "n")
    design = check_option(design, "design", ("systematic", "srs"))
    pos = check_array(positions, "positions", ndim=1, dtype=None)
    if not np.issubdtype(pos.dtype, np.integer):
        raise ValueError(f"positions: expected integer sorted positions, got dtype {pos.dtype}")
    if pos.min() < 0 or pos.max() >= n or np.any(np.diff(pos) <= 0):
        raise ValueError(f"positions: expected increasing distinct positions in [0, {n - 1}]")
    if design == "systematic" and design_of(pos, n) != "systematic":
        raise ValueError(f"positions: design='systematic' needs one position in each of the {len(pos)} equal cells of "
                         f"the {n} sorted items (see cell_edges); use design='srs' for other samples")
    y = check_binary(y, "y", ndim=2, shape=(None, len(pos)))
    return _estimate_accuracy(y, pos, n, design, thresholds=thresholds, easiness_sorted=easiness_sorted,
                              n_models=n_models)


def _estimate_accuracy(y: np.ndarray, positions: np.ndarray, n: int, design: str = "systematic", *,
                       thresholds: np.ndarray | None = None, easiness_sorted: np.ndarray | None = None,
                       n_models: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    # estimate_accuracy without input checks: Sort & Search calls it on responses it has already validated
    b = len(positions)
    f = b / n
    if design == "systematic":
        w = np.diff(cell_edges(n, b)) / n
    else:
        w = np.full(b, 1.0 / b)
    yf = None
    if thresholds is not None and easiness_sorted is not None:
        yf = y.astype(np.float32)
        bins, lbar = _working_bins(easiness_sorted, n_models)
        sizes = np.bincount(bins, minlength=len(lbar)).astype(float)
        target = np.clip(np.asarray(thresholds, float), 0.5, n - 0.5)
        lo, hi = np.full(len(target), -40.0), np.full(len(target), 40.0)
        for _ in range(50):  # bisection: Σ sizes · expit(θ + lbar) = k is increasing in θ
            mid = 0.5 * (lo + hi)
            up = expit(mid[:, None] + lbar[None, :]) @ sizes >= target
            hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
        theta = 0.5 * (lo + hi)
        xbar = expit(theta[:, None] + lbar[None, :]) @ sizes / n
        x = expit(theta[:, None] + lbar[bins[positions]][None, :]).astype(np.float32)
        e = yf - x
        est = xbar + e @ w
        floor = (1 - f) * (x * (1 - x)) @ (w**2)
        if b > 1 and design == "systematic":
            d = np.diff(e * (w * b).astype(np.float32), axis=1)
            ss = np.einsum("ij,ij->i", d, d)
    else:
        e = None
        est, ss = _stratified_sums(y, n, design)
        floor = 0.0
    if b == 1:
        var = np.full(len(est), 0.25 * (1 - f))  # one item: the largest Bernoulli variance
    elif design == "systematic":
        var = (1 - f) * np.maximum(np.asarray(ss, float), 0.0) / (2.0 * b * (b - 1))
    else:
        var = (1 - f) * (y.astype(np.float32) if e is None else e).var(axis=1, ddof=1) / b
    var = np.maximum(np.asarray(var, float), floor)
    if f >= 1:
        var[:] = 0.0
    return np.clip(np.asarray(est, float), 0.0, 1.0), np.sqrt(var)


def korn_graubard_interval(
    estimate: Any, standard_error: Any, budget: int, n_items: int, confidence_level: float = 0.95
) -> ConfidenceInterval:
    """Clopper-Pearson interval at the effective sample size ``p̂(1 - p̂) / se²`` (Korn & Graubard 1998).

    Where ``p̂`` is 0 or 1, or ``se = 0`` with ``p̂`` inside (0, 1), the effective size is the number of evaluated
    items ``budget``. With every item evaluated (``budget = n_items``) the estimate is exact: a point interval.

    Returns
    -------
    ConfidenceInterval of arrays (n_models,) (floats for scalar input).
    """
    level = check_confidence_level(confidence_level)
    n_items = check_positive_int(n_items, "n_items")
    budget = check_positive_int(budget, "budget", maximum=n_items)
    p = check_unit_interval(estimate, "estimate", ndim=(0, 1))
    se = check_array(standard_error, "standard_error", ndim=(0, 1))
    if se.shape != p.shape:
        raise ValueError(f"standard_error: expected the shape of estimate {p.shape}, got {se.shape}")
    if (se < 0).any():
        raise ValueError("standard_error: expected values >= 0")
    v = se**2
    inner = (p > 0) & (p < 1) & (v > 0)
    ne = np.where(inner, p * (1 - p) / np.where(v > 0, v, 1.0), float(budget))
    ne = np.maximum(ne, 1.0)
    x = p * ne
    a = (1 - level) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(x > 0, stats.beta.ppf(a, x, ne - x + 1), 0.0)
        hi = np.where(x < ne, stats.beta.ppf(1 - a, x + 1, ne - x), 1.0)
    exact = np.full(p.shape, budget >= n_items)
    lo, hi = np.where(exact, p, lo), np.where(exact, p, hi)
    if lo.ndim == 0:
        return ConfidenceInterval(float(lo), float(hi))
    return ConfidenceInterval(lo, hi)
