"""Native group-sequential computations: Armitage–McPherson–Rowe recursive numerical integration.

The sub-density of the z-statistic among paths that have not stopped is propagated look by look
(Armitage, McPherson & Rowe 1969) on Jennison & Turnbull's (2000, ch. 19) grid: ``6r - 1`` points
spaced for the normal tails, Simpson weights, ``r = 18`` as in gsDesign. Boundaries are solved from
the error spent at each look by the same Newton iteration and stopping rule as gsDesign's C code
(``gsbound``, ``gsbound1``), and one-dimensional searches (Wang–Tsiatis constants, maximum
information) use R's ``zeroin`` (Brent) step for step, so that this backend reproduces gsDesign to
rounding error rather than only to the tolerance of either implementation.

Each look costs one ``m x m`` kernel (``m ~ 2 (6r - 1)`` grid points) built with a handful of
whole-array numpy operations (half of it for symmetric two-sided bounds under H0, whose density is
symmetric), and a few Newton steps of ``O(m)`` each; the grid, its mid-points and Simpson weights
are precomputed per ``r``. The crossing probabilities at the solved bounds fall out of the last Newton
step, so the type-I error spent is known without a second pass. The sample-size search (maximum
information for the requested power) is separate (``native_sizes``) and only run when sizes are
asked for; for fixed bounds it takes Newton steps on the power at nearby drifts, which one pass gives
by a change of measure (the sub-densities times the path's likelihood ratio), usually with one pass
(``effstats.sequential._size_search``; its secant fallback is here).

With hundreds of looks (a batch adds less than 1/144 of the information so far) the r = 18 grid
does not resolve the density of one increment; :func:`effstats.sequential.design` then raises
``r`` and the recursion rescales each transition to its exact probability (``conserve``), which
keeps it stable where gsDesign's unmodified scheme overflows. Below that regime the recursion is gsDesign's.

References
----------
Armitage, P., McPherson, C. K. & Rowe, B. C. (1969). Repeated significance tests on accumulating
data. *Journal of the Royal Statistical Society, Series A*, 132(2), 235–244.

Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
Trials*. Chapman & Hall/CRC, Boca Raton (ch. 19, numerical computations).

Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials.
*Biometrika*, 70(3), 659–663.

Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from ..exceptions import ConvergenceWarning
from ._recursion import EXTREMEZ, _h1, _hupdate, gridpts, gsbound, gsbound1, gsprob
from ._size_search import _max_info_tilt, _tilt_pass, _tilted  # noqa: F401 (_tilt_pass, _tilted: re-exported)
from ._zeroin import _increasing_root, zeroin

# gsDesign's computations, one function each; gridpts and zeroin (the recursion's and R's numerical building blocks)
# and native_bounds / native_sizes / native_design (the backend of effstats.sequential.design, on its private spec)
# are importable from here but not listed
__all__ = ["gsprob", "gsbound", "gsbound1", "wt_constant"]


def wt_constant(delta: float, alpha: float, two_sided: bool, timing, tol: float = 1e-6, r: int = 18) -> float:
    r"""Constant :math:`c` of the Wang–Tsiatis bound with total upper error ``alpha``.

    Parameters
    ----------
    delta : float
        Shape of the bound: 0.5 gives Pocock's constant bound, 0 O'Brien & Fleming's.
    alpha : float
        Total probability under H0 of crossing the upper bound (each side's, for a two-sided design).
    two_sided : bool
        Symmetric lower bound :math:`-c\, t^{\delta - 1/2}` as well.
    timing : array of shape (k,)
        Information fractions of the looks, ending at 1.
    tol : float, default=1e-6
        Tolerance of the search for :math:`c` (R's ``zeroin``).
    r : int, default=18
        Grid size of the recursive integration.

    Returns
    -------
    float

    See Also
    --------
    effstats.sequential.wang_tsiatis : The bound shape as a design's spending.

    Notes
    -----
    At information fraction :math:`t_j` the upper bound is

    .. math::

        b_j = c \, t_j^{\Delta - 1/2},

    and :math:`c` is the root of the total crossing probability under H0 minus ``alpha``.

    References
    ----------
    Wang, S. K. & Tsiatis, A. A. (1987). Approximately optimal one-parameter boundaries for group sequential
    trials. *Biometrics* 43(1), 193–199.

    Examples
    --------
    >>> from effstats.sequential.native import wt_constant
    >>> t = [1 / 3, 2 / 3, 1.0]
    >>> round(wt_constant(0.5, 0.025, False, t), 4), round(wt_constant(0.0, 0.025, False, t), 4)  # Pocock, OBF
    (2.2895, 2.004)
    """
    return float(_wt_constant_terms(delta, alpha, two_sided, timing, tol, r)[0])


def _wt_constant_terms(delta: float, alpha: float, two_sided: bool, timing, tol: float = 1e-6,
                       r: int = 18) -> tuple[float, np.ndarray | None]:
    r"""Constant :math:`c` of the Wang–Tsiatis bound :math:`c\, t^{\delta - 1/2}` with total upper error ``alpha``
    (gsDesign ``WT``).

    Solved by secant steps on the probit of the crossing probability, which is nearly linear in ``c`` (exactly so
    for one look), started at the Bonferroni constant, which needs fewer recursion passes than a bracketing
    search. The root is taken to ``1e-2 * tol``, so it lies within gsDesign's own ``uniroot`` tolerance of
    gsDesign's constant. Falls back to the bracketing search (``_wt_constant_zeroin``) if a step fails.

    Returns ``(c, terms)``: ``terms`` (k,) are the upper-crossing probabilities under H0 at each look at ``c`` (the
    last point evaluated), or None when ``c`` was not evaluated (the caller then runs ``gsprob``).
    """
    timing = np.asarray(timing, dtype=float)
    shape = timing ** (delta - 0.5)
    low = np.full(timing.size, -EXTREMEZ)
    target = float(ndtri(alpha))  # probit of the wanted crossing probability

    last: dict = {}

    def g(c: float) -> float:
        terms: list = []
        p = _upper_power(0.0, timing, -c * shape if two_sided else low, c * shape, r, terms)
        last.update(c=c, terms=terms)
        return float(ndtri(p)) - target if 0.0 < p < 1.0 else np.nan

    if timing.size <= 60 and 0.0 < alpha < 0.5:
        with np.errstate(all="ignore"):
            # Bonferroni constant (an upper bound on c: the union bound over looks) and the last look's alone (a lower
            # bound)
            c1 = float(ndtri(1 - alpha / timing.size) / shape.min()) if shape.size else 0.0
            c0 = float(ndtri(1 - alpha) / shape[-1])
            x0 = c1 if c1 > c0 else c0 + 0.1
            if delta == 0.5 and c1 > c0:
                # Pocock: the constant sits ~3/4 of the way from the last look's to the Bonferroni one (0.70-0.78 for
                # k = 2-10, alpha 0.005-0.1): starting there saves one recursion pass of the five
                x0 = c0 + 0.75 * (c1 - c0)
            g0 = g(x0)
            # first step as if the look with the lowest bound acted alone (probit slope -shape.min())
            x1 = x0 + g0 / shape.min() if np.isfinite(g0) and g0 != 0 else 0.5 * (c0 + x0)
            g1 = g(x1)
            for _ in range(30):
                if not (np.isfinite(g0) and np.isfinite(g1)) or g1 == g0:
                    break
                x2 = x1 - g1 * (x1 - x0) / (g1 - g0)
                if not np.isfinite(x2) or x2 <= 0:
                    break
                if abs(x2 - x1) < 1e-2 * tol:
                    # x1, the last point evaluated, is within 1e-2 * tol of the root: return it with its per-look
                    # crossing probabilities, which saves the caller a recursion pass for them
                    return (x1, np.array(last["terms"])) if last.get("c") == x1 else (x2, None)
                x0, g0, x1, g1 = x1, g1, x2, g(x2)
    return _wt_constant_zeroin(delta, alpha, two_sided, timing, tol, r), None


def _wt_constant_zeroin(delta: float, alpha: float, two_sided: bool, timing, tol: float = 1e-6, r: int = 18) -> float:
    """``wt_constant`` by gsDesign's own bracketing search (R's ``uniroot`` on ``alpha`` minus the crossing
    probability): bit-identical to gsDesign, ~12 recursion passes."""
    timing = np.asarray(timing, dtype=float)
    shape = timing ** (delta - 0.5)
    low = np.full(timing.size, -EXTREMEZ)

    def diff(c: float) -> float:
        a = -c * shape if two_sided else low
        return alpha - _upper_power(0.0, timing, a, c * shape, r)

    f0 = None
    if two_sided:
        c0 = 0.0
    else:
        # c = 0 puts the bound at z = 0: with hundreds of looks the surviving paths drift into the grid's coarse
        # far tail and the recursion overflows. Its crossing probability is >= P(Z_1 > 0) = 1/2 > alpha, so a
        # non-finite value is replaced by alpha - 1 (gsDesign itself stops at k = 30 for these bounds).
        with np.errstate(all="ignore"):
            f0 = diff(0.0)
        if not np.isfinite(f0):
            f0 = alpha - 1.0
        i = 0
        fi = f0
        while fi >= 0:
            i -= 1
            fi = diff(i)
        c0 = float(i)
        if i != 0:
            f0 = fi
    i = 2
    fhi = diff(i)
    while fhi <= 0:
        i += 1
        fhi = diff(i)
    return zeroin(diff, c0, float(i), tol, f_lower=f0, f_upper=fhi)


# ---------------------------------------------------------------------------------------------
# gsDesign's design derivations (gsDType1 ... gsDType6), test types 1-6
# ---------------------------------------------------------------------------------------------
@dataclass
class _Spec:
    k: int
    test_type: int
    alpha: float  # one-sided, as in gsDesign
    beta: float
    timing: np.ndarray
    upper: "object"  # SpendingFunction
    lower: "object | None"
    astar: float
    n_i: np.ndarray | None  # observed information (re-computation), else None
    max_info_plan: float
    tol: float
    r: int
    n_fix: float = 1.0  # fixed-design information on the scale of n_i (gsDesign's n.fix); the drift is per unit of it


def _incr(x: np.ndarray) -> np.ndarray:
    """Increments of a cumulative sequence (first element kept)."""
    x = np.asarray(x, dtype=float)
    out = x.copy()
    out[1:] -= x[:-1]
    return out


def _upper_power(theta: float, info: np.ndarray, a: np.ndarray, b: np.ndarray, r: int, terms: list | None = None,
                 lo_terms: list | None = None) -> float:
    """Total upper-crossing probability at one drift: ``gsprob``'s ``powr`` without the expected information
    (the quantity the sample-size search evaluates). ``terms``, if given, receives the crossing probability at
    each look (gsprob's ``probhi``); ``lo_terms`` the lower-crossing probabilities (``problo``)."""
    k = info.size
    rt = np.sqrt(info).tolist()
    al, bl = a.tolist(), b.tolist()
    mu = theta * rt[0]
    tot = float(ndtr(mu - bl[0]))
    if terms is not None:
        terms.append(tot)
    if lo_terms is not None:
        lo_terms.append(float(ndtr(al[0] - mu)))
    if k == 1:
        return tot
    z1, w1 = gridpts(r, mu, al[0], bl[0])
    h = _h1(theta, z1, w1, info[0])
    conserve = r > 18
    sym = not theta and al == [-v for v in bl]  # symmetric two-sided bounds under H0
    for i in range(1, k):
        dk = info[i] - info[i - 1]
        rtd = dk ** 0.5
        base = z1 * (rt[i - 1] / rtd)
        base += theta * dk / rtd
        if lo_terms is not None:
            lo_terms.append(float(h.dot(ndtr(al[i] * rt[i] / rtd - base))))
        base -= bl[i] * rt[i] / rtd
        term = float(h.dot(ndtr(base, out=base)))
        tot += term
        if terms is not None:
            terms.append(term)
        if i < k - 1:
            mu = theta * rt[i]
            z2, w2 = gridpts(r, mu, al[i], bl[i])
            h = _hupdate(theta, w2, info[i - 1], z1, h, info[i], z2, conserve, sym, r=r)
            z1 = z2
    return tot


def _betadiff(imax, theta, beta, time, a, b, r):
    return beta - 1 + _upper_power(theta, time * imax, a, b, r)


def _betadiff1(imax, theta, tx, problo, b, tol, r, passes: dict | None = None):
    """gsDesign's ``betadiff1``: beta spent minus one plus the power, for maximum information ``imax``.

    One ``gsbound1`` pass on the mirrored problem: its lower-crossing probabilities are the upper crossings of the
    design under ``theta`` (gsDesign computes them with a second ``gsprob`` pass; equal to rounding). ``passes``,
    if given, keeps each pass by ``imax`` for the caller (a bracket step and the root search evaluate the same
    points, and the pass at the root gives the bounds).
    """
    if passes is not None and imax in passes:
        return passes[imax][0]
    x = gsbound1(-theta, tx * imax, -b, problo, tol, r, last=False)  # the caller sets the last bound
    val = float(problo.sum() - 1 + x["problo"].sum())
    if passes is not None:
        passes[imax] = (val, x)
    return val


def _type4_search(delta, tx, falseneg, b, tol, r, n_fix):
    """gsDesign's gsDType4 search for the maximum information of a non-binding beta-spending design, one
    recursion pass per step.

    For information ``I`` the lower bounds spend ``falseneg`` under the drift ``delta`` given the upper bounds
    ``b``: one ``gsbound1`` pass on the mirrored problem, whose lower-crossing probabilities are the upper
    crossings of the design, i.e. the terms of the power (gsDesign runs a second ``gsprob`` pass for them).
    The root is searched as test type 3's (:func:`_type3_root`: Newton, secant and inverse quadratic steps in
    ``sqrt(I)`` on the probit of the power, to ``0.1 * tol`` of the information, so within gsDesign's own
    ``tol``-accurate ``uniroot`` root), with gsDesign's bracket and ``uniroot`` steps as the fallback; the pass at
    the root is kept: it gives the bounds and the crossing probabilities under ``delta`` without further passes.

    Returns ``(n_i, a, upper1, lower1)``: information, lower bounds (the last one set to the upper, as gsDesign)
    and the crossing probabilities under ``delta`` (k,).
    """
    # started at 1.1 times the fixed design's information (these designs need 1.0-1.6 times it, 1.18 the median over
    # 720 with k = 2-8) with 3/4 of a fixed design's slope of the power's probit in sqrt(I) (the futility bound
    # flattens it): 4.8 passes a design over those 720, against 5.4 from the fixed design's information and slope
    found = _type3_root(delta, tx, falseneg, b, tol, r, float(np.sqrt(1.1 * n_fix)), 0.75 * float(delta))
    if found is not None:
        u, _, x = found
        root = u * u
    else:
        passes: dict = {}
        target = float(falseneg.sum()) - 1.0

        def f(v: float) -> float:
            if v not in passes:
                x = gsbound1(-delta, tx * v, -b, falseneg, tol, r, last=False)
                passes[v] = (target + float(x["problo"].sum()), x)
            return passes[v][0]

        ilow, ihigh = 0.98 * n_fix, 1.2 * n_fix
        while 0 > f(ihigh):
            if ihigh > 5 * n_fix:
                raise RuntimeError("design: unable to derive the sample size (gsDesign's bracket search exceeded "
                                   "5 times the fixed-design information)")
            ilow, ihigh = ihigh, ihigh * 1.2
        root = _increasing_root(f, ilow, ihigh, tol, "information")
        f(root)
        x = passes[root][1]
    n_i = tx * root
    a = -x["b"]
    a[-1] = b[-1]
    if tx.size > 1 and np.isfinite(x["mass_last"]):
        up1 = x["problo"].copy()  # the mirrored pass's lower crossings are the upper crossings under delta
        lo1 = x["achieved"].copy()
        # a_K = b_K: at the last look the paths that do not cross up cross down; as gsprob integrates it, the grid
        # mass entering the look minus the upward crossing
        lo1[-1] = x["mass_last"] - up1[-1]
    else:  # one look, or gsBound1 lifted a bound: a pass of its own
        y = gsprob(delta, n_i, a, b, r)
        up1, lo1 = y["probhi"][:, 0], y["problo"][:, 0]
    return n_i, a, up1, lo1


def _gsI1(theta, info, beta, b, ilow, ihigh, tol, r, passes: dict | None = None):
    tx = info / info[-1]
    passes = {} if passes is None else passes
    root = _increasing_root(lambda v: _betadiff1(v, theta, tx, beta, b, tol, r, passes), ilow, ihigh, tol,
                            "information")
    x = passes[root][1] if root in passes else gsbound1(-theta, root * tx, -b, beta, tol, r, last=False)
    bb = x["b"].copy()
    bb[-1] = -b[-1]
    return root * tx, -bb, b


def _check_falsepos(target: np.ndarray, got: np.ndarray, tol: float) -> None:
    """gsDesign's "False positive rates not achieved" check, as a numerical failure (RuntimeError)."""
    dev = np.abs(np.asarray(target) - np.asarray(got))
    if dev.max() <= tol:  # (NaN compares False: falls through to the check below)
        return
    if not (dev <= tol).all():
        look = int(np.argmax(np.where(np.isfinite(dev), dev, np.inf))) + 1
        raise RuntimeError(f"design: the bounds do not spend the requested type-I error (look {look}: "
                           f"|spent - target| = {float(dev[look - 1]):.3g} > tol = {tol:g}); the boundary iteration "
                           "failed to converge. Try a larger r or fewer, more widely spaced looks.")


class BetaNotSpent(ValueError):
    """A beta-spending futility bound does not spend the requested type-II error at some look (test types 3, 4)."""

    def __init__(self, look: int, spent: float, target: float, tol: float, r: int) -> None:
        self.look, self.spent, self.target, self.r = look, spent, target, r
        super().__init__(
            f"lower_spending: the futility bound cannot spend the requested type-II error by look {look} (beta spent "
            f"{spent:.6g}, target {target:.6g}, tolerance {tol:g}, grid r={r}): a look that adds little information "
            "after one whose futility bound left little probability to spend. Spend less beta by that look "
            "(lower_spending / lower_param) or space the looks further apart (timing / information)"
            + (", or integrate on a finer grid (a larger r, at most 80)" if r < 80 else "")
            + "; gsDesign ('False negative rates not achieved') and rpact refuse such designs too")


def _check_falseneg(target: np.ndarray, got: np.ndarray, tol: float, r: int) -> None:
    """The beta spent by each look (cumulative) against its target, to ``tol``: gsDesign's "False negative rates
    not achieved" check (made there look by look), raised as a BetaNotSpent."""
    t, g = np.cumsum(target), np.cumsum(got)
    dev = np.abs(t - g)
    if not dev.max() <= tol:  # (NaN compares False: refused)
        j = int(np.argmax(np.where(np.isfinite(dev), dev, np.inf)))
        raise BetaNotSpent(j + 1, float(g[j]), float(t[j]), tol, r)


def native_bounds(s: _Spec) -> dict:
    """Boundaries only (no sample-size search where the bounds do not depend on it: test types 1, 2, 5, 6).

    Returns a dict with ``upper``, ``lower`` (None for one-sided), ``upper_prob0`` (k,, upper-crossing
    probabilities under H0 at the bounds, binding lower bound included), ``falsepos`` (k,, incremental upper error
    under H0 ignoring a non-binding lower bound), ``lower_spend``, ``delta`` and ``sized`` (True when the
    derivation needed, and so returns, the sizes too: beta-spending test types 3 and 4).
    """
    k, tol, r = s.k, s.tol, s.r
    delta = abs(ndtri(s.alpha) + ndtri(s.beta)) / np.sqrt(s.n_fix)  # gsDesign: (z_alpha + z_beta) / sqrt(n.fix)
    given = s.n_i is not None
    timing = s.timing
    low20 = np.full(k, -EXTREMEZ)
    tt = s.test_type
    up = s.upper
    out: dict = {"delta": float(delta), "sized": False}
    if up.is_classic and tt > 2:
        raise ValueError("spending: Wang-Tsiatis, Pocock and O'Brien-Fleming bounds are not available for asymmetric "
                         "testing (test_type 3-6)")
    scale = s.n_i if given else timing  # bounds at theta = 0 only depend on information ratios

    if tt == 1:
        if up.is_classic:
            d = up.wt_delta
            c, terms = _wt_constant_terms(d, s.alpha, False, timing, tol, r)
            b = c * timing ** (d - 0.5)
            falsepos = terms if terms is not None else gsprob(0.0, timing, low20, b, r)["probhi"][:, 0]
            got = falsepos
        else:
            falsepos = _incr(up(s.alpha, timing))
            x = gsbound1(0.0, scale, low20, falsepos, tol, r, lower=False)
            b, got = x["b"], x["achieved"]
            _check_falsepos(falsepos, got, tol)
            out["dens0"] = x["dens"]  # the H0 sub-densities at the final bounds: the size search starts from them
        out.update(upper=b, lower=None, upper_prob0=got, lower_prob0=None, falsepos=got, lower_spend=None)
        return out

    if tt in (2, 5):
        if up.is_classic:
            d = up.wt_delta
            c, terms = _wt_constant_terms(d, s.alpha, True, timing, tol, r)
            b = c * timing ** (d - 0.5)
            a = -b
            if terms is not None:  # symmetric bounds under H0: the lower crossings mirror the upper ones
                falsepos = trueneg = got = plo = terms
            else:
                p = gsprob(0.0, timing, a, b, r)
                falsepos = trueneg = got = p["probhi"][:, 0]
                plo = p["problo"][:, 0]
        else:
            falsepos = _incr(up(s.alpha, timing))
            out["alpha_total"] = float(np.sum(falsepos))  # the size search starts from it
            trueneg = _incr(s.lower(s.astar, timing)) if tt == 5 else falsepos
            # gsDesign sets the last lower bound of a planned test type 5 to the upper one: not solved
            pin_last = not given and not (tt == 2 or s.astar < 1 - s.alpha)
            x = gsbound(scale, trueneg, falsepos, tol, r, last=not pin_last)
            if x["error"]:
                warnings.warn(f"design: the boundary iteration did not converge at look {x['error']} (gsDesign's "
                              "Newton scheme, 20 steps)", ConvergenceWarning, stacklevel=3)
            a, b = x["a"].copy(), x["b"]
            got, plo = x["probhi"], x["problo"]
            out["dens0"] = x["dens"]  # a_K = b_K below changes no density entering a look
            if pin_last:
                a[-1] = b[-1]
                # with a_K = b_K every path reaching the last look stops there: what does not cross up crosses down
                plo = plo.copy()
                plo[-1] = x["mass_last"] - got[-1]
            _check_falsepos(falsepos, got, tol)
        out.update(upper=b, lower=a, upper_prob0=got, lower_prob0=plo, falsepos=got, lower_spend=trueneg)
        return out

    if tt == 6:
        if given:
            timing = s.n_i / s.max_info_plan
        falsepos = _incr(up(s.alpha, timing))
        x = gsbound1(0.0, scale, low20, falsepos, tol, r, lower=False)
        b, fpnb = x["b"], x["achieved"]
        up0 = lo0 = None  # crossing probabilities under H0 at the final bounds, where a pass gives them
        if s.astar == 1 - s.alpha:
            tn = _incr(s.lower(s.astar, timing))
            trueneg = tn
            flag, it = 1.0, 0
            # (scalars as Python floats and array methods: this loop's bookkeeping was a tenth of its passes' time)
            while flag > tol and it < 10:
                # the last lower bound is set to the upper one: that look's bound is not solved
                xx = gsbound1(0.0, timing, -b, trueneg, tol, r, last=False)
                alpha = float(xx["problo"].sum())
                trueneg = (1 - alpha) * tn / s.astar
                if k > 1 and math.isfinite(xx["mass_last"]):
                    # the mirrored pass integrates on the mirrored grids: its upper crossings are the lower crossings
                    # at the lower bounds (-b of this pass) before the last look, its lower ones the upper crossings
                    # at b; at the last look a_K = b_K, so what does not cross up crosses down (gsDesign's gsprob
                    # pass, to rounding)
                    # (each pass returns arrays of its own, unused after this: no copies)
                    up0 = xx["problo"]
                    lo0 = xx["achieved"]
                    lo0[-1] = xx["mass_last"] - up0[-1]
                else:
                    xx2 = gsprob(0.0, timing, np.concatenate((-xx["b"][:-1], b[-1:])), b, r)
                    up0, lo0 = xx2["probhi"][:, 0], xx2["problo"][:, 0]
                flag = float(abs(lo0 - trueneg).max())
                it += 1
            a = -xx["b"]
            a[-1] = b[-1]
            dens = xx["dens"]
        else:
            trueneg = _incr(s.lower(s.astar, timing))
            xx = gsbound1(0.0, timing, -b, trueneg, tol, r)
            a = -xx["b"]
            if np.isfinite(xx["mass_last"]):
                up0, lo0 = xx["problo"], xx["achieved"]
            dens = xx["dens"]
        if given:
            up0 = lo0 = None
        elif dens is not None:
            # the mirrored pass's sub-densities are those of -Z on the mirrored grids, at the final bounds
            out["dens0"] = [(h, -z) for h, z in dens]
        out.update(upper=b, lower=a, upper_prob0=up0, lower_prob0=lo0, falsepos=fpnb, lower_spend=trueneg)
        return out

    if tt == 4 and given:
        # non-binding beta-spending at observed information: two bound passes, no search; sizes (crossing
        # probabilities under the alternative) on demand
        falsepos = _incr(up(s.alpha, timing))
        falseneg = _incr(s.lower(s.beta, timing))
        x = gsbound1(0.0, s.n_i, low20, falsepos, tol, r, lower=False)
        b, fpnb = x["b"], x["achieved"]
        x2b = gsbound1(-delta, s.n_i, -b, falseneg, tol, r)["b"].copy()
        if -x2b[-1] > b[-1] - tol:
            x2b[-1] = -b[-1]
        out.update(upper=b, lower=-x2b, upper_prob0=None, lower_prob0=None, falsepos=fpnb, lower_spend=falseneg)
        return out

    # beta-spending designs (test types 3 and 4): the bounds depend on the information, so sizes come with them
    res = _beta_spending(s, delta)
    if s.n_i is None:
        # gsDesign's check of a planned design; at observed information neither it nor this checks (information
        # on the scale of sample sizes without n_fixed puts the alternative's mass above the upper bounds, where a
        # futility bound has nothing to spend)
        _check_falseneg(res["lower_spend"], res["lower_prob"][:, 1], tol, r)
    res.update(delta=float(delta), sized=True, upper_prob0=res["upper_prob"][:, 0],
               lower_prob0=res["lower_prob"][:, 0])
    return res


def _max_info_secant(delta, beta, tx, a, b, r, i0, tol, lower: bool = True) -> tuple | None:
    """Maximum information giving power ``1 - beta`` for fixed bounds: secant steps in ``sqrt(information)`` on the
    probit of the power, which is nearly linear there (exactly so for one look, with slope ``delta``), so
    it needs fewer recursion passes than a bracketing search. Taken until a step moves the information by less than
    ``1e-2 * tol``, i.e. well inside the tolerance of gsDesign's own search; the last point evaluated is returned
    with its crossing probabilities, so that the operating characteristics under ``delta`` need no further pass.

    Returns ``(information, upper, lower)`` (upper- and lower-crossing probabilities under ``delta``, (k,); lower
    None unless ``lower``), or None if a step fails (the caller then brackets).
    """
    if not (delta > 0 and 0.0 < beta < 0.5):
        return None
    target = float(ndtri(1 - beta))
    evals: dict = {}

    def h(u: float) -> float:
        up: list = []
        lo: list | None = [] if lower else None
        p = _upper_power(delta, tx * (u * u), a, b, r, up, lo)
        evals[u] = (up, lo)
        return float(ndtri(p)) - target if 0.0 < p < 1.0 else np.nan

    with np.errstate(all="ignore"):
        u0 = float(np.sqrt(i0))
        h0 = h(u0)
        if not np.isfinite(h0):
            return None
        u1 = u0 - h0 / delta if h0 != 0 else u0 * 1.01
        h1 = h(u1)
        for _ in range(30):
            if not (np.isfinite(h0) and np.isfinite(h1)) or h1 == h0:
                return None
            u2 = u1 - h1 * (u1 - u0) / (h1 - h0)
            if not np.isfinite(u2) or u2 <= 0:
                return None
            if abs(u2 * u2 - u1 * u1) < 1e-2 * tol:
                # the secant converges superlinearly: u1 is within about |u2 - u1| of the root
                up, lo = evals[u1]
                return u1 * u1, np.array(up), None if lo is None else np.array(lo)
            u0, h0, u1, h1 = u1, h1, u2, h(u2)
    return None


def native_sizes(s: _Spec, bounds: dict) -> dict:
    """Information and operating characteristics for bounds from ``native_bounds``.

    The maximum information for power ``1 - beta`` at the design drift (relative to a fixed design of
    information 1) is solved unless the information was given; then crossing probabilities at
    theta = (0, delta) and the expected information at stopping.

    Returns a dict with ``n_i`` (k,), ``upper_prob`` (k, 2), ``lower_prob`` (k, 2) or None and ``en`` (2,).
    """
    if bounds.get("sized"):
        return {key: bounds[key] for key in ("n_i", "upper_prob", "lower_prob", "en")}
    k, tol, r = s.k, s.tol, s.r
    delta = bounds["delta"]
    b = bounds["upper"]
    a = bounds["lower"] if bounds["lower"] is not None else np.full(k, -EXTREMEZ)
    n_i = s.n_i
    if n_i is None:
        timing = s.timing
        if s.test_type in (2, 5) and not s.upper.is_classic:
            alpha = bounds.get("alpha_total")
            if alpha is None:  # bounds from before the key existed (a pickled design)
                alpha = float(np.sum(_incr(s.upper(s.alpha, timing))))
            i0 = ((ndtri(alpha) + ndtri(s.beta)) / delta) ** 2
        else:
            i0 = 1.0  # n.fix
        tx = timing / timing[-1]
        found = _max_info_tilt(delta, s.beta, tx, a, b, r, i0, lower=s.test_type != 1, dens0=bounds.get("dens0"))
        if found is None:
            found = _max_info_secant(delta, s.beta, tx, a, b, r, i0, tol, lower=s.test_type != 1)
        if found is not None:
            root, up1, lo1 = found
            n_i = root * tx
            # under H0 the recursion depends on the information ratios only, so the bounds' own passes give the
            # crossing probabilities (to rounding) where they ran on the final bounds
            if bounds.get("upper_prob0") is not None and (s.test_type == 1 or bounds.get("lower_prob0") is not None):
                up0 = np.asarray(bounds["upper_prob0"], float)
                lo0 = np.zeros(k) if s.test_type == 1 else np.asarray(bounds["lower_prob0"], float)
            else:
                y0 = gsprob(0.0, n_i, a, b, r)
                up0, lo0 = y0["probhi"][:, 0], y0["problo"][:, 0]
            phi, plo = np.empty((k, 2)), np.zeros((k, 2))  # columns: theta = 0 and delta (cheaper than column_stack)
            phi[:, 0], phi[:, 1], plo[:, 0] = up0, up1, lo0
            if lo1 is not None:
                plo[:, 1] = lo1
            en = n_i.dot(plo + phi) + n_i[-1] * (1 - phi.sum(0) - plo.sum(0))  # (dot: 1/3 of @'s time here)
            return {"n_i": n_i, "upper_prob": phi, "lower_prob": None if s.test_type == 1 else plo, "en": en}
        root = _increasing_root(lambda v: _betadiff(v, delta, s.beta, tx, a, b, r), i0, 10 * i0, tol,
                                "information")
        n_i = root * tx
    y = gsprob([0.0, delta], n_i, a, b, r)
    return {"n_i": n_i, "upper_prob": y["probhi"], "lower_prob": None if s.test_type == 1 else y["problo"],
            "en": y["en"]}


def native_design(s: _Spec) -> dict:
    """Bounds and sizes like ``gsDesign::gsDesign`` (with ``delta = 0, n.fix = 1``): ``native_bounds``
    followed by ``native_sizes``, merged into one dict (``falsepos`` as gsDesign reports it)."""
    bnd = native_bounds(s)
    out = dict(bnd)
    out.update(native_sizes(s, bnd))
    return out


def _beta_spending(s: _Spec, delta: float) -> dict:
    """Test types 3 and 4 (gsDesign's gsDType3 / gsDType4): lower bounds spend beta at the design drift."""
    k, tol, r = s.k, s.tol, s.r
    n_fix = 1.0
    timing = s.timing
    low20 = np.full(k, -EXTREMEZ)
    given = s.n_i is not None
    n_i = s.n_i
    tt = s.test_type
    up = s.upper
    out: dict = {}
    falsepos = _incr(up(s.alpha, timing))
    falseneg = _incr(s.lower(s.beta, timing))

    def bracket(bb, ilow, ihigh, passes):
        while 0 > _betadiff1(ihigh, delta, timing, falseneg, bb, tol, r, passes):
            if ihigh > 5 * n_fix:
                raise RuntimeError("design: unable to derive the sample size (gsDesign's bracket search exceeded "
                                   "5 times the fixed-design information)")
            ilow, ihigh = ihigh, ihigh * 1.2
        return ilow, ihigh

    if tt == 4:
        if not given:
            x0 = gsbound1(0.0, timing, low20, falsepos, tol, r, lower=False)
            x0b = x0["b"]
            n_i, a, up1, lo1 = _type4_search(delta, timing, falseneg, x0b, tol, r, n_fix)
            # at theta = 0 the recursion depends on information ratios only: the upper pass's crossing
            # probabilities are gsDesign's fpnb (gsprob(0, n.I, -20, b)) to rounding error
            y0 = gsprob(0.0, n_i, a, x0b, r)
            en0 = float(n_i @ (y0["problo"][:, 0] + y0["probhi"][:, 0]))
            en0 += n_i[-1] * (1 - y0["powr"][0] - y0["problo"][:, 0].sum())
            out.update(upper=x0b, lower=a, n_i=n_i, upper_prob=np.column_stack((y0["probhi"][:, 0], up1)),
                       lower_prob=np.column_stack((y0["problo"][:, 0], lo1)),
                       en=np.array([en0, float(n_i @ (up1 + lo1) + n_i[-1] * (1 - up1.sum() - lo1.sum()))]),
                       falsepos=x0["achieved"].copy(),
                       lower_spend=falseneg)
            return out
        else:
            b = gsbound1(0.0, n_i, low20, falsepos, tol, r, lower=False)["b"]
            x2b = gsbound1(-delta, n_i, -b, falseneg, tol, r)["b"].copy()
            if -x2b[-1] > b[-1] - tol:
                x2b[-1] = -b[-1]
            a = -x2b
        fpnb = gsprob(0.0, n_i, low20, b, r)["probhi"][:, 0]
        y = gsprob([0.0, delta], n_i, a, b, r)
        out.update(upper=b, lower=a, n_i=n_i, upper_prob=y["probhi"], lower_prob=y["problo"], en=y["en"],
                   falsepos=fpnb, lower_spend=falseneg)
        return out

    # test type 3: binding lower bound; at observed information gsDType3a / gsDType3b
    if given:
        res = _type3_observed(s, delta, n_i, falsepos, falseneg)
        if res["k"] < k:  # gsDesign drops looks after the one where the power target is already met
            out["k"] = res["k"]
        out.update({key: val for key, val in res.items() if key != "k"})
        return out
    return _type3_planned(s, delta, falsepos, falseneg, bracket, out)


def _type3_root(delta, tx, falseneg, b, tol, r, u0, slope):
    """Maximum information at which the binding beta-spending lower bound (derived for the upper bounds ``b``) leaves
    power ``1 - sum(falseneg)``: the root of gsDesign's ``gsbetadiff1``, in ``u = sqrt(I)`` on the probit of the
    power, which is nearly linear there. A Newton step from ``u0`` with the probit's slope guessed as ``slope``, then
    secant steps (inverse quadratic ones where three points give the curvature), until a step moves the information
    by less than ``0.1 * tol``; the last point evaluated is returned with its pass.

    Returns ``(u, slope, pass)`` (the root, the last secant slope, the mirrored ``gsbound1`` pass at the root) or None
    if a step fails (the caller then brackets as gsDesign).
    """
    target = float(ndtri(1.0 - float(falseneg.sum())))
    evals: dict = {}

    def g(u: float) -> float:
        # the callers set the last lower bound to the upper one: that look's bound is not solved
        x = gsbound1(-delta, tx * (u * u), -b, falseneg, tol, r, last=False)
        evals[u] = x
        p = float(x["problo"].sum())
        return float(ndtri(p)) - target if 0.0 < p < 1.0 else np.nan

    with np.errstate(all="ignore"):
        h0 = g(u0)
        if not np.isfinite(h0) or not slope > 0:
            return None
        if abs(2 * u0 * h0 / slope) < 0.1 * tol:  # the Newton step in the information
            return u0, slope, evals[u0]
        u1 = u0 - h0 / slope
        if not u1 > 0:
            return None
        h1 = g(u1)
        um, hm = np.nan, np.nan  # the point before u0, once there is one
        for _ in range(30):
            if not (np.isfinite(h0) and np.isfinite(h1)) or h1 == h0:
                return None
            sl = (h1 - h0) / (u1 - u0)
            if not sl > 0:
                return None
            u2 = u1 - h1 / sl
            if np.isfinite(hm) and hm != h0 and hm != h1:
                # inverse quadratic interpolation through the last three points: the curvature the secant misses
                q = (um * h0 * h1 / ((hm - h0) * (hm - h1)) + u0 * hm * h1 / ((h0 - hm) * (h0 - h1))
                     + u1 * hm * h0 / ((h1 - hm) * (h1 - h0)))
                if np.isfinite(q) and abs(q - u2) < 0.5 * abs(u2 - u1):
                    u2 = q
            if not np.isfinite(u2) or u2 <= 0:
                return None
            if abs(u2 * u2 - u1 * u1) < 0.1 * tol:
                return u1, sl, evals[u1]
            um, hm, u0, h0, u1, h1 = u0, h0, u1, h1, u2, g(u2)
    return None


def _upper_given_lower(info, a, a_prev, falsepos, r):
    """Upper bounds spending ``falsepos`` given the lower bounds ``a`` (gsDesign's update in ``gsDType3ss``).

    Where the lower bounds of a round are so high that the upper bound of some look falls below its lower one (no
    path continues past that look and the last upper bound is left at -20: the next round has no root), the round
    overshot; the lower bounds are moved back towards the previous round's, halving the step, until the upper
    bounds stay above them. gsDesign's iteration passes such rounds only where its own bound search stops short.
    Returns ``(lower, upper)``: the lower bounds used (the next round's anchor) and the upper bounds.
    """
    lam = 1.0
    for _ in range(20):
        lo = a_prev + lam * (a - a_prev)
        b = gsbound1(0.0, info, np.concatenate((lo[:-1], [-EXTREMEZ])), falsepos, r=r)["b"]
        if b[-1] > -EXTREMEZ and np.all(b[:-1] > lo[:-1]):
            break
        lam /= 2
    return lo, b


def _type3_planned(s, delta, falsepos, falseneg, bracket, out):
    """Test type 3 planned (gsDesign's ``gsDType3ss``): rounds of upper bounds given the lower ones, then the
    maximum information and the lower bounds given the upper ones, until the type-I error is spent as requested.

    The rounds are gsDesign's (same start, same updates, same stopping rule), so the design is the same point of its
    slowly converging iteration; only the root search inside a round differs. gsDesign brackets the information afresh
    and runs ``uniroot`` in every round (about 12 bound passes each); here the search starts where the root is
    predicted to be (the root moves from round to round nearly in proportion to the type-I error left over, so from
    the third round on the start is within a fraction of a percent of the move) with the last round's slope, and
    needs 2 passes a round after the first two. Each root is taken to ``0.1 * tol`` of the information, inside
    gsDesign's own ``uniroot`` tolerance. The crossing probabilities under the alternative come from the lower bound's
    own pass at the root, those under H0 from the type-I error check.
    """
    k, tol, r, timing = s.k, s.tol, s.r, s.timing
    tx = timing / timing[-1]
    trueneg = np.full(k, (1 - s.alpha) / k)
    b = gsbound(timing, trueneg, falsepos, tol, r)["b"]
    a_prev = np.full(k, -EXTREMEZ)  # the first update is damped towards no futility bound
    u, slope = 1.0, float(delta)  # n.fix = 1; the probit of a fixed design's power has slope delta in sqrt(I)
    roots: list = []
    errs: list = []  # the type-I error spent minus alpha, by round
    for jj in range(101):  # gsDesign's first round and at most 100 more
        if len(roots) >= 2 and errs[-2] != 0:
            # the root moves from round to round in proportion to the type-I error left over by the round before
            # (nearly the same factor every round): start at the root so predicted
            i_next = roots[-1] ** 2 + (roots[-1] ** 2 - roots[-2] ** 2) / errs[-2] * errs[-1]
            if i_next > 0:
                u = float(np.sqrt(i_next))
        found = _type3_root(delta, tx, falseneg, b, tol, r, u, slope)
        if found is None:
            passes: dict = {}
            try:
                ilow, ihigh = bracket(b, 1.0 / 3, 1.2, passes)
                info, a, b = _gsI1(delta, timing, falseneg, b, ilow, ihigh, tol, r, passes)
            except RuntimeError as e:
                raise ValueError(
                    "lower_spending: no maximum information lets the binding futility bound spend the requested "
                    f"type-II error (round {jj + 1} of the boundary iteration: {e}). Spend less beta early "
                    "(lower_spending / lower_param), spend alpha later (spending / spending_param) or space the "
                    "looks further apart (timing / information); gsDesign refuses most such designs too") from e
            x = None
            u = float(np.sqrt(info[-1]))
        else:
            u, slope, x = found
            info = tx * (u * u)
            a = -x["b"]
            a[-1] = b[-1]
        roots.append(u)
        x3 = gsprob(0.0, info, a, b, r)  # gsDesign: r = 18; a finer grid (after BetaNotSpent) on every pass
        p3 = x3["probhi"][:, 0]
        errs.append(float(x3["powr"][0]) - s.alpha)
        # gsDesign's stopping rule: the total type-I error after the first round, and each look's after the others
        flag = abs(errs[-1]) if jj == 0 else float(max(abs(errs[-1]), np.abs(falsepos - p3).max()))
        if not flag > tol:
            break
        if jj < 100:
            a_prev, b = _upper_given_lower(info, a, a_prev, falsepos, r)
    if flag > tol:  # gsDesign: "False positive rates not achieved"
        raise ValueError(
            "lower_spending: the boundary iteration of this binding beta-spending design does not settle (after 101 "
            f"rounds the type-I error spent is {float(x3['powr'][0]):.6g} for alpha = {s.alpha:g}, look by look off "
            f"by up to {float(np.abs(falsepos - p3).max()):.3g} > tol = {tol:g}). Spend beta and alpha more evenly "
            "(lower_spending / lower_param, spending / spending_param) or space the looks further apart (timing / "
            "information); gsDesign refuses such designs too")
    if x is not None and k > 1 and np.isfinite(x["mass_last"]) and r == 18:
        # the mirrored pass's lower crossings are the upper crossings under delta; with a_K = b_K what reaches the
        # last look and does not cross up crosses down (gsprob's figures to rounding)
        up1 = x["problo"].copy()
        lo1 = x["achieved"].copy()
        lo1[-1] = x["mass_last"] - up1[-1]
        phi = np.column_stack((p3, up1))
        plo = np.column_stack((x3["problo"][:, 0], lo1))
        en = info @ (plo + phi) + info[-1] * (1 - phi.sum(0) - plo.sum(0))
    else:
        y = gsprob([0.0, delta], info, a, b, r)
        phi, plo, en = y["probhi"], y["problo"], y["en"]
    out.update(upper=b, lower=a, n_i=info, upper_prob=phi, lower_prob=plo, en=en, falsepos=p3, lower_spend=falseneg)
    return out


def _type3b(alpha, k, timing, n_i, delta, falsepos, falseneg, tol, r):
    """gsDesign's ``gsDType3b``: binding beta-spending bounds at given information (transcribed)."""
    trueneg = np.full(k, (1 - alpha) / k)
    x1b = gsbound(timing, trueneg, falsepos, tol, r)["b"]
    if k == 1:
        a, b = x1b.copy(), x1b.copy()
    else:
        x2b = gsbound1(-delta, n_i, -x1b, falseneg, tol, r)["b"].copy()
        x2b[-1] = -x1b[-1]
        a, b = -x2b, x1b
        powr = float(gsprob(0.0, n_i, a, b, r)["powr"][0])
        flag = tol + 1
        while flag > tol:
            aold, bold, alphaold = a, b, powr
            x4b = gsbound1(0.0, n_i, np.concatenate((a[:-1], [-EXTREMEZ])), falsepos)["b"]
            x2b = gsbound1(-delta, n_i, -x4b, falseneg, tol, r)["b"]
            a, b = -x2b, x4b  # (gsDesign's "x2$a[k] <- x2$b[k]" is overwritten before use)
            powr = float(gsprob(0.0, n_i, a, b)["powr"][0])
            flag = float(np.max(np.abs(np.concatenate((a - aold, b - bold, [alphaold - powr])))))
    y = gsprob([0.0, delta], n_i, a, b, r)
    return {"upper": b, "lower": a, "n_i": n_i, "upper_prob": y["probhi"], "lower_prob": y["problo"], "en": y["en"],
            "falsepos": y["probhi"][:, 0], "lower_spend": falseneg}


def _type3_observed(s: _Spec, delta, n_i, falsepos, falseneg) -> dict:
    """gsDesign's ``gsDType3a``: ``gsDType3b``, then, if alpha is not fully spent, stop at the look where the
    power target is reached and spend the rest of alpha and beta there."""
    k, timing = s.k, s.timing
    res = _type3b(s.alpha, k, timing, n_i, delta, falsepos, falseneg, s.tol, s.r)
    res["k"] = k
    if res["upper_prob"][:, 0].sum() > s.alpha - s.tol:
        return res
    aspend = s.upper(s.alpha, timing)
    bspend = s.lower(s.beta, timing)
    pwr = np.cumsum(res["upper_prob"][:, 1])
    hit = np.flatnonzero(pwr > 1 - s.beta - s.tol)
    i = int(hit[0]) + 1 if hit.size else k
    fp = _incr(np.concatenate((aspend[: i - 1], [s.alpha])))
    fn = _incr(np.concatenate((bspend[: i - 1], [s.beta])))
    res = _type3b(s.alpha, i, timing[:i], n_i[:i], delta, fp, fn, s.tol, s.r)
    res["k"] = i
    return res
