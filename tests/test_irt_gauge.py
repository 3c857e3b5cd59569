"""The joint fit's gauge step (effstats.irt._gauge): it keeps every logit, gives the lowest penalty over the
logits' invariant transforms (checked against a numerical minimiser), and the fit with it reaches the optimum the
plain alternating sweeps reach when both run to convergence, in fewer sweeps."""
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize

from effstats.datasets.simulate import simulate_responses
from effstats.irt import IRT2PL
from effstats.irt._gauge import gauge_step

LA, LB = 1 / 2.0**2, 1 / 3.0**2  # IRT2PL's default priors: sd 2 on a, 3 on b


def penalty(th, a, b, count):
    return (th**2).sum() + LA * (count @ a**2).sum() + LB * (count @ b**2)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_gauge_step_keeps_the_logits_and_minimises_the_penalty(d):
    rng = np.random.default_rng(d)
    m, n = 12, 40
    th = rng.normal(size=(m, d)) * rng.uniform(0.3, 3, d) + rng.normal(size=d)
    a, b = rng.normal(size=(n, d)) * 0.7, rng.normal(size=n)
    count = rng.integers(1, 4, n).astype(float)
    g, h = rng.normal(size=(m, d)), rng.normal(size=(m, d * d))
    g0, h0, logits = g.copy(), h.copy(), th @ a.T - b
    a1, b1 = a.copy(), b.copy()
    th1 = gauge_step(th, a1, b1, count, LA, LB, g, h)
    np.testing.assert_allclose(th1 @ a1.T - b1, logits, rtol=0, atol=1e-12)
    # the ability step's sums at the new point: g = Σ r a, h = Σ v a aᵀ with a -> a B, where a1 = a B
    B = np.linalg.lstsq(a, a1, rcond=None)[0]
    np.testing.assert_allclose(g, g0 @ B, atol=1e-12)
    np.testing.assert_allclose(h.reshape(m, d, d), B.T @ h0.reshape(m, d, d) @ B, atol=1e-12)

    def transformed(x):  # the penalty after θ A + 1 cᵀ, a A⁻ᵀ, b + a A⁻ᵀ c
        A, c = x[: d * d].reshape(d, d), x[d * d:]
        aa = a @ np.linalg.inv(A).T
        return penalty(th @ A + c, aa, b + aa @ c, count)

    best = min((minimize(transformed, np.r_[np.eye(d).ravel() * s, np.zeros(d)], method="BFGS", tol=1e-12)
                for s in (1.0, 0.5, 2.0)), key=lambda r: r.fun)
    assert penalty(th1, a1, b1, count) <= best.fun * (1 + 1e-7)
    assert penalty(th1, a1, b1, count) < penalty(th, a, b, count)


@pytest.mark.filterwarnings("ignore:responses.*cells are missing")
@pytest.mark.parametrize("case", ["d=2", "d=3 missing", "d=2 repeated items"])
def test_the_fit_with_the_gauge_step_reaches_the_plain_sweeps_optimum(case):
    rng = np.random.default_rng(5)
    d = 3 if "d=3" in case else 2
    Y = simulate_responses(50, 600, n_dims=d, rng=7).values.astype(float)
    if "missing" in case:
        Y[rng.random(Y.shape) < 0.1] = np.nan
    if "repeated" in case:  # counted distinct columns: each repeated item's terms counted as often as it occurs
        Y = Y[:, rng.integers(0, 600, 900)]

    def fit(gauge, tol):
        irt = IRT2PL(d, method="jml", n_jobs=1, tol=tol, max_iter=20_000)
        irt._gauge = gauge
        with warnings.catch_warnings():
            warnings.simplefilter("error", category=RuntimeWarning)
            return irt.fit(Y)

    slow, fast = fit(False, 1e-13), fit(True, 1e-13)
    assert slow.converged_ and fast.converged_
    assert fast.n_iter_ < slow.n_iter_ / 2
    # the same optimum: objective and probabilities, where the plain sweeps' own end point moves by more than
    # this between tol=1e-6 and tol=1e-13
    assert abs(fast.loss_curve_[-1] - slow.loss_curve_[-1]) < 1e-10
    assert np.abs(fast.predict_proba() - slow.predict_proba()).max() < 1e-3
    # at the default tol, the gauge fit stops no farther from that optimum than the plain sweeps do, in fewer sweeps
    plain, quick = fit(False, 1e-6), fit(True, 1e-6)
    assert quick.n_iter_ < plain.n_iter_
    opt = slow.loss_curve_[-1]
    assert quick.loss_curve_[-1] - opt <= plain.loss_curve_[-1] - opt
    assert quick.loss_curve_[-1] - opt < 1e-5 * opt
