"""Sample-level metrics for predicted correctness (Lifelong Benchmarks, Eq. 2-4), the aleatoric / epistemic
error decomposition (Sect. 4.5), the E_agg counterexample (Theorem 2.1), curve fits and correlations.

Notation: ``a`` is the true correctness of a model on ``n`` items, ``y`` the predicted correctness, both binary.
Every function takes one vector (n,) or many models at once (n_models, n) and then returns one value per row.

* ``E(a, y) = ||a - y||_1 / n`` (MAE, Eq. 2) — :func:`mae`
* ``E_agg(a, y) = | |y| - |a| | / n`` — :func:`e_agg`
* ``E_rand(a, y) = |a|/n |y|/n + (1 - |a|/n)(1 - |y|/n)`` (Eq. 3) — :func:`e_rand`
* ``kappa = ((1 - E) - E_rand) / (1 - E_rand)`` (Eq. 4), Cohen's kappa for two raters — :func:`cohen_kappa`.
  The paper states ``0 <= kappa <= 1``; in fact ``-1 <= kappa <= 1`` (negative when predictions agree less
  than chance, e.g. the Theorem 2.1 construction).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ._ordering import check_order, dp_rows
from ._results import ConfidenceInterval, check_confidence_level
from ._validation import check_array, check_binary, check_option, check_unit_interval
from .responses import ResponseMatrix

__all__ = [
    "mae",
    "e_agg",
    "e_rand",
    "cohen_kappa",
    "sample_metrics",
    "aggregate_counterexample",
    "oracle_count_prediction",
    "ErrorDecomposition",
    "decompose_errors",
    "CurveFit",
    "fit_exponential",
    "fit_power_law",
    "CorrelationResult",
    "accuracy_correlation",
    "model_correlation_matrix",
]


def _values(x: Any, name: str = "a") -> Any:
    if not isinstance(x, ResponseMatrix):
        return x
    if x.missing is not None and x.missing.any():
        # a missing cell is stored as 0: scoring it would count "not evaluated" as "wrong"
        raise ValueError(f"{name}: {int(x.missing.sum())} cells are missing (not evaluated); sample-level metrics "
                         "need every cell: subset the matrix to the evaluated items")
    return x.values


def _labels(x: Any) -> tuple[pd.Index | None, pd.Index] | None:
    """(row ids or None, column ids) of a labelled input (ResponseMatrix, DataFrame, Series), None for arrays."""
    if isinstance(x, ResponseMatrix):
        return x.model_ids, x.item_ids
    if isinstance(x, pd.DataFrame):
        return x.index, x.columns
    if isinstance(x, pd.Series):
        return None, x.index
    return None


def _list(ids: pd.Index, k: int = 5) -> str:
    more = f" and {len(ids) - k} more" if len(ids) > k else ""
    return f"{list(ids[:k])}{more}"


def _align_labelled(a: Any, y: Any) -> tuple[Any, Any]:
    """When both ``a`` and ``y`` carry ids, ``y``'s values reordered to ``a``'s items (and models) by id; a mismatch
    raises ValueError listing the ids. Otherwise both unchanged (arrays are positional)."""
    la, ly = _labels(a), _labels(y)
    if la is None or ly is None:
        return a, y
    yv = np.asarray(_values(y, "y").to_numpy() if isinstance(y, (pd.DataFrame, pd.Series)) else _values(y, "y"))
    for axis, what in ((1, "item"), (0, "model")):
        ia, iy = la[axis], ly[axis]
        if ia is None or iy is None or ia.equals(iy):
            continue
        if iy.has_duplicates or ia.has_duplicates:
            raise ValueError(f"y: duplicated {what} ids; labelled a and y are aligned by id")
        missing, unseen = ia.difference(iy, sort=False), iy.difference(ia, sort=False)
        if len(missing) or len(unseen):
            parts = [f"missing {what}s {_list(missing)}"] if len(missing) else []
            parts += [f"unexpected {what}s {_list(unseen)}"] if len(unseen) else []
            raise ValueError(f"y: labelled y must have a's {what} ids (any order); " + "; ".join(parts))
        take = iy.get_indexer(ia)
        yv = yv[..., take] if axis == 1 or yv.ndim == 1 else yv[take]
    return a, yv


def _pair(a: Any, y: Any, *, binary: bool) -> tuple[np.ndarray, np.ndarray, bool]:
    """Validate two same-shape (n,) or (n_models, n) arrays; return float/bool 2-D views and whether input was 1-D.

    Labelled inputs (ResponseMatrix, DataFrame, Series) on both sides are aligned by id (items, and models when
    both have model ids); arrays are positional."""
    chk = (lambda x, nm: check_binary(x, nm, ndim=(1, 2))) if binary else (lambda x, nm: check_unit_interval(x, nm, ndim=(1, 2)))
    a, y = _align_labelled(a, y)
    av = chk(_values(a, "a"), "a")
    yv = chk(_values(y, "y"), "y")
    if av.shape != yv.shape:
        raise ValueError(f"y: expected the shape of a {av.shape}, got {yv.shape}")
    one = av.ndim == 1
    return np.atleast_2d(av), np.atleast_2d(yv), one


def _out(x: np.ndarray, one: bool) -> Any:
    return float(x[0]) if one else x


def mae(a: Any, y: Any) -> Any:
    """Mean absolute error ``E(a, y) = ||a - y||_1 / n`` (Eq. 2); values in [0, 1] (binary or scores).

    Returns a float for 1-D input, an array (n_models,) for 2-D input.
    """
    av, yv, one = _pair(a, y, binary=False)
    return _out(np.abs(av.astype(float) - yv).mean(axis=1), one)


def e_agg(a: Any, y: Any) -> Any:
    """Aggregate (accuracy) error ``| |y| - |a| | / n``."""
    av, yv, one = _pair(a, y, binary=False)
    return _out(np.abs(yv.astype(float).mean(axis=1) - av.mean(axis=1)), one)


def e_rand(a: Any, y: Any) -> Any:
    """Agreement expected by chance (Eq. 3): ``p_a p_y + (1 - p_a)(1 - p_y)``; binary inputs."""
    av, yv, one = _pair(a, y, binary=True)
    pa, py = av.mean(axis=1), yv.mean(axis=1)
    return _out(_e_rand_rates(pa, py), one)


def _e_rand_rates(pa: Any, py: Any) -> Any:
    """Eq. 3 from the two rates of ones: ``p_a p_y + (1 - p_a)(1 - p_y)``."""
    return pa * py + (1 - pa) * (1 - py)


def _kappa_from_rates(err: Any, pa: Any, py: Any, undefined: float = 1.0) -> np.ndarray:
    """Kappa (Eq. 4) from the disagreement rate and the two rates of ones, vectorised.

    ``1 - E_rand = 0`` only when both vectors are the same constant (perfect agreement, kappa = 0/0): that case
    returns ``undefined``.
    """
    err, pa, py = (np.asarray(v, float) for v in (err, pa, py))
    er = _e_rand_rates(pa, py)
    den = 1.0 - er
    safe = np.where(den > 0, den, 1.0)
    return np.where(den > 0, ((1.0 - err) - er) / safe, undefined)


def cohen_kappa(a: Any, y: Any, *, undefined: float = 1.0) -> Any:
    """Cohen's kappa between true and predicted correctness (Eq. 4), vectorised over rows.

    Equals ``sklearn.metrics.cohen_kappa_score(a, y)`` on binary vectors. Where both vectors are the same
    constant, kappa is 0/0; ``undefined`` (default 1.0, perfect agreement) is returned instead of sklearn's NaN.

    Parameters
    ----------
    a, y : binary arrays (n,) or (n_models, n)

    Returns
    -------
    float or array (n_models,), in [-1, 1].
    """
    if isinstance(undefined, (bool, np.bool_)) or not isinstance(undefined, (int, float, np.integer, np.floating)) or not -1 <= undefined <= 1:
        raise ValueError(f"undefined: expected a real number in [-1, 1] (kappa's range), got {undefined!r}")
    av, yv, one = _pair(a, y, binary=True)
    err = (av != yv).mean(axis=1)
    return _out(_kappa_from_rates(err, av.mean(axis=1), yv.mean(axis=1), float(undefined)), one)


def sample_metrics(a: Any, y: Any) -> pd.DataFrame:
    """One row per model: ``mae``, ``e_agg``, ``e_rand``, ``kappa``, ``predicted_accuracy`` (of y), ``accuracy_true``
    (of a). Indexed by a's model ids when ``a`` is a ResponseMatrix or DataFrame."""
    av, yv, _ = _pair(a, y, binary=True)
    pa, py = av.mean(axis=1), yv.mean(axis=1)
    err = (av != yv).mean(axis=1)
    return pd.DataFrame(
        {
            "mae": err,
            "e_agg": np.abs(py - pa),
            "e_rand": _e_rand_rates(pa, py),
            "kappa": _kappa_from_rates(err, pa, py),
            "predicted_accuracy": py,
            "accuracy_true": pa,
        },
        index=_row_ids(a, len(err)),
    )


