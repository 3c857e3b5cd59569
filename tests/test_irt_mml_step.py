"""The 1-D marginal-ML EM iteration of IRT2PL (``_MMLStep``, each cell's logistic terms from one exp(-|z|), work
arrays reused in place) against the iteration written out directly with scipy's expit, logsumexp and np.logaddexp,
and per-item 2 x 2 Newton solves, on small inputs with and without missing cells."""
import numpy as np
import pytest
from scipy.special import expit, logsumexp

from effstats.irt._model import _logistic_parts, _MMLStep


def test_logistic_parts_match_expit_and_logaddexp():
    z = np.concatenate([np.linspace(-40, 40, 801), [-745.0, -700.0, -1e-300, -0.0, 0.0, 1e-300, 700.0, 745.0]])
    z = np.stack([z, -z])  # 2-D, as the fit's (nodes, items) logits
    e, r, p = (np.full_like(z, np.nan) for _ in range(3))
    _logistic_parts(z, e, r, p)
    np.testing.assert_allclose(e, np.exp(-np.abs(z)), rtol=1e-15, atol=0)
    np.testing.assert_allclose(p, expit(z), rtol=1e-13, atol=1e-320)  # expit(-745) underflows to 0, e r does not
    np.testing.assert_allclose(e * r * r, expit(z) * expit(-z), rtol=1e-12, atol=1e-320)  # p (1 - p)
    log1mp = -(np.maximum(z, 0.0) + np.log1p(e))
    np.testing.assert_allclose(log1mp, -np.logaddexp(0.0, z), rtol=0, atol=1e-10)
    np.testing.assert_allclose(log1mp + z, -np.logaddexp(0.0, -z), rtol=0, atol=1e-10)  # log p


def direct_step(par, Y, W, x, logw, la, lb):
    """One EM iteration as written in the model: the E-step's posterior over the nodes from log p and log(1 - p)
    of every observed cell, the loss at par, then two Newton steps of each item's MAP logistic regression on the
    expected counts (a 2 x 2 solve per item, each step capped at 1 logit unit)."""
    m, n = Y.shape
    W = np.ones_like(Y) if W is None else W
    a, b = par[:n], par[n:]
    z = x[:, None] * a - b
    ll = (Y * W) @ -np.logaddexp(0.0, -z).T + ((1 - Y) * W) @ -np.logaddexp(0.0, z).T + logw
    norm = logsumexp(ll, axis=1)
    post = np.exp(ll - norm[:, None])
    loss = -(norm.sum() - 0.5 * (la * a @ a + lb * b @ b)) / (m * n)
    nq, rq = post.T @ W, post.T @ (Y * W)  # expected (node, item) counts and correct ones
    for _ in range(2):
        p = expit(x[:, None] * a - b)
        res, w = rq - nq * p, nq * p * (1 - p)
        g = np.stack([x @ res - la * a, -res.sum(0) - lb * b], axis=1)
        H = np.empty((n, 2, 2))
        H[:, 0, 0], H[:, 0, 1], H[:, 1, 1] = -(x**2) @ w - la, x @ w, -w.sum(0) - lb
        H[:, 1, 0] = H[:, 0, 1]
        step = np.clip(np.linalg.solve(H, g[..., None])[..., 0], -1.0, 1.0)
        a, b = a - step[:, 0], b - step[:, 1]
    return np.concatenate([a, b]), loss


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mml_step_matches_the_direct_iteration(missing, seed):
    rng = np.random.default_rng(seed)
    m, n = 9, 14
    th, a, b = rng.normal(size=m), np.exp(rng.normal(0, 0.5, n)), rng.normal(0, 2.5, n)
    Y = (rng.random((m, n)) < expit(th[:, None] * a - b)).astype(float)
    W = None
    if missing:
        W = (rng.random((m, n)) > 0.2).astype(float)
        W[:, 0] = 1.0
        Y *= W  # the fit's Y holds 0 at missing cells
    x, wq = np.polynomial.hermite_e.hermegauss(31)
    logw = np.log(wq / wq.sum())
    la, lb = 1 / 2.0**2, 1 / 3.0**2
    # a start with saturated cells (|z| up to ~60) beside moderate ones
    par = np.concatenate([np.abs(rng.normal(1, 1, n)) * 3, rng.normal(0, 6, n)])
    step = _MMLStep(Y, W, x, logw, la, lb)
    for _ in range(4):  # the same object, its work arrays reused, along a few iterations
        got, loss = step(par)
        want, want_loss = direct_step(par, Y, W, x, logw, la, lb)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
        assert loss == pytest.approx(want_loss, rel=0, abs=1e-10)
        par = got


@pytest.mark.parametrize("missing", [False, True])
def test_mml_step_on_distinct_columns_counted_is_the_step_on_every_item(missing):
    # 12 distinct columns, each repeated 1-4 times: the step over the distinct ones with their counts gives each
    # item the parameters, and the loss, of the step over every item
    rng = np.random.default_rng(7)
    m, k = 11, 12
    Yd = (rng.random((m, k)) < 0.6).astype(float)
    Wd = None
    if missing:
        Wd = (rng.random((m, k)) > 0.2).astype(float)
        Wd[:, 0] = 1.0
        Yd *= Wd
    count = rng.integers(1, 5, k).astype(float)
    idx = np.repeat(np.arange(k), count.astype(int))
    x, wq = np.polynomial.hermite_e.hermegauss(31)
    logw = np.log(wq / wq.sum())
    la, lb = 1 / 2.0**2, 1 / 3.0**2
    a, b = np.abs(rng.normal(1, 1, k)) * 3, rng.normal(0, 6, k)
    counted = _MMLStep(Yd, Wd, x, logw, la, lb, count)
    every = _MMLStep(Yd[:, idx], None if Wd is None else Wd[:, idx], x, logw, la, lb)
    par = np.concatenate([a, b])
    for _ in range(4):
        got, loss = counted(par)
        want, want_loss = every(np.concatenate([par[:k][idx], par[k:][idx]]))
        np.testing.assert_allclose(np.concatenate([got[:k][idx], got[k:][idx]]), want, rtol=0, atol=1e-12)
        assert loss == pytest.approx(want_loss, rel=1e-13, abs=0)
        par = got
