"""The prediction-powered (logistic) correction of :class:`effstats.sequential.Precision`'s stratified estimate.

At every look the items evaluated so far are split into folds by their position in the random order; a penalised
logistic model of the target's response on item features from the reference models is fitted on all folds but
one and corrects, within every stratum, the held-out fold's mean by its residuals (the cross-fitted difference
estimator of :class:`effstats.disco.StratifiedAIPW`, Notes, applied to every look's stratified sample). The
variance is the stratified variance of the cross-fitted residuals, with the finite-population correction; the
interval is the Clopper-Pearson one at Korn & Graubard's effective sample size with Satterthwaite's degrees of
freedom.

The work is done on cells of items with equal features (exact for the items' distinct feature rows; above
``_MAX_CELLS`` of them, the features are quantised to quantile bins and every item takes its cell's mean
features): the fits, the strata's sums of the predictions and the residuals' sums are then ``(runs, cells)``
products whatever the number of items, and every item's prediction is its cell's, so the estimate stays exactly
design-unbiased.

References
----------
Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023). Prediction-powered inference.
*Science* 382(6671), 669-674.
Zrnic, T. & Candes, E. J. (2024). Cross-prediction-powered inference. *PNAS* 121(15), e2322083121.
Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley (Ch. 5, Sect. 5.4; Ch. 7).
Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of positive
counts estimated from survey data. *Survey Methodology* 24(2), 193-201.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from .statistics import BinomialStatistic

_MAX_CELLS = 4096  # cells of items with equal (quantised) features; the cost of a look is linear in them
_N_FOLDS = 2  # cross-fitting folds: each model is fitted on half the items, and a look costs two fits
_PENALTY = 1.0  # L2 penalty on the slopes of the standardised features (a hundredth on the intercept)
_NEWTON_FIRST = 8  # Newton steps at the first look (from the training mean's logit) and at every later one,
_NEWTON = 3  # warm-started from the previous look's coefficients (whose items are a subset of this look's)
_MAX_STEP = 4.0  # largest Newton step per coefficient: a nearly separable early fold cannot throw the fit off


class CorrectedStatistic(BinomialStatistic):
    """The corrected estimate's exact binomial statistic at its effective sample size ``n_eff`` (Korn & Graubard
    1998); ``design_estimate`` is the stratified mean it corrects.

    :attr:`effstats.sequential.LookStats.fixed_interval` centres its worst-case interval on ``design_estimate``,
    whose per-item variance is at most 1/4 whatever the predictions."""

    _fields = ("estimate", "se", "n_eff", "population", "count", "design_estimate")

    def __init__(self, estimate, se, n_eff, design_estimate):
        super().__init__(estimate, se, n_eff)
        self.design_estimate = np.asarray(design_estimate, float)


def _effective_n(est: np.ndarray, se: np.ndarray, n: float, srs: float, minority: np.ndarray, df: np.ndarray,
                 z: float) -> np.ndarray:
    """Korn & Graubard's effective sample size ``p (1 - p) / se^2 (z / t_df)^2`` at ``p`` shrunk toward 1/2 by half
    an item, with ``df`` the variance's degrees of freedom, the design effect bounded to [1/4, 2] of a simple random
    sample's ``srs`` items.

    ``minority`` is the sampled responses' smaller total, ``min(sum y, sum (1 - y))``: 0 when every response is
    alike, where the residuals' variance is 0 whatever the predictions and says nothing of them, so the effective
    size is ``srs`` (Clopper-Pearson at the items evaluated). Between 0 and one item's worth (graded scores all
    near 0 or 1) it moves linearly from ``srs`` to Korn & Graubard's, so that the interval is continuous in the
    responses: scores of 1e-9 give the interval of scores of 0, not that of the floor's four times the items. For 0/1
    responses ``minority`` is a whole number and the ramp is a switch at the first item of the minority kind."""
    p = (n * est + 0.5) / (n + 1)
    level = special.ndtr(z)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = special.stdtrit(np.maximum(df, 1.0), level)
        # a zero residual variance (graded responses fitted exactly) takes its limit, the floor of the design effect
        kish = np.where(se > 0, np.clip(p * (1 - p) / se ** 2 * (z / t) ** 2, srs / 2, 4 * srs), 4 * srs)
    w = np.clip(minority, 0.0, 1.0)
    return np.where(np.isnan(se), srs, srs + w * (kish - srs))


def _cells(features: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cell of every item (within its stratum), the cells' standardised features with an intercept column, and the
    cells' strata."""
    # scaled by each column's largest magnitude first: features near the float range (1e300) would overflow the
    # squares of the standard deviation; standardising is scale-free, so this changes nothing else
    scale = np.abs(features).max(axis=0)
    features = features / np.where(scale > 0, scale, 1.0)
    sd = features.std(axis=0)
    x = (features - features.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    key = np.column_stack([codes, x])
    _, cell = np.unique(key, axis=0, return_inverse=True)
    cell = cell.ravel()
    if cell.max() + 1 > _MAX_CELLS:
        # quantile bins per feature, as many as keep the cells (per stratum) within the cap
        n_strata = int(codes.max()) + 1
        bins = max(2, int((_MAX_CELLS / n_strata) ** (1 / x.shape[1])))
        q = np.empty(x.shape, np.int64)
        for j in range(x.shape[1]):
            edges = np.unique(np.quantile(x[:, j], np.linspace(0, 1, bins + 1)[1:-1]))
            q[:, j] = np.searchsorted(edges, x[:, j], side="right")
        _, cell = np.unique(np.column_stack([codes, q]), axis=0, return_inverse=True)
        cell = cell.ravel()
    n_cells = int(cell.max()) + 1
    count = np.bincount(cell, minlength=n_cells).astype(float)
    cx = np.stack([np.bincount(cell, x[:, j], n_cells) for j in range(x.shape[1])], axis=1) / count[:, None]
    stratum = np.zeros(n_cells, np.intp)
    stratum[cell] = codes
    return cell, np.column_stack([np.ones(n_cells), cx]), stratum


class _Looks:
    """Corrected estimates of ``n_runs`` evaluations in random orders (or the given one), look by look.

    ``run(sched, stop)`` evaluates the looks of the schedule ``sched`` (K, D) in turn and drops every run once
    ``stop(k, half_width)`` says it has stopped; the later looks of a dropped run are NaN."""

    def __init__(self, values: np.ndarray, codes: np.ndarray, sizes: np.ndarray, features: np.ndarray,
                 fpc: bool, z: float) -> None:
        self.y, self.codes, self.sizes = values, codes, sizes.astype(float)
        self.cell, self.xa, self.cell_stratum = _cells(features, codes)
        self.n_cells = self.xa.shape[0]
        self.cell_n = np.bincount(self.cell, minlength=self.n_cells).astype(float)
        self.onehot = np.eye(sizes.size)[self.cell_stratum]  # (C, D)
        p = self.xa.shape[1]
        self.outer = np.einsum("cp,cq->cpq", self.xa, self.xa).reshape(self.n_cells, p * p)
        self.lam = np.full(p, _PENALTY)
        self.lam[0] = _PENALTY / 100.0
        self.fpc, self.z = fpc, z

    def _orders(self, sched: np.ndarray, n_runs: int, rng) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per stratum: the (runs, used) responses and cells in each run's order."""
        out = []
        for d in range(self.sizes.size):
            idx = np.flatnonzero(self.codes == d)
            used = int(sched[-1, d])
            if rng is None:
                pos = np.broadcast_to(np.arange(used), (n_runs, used))
            else:
                pos = rng.permuted(np.broadcast_to(np.arange(idx.size, dtype=np.int32), (n_runs, idx.size)),
                                   axis=1)[:, :used]
            out.append((self.y[idx][pos], self.cell[idx][pos]))
        return out

    def _fit(self, beta: np.ndarray, tn: np.ndarray, ty: np.ndarray, steps: int) -> np.ndarray:
        """Penalised logistic (quasi-likelihood) fits of every run on its cells' counts ``tn`` and sums ``ty``."""
        p = self.xa.shape[1]
        eye = np.diag(self.lam)
        for _ in range(steps):
            mu = special.expit(beta @ self.xa.T)
            grad = (ty - tn * mu) @ self.xa - self.lam * beta
            hess = ((tn * mu * (1 - mu)) @ self.outer).reshape(-1, p, p) + eye
            step = np.linalg.solve(hess, grad[..., None])[..., 0]
            beta = beta + np.clip(step, -_MAX_STEP, _MAX_STEP)
        return beta

    def run(self, sched: np.ndarray, n_runs: int, rng, stop) -> CorrectedStatistic:
        K, D = sched.shape
        J, C = _N_FOLDS, self.n_cells
        orders = self._orders(sched, n_runs, rng)
        est, se, n_eff, design = (np.full((n_runs, K), np.nan) for _ in range(4))
        cnt, sy, sy2 = (np.zeros((n_runs, J, C)) for _ in range(3))
        beta = np.zeros((n_runs, J, self.xa.shape[1]))
        active = np.arange(n_runs)
        N_h = self.sizes
        for k in range(K):
            A = active.size
            if A == 0:
                break
            for d, (yd, cd) in enumerate(orders):
                a = 0 if k == 0 else int(sched[k - 1, d])
                b = int(sched[k, d])
                if b == a:
                    continue
                fold = np.arange(a, b) % J
                flat = ((active[:, None] * J + fold[None, :]) * C + cd[active, a:b]).ravel()
                yv = yd[active, a:b].ravel()
                # the new responses summed into the (run, fold, cell) entries they fall in, and those entries alone
                # updated: each sum adds the same numbers in the same order as a count over every entry would
                touched, at = np.unique(flat, return_inverse=True)
                at = at.ravel()
                for total, w in ((cnt, None), (sy, yv), (sy2, yv * yv)):
                    total.reshape(-1)[touched] += np.bincount(at, w, touched.size)
            whole = A == n_runs  # every run still going: active is 0, ..., n_runs - 1
            c_a, y_a, y2_a = (cnt, sy, sy2) if whole else (cnt[active], sy[active], sy2[active])
            tot_n, tot_y = c_a.sum(1), y_a.sum(1)
            n_h = tot_n @ self.onehot  # (A, D)
            theta = np.zeros((A, D))
            folds_h = np.zeros((A, D))
            e1 = np.zeros((A, D))
            e2 = np.zeros((A, D))
            for j in range(J):
                tn, ty = tot_n - c_a[:, j], tot_y - y_a[:, j]
                b0 = beta[active, j]
                if k == 0:
                    b0 = np.zeros_like(b0)
                    b0[:, 0] = special.logit(np.clip(ty.sum(1) / np.maximum(tn.sum(1), 1), 0.02, 0.98))
                bj = self._fit(b0, tn, ty, _NEWTON_FIRST if k == 0 else _NEWTON)
                beta[active, j] = bj
                g = special.expit(bj @ self.xa.T)  # (A, C)
                t_h = tn @ self.onehot
                s_n = c_a[:, j] @ self.onehot
                r1 = (y_a[:, j] - c_a[:, j] * g) @ self.onehot
                r2 = (y2_a[:, j] - 2 * g * y_a[:, j] + c_a[:, j] * g * g) @ self.onehot
                with np.errstate(divide="ignore", invalid="ignore"):
                    th = (ty @ self.onehot + (g * self.cell_n) @ self.onehot - (tn * g) @ self.onehot
                          + (N_h - t_h) * r1 / s_n) / N_h
                held = s_n > 0
                theta += np.where(held, th, 0.0)
                folds_h += held
                e1 += r1
                e2 += r2
            theta /= folds_h
            # residuals' within-stratum variance with one prior degree of freedom of the pooled one (as
            # StratifiedAIPW): a stratum whose sampled responses all agree does not claim no variance
            ss = np.maximum(e2 - e1 ** 2 / n_h, 0.0)
            pool = ss.sum(1, keepdims=True) / np.maximum((n_h - 1).sum(1, keepdims=True), 1.0)
            var_h = (ss + pool) / n_h
            f = np.clip(1 - n_h / N_h, 0.0, 1.0) if self.fpc else 1.0
            v_h = f * var_h / n_h / D ** 2
            v = v_h.sum(1)
            # Satterthwaite's degrees of freedom of the stratified variance (Cochran 1977, Sect. 5.4): few when a
            # stratum of few sampled items carries it, as at the first looks
            with np.errstate(divide="ignore", invalid="ignore"):
                df = v ** 2 / (v_h ** 2 / np.maximum(n_h - 1, 1)).sum(1)
            plain = ((tot_y @ self.onehot) / n_h).mean(1)
            n = float(sched[k].sum())
            if self.fpc and np.all(sched[k] >= N_h):  # every item evaluated: the benchmark's score
                e_k, se_k, n_k = plain, np.zeros(A), np.full(A, np.inf)
            else:
                e_k, se_k = np.clip(theta.mean(1), 0.0, 1.0), np.sqrt(v)
                # a look of several strata (each sampled at its own rate) has a count of right items that follows
                # no hypergeometric law: Korn & Graubard's corrected size stands in for the exact interval of one
                # simple random sample's count (BinomialStatistic with a population), also for a single stratum
                srs = n / (1 - n / N_h.sum()) if self.fpc else n
                hits = y_a.sum((1, 2))
                n_k = _effective_n(e_k, se_k, n, srs, np.minimum(hits, n - hits), df, self.z)
            est[active, k], se[active, k], n_eff[active, k], design[active, k] = e_k, se_k, n_k, plain
            lo, hi = BinomialStatistic(e_k, se_k, n_k).interval(self.z)
            active = active[~stop(k, (hi - lo) / 2)]
        return CorrectedStatistic(est, se, n_eff, design)