def _row_ids(a: Any, n_rows: int) -> pd.Index | None:
    lab = _labels(a)
    rows = None if lab is None else lab[0]
    return rows if rows is not None and len(rows) == n_rows else None


# ---------------------------------------------------------------------------------------------- Theorem 2.1
def aggregate_counterexample(a: Any) -> np.ndarray:
    """Theorem 2.1 (App. J): a prediction with ``E_agg = 0`` and the worst ``E = 2 min(p, 1 - p)``, ``p = |a|/n``.

    With ``p <= 1/2`` every correct item is predicted wrong and ``|a|`` of the wrong items (the first ones) are
    predicted correct; with ``p > 1/2`` symmetrically. Vectorised over rows.

    Parameters
    ----------
    a : binary array (n,) or (n_models, n)

    Returns
    -------
    y : bool array of the same shape.
    """
    av = check_binary(_values(a), "a", ndim=(1, 2))
    one = av.ndim == 1
    a2 = np.atleast_2d(av)
    n = a2.shape[1]
    k = a2.sum(axis=1, keepdims=True)
    zero_rank = np.cumsum(~a2, axis=1) - 1  # rank of each wrong item among the row's wrong items
    one_rank = np.cumsum(a2, axis=1) - 1
    minority_ones = 2 * k <= n
    # p <= 1/2: y = 1 exactly on the first k wrong items; p > 1/2: y = 0 exactly on the first n - k right items
    y_low = ~a2 & (zero_rank < k)
    y_high = ~(a2 & (one_rank < (n - k)))
    y = np.where(minority_ones, y_low, y_high)
    return y[0] if one else y


