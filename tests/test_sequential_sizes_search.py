"""The sample-size search of native design() against a brute-force bisection on the maximum information.

The search takes Newton steps on the power tilted from a recursion pass and reuses passes (the bounds' own pass under
H0, for the crossing probabilities and the search's start; the pass at the root, tilted, under the alternative; the
mirrored bound pass for the power of beta-spending designs); here each figure is
recomputed the straightforward way: bisection on the information to 1e-13 of the power equation at the design's
own bounds, then one ``gsprob`` pass at (0, delta). Binding beta-spending designs (test type 3), whose bounds come
out of gsDesign's iteration and its tolerance-limited roots, are compared with gsDesign itself.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import ndtri

from effstats.sequential import design
from effstats.sequential.native import _betadiff1, gsbound1, gsprob

CASES = [
    dict(k=3, test_type=1, alpha=0.025, beta=0.1, spending="hsd", spending_param=-4.0),
    dict(k=5, test_type=1, alpha=0.025, beta=0.2, spending="ld_obf"),
    dict(k=4, test_type=1, alpha=0.025, beta=0.1, spending="obf"),
    dict(k=3, test_type=2, alpha=0.05, beta=0.1, spending="ld_pocock"),
    dict(k=5, test_type=2, alpha=0.05, beta=0.2, spending="pocock"),
    dict(k=5, test_type=5, alpha=0.025, beta=0.1, spending="hsd", spending_param=-4.0, lower_param=-2.0),
    dict(k=3, test_type=5, alpha=0.025, beta=0.2, spending="ld_obf", lower_param=1.0, astar=0.2),
    dict(k=5, test_type=6, alpha=0.025, beta=0.1, spending="ld_pocock", lower_param=-2.0),
    dict(k=3, test_type=6, alpha=0.025, beta=0.2, spending="hsd", spending_param=-4.0, lower_param=1.0, astar=0.3),
]


def _bisect_information(d, delta: float, beta: float) -> float:
    """Maximum information with power 1 - beta at the design's bounds, by plain bisection."""
    a = d.lower if d.lower is not None else np.full(d.k, -20.0)
    tx = d.timing / d.timing[-1]

    def power(imax: float) -> float:
        return float(gsprob(delta, tx * imax, a, d.upper, d.r)["powr"][0])

    lo, hi = 0.5, 4.0
    assert power(lo) < 1 - beta < power(hi)
    while hi - lo > 1e-13:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if power(mid) < 1 - beta else (lo, mid)
    return 0.5 * (lo + hi)


@pytest.mark.parametrize("kw", CASES, ids=lambda kw: f"tt{kw['test_type']}-k{kw['k']}-{kw['spending']}")
def test_sizes_match_bisection(kw):
    d = design(**kw)
    delta = abs(ndtri(kw["alpha"] / (2 if kw["test_type"] == 2 else 1)) + ndtri(kw["beta"]))
    root = _bisect_information(d, delta, kw["beta"])
    np.testing.assert_allclose(d.information[-1], root, rtol=1e-8)
    a = d.lower if d.lower is not None else np.full(d.k, -20.0)
    y = gsprob([0.0, delta], d.information, a, d.upper, d.r)
    np.testing.assert_allclose(d.upper_prob, y["probhi"], atol=1e-10)
    if d.lower is not None:
        np.testing.assert_allclose(d.lower_prob, y["problo"], atol=1e-10)
    np.testing.assert_allclose([d.expected_n_h0, d.expected_n_h1], y["en"], rtol=1e-10)
    assert d.power == pytest.approx(1 - kw["beta"], abs=1e-8)


