"""Penalised logistic regressions of many response vectors on the same item features, by Newton's method.

:class:`effstats.disco.StratifiedAIPW` and :class:`effstats.disco.AIPW`'s difficulty regressor fit a logistic
model of every target model's responses in every cross-fitting fold, on the tens of items of a fold: thousands of
fits of a few parameters in a notebook, which one scikit-learn ``LogisticRegression`` fit each spends in the
solver's set-up rather than in arithmetic. Here the fits of one fold are solved together: an iteration is a few
passes over a (targets × items) array and one batch of p × p solves, and Newton's quadratic convergence takes every
fit to the minimum itself (its last step below ``tol``), where L-BFGS stops at its gradient tolerance.
"""
from __future__ import annotations

import numpy as np
from scipy import special


def penalised_logit(Xa: np.ndarray, Y: np.ndarray, lam: np.ndarray, beta: np.ndarray, n_iter: int = 50,
                    tol: float = 1e-8) -> np.ndarray:
    """Coefficients maximising each row's penalised quasi-log-likelihood
    ``sum_i [y_i eta_i - log(1 + exp(eta_i))] - sum_k lam_k beta_k^2 / 2``, ``eta = Xa beta``.

    Newton's method from ``beta`` for all rows at once, each row's step halved until its objective does not fall
    (a full step can cycle on nearly collinear features; a row whose step no halving improves keeps its
    coefficients), until no coefficient moves by ``tol`` or after ``n_iter`` steps.

    Parameters
    ----------
    Xa : array of shape (n, p)
        The items' features, with a column of ones for an intercept.
    Y : array of shape (T, n)
        Responses in [0, 1], one row per fit.
    lam : array of shape (p,)
        The penalty of each coefficient (0: none; then the rows need both response values for a finite fit).
    beta : array of shape (T, p)
        Starting coefficients.
    n_iter : int, default=50
        Newton steps at most.
    tol : float, default=1e-8
        The fits stop after a step that moves no coefficient of any row by ``tol`` or more.

    Returns
    -------
    array of shape (T, p)
        The coefficients (a new array).
    """
    beta = np.array(beta, dtype=float)
    T = Y.shape[0]

    def objective(b: np.ndarray) -> np.ndarray:  # penalised quasi-log-likelihood per target
        eta = b @ Xa.T
        return (Y * eta - np.logaddexp(0.0, eta)).sum(axis=1) - 0.5 * (lam * b**2).sum(axis=1)

    current = objective(beta)
    for _ in range(n_iter):
        mu = special.expit(beta @ Xa.T)  # (T, n)
        grad = (Y - mu) @ Xa - lam * beta  # (T, p)
        hess = np.einsum("tn,np,nq->tpq", mu * (1 - mu), Xa, Xa) + np.diag(lam)
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        t = np.ones(T)
        for _ in range(30):
            trial = objective(beta + t[:, None] * step)
            worse = trial < current - 1e-12 * np.abs(current)
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
        t = np.where(worse, 0.0, t)
        beta += t[:, None] * step
        # every target's trial kept: the objective at the new coefficients is the last trial's (the same sum of
        # the same numbers)
        current = objective(beta) if worse.any() else trial
        if np.abs(t[:, None] * step).max() < tol:
            break
    return beta


def logistic_one_feature(x: np.ndarray, Y: np.ndarray, C: float,
                         fit_intercept: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Intercepts and slopes of the L2-penalised logistic regressions of every row of ``Y`` on one feature ``x``.

    Each row ``y`` gets the minimiser of ``sum_i [log(1 + exp(a + b x_i)) - y_i (a + b x_i)] + b^2 / (2C)``, the
    objective of scikit-learn's ``LogisticRegression(C=C)`` (L2 penalty, the intercept unpenalised; without one,
    ``a = 0``), to convergence: :func:`penalised_logit` from ``a`` at the logit of the row's mean, ``b = 0``, until
    no step moves a parameter by 1e-10. The objective is strictly convex in ``(a, b)`` (the penalty bounds ``b``
    on separable responses, and ``a`` is finite when a row holds both values), so this is its one minimum.

    Parameters
    ----------
    x : array of shape (n,)
        The feature of the n items (finite).
    Y : array of shape (T, n)
        0/1 responses, one row per fit, each with both values (a row of one value has no finite minimum with an
        intercept: its fit is the constant).
    C : float
        Inverse strength of the penalty on the slope (> 0).
    fit_intercept : bool, default=True
        Whether ``a`` is fitted (else 0).

    Returns
    -------
    a, b : arrays of shape (T,)
        Intercepts (zeros without ``fit_intercept``) and slopes.

    See Also
    --------
    effstats.disco.difficulty_regressor : the pipeline whose logistic regressions these are.
    sklearn.linear_model.LogisticRegression : the same objective, solved one row at a time to a tolerance.

    References
    ----------
    Hastie, T., Tibshirani, R. & Friedman, J. (2009). *The Elements of Statistical Learning*, 2nd ed., Springer,
    Sect. 4.4.1 (Newton-Raphson for logistic regression).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> x = np.linspace(-2, 2, 9)
    >>> Y = np.array([[0, 0, 1, 0, 1, 0, 1, 1, 1], [1, 1, 1, 0, 1, 1, 0, 0, 0]], float)
    >>> a, b = logistic_one_feature(x, Y, C=100.0)
    >>> sk = LogisticRegression(C=100.0, solver="newton-cholesky", tol=1e-12).fit(x[:, None], Y[0])
    >>> bool(np.allclose([a[0], b[0]], [sk.intercept_[0], sk.coef_[0, 0]], rtol=0, atol=1e-10))
    True
    >>> bool(b[1] < 0 < b[0])
    True
    """
    x = np.asarray(x, dtype=float)
    Y = np.asarray(Y, dtype=float)
    inv_c = 1.0 / float(C)
    if fit_intercept:
        Xa, lam = np.column_stack([np.ones(len(x)), x]), np.array([0.0, inv_c])
        start = np.column_stack([special.logit(Y.mean(axis=1)), np.zeros(len(Y))])
    else:
        Xa, lam, start = x[:, None], np.array([inv_c]), np.zeros((len(Y), 1))
    beta = penalised_logit(Xa, Y, lam, start, n_iter=100, tol=1e-10)
    return (beta[:, 0], beta[:, 1]) if fit_intercept else (np.zeros(len(Y)), beta[:, 0])