def oracle_count_prediction(a: Any, order: Any = None) -> np.ndarray:
    """The Sect. 2.1 "oracle" prediction: knowing only the true count ``k = |a|``, predict the first ``k`` items of
    ``order`` (default: the natural item order) correct. ``E_agg = 0`` by construction; ``E`` is what it costs.

    Under an order unrelated to correctness, ``E(a, y)`` has expectation ``2 p (1 - p)`` (0.42-0.5 for p in
    0.3-0.7), the paper's observed 0.4-0.5.

    Parameters
    ----------
    a : binary (n,) or (n_models, n)
    order : int array (n,), optional

    Returns
    -------
    y : bool array of the same shape as ``a``.
    """
    av = check_binary(_values(a), "a", ndim=(1, 2))
    one = av.ndim == 1
    a2 = np.atleast_2d(av)
    n = a2.shape[1]
    rank = np.arange(n)
    if order is not None:
        o = check_order(order, n)
        rank = np.empty(n, np.int64)
        rank[o] = np.arange(n)
    y = rank[None, :] < a2.sum(axis=1, keepdims=True)
    return y[0] if one else y


# ---------------------------------------------------------------------------------------------- decomposition
@dataclass(frozen=True)
class ErrorDecomposition:
    """Aleatoric / epistemic decomposition of E and kappa (Sect. 4.5 and Lifelong Benchmarks Sect. 6).

    All arrays have shape (n_models,). ``y*`` is the best "ones then zeros" prediction in the sort order with all
    ``n`` items (DP-search on the full ``a``).

    Identities (checked in the tests): for any ``y``, ``total <= aleatoric + epistemic`` and
    ``|aleatoric - epistemic| <= total`` (triangle inequality of the Hamming distance); ``epistemic = 0`` iff
    ``y = y*``, and then ``kappa = kappa_aleatoric``. When ``y`` is itself "ones then zeros" in the order (every
    Sort & Search prediction) also ``aleatoric <= total``, since y* is the best such vector.
    """

    total: np.ndarray
    aleatoric: np.ndarray
    epistemic: np.ndarray
    kappa: np.ndarray
    kappa_aleatoric: np.ndarray
    kappa_epistemic: np.ndarray
    best_threshold: np.ndarray = field(repr=False)

    def frame(self) -> pd.DataFrame:
        """Tidy table, one row per model."""
        return pd.DataFrame({k: getattr(self, k) for k in ("total", "aleatoric", "epistemic", "kappa", "kappa_aleatoric", "kappa_epistemic")})

    to_frame = frame  # the result protocol's name

    def mean(self) -> pd.Series:
        return self.frame().mean()