@pytest.mark.parametrize("imax", [0.4, 0.9, 1.1, 1.6])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_beta_spending_power_from_the_bound_pass(k, imax):
    """The power of a binding beta-spending design read from the mirrored bound pass equals a gsprob pass."""
    tx = np.arange(1, k + 1) / k
    delta = float(ndtri(0.975) + ndtri(0.9))
    falseneg = np.diff(np.concatenate(([0.0], 0.1 * tx ** 2)))
    b = gsbound1(0.0, tx, np.full(k, -20.0), np.diff(np.concatenate(([0.0], 0.025 * tx ** 3))))["b"]
    x = gsbound1(-delta, tx * imax, -b, falseneg)
    want = falseneg.sum() - 1 + gsprob(delta, tx * imax, -x["b"], b)["powr"][0]
    assert _betadiff1(imax, delta, tx, falseneg, b, 1e-6, 18) == pytest.approx(want, abs=1e-12)



@pytest.mark.parametrize("falseneg", [[0.05, 0.03, 0.02, 0.01], [0.4, 0.3, 0.2, 0.05]], ids=["small", "large"])
@pytest.mark.parametrize("imax", [0.05, 0.4, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("theta", [0.0, 1.0])
def test_mirrored_pass_without_its_last_bound_keeps_every_other_figure(theta, imax, falseneg):
    """A bound pass that leaves the last bound unsolved gives the same lower crossings, mass entering the last look,
    sub-densities and earlier bounds as the full pass; where an earlier bound falls below the lower one, it solves
    the last bound too and is the full pass."""
    tx = np.arange(1, 5) / 4
    delta = float(ndtri(0.975) + ndtri(0.9))
    b = gsbound1(0.0, tx, np.full(4, -20.0), np.diff(np.concatenate(([0.0], 0.025 * tx ** 3))))["b"]
    full = gsbound1(-theta * delta, tx * imax, -b, np.array(falseneg))
    part = gsbound1(-theta * delta, tx * imax, -b, np.array(falseneg), last=False)
    if np.isnan(part["b"][-1]):
        assert np.isnan(part["achieved"][-1]) and not (full["b"][:-1] < -b[:-1]).any()
        np.testing.assert_array_equal(part["b"][:-1], full["b"][:-1])
        np.testing.assert_array_equal(part["achieved"][:-1], full["achieved"][:-1])
        for (h1, z1), (h2, z2) in zip(part["dens"], full["dens"], strict=True):
            np.testing.assert_array_equal(h1, h2)
            np.testing.assert_array_equal(z1, z2)
    else:  # an earlier bound below the lower one (gsDesign then recomputes the pass on the lifted bounds)
        assert (full["b"][:-1] <= -b[:-1]).any()
        np.testing.assert_array_equal(part["b"], full["b"])
        np.testing.assert_array_equal(part["achieved"], full["achieved"])
    np.testing.assert_array_equal(part["problo"], full["problo"])
    np.testing.assert_array_equal(part["mass_last"], full["mass_last"])


@pytest.mark.parametrize("r", [18, 36])
@pytest.mark.parametrize("first", [0.01, 0.05, None], ids=["first1%", "first5%", "equal"])
def test_one_sided_pass_on_grids_cut_below_matches_the_full_grids(first, r):
    """A pass with no lower bound (``lower=False``) starts its grids above gsDesign's first candidate, where the
    density holds under 2e-9 of the mass: its bounds and upper crossings are those of the pass on gsDesign's whole
    grids (``lower=True``) to 1e-9 relative, also where a first look holds 1 % of the information (a path there
    reaches the last bound most easily from the cut-off tail)."""
    for k, gamma, alpha in itertools.product((2, 3, 5, 8), (-4.0, 1.0, 3.0), (0.001, 0.025, 0.1)):
        tx = np.arange(1, k + 1) / k if first is None else np.concatenate(([first], np.linspace(first, 1, k)[1:]))
        spent = np.diff(np.concatenate(([0.0], alpha * (1 - np.exp(-gamma * tx)) / (1 - np.exp(-gamma)))))
        cut = gsbound1(0.0, tx, np.full(k, -20.0), spent, r=r, lower=False)
        full = gsbound1(0.0, tx, np.full(k, -20.0), spent, r=r)
        np.testing.assert_allclose(cut["b"], full["b"], rtol=1e-9, atol=0)
        np.testing.assert_allclose(cut["achieved"], full["achieved"], rtol=1e-9, atol=0)
        assert cut["dens"][0][1][0] > full["dens"][0][1][0] + 5  # the cut grids do start higher

# binding beta-spending (test type 3): the search inside each round of gsDesign's iteration is the library's own, the
# rounds are gsDesign's; information, bounds and spending must agree with gsDesign's to its tolerance (tol = 1e-6)
TYPE3 = [dict(k=k, alpha=alpha, beta=beta, spending=up, spending_param=up_par, lower_spending=lo, lower_param=lo_par,
              timing=timing)
         for k, timing in [(2, None), (4, None), (4, [0.2, 0.45, 0.7, 1.0]), (7, None)]
         for alpha, beta in [(0.025, 0.1), (0.005, 0.25)]
         for (up, up_par), (lo, lo_par) in [(("hsd", -4.0), ("hsd", -2.0)), (("ld_obf", None), ("ld_pocock", None)),
                                            (("power", 3.0), ("hsd", 1.0))]]


@pytest.mark.needs_r
@pytest.mark.parametrize("kw", TYPE3, ids=lambda kw: (f"k{kw['k']}{'u' if kw['timing'] else ''}-a{kw['alpha']}-"
                                                      f"b{kw['beta']}-{kw['spending']}-{kw['lower_spending']}"))
def test_binding_beta_spending_matches_gsdesign(kw):
    n = design(**kw, test_type=3)
    g = design(**kw, test_type=3, backend="gsdesign")
    np.testing.assert_allclose(n.information, g.information, rtol=1e-6, atol=0)
    np.testing.assert_allclose(n.upper, g.upper, rtol=0, atol=1e-6)
    np.testing.assert_allclose(n.lower, g.lower, rtol=0, atol=1e-6)
    np.testing.assert_allclose(n.alpha_spent, g.alpha_spent, rtol=0, atol=1e-6)
    np.testing.assert_allclose(n.beta_spent, g.beta_spent, rtol=0, atol=1e-6)
    np.testing.assert_allclose([n.expected_n_h0, n.expected_n_h1], [g.expected_n_h0, g.expected_n_h1], rtol=1e-6)
    # and the design is what its own figures say: power 1 - beta, beta spent as the lower spending function asks
    assert n.power == pytest.approx(1 - kw["beta"], abs=1e-6)
    np.testing.assert_allclose(n.beta_spent, n.lower_spending(kw["beta"], n.timing), rtol=0, atol=1e-6)


# the search for test types 1, 2, 5 and 6 takes Newton steps on the power tilted from one recursion pass (a change of
# measure to a nearby drift) instead of a pass per step; it must land where the scalar secant search on gsprob's passes
# lands, with the crossing probabilities of a pass of its own at the root
SPREAD = [dict(k=k, test_type=tt, alpha=alpha, beta=beta, spending=sf, spending_param=par, timing=timing)
          for tt, k, alpha, beta, (sf, par), timing in [
              (1, 2, 0.025, 0.1, ("ld_obf", None), None), (1, 5, 0.005, 0.05, ("hsd", -4.0), None),
              (1, 8, 0.025, 0.2, ("ld_pocock", None), [0.1, 0.2, 0.35, 0.5, 0.6, 0.7, 0.85, 1.0]),
              (1, 12, 0.025, 0.1, ("hsd", 1.0), None), (1, 4, 0.025, 0.1, ("obf", None), None),
              (1, 6, 0.01, 0.3, ("pocock", None), [0.3, 0.4, 0.5, 0.7, 0.9, 1.0]),
              (2, 3, 0.05, 0.1, ("hsd", -4.0), [0.5, 0.8, 1.0]), (2, 5, 0.01, 0.2, ("ld_obf", None), None),
              (2, 12, 0.05, 0.1, ("ld_pocock", None), None), (2, 4, 0.05, 0.05, ("pocock", None), None),
              (5, 3, 0.025, 0.1, ("hsd", -4.0), None), (5, 5, 0.005, 0.2, ("ld_pocock", None), None),
              (5, 8, 0.025, 0.1, ("hsd", 1.0), [0.1, 0.2, 0.35, 0.5, 0.6, 0.7, 0.85, 1.0]),
              (6, 3, 0.025, 0.2, ("ld_obf", None), None), (6, 5, 0.025, 0.05, ("hsd", -4.0), [0.2, 0.3, 0.5, 0.8, 1]),
              (6, 12, 0.01, 0.1, ("ld_pocock", None), None),
              # looks that add little information (narrow kernels: the tilted sums drift faster from a pass's own)
              (1, 4, 0.0001, 0.3, ("power", 1.77), [0.125, 0.277, 0.981, 1.0]),
              (6, 6, 0.001, 0.45, ("ld_pocock", None), [0.29, 0.456, 0.474, 0.857, 0.955, 1.0])]]


@pytest.mark.parametrize("kw", SPREAD, ids=lambda kw: f"tt{kw['test_type']}-k{kw['k']}-{kw['spending']}-b{kw['beta']}")
def test_tilted_search_matches_the_secant_search(kw):
    from effstats.sequential.native import _max_info_secant, _max_info_tilt

    d = design(**kw, lower_spending="hsd" if kw["test_type"] > 2 else None)
    s, bnd = d._spec, d._bnd
    a = d.lower if d.lower is not None else np.full(d.k, -20.0)
    lower = kw["test_type"] != 1
    got = _max_info_tilt(d.delta, kw["beta"], d.timing, a, d.upper, d.r, 1.0, lower, bnd.get("dens0"))
    assert got is not None  # the tilted search ran (the secant search is its fallback)
    ref = _max_info_secant(d.delta, kw["beta"], d.timing, a, d.upper, d.r, 1.0, s.tol, lower)
    assert got[0] == pytest.approx(ref[0], rel=1e-8)
    np.testing.assert_allclose(d.information, d.timing * got[0], rtol=1e-14)
    # the crossing probabilities read from the tilted pass are a pass's own at the root
    y = gsprob(d.delta, d.timing * got[0], a, d.upper, d.r)
    np.testing.assert_allclose(got[1], y["probhi"][:, 0], rtol=0, atol=1e-10)
    if lower:
        np.testing.assert_allclose(got[2], y["problo"][:, 0], rtol=0, atol=1e-10)
    assert got[1].sum() == pytest.approx(1 - kw["beta"], abs=1e-10)


@pytest.mark.parametrize("k", [2, 5, 12])
def test_tilted_power_is_a_pass_moved_by_a_change_of_measure(k):
    """At its own drift the tilted power is the pass's; at a nearby drift it is a pass there to the quadrature's
    dependence on the grid's centre (~1e-6 per unit of relative distance), and its derivative is the pass's."""
    from effstats.sequential.native import _tilt_pass, _tilted, _upper_power

    d = design(k, 0.025, 0.1, sided=1, spending="hsd", spending_param=-4.0)
    t, b, a = d.timing, d.upper, np.full(k, -20.0)
    eta = d.delta * np.sqrt(d.information[-1])
    p = _tilt_pass(eta, t, a, b, 18)
    assert _tilted(p, eta)[0] == pytest.approx(_upper_power(eta, t, a, b, 18), abs=1e-14)
    for rel in (-1e-3, 1e-3, 1e-2):
        assert abs(_tilted(p, eta * (1 + rel))[0] - _upper_power(eta * (1 + rel), t, a, b, 18)) < 2e-5 * abs(rel)
    h = 1e-5 * eta
    slope = (_upper_power(eta + h, t, a, b, 18) - _upper_power(eta - h, t, a, b, 18)) / (2 * h)
    assert _tilted(p, eta)[1] == pytest.approx(slope, rel=1e-5)
    up, lo = _tilted(p, eta, looks=True)
    y = gsprob(eta, t, a, b, 18)
    np.testing.assert_allclose(up, y["probhi"][:, 0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(lo, y["problo"][:, 0], rtol=0, atol=1e-14)


# non-binding beta-spending (test type 4): the information is the root of gsDesign's equation (the beta-spending lower
# bound derived at that information leaves power 1 - beta), searched in Newton, secant and inverse quadratic steps to
# 0.1 tol; here by bisection to 1e-13
TYPE4 = [dict(k=k, alpha=alpha, beta=beta, spending=up, spending_param=up_par, lower_spending=lo, lower_param=lo_par,
              timing=timing)
         for k, timing in [(2, None), (3, [0.2, 0.55, 1.0]), (5, None), (8, None)]
         for alpha, beta in [(0.025, 0.1), (0.005, 0.25)]
         for (up, up_par), (lo, lo_par) in [(("hsd", -4.0), ("hsd", -2.0)), (("ld_obf", None), ("hsd", 1.0))]]


@pytest.mark.parametrize("kw", TYPE4, ids=lambda kw: (f"k{kw['k']}{'u' if kw['timing'] else ''}-a{kw['alpha']}-"
                                                      f"b{kw['beta']}-{kw['spending']}-{kw['lower_param']}"))
def test_nonbinding_beta_spending_size_is_the_root_of_its_equation(kw):
    d = design(**kw, test_type=4)
    _check_nonbinding_root(d, kw["beta"])
    assert d.power == pytest.approx(1 - kw["beta"], abs=1e-7)
    np.testing.assert_allclose(d.beta_spent, d.lower_spending(kw["beta"], d.timing), rtol=0, atol=1e-6)
    # the bounds and crossing probabilities are the mirrored pass's at that information: a gsprob pass there
    y = gsprob([0.0, d.delta], d.information, d.lower, d.upper, d.r)
    np.testing.assert_allclose(d.upper_prob, y["probhi"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(d.lower_prob, y["problo"], rtol=0, atol=1e-10)


def _check_nonbinding_root(d, beta: float, hi: float = 4.0) -> None:
    """A test type 4 design's maximum information against the bisection root of its equation in ``[0.5, hi]``, at its
    own bounds and grid."""
    falseneg = np.diff(np.concatenate(([0.0], d.lower_spending(beta, d.timing))))
    lo = 0.5

    def excess(imax: float) -> float:
        return _betadiff1(imax, d.delta, d.timing, falseneg, d.upper, d.tol, d.r)

    assert excess(lo) < 0 < excess(hi)
    while hi - lo > 1e-13:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) < 0 else (lo, mid)
    np.testing.assert_allclose(d.information[-1], 0.5 * (lo + hi), rtol=2e-7)


# looks that add 1/186 (from 0.185 to 0.186) and 1/1000 (from 0.999 to 1) of the information, one at alpha = 1e-6:
# the kernel between them is narrower than the grid's spacing, so the bounds move with the grid; the search must still
# land on its equation's root at every grid, and at the finest one on gsDesign's design at that grid
NEAR = [dict(k=8, alpha=1e-6, beta=0.01, spending="hsd", spending_param=-4.0, lower_spending="hsd", lower_param=2.0,
             timing=[0.185, 0.186, 0.225, 0.647, 0.666, 0.703, 0.778]),
        dict(k=10, alpha=0.025, beta=0.001, spending="hsd", spending_param=-1.0, lower_spending="ld_obf",
             timing=[0.137, 0.241, 0.291, 0.381, 0.53, 0.769, 0.828, 0.885, 0.999])]


@pytest.mark.parametrize("r", [None, 18, 80])
@pytest.mark.parametrize("kw", NEAR, ids=["k8-alpha1e-6", "k10-last0.999"])
def test_nonbinding_beta_spending_size_on_looks_close_together_is_the_root_of_its_equation(kw, r):
    d = design(**kw, test_type=4, r=r)
    # (on the coarsest grid the equation turns negative again past 3 times the fixed design's information)
    _check_nonbinding_root(d, kw["beta"], hi=2.0)
    assert d.power == pytest.approx(1 - kw["beta"], abs=1e-7)
    np.testing.assert_allclose(d.alpha_spent, d.spending(kw["alpha"], d.timing), rtol=1e-5, atol=0)


@pytest.mark.needs_r
@pytest.mark.parametrize("kw", NEAR, ids=["k8-alpha1e-6", "k10-last0.999"])
def test_nonbinding_beta_spending_on_looks_close_together_matches_gsdesign_on_the_finest_grid(kw):
    n = design(**kw, test_type=4, r=80)
    g = design(**kw, test_type=4, r=80, backend="gsdesign")
    np.testing.assert_allclose(n.information, g.information, rtol=1e-6, atol=0)
    np.testing.assert_allclose(n.upper, g.upper, rtol=1e-6, atol=0)
    np.testing.assert_allclose(n.lower, g.lower, rtol=0, atol=1e-6)
    np.testing.assert_allclose(n.alpha_spent, g.alpha_spent, rtol=1e-9, atol=0)


def _asymmetric_designs():
    """Test types 5 and 6 over k = 2-8, four upper and two lower spending functions, beta 0.1 and 0.2, equal and
    uneven looks, and ``astar`` below 1 - alpha: 224 designs."""
    uppers = [("hsd", -4.0), ("ld_obf", None), ("ld_pocock", None), ("hsd", 1.0)]
    for tt, k, (sf, par), beta, uneven in itertools.product((5, 6), range(2, 9), uppers, (0.1, 0.2), (False, True)):
        kw = dict(k=k, test_type=tt, alpha=0.025, beta=beta, spending=sf, spending_param=par,
                  lower_spending="hsd", lower_param=-2.0 if (k + (sf == "hsd")) % 2 else 0.5)
        if uneven:
            t = np.cumsum(np.arange(1, k + 1) ** 1.3)
            kw["timing"] = t / t[-1]
        if uneven and sf == "ld_obf" and k in (3, 6):
            kw["astar"] = 0.4
        yield kw


@pytest.mark.parametrize("tt", [5, 6])
def test_asymmetric_designs_report_the_figures_of_a_fresh_recursion(tt):
    """Every figure of a test type 5 or 6 design is that of a plain ``gsprob`` pass at its bounds and information:
    crossing probabilities under H0 and the alternative (read from the bound passes and the tilted size search) to
    1e-10, expected information, power 1 - beta, and the spending asked for, to gsDesign's tolerance."""
    n = 0
    for kw in _asymmetric_designs():
        if kw["test_type"] != tt:
            continue
        n += 1
        d = design(**kw)
        t = d.timing
        y = gsprob([0.0, d.delta], d.information, d.lower, d.upper, d.r)
        np.testing.assert_allclose(d.upper_prob, y["probhi"], rtol=0, atol=1e-10, err_msg=str(kw))
        np.testing.assert_allclose(d.lower_prob, y["problo"], rtol=0, atol=1e-10, err_msg=str(kw))
        np.testing.assert_allclose([d.expected_n_h0, d.expected_n_h1], y["en"], rtol=1e-10, err_msg=str(kw))
        assert d.power == pytest.approx(1 - kw["beta"], abs=1e-10)
        astar = kw.get("astar", 1 - kw["alpha"])
        lower_share = np.diff(d.lower_spending(astar, t), prepend=0.0)
        if tt == 5:  # binding: both bounds spend their functions' increments under H0
            np.testing.assert_allclose(np.cumsum(y["probhi"][:, 0]), d.spending(kw["alpha"], t), atol=1e-6)
            np.testing.assert_allclose(y["problo"][:-1, 0], lower_share[:-1], atol=1e-6, err_msg=str(kw))
        else:  # the upper bounds spend alpha ignoring the lower one, which spends 1 - alpha's share of astar's
            free = gsprob(0.0, d.information, np.full(d.k, -20.0), d.upper, d.r)["probhi"][:, 0]
            np.testing.assert_allclose(d.alpha_spent, np.cumsum(free), rtol=0, atol=1e-12)
            np.testing.assert_allclose(d.alpha_spent, d.spending(kw["alpha"], t), atol=1e-6)
            if "astar" in kw:
                want = lower_share
            else:
                want = (1 - y["probhi"][:, 0].sum()) * lower_share / astar
            np.testing.assert_allclose(y["problo"][:-1, 0], want[:-1], atol=1e-6, err_msg=str(kw))
    assert n == 112
