"""gsDesign backend: ``gsDesign::gsDesign`` called through rpy2 (via ``effstats.rbridge``).

Bounds alone come from gsDesign's re-computation mode (``n.I = timing``, ``maxn.IPlan = 1``), which places the
bounds without gsDesign's sample-size search; the full ``gsDesign()`` call (with the search) runs when sizes are
asked for. Where gsDesign's own search fails (its ``uniroot`` bracket ``[n.fix, 10 n.fix]`` does not contain the
root), R's message surfaces as ``effstats.rbridge.RError``.

References
----------
Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0.
"""
from __future__ import annotations

import numpy as np

from ..rbridge import r_call, r_package

# gsdesign_bounds and gsdesign_design are the backend of effstats.sequential.design(backend="gsdesign"), on its
# private spec: importable, not listed
__all__ = ["gsdesign_sequential_pvalue"]


def _vec(x) -> np.ndarray:
    return np.asarray(list(x), dtype=float)


def _mat(x) -> np.ndarray:
    """An R k x n matrix as a (k, n) array (R stores columns first)."""
    dim = tuple(int(d) for d in x.dim)
    return np.asarray(list(x), dtype=float).reshape(dim, order="F")


def _sf(gs, sf):
    """gsDesign spending argument (an R function or the strings "Pocock" / "OF" / "WT") and its parameter."""
    if sf.is_classic:
        return sf.r_name, (sf.param if sf.family == "wt" else -4.0)
    fun = getattr(gs, sf.r_name)
    return fun, (sf.param if sf.param is not None else -4.0)


def gsdesign_bounds(s) -> dict:
    """Bounds for a native ``_Spec`` from gsDesign without its sample-size search where the bounds do not
    depend on it (test types 1, 2 and 6 with at least 2 looks); the full ``gsdesign_design`` otherwise.

    Returns the native bounds layout (``upper``, ``lower``, ``upper_prob0``, ``falsepos``, ``delta``, ``sized``).
    """
    from dataclasses import replace

    if s.n_i is None and s.k > 1 and s.test_type in (1, 2, 6):
        res = gsdesign_design(replace(s, n_i=np.asarray(s.timing, float), max_info_plan=1.0))
        res["sized"] = False
    else:
        res = gsdesign_design(s)
        res["sized"] = True
    res["upper_prob0"] = res["upper_prob"][:, 0]
    return res


def gsdesign_design(s) -> dict:
    """Run ``gsDesign::gsDesign`` for a native ``_Spec`` and return the native dict layout.

    Raises ``effstats.rbridge.RPackageMissing`` (with install instructions) when rpy2 or
    gsDesign is missing and ``effstats.rbridge.RError`` carrying R's message when R fails.
    """
    gs = r_package("gsDesign")  # first: without rpy2 or gsDesign, RPackageMissing says how to install them
    import rpy2.robjects as ro

    sfu, sfupar = _sf(gs, s.upper)
    kw = dict(k=int(s.k), test_type=int(s.test_type), alpha=float(s.alpha), beta=float(s.beta),
              sfu=sfu, sfupar=float(sfupar), tol=float(s.tol), r=int(s.r))
    if s.lower is not None:
        sfl, sflpar = _sf(gs, s.lower)
        kw.update(sfl=sfl, sflpar=float(sflpar))
    if s.test_type in (5, 6) and s.astar != 1 - s.alpha:
        kw["astar"] = float(s.astar)
    if s.n_i is not None:
        kw.update(n_I=ro.FloatVector(np.asarray(s.n_i, float)), maxn_IPlan=float(s.max_info_plan))
        if getattr(s, "n_fix", 1.0) != 1.0:
            kw["n_fix"] = float(s.n_fix)
    elif s.k > 1:  # gsDesign rejects an explicit timing of length 1
        kw["timing"] = ro.FloatVector(np.asarray(s.timing, float))
    x = r_call(gs.gsDesign, **kw)
    up = x.rx2("upper")
    out = {
        "k": int(len(up.rx2("bound"))),  # gsDesign may end a binding beta-spending design early (gsDType3a)
        "delta": float(x.rx2("delta")[0]),
        "upper": _vec(up.rx2("bound")),
        "n_i": _vec(x.rx2("n.I")),
        "upper_prob": _mat(up.rx2("prob")),
        "en": _vec(x.rx2("en")),
        "lower": None,
        "lower_prob": None,
        "lower_spend": None,
    }
    names = list(x.names)
    out["falsepos"] = _vec(x.rx2("falseposnb")) if "falseposnb" in names else _vec(up.rx2("spend"))
    if s.test_type != 1:
        lo = x.rx2("lower")
        out["lower"] = _vec(lo.rx2("bound"))
        out["lower_prob"] = _mat(lo.rx2("prob"))
        out["lower_spend"] = _vec(lo.rx2("spend"))
    return out


def gsdesign_sequential_pvalue(k: int, n_i, a, b, z: float) -> float:
    """gsDesign's stage-wise ordering p-value for stopping at look ``k`` with statistic ``z`` (one-sided).

    The probability under H0 of crossing the upper bound at a look before ``k``, or at ``k`` above ``z``
    (``gsDesign::gsProbability`` with the bound at look ``k`` replaced by ``z``).

    Parameters
    ----------
    k : int
        The look the evaluation stopped at (1-based).
    n_i : array of shape (n_looks,)
        Statistical information (or sample size) at each look.
    a, b : arrays of shape (n_looks,)
        Lower and upper z-bounds of the design.
    z : float
        The test statistic at look ``k``.

    Returns
    -------
    float

    See Also
    --------
    effstats.sequential.sequential_pvalue : The same p-value computed natively, without R.
    effstats.sequential.stagewise_inference : The p-value with the median-unbiased estimate and final interval.

    References
    ----------
    Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0.

    Examples
    --------
    >>> from effstats.sequential import design
    >>> from effstats.sequential.gsdesign import gsdesign_sequential_pvalue
    >>> d = design(k=3, alpha=0.05, sided=2, spending="ld_obf")  # two-sided O'Brien-Fleming-like spending
    >>> round(gsdesign_sequential_pvalue(2, [1 / 3, 2 / 3, 1.0], [-20, -20, -20], d.upper, z=2.9), 5)
    0.00192
    """
    gs = r_package("gsDesign")
    import rpy2.robjects as ro

    bb = np.asarray(b, float).copy()
    bb[k - 1] = z
    res = r_call(gs.gsProbability, k=int(k), theta=0.0, n_I=ro.FloatVector(np.asarray(n_i, float)[:k]),
                 a=ro.FloatVector(np.asarray(a, float)[:k]), b=ro.FloatVector(bb[:k]))
    return float(np.sum(_vec(res.rx2("upper").rx2("prob"))))