def decompose_errors(a: Any, y: Any, order: Any) -> ErrorDecomposition:
    """Decompose ``E(a, y)`` into aleatoric ``E(a, y*)`` and epistemic ``||y* - y|| / n`` (and likewise kappa).

    Parameters
    ----------
    a : binary (n,) or (n_models, n)
        True correctness.
    y : binary, same shape
        Predicted correctness (any predictor, not only Sort & Search).
    order : int array (n,)
        The sort order (easiest first) in which ``y*`` is "ones then zeros".
    """
    av, yv, _ = _pair(a, y, binary=True)
    n = av.shape[1]
    o = check_order(order, n)
    kstar = dp_rows(av[:, o])
    ystar = np.empty_like(av)
    ystar[:, o] = np.arange(n)[None, :] < kstar[:, None]
    pa, py, ps = av.mean(1), yv.mean(1), ystar.mean(1)
    tot = (av != yv).mean(1)
    ale = (av != ystar).mean(1)
    epi = (ystar != yv).mean(1)
    return ErrorDecomposition(
        total=tot,
        aleatoric=ale,
        epistemic=epi,
        kappa=_kappa_from_rates(tot, pa, py),
        kappa_aleatoric=_kappa_from_rates(ale, pa, ps),
        kappa_epistemic=_kappa_from_rates(epi, ps, py),
        best_threshold=kstar,
    )


# ---------------------------------------------------------------------------------------------- curve fits
@dataclass(frozen=True)
class CurveFit:
    """A least-squares curve fit (``scipy.optimize.curve_fit``) with parameter uncertainties.

    Attributes
    ----------
    model : str
        ``"exponential"`` (``a exp(-b x) + c``) or ``"power"`` (``c x^p``).
    params : dict name -> estimate
    stderr : dict name -> standard error (square root of the covariance diagonal)
    covariance : array (n_params, n_params)
    x, y : the data fitted
    """

    model: str
    params: dict
    stderr: dict
    covariance: np.ndarray = field(repr=False)
    x: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    _f: Callable = field(repr=False)

    def predict(self, x: Any) -> np.ndarray:
        """The fitted curve at budgets ``x``: a number or a 1-D array of finite numbers (float or array (n,))."""
        xv = check_array(x, "x", ndim=(0, 1))
        if not np.isfinite(xv).all():
            raise ValueError("x: expected finite budgets, got inf")
        out = self._f(xv, *self.params.values())
        return float(out) if xv.ndim == 0 else out

    @property
    def r_squared(self) -> float:
        res = self.y - self.predict(self.x)
        tot = self.y - self.y.mean()
        return float(1 - (res @ res) / (tot @ tot)) if tot @ tot > 0 else float("nan")

    @property
    def statistic(self) -> np.ndarray:
        """Parameter estimates in the order of ``params``, array (n_params,)."""
        return np.array(list(self.params.values()), float)

    @property
    def standard_error(self) -> np.ndarray:
        """Standard errors in the order of ``params``, array (n_params,)."""
        return np.array(list(self.stderr.values()), float)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Wald intervals ``estimate ± t_{dof} stderr`` per parameter.

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high`` arrays (n_params,) in the order of ``params`` (see :meth:`to_frame` for a table).
        """
        level = check_confidence_level(confidence_level)
        dof = max(1, len(self.x) - len(self.params))
        q = stats.t.ppf(0.5 + level / 2, dof)
        est, se = self.statistic, self.standard_error
        return ConfidenceInterval(est - q * se, est + q * se)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row per parameter: ``estimate``, ``stderr``, ``low``, ``high`` (the Wald interval at ``confidence_level``)."""
        ci = self.confidence_interval(confidence_level)
        return pd.DataFrame({"estimate": self.statistic, "stderr": self.standard_error, "low": ci.low, "high": ci.high},
                            index=list(self.params))


