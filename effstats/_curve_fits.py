"""Curve fits of accuracy against budget or time: exponential approach to a plateau and a power law, each with its
parameters' standard errors (:func:`scipy.optimize.curve_fit`). Public path: :mod:`effstats.metrics`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ._results import ConfidenceInterval, check_confidence_level
from ._validation import check_array

@dataclass(frozen=True)
class CurveFit:
    """A least-squares curve fit (:func:`scipy.optimize.curve_fit`) with parameter uncertainties.

    Returned by :func:`effstats.metrics.fit_exponential` and :func:`effstats.metrics.fit_power_law`.

    Attributes
    ----------
    model : {"exponential", "power"}
        ``"exponential"`` (``a exp(-b x) + c``) or ``"power"`` (``c x^p``).
    params : dict of str to float
        Parameter name to estimate.
    stderr : dict of str to float
        Parameter name to standard error (square root of the covariance diagonal).
    covariance : ndarray of shape (n_params, n_params)
    x, y : ndarray of shape (n_points,)
        The data fitted.

    See Also
    --------
    effstats.metrics.fit_exponential, effstats.metrics.fit_power_law

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.metrics import fit_power_law
    >>> x = np.array([10, 20, 40, 80, 160])
    >>> fit = fit_power_law(x, 0.5 * x ** -0.2 * np.array([1.01, 0.99, 1.0, 1.02, 0.98]))
    >>> fit.to_frame().round(2)
       estimate  stderr   low  high
    c      0.51    0.01  0.47  0.55
    p     -0.20    0.01 -0.23 -0.18
    >>> round(fit.predict(50), 3)
    0.228
    """

    model: str
    params: dict
    stderr: dict
    covariance: np.ndarray = field(repr=False)
    x: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    _f: Callable = field(repr=False)

    def predict(self, x: Any) -> np.ndarray:
        """The fitted curve at budgets ``x``.

        Parameters
        ----------
        x : float or array-like of shape (n,)
            Finite budgets.

        Returns
        -------
        float or ndarray of shape (n,)
        """
        xv = check_array(x, "x", ndim=(0, 1))
        if not np.isfinite(xv).all():
            raise ValueError("x: expected finite budgets, got inf")
        out = self._f(xv, *self.params.values())
        return float(out) if xv.ndim == 0 else out

    @property
    def r_squared(self) -> float:
        """The coefficient of determination of the fit on its own data (NaN for constant ``y``)."""
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

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high`` arrays of shape (n_params,) in the order of ``params`` (see
            :meth:`effstats.metrics.CurveFit.to_frame` for a table).
        """
        level = check_confidence_level(confidence_level)
        dof = max(1, len(self.x) - len(self.params))
        q = stats.t.ppf(0.5 + level / 2, dof)
        est, se = self.statistic, self.standard_error
        return ConfidenceInterval(est - q * se, est + q * se)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row per parameter: ``estimate``, ``stderr``, ``low``, ``high`` (the Wald interval).

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95

        Returns
        -------
        DataFrame of shape (n_params, 4)
        """
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
    """Fit an exponential decay to a plateau (Notes): the error of a sample-level prediction against the budget.

    Prabhu et al. fit this law to Sort & Search's MAE against the number of evaluated items ``n'`` (they report
    ``b = 0.04`` on Lifelong-CIFAR10 and ``0.02`` on Lifelong-ImageNet). Least squares on the original scale,
    started from ``c`` = the smallest ``y`` and ``b`` from a log-linear fit of ``y - c``.

    Parameters
    ----------
    x : array-like of shape (n_points,)
        Positive budgets; at least 4 points.
    y : array-like of shape (n_points,)
        Errors at those budgets.

    Returns
    -------
    CurveFit
        ``params`` ``a``, ``b``, ``c``.

    See Also
    --------
    effstats.metrics.fit_power_law : the law of ``E_agg``.
    effstats.metrics.CurveFit : the result.

    Notes
    -----
    The model, with :math:`x` the budget:

    .. math::

        E(x) = a\\, e^{-b x} + c .

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.metrics import fit_exponential
    >>> x = np.array([10, 20, 40, 80, 160])
    >>> fit = fit_exponential(x, 0.3 * np.exp(-0.04 * x) + 0.05)
    >>> {k: round(float(v), 3) for k, v in fit.params.items()}
    {'a': 0.3, 'b': 0.04, 'c': 0.05}
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
    """Fit a power law (Notes): the aggregate error against the budget.

    Prabhu et al. (Key Result 2 of the Lifelong Benchmarks version) find :math:`p = -0.18` and :math:`-0.23`. Least
    squares on the original scale, started from the log-log regression.

    Parameters
    ----------
    x : array-like of shape (n_points,)
        Positive budgets; at least 3 points.
    y : array-like of shape (n_points,)
        Positive errors at those budgets.

    Returns
    -------
    CurveFit
        ``params`` ``c``, ``p``.

    See Also
    --------
    effstats.metrics.fit_exponential : the law of the sample-level error.
    effstats.metrics.CurveFit : the result.

    Notes
    -----
    The model, with :math:`x` the budget:

    .. math::

        E_{\\mathrm{agg}}(x) = c\\, x^{p} .

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.metrics import fit_power_law
    >>> x = np.array([10, 20, 40, 80, 160])
    >>> fit = fit_power_law(x, 0.5 * x ** -0.2)
    >>> {k: round(float(v), 3) for k, v in fit.params.items()}
    {'c': 0.5, 'p': -0.2}
    """
    xv, yv = _xy(x, y, 3)
    if (yv <= 0).any():
        raise ValueError("y: a power law needs positive values")
    lr = stats.linregress(np.log(xv), np.log(yv))
    p, cov = optimize.curve_fit(_pow_model, xv, yv, p0=[np.exp(lr.intercept), lr.slope], maxfev=20000)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    return CurveFit("power", dict(zip("cp", p)), dict(zip("cp", se)), cov, xv, yv, _pow_model)
