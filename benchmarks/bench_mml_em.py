"""One EM iteration of IRT2PL's 1-D marginal-ML fit on 50 models x 10,000 items (ImageNet val, the first 50 models
and items; the package's 2PL simulator where the predictions are not available): the package's step (each cell's
logistic terms from one exp(-|z|), work arrays allocated once per fit) against the direct formulation (np.logaddexp
for log(1 - p), a sigmoid for p at each of the two Newton steps, fresh temporaries), timed alternately in one run,
with the largest difference of their results. Then the step over the distinct columns each counted as often as it
occurs (as the fit runs it where they are at most three quarters of the items) against the step over every item, and
a whole 1-D fit for its iterations and time.

With ``--protocol cifar10`` or ``--protocol imagenet``: one split of disco.ipynb's one protocol instead
(``compare_methods`` on CIFAR-10's 30 models or ImageNet's 67 on the first 10,000 items, a quarter of the models as
targets, every default candidate with the 1-D IRT one at ``n_init=1``, 100 items, seed 0, one process), under
cProfile: its CPU seconds, the IRT fits' EM iterations and the profile's top entries.

    .venv/bin/python benchmarks/bench_mml_em.py [--repeats N] [--protocol {cifar10,imagenet}] [--split S]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import time
import warnings

import numpy as np
from scipy.special import expit

from effstats.datasets.simulate import simulate_responses
from effstats.irt import IRT2PL
from effstats.irt._model import _distinct_columns, _MMLStep, _svd_start


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


def cpu_ms(fns: dict, repeats: int) -> dict:
    """Median CPU ms of each callable, timed alternately so that the machine's load falls on all alike."""
    times = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t = time.process_time()
            fn()
            times[name].append(time.process_time() - t)
    return {k: 1e3 * float(np.median(v)) for k, v in times.items()}


def steps(repeats: int) -> None:
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
    med = cpu_ms({"direct": lambda: direct_em(par, Y, x, logw, la, lb), "package": lambda: step(par)}, repeats)
    print(f"one EM iteration on {what} {Y.shape[0]} x {Y.shape[1]:,} (31 nodes), median CPU ms of {repeats}: "
          f"direct {med['direct']:.1f}, package {med['package']:.1f}, ratio {med['direct'] / med['package']:.2f}")
    print(f"largest difference: parameters {np.abs(p_fast - p_direct).max():.1e}, loss {abs(f_fast - f_direct):.1e}")
    t = time.process_time()
    first, inverse, count = _distinct_columns(Y)
    t_distinct = time.process_time() - t
    if count is not None:
        counted = _MMLStep(Y[:, first], None, x, logw, la, lb, count)
        par_d = np.concatenate([a0[first, 0], b0[first]])
        (p_d, f_d), n = counted(par_d), len(first)
        med = cpu_ms({"every item": lambda: step(par), "distinct": lambda: counted(par_d)}, repeats)
        print(f"over the {n:,} distinct columns, counted (found in {1e3 * t_distinct:.1f} ms): every item "
              f"{med['every item']:.1f}, distinct {med['distinct']:.1f} CPU ms, ratio "
              f"{med['every item'] / med['distinct']:.2f}; largest difference: parameters "
              f"{np.abs(np.r_[p_d[:n][inverse], p_d[n:][inverse]] - p_fast).max():.1e}, loss {abs(f_d - f_fast):.1e}")
    t = time.process_time()
    irt = IRT2PL(random_state=0).fit(Y)
    print(f"IRT2PL 1-D fit: {irt.n_iter_} EM iterations, {time.process_time() - t:.2f} CPU s, "
          f"loss {irt.loss_curve_[-1]:.12f}")


def cpu_s() -> float:
    """User + system CPU seconds of this process and its finished children."""
    use = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(r.ru_utime + r.ru_stime for r in use)


def one_split(data: str, split: int, profile: bool) -> None:
    """One split of disco.ipynb's one protocol (its candidates and settings), under cProfile with ``profile``."""
    from effstats import ResponseMatrix, random_split
    from effstats.datasets.predictions import load_cifar10_predictions, load_imagenet_predictions
    from effstats.disco import compare_methods, default_candidates

    if data == "cifar10":
        rm = load_cifar10_predictions(domains=["cifar10"])
    else:  # the notebook's top-1 class ids as predictions
        val = load_imagenet_predictions(domains=["imagenet_val"], top5=True)
        top1 = val.predictions[..., 0] if val.predictions.ndim == 3 else val.predictions
        rm = ResponseMatrix(val.values, predictions=top1, labels=val.labels, model_ids=val.model_ids,
                            item_ids=val.item_ids)
    rm = rm.subset(items=np.arange(min(10_000, rm.n_items)))
    first = _distinct_columns(rm.values)[0]
    print(f"{data}: {rm.n_models} models x {rm.n_items:,} items, "
          f"{rm.n_items if first is None else len(first):,} distinct columns")
    cand = default_candidates(100, binary=True, irt=True)
    cand["anchor-corr + gp-IRT"].set_params(n_init=1)
    splits = {f"split{split}": random_split(rm, round(0.25 * rm.n_models), rng=split)}
    iters, fit = [], IRT2PL.fit

    def counting(self, *args, **kw):
        out = fit(self, *args, **kw)
        iters.append(self.n_iter_)
        return out

    IRT2PL.fit = counting
    prof = cProfile.Profile() if profile else None
    t = cpu_s()
    if prof:
        prof.enable()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # targets outside the sources' range, said by every run alike
        compare_methods(rm, splits, cand, n_items=100, seeds=[0], confidence_level=0.9, return_predictions=True,
                        n_jobs=1)
    if prof:
        prof.disable()
    t = cpu_s() - t
    IRT2PL.fit = fit
    how = " under cProfile" if prof else ""
    print(f"one split (split {split}): {t:.2f} CPU s{how} (user + sys, with the child processes), {len(iters)} IRT "
          f"fits, {sum(iters)} EM iterations")
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30, help="timed iterations of each formulation (default 30)")
    ap.add_argument("--protocol", choices=("cifar10", "imagenet"), help="profile one split of the one protocol")
    ap.add_argument("--split", type=int, default=0, help="the split's seed with --protocol (default 0)")
    ap.add_argument("--no-profile", action="store_true", help="time the split without cProfile")
    args = ap.parse_args()
    if args.protocol:
        one_split(args.protocol, args.split, not args.no_profile)
    else:
        steps(args.repeats)


if __name__ == "__main__":
    main()