def _xy(x: Any, y: Any, min_points: int) -> tuple[np.ndarray, np.ndarray]:
    xv = check_array(x, "x", ndim=1)
    yv = check_array(y, "y", ndim=1, shape=(len(xv),))
    if len(xv) < min_points:
        raise ValueError(f"x: need at least {min_points} points for this fit, got {len(xv)}")
    if (xv <= 0).any():
        raise ValueError("x: budgets must be positive")
    return xv, yv


def _exp_model(x: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    return a * np.exp(-b * x) + c


def _pow_model(x: np.ndarray, c: float, p: float) -> np.ndarray:
    return c * np.power(x, p)


def fit_exponential(x: Any, y: Any) -> CurveFit:
    """Fit ``E = a exp(-b x) + c`` (the paper's MAE vs n' law; it reports b = 0.04 / 0.02).

    Starting values: ``c`` = the smallest y, ``b`` from a log-linear fit of ``y - c`` on the points above it.
    """
    xv, yv = _xy(x, y, 4)
    c0 = yv.min() - 1e-3 * (np.ptp(yv) + 1e-12)
    z = yv - c0
    slope = stats.linregress(xv, np.log(z)).slope if np.ptp(xv) > 0 else -1.0
    b0 = max(-slope, 1e-6)
    a0 = max(z.max() * np.exp(b0 * xv.min()), 1e-12)
    p, cov = optimize.curve_fit(_exp_model, xv, yv, p0=[a0, b0, c0], maxfev=20000)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    return CurveFit("exponential", dict(zip("abc", p)), dict(zip("abc", se)), cov, xv, yv, _exp_model)


def fit_power_law(x: Any, y: Any) -> CurveFit:
    """Fit ``E_agg = c x^p`` (Lifelong Benchmarks Key Result 2: p = -0.18 / -0.23), least squares on the original
    scale started from the log-log regression."""
    xv, yv = _xy(x, y, 3)
    if (yv <= 0).any():
        raise ValueError("y: a power law needs positive values")
    lr = stats.linregress(np.log(xv), np.log(yv))
    p, cov = optimize.curve_fit(_pow_model, xv, yv, p0=[np.exp(lr.intercept), lr.slope], maxfev=20000)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    return CurveFit("power", dict(zip("cp", p)), dict(zip("cp", se)), cov, xv, yv, _pow_model)


# ---------------------------------------------------------------------------------------------- correlations
@dataclass(frozen=True)
class CorrelationResult:
    """Spearman and Pearson correlation between estimated and true accuracies (scipy.stats), with intervals.

    Intervals are Fisher-z intervals: ``tanh(atanh(r) ± z se)`` with ``se = 1 / sqrt(n - 3)`` for Pearson and
    Bonett & Wright's ``se = sqrt((1 + r² / 2) / (n - 3))`` for Spearman; they need ``n >= 4`` models (NaN below).

    References
    ----------
    Fisher, R. A. (1921). On the "probable error" of a coefficient of correlation deduced from a small sample.
    *Metron* 1, 3-32.
    Bonett, D. G. and Wright, T. A. (2000). Sample size requirements for estimating Pearson, Kendall and Spearman
    correlations. *Psychometrika* 65(1), 23-28.
    """

    spearman: float
    spearman_pvalue: float
    pearson: float
    pearson_pvalue: float
    n: int

    def _z_se(self, method: str) -> tuple[float, float]:
        method = check_option(method, "method", ("pearson", "spearman"))
        r = self.pearson if method == "pearson" else self.spearman
        if self.n < 4:
            return r, float("nan")
        se = 1.0 / np.sqrt(self.n - 3) if method == "pearson" else np.sqrt((1 + r**2 / 2) / (self.n - 3))
        return r, float(se)

    @property
    def statistic(self) -> float:
        """The Pearson correlation (the result protocol's estimate; Spearman is ``spearman``)."""
        return self.pearson

    @property
    def pvalue(self) -> float:
        """p-value of the Pearson correlation (the one ``statistic`` reports), scipy's name."""
        return self.pearson_pvalue

    @property
    def standard_error(self) -> float:
        """Standard error of ``atanh(pearson)``, ``1 / sqrt(n - 3)`` (the Fisher-z scale the interval is built on)."""
        return self._z_se("pearson")[1]

    def confidence_interval(self, confidence_level: float = 0.95, method: str = "pearson") -> ConfidenceInterval:
        """Fisher-z interval for the ``method`` ("pearson" or "spearman") correlation."""
        level = check_confidence_level(confidence_level)
        r, se = self._z_se(method)
        if not np.isfinite(se):
            return ConfidenceInterval(float("nan"), float("nan"))
        z = stats.norm.ppf(0.5 + level / 2) * se
        zr = np.arctanh(np.clip(r, -1 + 1e-15, 1 - 1e-15))
        return ConfidenceInterval(float(np.tanh(zr - z)), float(np.tanh(zr + z)))

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row per correlation: ``statistic``, ``pvalue``, ``low``, ``high`` (Fisher-z interval), ``n``."""
        cis = [self.confidence_interval(confidence_level, m) for m in ("spearman", "pearson")]
        return pd.DataFrame({"statistic": [self.spearman, self.pearson], "pvalue": [self.spearman_pvalue, self.pearson_pvalue],
                             "low": [c.low for c in cis], "high": [c.high for c in cis], "n": self.n},
                            index=pd.Index(["spearman", "pearson"], name="method"))


def accuracy_correlation(estimated: Any, true: Any) -> CorrelationResult:
    """Rank (Spearman, App. F) and linear (Pearson) correlation of estimated vs true accuracies, arrays (n_models,).

    Two pandas Series are aligned by their index (model ids; a mismatch raises ValueError); arrays are positional.
    """
    if isinstance(estimated, pd.Series) and isinstance(true, pd.Series) and not estimated.index.equals(true.index):
        ie, it = estimated.index, true.index
        if ie.has_duplicates or it.has_duplicates or len(ie.difference(it)) or len(it.difference(ie)):
            raise ValueError(f"true: its index (model ids) must hold the ids of estimated, in any order; missing "
                             f"{_list(ie.difference(it, sort=False))}, unexpected {_list(it.difference(ie, sort=False))}")
        true = true.reindex(ie)
    e = check_array(estimated, "estimated", ndim=1)
    t = check_array(true, "true", ndim=1, shape=(len(e),))
    if len(e) < 3:
        raise ValueError(f"estimated: need at least 3 models, got {len(e)}")
    if np.ptp(e) == 0 or np.ptp(t) == 0:
        raise ValueError("estimated: correlation is undefined when either vector is constant")
    s = stats.spearmanr(e, t)
    p = stats.pearsonr(e, t)
    return CorrelationResult(float(s[0]), float(s[1]), float(p[0]), float(p[1]), len(e))


def model_correlation_matrix(responses: Any, *, sort_by_accuracy: bool = True) -> pd.DataFrame:
    """Correlation between models' per-item correctness (App. E, Fig. 7), models sorted by accuracy (best first).

    For binary vectors Spearman's rho equals Pearson's r (ranks of 0/1 data are an affine map of it), so one
    ``np.corrcoef`` gives the paper's Spearman matrix.

    Parameters
    ----------
    responses : bool array (n_models, n_items) or ResponseMatrix

    Returns
    -------
    DataFrame (n_models, n_models) indexed by model id (positions for arrays).
    """
    ids = responses.model_ids if isinstance(responses, ResponseMatrix) else None
    a = responses.require_binary("responses") if isinstance(responses, ResponseMatrix) else check_binary(responses, "responses", ndim=2)
    if a.shape[0] < 2:
        raise ValueError("responses: need at least 2 models")
    const = a.all(axis=1) | ~a.any(axis=1)
    if const.any():
        raise ValueError(f"responses: models {np.flatnonzero(const)[:5].tolist()} are constant; their correlation is undefined")
    ids = pd.Index(np.arange(a.shape[0])) if ids is None else ids
    idx = np.argsort(-a.mean(axis=1), kind="stable") if sort_by_accuracy else np.arange(a.shape[0])
    c = np.corrcoef(a[idx].astype(np.float32))
    return pd.DataFrame(c, index=ids[idx], columns=ids[idx])
