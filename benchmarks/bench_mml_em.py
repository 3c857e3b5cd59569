"""One EM iteration of IRT2PL's 1-D marginal-ML fit on 50 models x 10,000 items (ImageNet val, the first 50 models
and items; the package's 2PL simulator where the predictions are not available): the package's step (each cell's
logistic terms from one exp(-|z|), work arrays allocated once per fit) against the direct formulation (np.logaddexp
for log(1 - p), a sigmoid for p at each of the two Newton steps, fresh temporaries), timed alternately in one run,
with the largest difference of their results. Then a whole 1-D fit for its iterations and time.

    .venv/bin/python benchmarks/bench_mml_em.py [--repeats N]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import expit

from effstats.datasets.simulate import simulate_responses
from effstats.irt import IRT2PL
from effstats.irt._model import _MMLStep, _svd_start


def direct_em(par, Y, x, logw, la, lb):
    """The EM iteration written out (complete responses): the loss at par and the parameters after it."""
    m, n = Y.shape
    a, b = par[:n], par[n:]
    z = x[:, None] * a - b
    ll = Y @ z.T + (-np.logaddexp(0.0, z)).sum(1) + logw
    norm = np.logaddexp.reduce(ll, axis=1, keepdims=True)
    post = np.exp(ll - norm)
    f = -(norm.sum() - 0.5 * (la * (a**2).sum() + lb * (b**2).sum())) / (m * n)
    nq, rq = post.sum(0)[:, None], post.T @ Y
    for _ in range(2):
        p = expit(z)
        e = rq - nq * p
        w = nq * p * (1 - p)
        ga, gb = x @ e - la * a, -e.sum(0) - lb * b
        haa, hab, hbb = -(x**2) @ w - la, x @ w, -w.sum(0) - lb
        det = haa * hbb - hab**2
        a = a - np.clip((hbb * ga - hab * gb) / det, -1.0, 1.0)
        b = b - np.clip((haa * gb - hab * ga) / det, -1.0, 1.0)
        z = x[:, None] * a - b
    return np.concatenate([a, b]), f


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30, help="timed iterations of each formulation (default 30)")
    args = ap.parse_args()
    try:
        from effstats.datasets.predictions import load_imagenet_predictions

        Y, what = load_imagenet_predictions().values[:50, :10000].astype(float), "ImageNet val"
    except Exception as e:  # data not available here
        print(f"(ImageNet predictions not available: {e}; simulated responses)")
        Y, what = simulate_responses(50, 10000, rng=0).values.astype(float), "simulated 2PL"
    x, wq = np.polynomial.hermite_e.hermegauss(31)
    logw = np.log(wq / wq.sum())
    la, lb = 1 / 2.0**2, 1 / 3.0**2
    _, a0, b0 = _svd_start(Y, 1, np.random.default_rng(0), None)
    par = np.concatenate([a0[:, 0], b0])
    step = _MMLStep(Y, None, x, logw, la, lb)
    (p_fast, f_fast), (p_direct, f_direct) = step(par), direct_em(par, Y, x, logw, la, lb)
    times = {"direct": [], "package": []}
    for _ in range(args.repeats):  # alternately, so that the machine's load falls on both alike
        for name, fn in (("direct", lambda: direct_em(par, Y, x, logw, la, lb)), ("package", lambda: step(par))):
            t = time.process_time()
            fn()
            times[name].append(time.process_time() - t)
    med = {k: 1e3 * float(np.median(v)) for k, v in times.items()}
    print(f"one EM iteration on {what} {Y.shape[0]} x {Y.shape[1]:,} (31 nodes), median CPU ms of {args.repeats}: "
          f"direct {med['direct']:.1f}, package {med['package']:.1f}, ratio {med['direct'] / med['package']:.2f}")
    print(f"largest difference: parameters {np.abs(p_fast - p_direct).max():.1e}, loss {abs(f_fast - f_direct):.1e}")
    t = time.process_time()
    irt = IRT2PL(random_state=0).fit(Y)
    print(f"IRT2PL 1-D fit: {irt.n_iter_} EM iterations, {time.process_time() - t:.2f} CPU s, "
          f"loss {irt.loss_curve_[-1]:.12f}")


if __name__ == "__main__":
    main()
