"""Group-sequential designs: native recursive integration vs gsDesign (live, through rpy2) and the literature."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_normal, norm

from effstats import rbridge
from effstats.sequential import design, get_spending
from effstats.sequential.native import _Spec, gridpts, gsprob, zeroin

FAMILIES = [("pocock", None), ("obf", None), ("wt", 0.25), ("ld_pocock", None), ("ld_obf", None),
            ("hsd", -4.0), ("hsd", 1.0), ("power", 3.0)]
# every family x sided x timing, cycling k in 2..10 and alpha in 0.005..0.1 so each appears with each family
_KA = [(2, 0.05), (3, 0.025), (4, 0.1), (5, 0.005), (6, 0.01), (7, 0.05), (8, 0.025), (9, 0.1), (10, 0.005), (10, 0.1)]


def _timing(k: int, unequal: bool):
    return None if not unequal else (np.arange(1, k + 1) / k) ** 1.4


def _grid():
    cases, i = [], 0
    for fam, par in FAMILIES:
        for sided in (1, 2):
            for unequal in (False, True):
                for _ in range(3):
                    k, a = _KA[i % len(_KA)]
                    i += 1
                    cases.append(dict(k=k, alpha=a, sided=sided, spending=fam, spending_param=par,
                                      timing=_timing(k, unequal)))
    for tt in (3, 4, 5, 6):
        for j, (fam, par) in enumerate([("hsd", -4.0), ("ld_obf", None), ("ld_pocock", None), ("power", 2.0)]):
            k, a = _KA[(3 * tt + j) % len(_KA)]
            cases.append(dict(k=k, alpha=min(a, 0.05), test_type=tt, spending=fam, spending_param=par,
                              timing=_timing(k, j % 2 == 1)))
    return cases


GRID = _grid()


def _ids(c):
    tt = c.get("test_type", c.get("sided"))
    return f"{c['spending']}-t{tt}-k{c['k']}-a{c['alpha']}-{'uneq' if c['timing'] is not None else 'eq'}"


# ---------------------------------------------------------------------------------------- literature
def test_pocock_constants_two_sided_005():
    # Jennison & Turnbull Table 2.1 / Pocock (1977): C_P for K = 2..5, two-sided alpha = 0.05
    got = [design(k, 0.05, sided=2, spending="pocock").upper for k in range(2, 6)]
    for g in got:
        assert np.ptp(g) < 1e-12  # a constant bound
    np.testing.assert_allclose([g[0] for g in got], [2.178, 2.289, 2.361, 2.413], atol=5e-4)


def test_obrien_fleming_final_bounds():
    got = [design(k, 0.05, sided=2, spending="obf") for k in range(2, 6)]
    np.testing.assert_allclose([d.upper[-1] for d in got], [1.977, 2.004, 2.024, 2.040], atol=5e-4)
    for d in got:  # c / sqrt(t) shape
        np.testing.assert_allclose(d.upper * np.sqrt(d.timing), d.upper[-1], rtol=1e-12)


def test_gsdesign_default_design_values():
    # gsDesign() defaults (k=3, test.type=4, HSD -4 / -2): printed bounds 3.01/2.55/2.00 and -0.24/0.94/2.00, ratio 1.07
    d = design(3, 0.025, 0.1, test_type=4, spending="hsd", spending_param=-4, lower_param=-2)
    np.testing.assert_allclose(d.upper, [3.0107, 2.5465, 1.9992], atol=1e-4)
    np.testing.assert_allclose(d.lower, [-0.2387, 0.9411, 1.9992], atol=1e-4)
    assert abs(d.inflation - 1.0699) < 1e-4


# ---------------------------------------------------------------------------------------- brute force
@pytest.mark.parametrize("fam", ["ld_pocock", "ld_obf", "hsd", "pocock"])
def test_two_look_error_equals_bivariate_normal(fam):
    d = design(2, 0.05, sided=1, spending=fam, timing=[0.4, 1.0])
    rho = np.sqrt(0.4)
    p_no_cross = multivariate_normal(mean=[0, 0], cov=[[1, rho], [rho, 1]]).cdf(d.upper)
    assert abs((1 - p_no_cross) - 0.05) < 2e-6
    if fam != "pocock":  # the first look spends exactly f(0.4)
        assert abs(norm.sf(d.upper[0]) - get_spending(fam)(0.05, 0.4)) < 1e-12


def test_three_look_power_matches_mvn():
    d = design(3, 0.025, 0.2, sided=1, spending="ld_obf", timing=[0.3, 0.7, 1])
    t = d.timing
    cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    mean = d.delta * np.sqrt(d.information)
    p = 1 - multivariate_normal(mean=mean, cov=cov).cdf(d.upper)
    assert abs(p - d.power) < 2e-4 and abs(d.power - 0.8) < 1e-5


def test_grid_points_integrate_normal_density():
    z, w = gridpts(18, 0.3, -20.0, 1.7)
    dens = norm.pdf(z - 0.3)
    assert abs(w @ dens - norm.cdf(1.7 - 0.3)) < 1e-6  # Simpson on ~200 points
    assert z.size % 2 == 1 and z[-1] == 1.7 and np.all(np.diff(z) > 0)


@pytest.mark.parametrize("theta", [0.0, 3.2])
@pytest.mark.parametrize("i1, i2", [(0.2, 0.4), (0.6, 0.8), (0.05, 0.5), (0.9, 0.91)])
@pytest.mark.parametrize("lo, hi", [(-20.0, 20.0), (-6.24, 2.9), (-1.0, 3.0), (0.5, 2.2)])
def test_kernel_product_matches_the_direct_kernel(theta, i1, i2, lo, hi, monkeypatch):
    """The look-to-look kernel's product with the sub-density, its rows on the grid's equally spaced middle factored
    (``r`` given; on every CPU, including those where the direct kernel is the default), is the direct kernel's to
    1e-13 relative: on grids under H0 and at a drift, one- and two-sided, and where a look adds a sliver of
    information (the factors' exponents too large: the direct kernel)."""
    from effstats.sequential import _recursion
    from effstats.sequential._recursion import _RT2PI_H, _grid_run, _h1, _hupdate

    monkeypatch.setattr(_recursion, "_FACTOR_KERNELS", True)

    rt1, rt2, dk = i1 ** 0.5, i2 ** 0.5, i2 - i1
    z1, w1 = gridpts(18, theta * rt1, lo, hi)
    z2, w2 = gridpts(18, theta * rt2, lo + 0.3, hi - 0.2)
    h = _h1(theta, z1, w1, i1)
    x = np.subtract.outer(z2 * (rt2 / dk ** 0.5), z1 * (rt1 / dk ** 0.5) + theta * dk / dk ** 0.5)
    want = np.exp(-x * x / 2) @ h * w2 * (rt2 / dk ** 0.5) / _RT2PI_H
    got = _hupdate(theta, w2, i1, z1, h, i2, z2, r=18)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    if hi - lo > 10:  # the wide grids' middle is factored (checked above), except where a look adds a sliver
        assert _grid_run(18, theta * rt2, z2) is not None
    if not theta and lo == -hi:  # symmetric bounds under H0: the half kernel of the rows z2 >= 0, mirrored
        np.testing.assert_allclose(_hupdate(0.0, w1, i1, z1, h, i2, z1, sym=True, r=18), _hupdate(
            0.0, w1, i1, z1, h, i2, z1), rtol=1e-13, atol=0)


@pytest.mark.parametrize("tt", [1, 2, 3, 4, 5, 6])
def test_designs_with_factored_kernels_match_the_direct_kernels(tt, monkeypatch):
    """The kernels' factored rows (the default where numpy's exp is scalar) and the direct kernels (the default where
    it is vectorised) give the same designs: bounds, information and crossing probabilities to 1e-12 relative."""
    from effstats.sequential import _recursion

    kw = dict(k=5, test_type=tt, alpha=0.05 if tt == 2 else 0.025, beta=0.1, spending="hsd", spending_param=-4.0,
              timing=[0.15, 0.4, 0.6, 0.8, 1.0])
    if tt > 2:
        kw.update(lower_spending="hsd", lower_param=-2.0)
    got = {}
    for factored in (False, True):
        monkeypatch.setattr(_recursion, "_FACTOR_KERNELS", factored)
        d = design(**kw)
        got[factored] = [d.upper, d.information, d.upper_prob] + ([] if tt < 3 else [d.lower, d.lower_prob])
    for direct, factored in zip(got[False], got[True]):
        np.testing.assert_allclose(factored, direct, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("k, timing", [(2, None), (3, None), (5, None), (5, [0.15, 0.4, 0.6, 0.8, 1.0]), (7, None)])
@pytest.mark.parametrize("upper, lower", [(("hsd", -4.0), ("hsd", -2.0)), (("ld_obf", None), ("hsd", 1.0)),
                                          (("ld_pocock", None), ("power", 2.0))])
def test_test_type_5_leaves_the_last_lower_bound_to_the_caller(k, timing, upper, lower, monkeypatch):
    """gsbound(last=False), for test type 5's last lower bound that gsDesign sets to the upper one: the upper bound
    and the crossing probabilities of the joint iteration to 1e-11 and 1e-12 (gsDesign's further steps square the last
    one), the densities entering the looks bit for bit, the last lower bound and its crossing NaN, in fewer
    evaluations."""
    from effstats.sequential import _recursion, get_spending
    from effstats.sequential.native import _incr, gsbound

    t = np.arange(1, k + 1) / k if timing is None else np.asarray(timing)
    fp = _incr(get_spending(*upper)(0.025, t))
    tn = _incr(get_spending(*lower)(0.975, t))
    calls = []
    ndtr = _recursion.ndtr
    monkeypatch.setattr(_recursion, "ndtr", lambda *a: calls.append(np.size(a[0])) or ndtr(*a))
    full = gsbound(t, tn, fp)
    n_full = sum(calls)
    calls.clear()
    cut = gsbound(t, tn, fp, last=False)
    assert sum(calls) < n_full
    assert full["error"] == cut["error"] == 0 and cut["mass_last"] == full["mass_last"]
    np.testing.assert_allclose(cut["b"], full["b"], rtol=1e-11, atol=0)
    np.testing.assert_allclose(cut["probhi"], full["probhi"], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(cut["a"][:-1], full["a"][:-1])
    np.testing.assert_array_equal(cut["problo"][:-1], full["problo"][:-1])
    assert np.isnan(cut["a"][-1]) and np.isnan(cut["problo"][-1])
    for (h, z), (h0, z0) in zip(cut["dens"], full["dens"], strict=True):
        np.testing.assert_array_equal(h, h0)
        np.testing.assert_array_equal(z, z0)


def test_kernel_choice_reads_the_cpu_features_numpy_has(monkeypatch):
    """The CPU features come from numpy's private table: where it is there, AVX512F decides; a numpy without it (the
    table moved or renamed) counts as scalar exp, not as an error on importing the sequential modules."""
    import importlib

    from effstats.sequential import _recursion

    try:
        table = importlib.import_module("numpy._core._multiarray_umath").__cpu_features__
    except ImportError:
        table = importlib.import_module("numpy.core._multiarray_umath").__cpu_features__
    assert _recursion._vector_exp() is bool(table.get("AVX512F"))
    assert _recursion._FACTOR_KERNELS is not _recursion._vector_exp()

    def without(name):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(importlib, "import_module", without)
    assert _recursion._vector_exp() is False


def test_zeroin_finds_roots_like_brent():
    assert abs(zeroin(lambda x: x**3 - 2, 0, 2, tol=1e-12) - 2 ** (1 / 3)) < 1e-11


# ---------------------------------------------------------------------------------------- properties
@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 8), alpha=st.floats(0.005, 0.2), fam=st.sampled_from(["ld_pocock", "ld_obf", "hsd", "power"]),
       sided=st.sampled_from([1, 2]))
def test_spending_designs_spend_exactly_alpha(k, alpha, fam, sided):
    d = design(k, alpha, 0.1, sided=sided, spending=fam)
    assert np.all(np.diff(d.alpha_spent) >= -1e-12)
    assert abs(d.alpha_spent[-1] - alpha) < 1e-6 * max(1, k)
    # the last bound exceeds the fixed-sample critical value unless there is one look
    z_fix = norm.isf(alpha / sided)
    assert d.upper[-1] >= z_fix - 1e-8
    assert d.inflation >= 1 - 1e-8 and d.expected_n_h1 <= d.inflation + 1e-9
    assert abs(d.power - 0.9) < 1e-5


# ---------------------------------------------------------------------------------------- gsDesign, live
@pytest.mark.needs_r
@pytest.mark.parametrize("case", GRID, ids=[_ids(c) for c in GRID])
def test_native_matches_gsdesign(case):
    n = design(**case, backend="native")
    g = design(**case, backend="gsdesign")
    assert g.backend == "gsdesign" and n.backend == "native"
    np.testing.assert_allclose(n.upper, g.upper, rtol=0, atol=1e-6)
    if g.lower is not None:
        np.testing.assert_allclose(n.lower, g.lower, rtol=0, atol=1e-6)
    np.testing.assert_allclose(n.information, g.information, rtol=1e-6)
    np.testing.assert_allclose([n.expected_n_h0, n.expected_n_h1], [g.expected_n_h0, g.expected_n_h1], rtol=1e-6)
    np.testing.assert_allclose(n.alpha_spent, g.alpha_spent, atol=1e-7)
    if g.beta_spent is not None:
        np.testing.assert_allclose(n.beta_spent, g.beta_spent, atol=1e-7)


@pytest.mark.needs_r
@pytest.mark.parametrize("tt,fam", [(1, "ld_pocock"), (2, "ld_obf"), (2, "hsd"), (4, "hsd"), (6, "ld_pocock")])
def test_recompute_at_observed_information_matches_gsdesign(tt, fam):
    planned = design(4, 0.05 if tt == 2 else 0.025, test_type=tt, spending=fam)
    observed = [130, 260, 345, 470]  # looks off the plan; planned maximum 500
    n = planned.recompute(observed, max_information=500)
    g = planned.recompute(observed, max_information=500, backend="gsdesign")
    np.testing.assert_allclose(n.timing, np.array(observed) / 500)
    np.testing.assert_allclose(n.upper, g.upper, atol=1e-6)
    if g.lower is not None:
        np.testing.assert_allclose(n.lower, g.lower, atol=1e-6)
    if tt in (1, 2):  # spending evaluated at the observed fractions; the final look spends less than alpha
        f = planned.spending(n.alpha / tt, n.timing)
        np.testing.assert_allclose(n.alpha_spent, tt * f, atol=1e-6)


@pytest.mark.needs_r
@pytest.mark.parametrize("info,max_info,k_out", [([0.3, 0.6, 0.9, 1.2], 1.2, 4), ([0.6, 1.2, 1.8, 2.4], 2.4, 3),
                                                  ([0.35, 0.7, 1.0, 1.3], 1.0, 4)])
def test_binding_beta_spending_at_observed_information_matches_gsdesign(info, max_info, k_out):
    # gsDType3a: when the power target is met before the last look, gsDesign ends the design there
    kw = dict(alpha=0.025, test_type=3, spending="hsd", spending_param=-4, information=info, max_information=max_info)
    n, g = design(**kw), design(**kw, backend="gsdesign")
    assert n.k == g.k == k_out and n.timing.size == k_out
    np.testing.assert_allclose(n.upper, g.upper, atol=1e-6)
    np.testing.assert_allclose(n.lower, g.lower, atol=1e-6)


@pytest.mark.needs_r
def test_r_error_becomes_python_exception_with_rs_message():
    from effstats.sequential.gsdesign import gsdesign_design

    spec = _Spec(k=3, test_type=2, alpha=0.025, beta=0.1, timing=np.array([1 / 3, 2 / 3, 1]),
                 upper=get_spending("ld_pocock"),
                 lower=None, astar=0.975, n_i=None, max_info_plan=1.0, tol=1e-6, r=0)
    with pytest.raises(rbridge.RError, match="R error"):
        gsdesign_design(spec)


# ---------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kw,arg", [
    (dict(k=0), "k"), (dict(k=3, alpha=0), "alpha"), (dict(k=3, alpha=1.2), "alpha"), (dict(k=3, beta=1.0), "beta"),
    (dict(k=3, beta=0.0), "beta"), (dict(k=3, timing=[0.5, 0.4, 1]), "timing"),
    (dict(k=3, timing=[0.2, 0.5, 0.9]), "timing"),
    (dict(k=3, timing=[0.2, 0.5, 0.7, 1]), "timing"), (dict(k=3, spending="nope"), "spending"),
    (dict(k=3, test_type=7), "test_type"), (dict(k=3, test_type=4, spending="pocock"), "spending"),
    (dict(k=3, backend="sas"), "backend"), (dict(information=[10, 5, 20]), "information"),
    (dict(k=3, spending="power", spending_param=-1), "spending"), (dict(k=3, alpha=float("nan")), "alpha"),
])
def test_bad_input_names_the_argument(kw, arg):
    with pytest.raises(ValueError, match=f"^{arg}"):
        design(**kw)


def test_one_look_with_the_gsdesign_backend_names_k_and_the_native_backend():
    # gsDesign refuses k = 1 with a message about the timing of interim analyses; native gives the fixed test
    assert design(k=1).upper == pytest.approx([norm.ppf(0.975)], abs=1e-12)
    with pytest.raises(ValueError, match=r"^k: gsDesign needs at least 2 looks; .*backend='native'"):
        design(k=1, backend="gsdesign")
    with pytest.raises(ValueError, match=r"^information: gsDesign needs at least 2 looks .*backend='native'"):
        design(information=[100], backend="gsdesign")


def test_result_is_frozen_and_tabulates():
    d = design(4, 0.05, spending="ld_pocock")
    with pytest.raises(Exception):
        d.k = 5  # type: ignore[misc]
    df = d.to_frame()
    assert list(df.columns[:5]) == ["timing", "information", "upper", "lower", "nominal_p"]
    np.testing.assert_allclose(df["nominal_p"], norm.sf(d.upper))
    p = d.crossing_probability([0.0, d.delta])
    np.testing.assert_allclose(p["upper"], d.upper_prob, atol=1e-12)
    np.testing.assert_allclose(gsprob(0.0, d.information, d.lower, d.upper)["probhi"][:, 0], d.upper_prob[:, 0])


# ---------------------------------------------------------------------------------------- root finding at the edges
def test_ld_obf_first_look_at_0_2_alpha_0_01_matches_rpact():
    # rpact 3.3.4: getDesignGroupSequential(kMax = 2, alpha = 0.01, sided = 1, typeOfDesign = "asOF",
    #                                       informationRates = c(0.2, 1))$criticalValues = 5.641579, 2.326348
    d = design(2, 0.01, sided=1, spending="ld_obf", timing=[0.2, 1])
    np.testing.assert_allclose(d.upper, [5.641579, 2.326348], atol=1e-6)
    # the design needs the fixed-sample information to within rounding, so the sample-size search's bracket must
    # reach down to it (a bracket starting just above would have no sign change)
    assert d.inflation == pytest.approx(1.0, abs=1e-4) and d.power == pytest.approx(0.9, abs=1e-5)


@pytest.mark.parametrize("alpha", [0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05])
@pytest.mark.parametrize("timing", [[0.1, 1.0], [0.1, 0.5, 1.0]])
def test_first_look_at_0_1_sizes_for_every_alpha(alpha, timing):
    for sided in (1, 2):
        d = design(len(timing), alpha * sided, sided=sided, spending="ld_obf", timing=timing)
        assert d.power == pytest.approx(0.9, abs=1e-5)
        assert 1 - 1e-4 < d.inflation < 1.1
        assert d.alpha_spent[-1] == pytest.approx(alpha * sided, abs=1e-6)


@pytest.mark.needs_r
@pytest.mark.parametrize("alpha", [0.005, 0.01, 0.025, 0.05])
def test_first_look_at_0_1_bounds_match_rpact_live(alpha):
    import rpy2.robjects as ro

    rp = rbridge.r_package("rpact")
    r = rbridge.r_call(rp.getDesignGroupSequential, kMax=2, alpha=alpha, sided=1, typeOfDesign="asOF",
                       informationRates=ro.FloatVector([0.1, 1.0]))
    crit = np.array(ro.r("function(d) d$criticalValues")(r), float)
    for backend in ("native", "gsdesign"):
        d = design(2, alpha, sided=1, spending="ld_obf", timing=[0.1, 1], backend=backend)
        assert abs(d.upper[1] - crit[1]) < 1e-5
        # the first look spends < 1e-9: compare what is spent (rpact reports Inf, gsDesign's formula caps at 20,
        # when the spend rounds to 0)
        assert abs(norm.sf(d.upper[0]) - norm.sf(crit[0])) < 1e-12


@pytest.mark.needs_r
def test_gsdesign_backend_bounds_without_its_failing_search():
    # gsDesign's own sample-size search fails for these looks (uniroot on [n.fix, 10 n.fix]); the gsDesign backend
    # still returns the bounds (gsDesign's n.I mode), and reading a size surfaces R's message.
    g = design(2, 0.01, sided=1, spending="ld_obf", timing=[0.2, 1], backend="gsdesign")
    np.testing.assert_allclose(g.upper, [5.641579, 2.326348], atol=1e-6)
    assert not g.sizes_computed
    with pytest.raises(rbridge.RError, match="not of opposite sign"):
        g.information


# ---------------------------------------------------------------------------------------- sizes on demand
def test_bounds_do_not_run_the_sample_size_search():
    d = design(6, 0.05, spending="ld_obf")
    assert not d.sizes_computed
    df = d.to_frame(sizes=False)
    assert "information" not in df.columns and not d.sizes_computed
    assert "inflation" not in repr(d)
    infl = d.inflation  # computed on this first access, once
    assert d.sizes_computed and infl > 1 and d.to_frame()["information"].iloc[-1] == pytest.approx(infl)
    np.testing.assert_allclose(d.upper_prob[:, 0].sum() * 2, d.alpha_spent[-1], atol=1e-9)


def test_alpha_spent_from_newton_equals_full_recursion():
    for kw in (dict(sided=2, spending="ld_pocock"), dict(sided=1, spending="hsd", spending_param=1.0),
               dict(test_type=5, spending="ld_obf"), dict(test_type=6, spending="power", spending_param=2.0)):
        d = design(5, 0.025 if kw.get("sided") != 2 else 0.05, **kw)
        a = d.lower if d.lower is not None and d.test_type not in (4, 6) else np.full(5, -20.0)
        p = gsprob(0.0, d.timing, a, d.upper)["probhi"][:, 0]
        want = np.cumsum(p) * (2 if d.test_type == 2 else 1)
        np.testing.assert_allclose(d.alpha_spent, want, atol=1e-12)


# ---------------------------------------------------------------------------------------- clear errors
@pytest.mark.parametrize("kw,arg", [
    (dict(information=[100, 200], max_information=50), "max_information"),
    (dict(information=[100, 200, 300], max_information=150), "max_information"),
    (dict(k=3, spending="ld_pocock", spending_param=3.0), "spending_param"),
    (dict(k=3, spending="pocock", spending_param=0.5), "spending_param"),
    (dict(k=3, spending="obf", spending_param=1.0), "spending_param"),
    (dict(k=3, test_type=4, lower_spending="ld_pocock", lower_param=-2.0), "lower_param"),
    (dict(k=3, sided=2, lower_param=-2.0), "lower_param"),
    (dict(k=3, test_type=1, lower_spending="ld_obf"), "lower_spending"),
    (dict(k=3, sided=2, lower_spending="ld_pocock"), "lower_spending"),
    (dict(k=3, max_information=10.0), "max_information"),
    (dict(information=[1, 2, 3], timing=[0.2, 0.5, 1]), "timing"),
    (dict(information=[1.0, float("nan"), 3.0]), "information"),
])
def test_silent_garbage_is_now_an_error(kw, arg):
    with pytest.raises(ValueError, match=f"^{arg}"):
        design(**kw)


def test_lower_spending_default_and_recompute_of_a_design_without_a_lower_bound_are_accepted():
    # the default lower_spending is gsDesign's and goes unused by test types 1 and 2; a design recomputed at observed
    # information passes its own lower_spending, None
    for tt in (1, 2):
        d = design(3, test_type=tt, lower_spending="hsd")
        assert d.lower_spending is None
        np.testing.assert_allclose(d.recompute([1.0, 2.0, 3.0]).upper, d.upper, rtol=1e-9)


def test_final_look_may_overrun_the_planned_maximum():
    d = design(alpha=0.05, information=[100, 200, 320], max_information=300)
    assert d.alpha_spent[-1] == pytest.approx(0.05, abs=1e-6) and d.upper[-1] < 20


def test_recompute_keeps_the_lower_spending_parameter():
    d = design(4, 0.025, test_type=4, spending="hsd", spending_param=-4, lower_param=-1.0)
    assert d.lower_spending.param == -1.0
    assert d.recompute([100, 220, 310, 400], max_information=400).lower_spending.param == -1.0


def test_zeroin_failures_are_runtime_errors_and_warnings():
    from effstats.exceptions import ConvergenceWarning

    with pytest.raises(RuntimeError):
        zeroin(lambda x: x**2 + 1, -1.0, 1.0)
    with pytest.warns(ConvergenceWarning):
        x = zeroin(lambda x: x**3 - 2, 0.0, 2.0, tol=1e-14, maxiter=2)
    assert 0.0 <= x <= 2.0 and abs(x - 2 ** (1 / 3)) > 1e-14  # the last iterate, short of the tolerance


def test_design_pickles_before_and_after_sizes():
    import pickle

    d = design(5, 0.05, spending="ld_obf")
    fresh = pickle.loads(pickle.dumps(d))  # sizes not computed yet: computed after unpickling
    assert not fresh.sizes_computed and fresh.inflation == pytest.approx(d.inflation, rel=1e-12)
    np.testing.assert_array_equal(fresh.upper, d.upper)
    again = pickle.loads(pickle.dumps(d))  # with the cached sizes
    assert again.sizes_computed and again.expected_n_h1 == d.expected_n_h1


@pytest.mark.parametrize("kw", [dict(alpha=0.6, sided=1), dict(alpha=0.5, test_type=4), dict(alpha=0.7, test_type=1)])
def test_one_sided_alpha_of_a_half_or_more_is_refused(kw):
    """One-sided alpha >= 0.5 puts the final critical value at or below 0 (design(3, 0.6, sided=1) would end at
    -0.045). rpact refuses it (getDesignGroupSequential: 'alpha' out of bounds [1e-06; 0.5));
    gsDesign(k=2, test.type=1, alpha=0.7) returns the bounds 1.382 / -0.523."""
    with pytest.raises(ValueError, match="^alpha"):
        design(3, beta=0.1, **kw)
    assert design(3, 0.98, beta=0.005, sided=2).upper[-1] > 0  # two-sided total: 0.49 per tail is allowed
    assert design(3, 0.49, beta=0.1, sided=1).upper[-1] > 0  # just below the limit


def test_computed_timing_with_rounding_error_is_accepted():
    """np.cumsum([0.1] * 10) ends at 0.9999999999999999: a last fraction within 1e-9 of 1 is taken as 1; a
    genuinely short last fraction is refused."""
    t = np.cumsum([0.1] * 10)
    assert t[-1] != 1
    d = design(10, 0.05, timing=t)
    assert d.timing[-1] == 1.0
    np.testing.assert_allclose(d.upper, design(10, 0.05).upper, atol=1e-12)
    assert design(3, 0.05, timing=[0.2, 0.5, 1 - 5e-10]).timing[-1] == 1.0
    for last in (0.99999, 1 - 2e-9):
        with pytest.raises(ValueError, match="^timing"):
            design(3, 0.05, timing=[0.2, 0.5, last])


# designs the gsDesign grid above does not reach: alpha 0.001 / 0.2, k = 1 and 20, spending parameters at their
# extremes, a first look at 10 % of the information, test types 3-6 at each
EXTREME = [dict(k=k, alpha=a, test_type=tt, spending=fam, spending_param=par, timing=tim)
           for (k, tim) in [(4, [0.1, 0.15, 0.6, 1.0]), (20, None)]
           for (fam, par) in [("hsd", -8.0), ("hsd", 1.0), ("power", 0.5), ("power", 5.0), ("ld_obf", None)]
           for tt, a in [(1, 0.001), (2, 0.4), (3, 0.2), (4, 0.2), (6, 0.001)]
           if not (k == 20 and tt in (3, 4, 6))]


@pytest.mark.parametrize("tt", [1, 2, 3, 4, 5, 6])
def test_one_look_is_the_fixed_sample_test(tt):
    """k = 1: bound z_{1 - alpha}, information 1, power 1 - beta (gsDesign itself refuses k = 1 in gsDErrorCheck:
    'input timing of interim analyses must be increasing strictly between 0 and 1')."""
    d = design(1, 0.002 if tt == 2 else 0.001, 0.1, test_type=tt)
    assert d.upper[0] == pytest.approx(norm.isf(0.001), abs=1e-9)
    assert d.information[0] == pytest.approx(1, abs=1e-6) and d.power == pytest.approx(0.9, abs=1e-6)


@pytest.mark.needs_r
@pytest.mark.parametrize("case", EXTREME, ids=[_ids(c) for c in EXTREME])
def test_native_matches_gsdesign_at_the_extremes(case):
    """Measured max |native - gsDesign| over these: 2.6e-8 (bounds, n.I, en); gsDesign 3.11.0 via rpy2."""
    n = design(**case, beta=0.1)
    g = design(**case, beta=0.1, backend="gsdesign")
    np.testing.assert_allclose(n.upper, g.upper, rtol=0, atol=1e-6)
    if g.lower is not None:
        np.testing.assert_allclose(n.lower, g.lower, rtol=0, atol=1e-6)
    np.testing.assert_allclose(n.information, g.information, rtol=1e-6)
    np.testing.assert_allclose([n.expected_n_h0, n.expected_n_h1], [g.expected_n_h0, g.expected_n_h1], rtol=1e-6)


def test_observed_information_in_sample_sizes_with_n_fixed():
    """Information in sample sizes: the drift z_alpha + z_beta is per unit of a fixed design of information 1
    (gsDesign's n.fix = 1), so without n_fixed the power would read 1.0 and expected_n_h1 100. With n_fixed
    (gsDesign's n.fix) they are on the user's scale, and without it reading the sizes warns."""
    planned = design(3, 0.05, 0.1, sided=2, spending="ld_obf")
    n_fix = 300 / planned.inflation
    d = design(alpha=0.05, sided=2, information=[100, 200, 300], spending="ld_obf", n_fixed=n_fix)
    assert d.power == pytest.approx(0.9, abs=1e-6)
    assert d.expected_n_h1 == pytest.approx(planned.expected_n_h1 * n_fix, rel=1e-6)
    from effstats.sequential import conditional_power

    np.testing.assert_allclose(conditional_power(d, 1, 1.0), conditional_power(planned, 1, 1.0), atol=1e-8)
    assert d.recompute([100, 250, 320], max_information=300).n_fixed == n_fix
    bare = design(alpha=0.05, sided=2, information=[100, 200, 300], spending="ld_obf")
    with pytest.warns(UserWarning, match="^n_fixed"):
        bare.power
    for kw in (dict(k=3, n_fixed=100.0), dict(information=[1, 2], n_fixed=0.0), dict(information=[1, 2], n_fixed=True)):
        with pytest.raises(ValueError, match="^n_fixed"):
            design(**kw)


@pytest.mark.needs_r
def test_n_fixed_matches_gsdesign_n_fix_beta_spending():
    """gsDesign(k=3, test.type=4, alpha=0.025, beta=0.1, sfu=sfLDOF, n.I=c(100, 200, 300), maxn.IPlan=300,
    n.fix=296.4859): lower -0.2919544 0.8657003 1.9020860, en 179.3234 234.7532, delta 0.1882548."""
    kw = dict(alpha=0.025, test_type=4, information=[100, 200, 300], spending="ld_obf", n_fixed=296.4859)
    n, g = design(**kw), design(**kw, backend="gsdesign")
    np.testing.assert_allclose(n.lower, [-0.2919544, 0.8657003, 1.9020860], atol=1e-6)
    np.testing.assert_allclose([n.expected_n_h0, n.expected_n_h1], [179.3234, 234.7532], atol=1e-4)
    np.testing.assert_allclose(n.lower, g.lower, atol=1e-6)
    assert n.delta == pytest.approx(0.1882548, abs=1e-7) and g.delta == pytest.approx(n.delta, rel=1e-9)


LATE_CLUSTERED_TYPE3 = dict(k=10, alpha=0.2, beta=0.01, test_type=3, spending="hsd", spending_param=1.0,
                            lower_spending="hsd", lower_param=-2.0, timing=[0.9 + 0.1 * j / 9 for j in range(10)])


@pytest.mark.needs_r
def test_binding_beta_spending_with_late_clustered_looks_matches_gsdesign():
    # a full update of the upper bounds after the first round leaves no path past look 9; the design exists
    n = design(**LATE_CLUSTERED_TYPE3)
    g = design(**LATE_CLUSTERED_TYPE3, backend="gsdesign")
    # both stop the slowly converging boundary iteration at tol = 1e-6 of the spending, at nearby points
    np.testing.assert_allclose(n.upper, g.upper, rtol=0, atol=1e-4)
    np.testing.assert_allclose(n.lower, g.lower, rtol=0, atol=1e-4)
    np.testing.assert_allclose(n.information, g.information, rtol=2e-5)
    assert abs(n.alpha_spent[-1] - 0.2) <= 1e-6 and abs(n.beta_spent[-1] - 0.01) <= 1e-6


def test_binding_beta_spending_whose_iteration_does_not_settle_is_refused_naming_the_argument():
    kw = dict(k=4, alpha=0.1, beta=0.1, test_type=3, spending="power", spending_param=3.0, lower_spending="ld_pocock",
              timing=[0.6032527094166099, 0.7510008170830034, 0.9276269542494394, 1.0])
    with pytest.raises(ValueError, match="^lower_spending: .*does not settle"):
        design(**kw)


@pytest.mark.parametrize("kw", [
    dict(k=7, alpha=0.001, beta=0.2, spending="power", spending_param=3.0, lower_spending="ld_obf",
         timing=[0.12534527744642887, 0.21511188232390072, 0.29245422938636584, 0.32052594446714017,
                 0.32156853977821015, 0.37299158690240636, 1.0]),
    dict(k=10, alpha=0.4, beta=0.5, spending="power", spending_param=3.0, lower_spending="hsd", lower_param=-2.0,
         timing=[0.9 + 0.1 * j / 9 for j in range(10)]),
    dict(k=9, alpha=0.025, beta=0.8, spending="hsd", spending_param=-10.0, lower_spending="hsd", lower_param=-2.0,
         timing=[0.9 + 0.0125 * j for j in range(9)]),
], ids=["close-looks", "late-looks-power", "late-looks-hsd"])
def test_binding_beta_spending_on_a_finer_grid_spends_alpha_and_beta_on_it(kw):
    # designs whose futility bound needs a grid finer than gsDesign's 18 (gsDesign refuses them): every pass of the
    # boundary iteration is on that grid, so the design spends what it reports
    d = design(**kw, test_type=3)
    assert d.r > 18
    np.testing.assert_allclose(d.alpha_spent, d.spending(kw["alpha"], d.timing), rtol=0, atol=1e-6)
    np.testing.assert_allclose(d.beta_spent, d.lower_spending(kw["beta"], d.timing), rtol=0, atol=1e-6)


@pytest.mark.parametrize("k, alpha, kw", [(3, 1e-300, {}), (3, 1e-100, dict(sided=1)),
                                          (3, 1e-20, dict(sided=1, spending="ld_obf"))])
def test_alpha_too_small_to_spend_is_refused(k, alpha, kw):
    """Bounds capped at z = 20 spend about 1e-89 whatever alpha asked: refused, with no warning first."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=rf"^alpha: {alpha:g} is too small to spend: every bound reaches "
                                             r"the z cap of 20"):
            design(k, alpha=alpha, **kw)


def test_looks_with_a_sliver_of_the_information_are_refused():
    with pytest.raises(ValueError, match=r"^max_information: the last look reaches 3e-299 of the planned information, "
                                         r"so little that every bound reaches the z cap of 20"):
        design(information=[10, 20, 30], max_information=1e300)


def test_tiny_alpha_below_the_cap_is_kept():
    """Above the floor a tiny alpha gives bounds below the cap: its one-look design is the normal quantile."""
    assert design(1, alpha=1e-80, sided=1).upper[0] == pytest.approx(-norm.ppf(1e-80), rel=1e-6)
    assert design(3, alpha=1e-60, sided=1).upper[-1] < 20


@pytest.mark.parametrize("spending, kept, refused", [("pocock", 1e-88, 1e-89), ("obf", 1e-91, 1e-92)])
def test_the_alpha_floor_is_where_every_bound_reaches_the_cap(spending, kept, refused):
    """Three equal looks of a classic shape: refused only once every bound is capped at z = 20; just above, a bound
    may exceed 20 (O'Brien-Fleming's early ones), and the design spends alpha."""
    d = design(3, alpha=kept, sided=1, spending=spending)
    assert d.upper[-1] < 20 and (d.upper.max() > 20) == (spending != "pocock")  # Pocock's bounds are all alike
    assert d.alpha_spent[-1] == pytest.approx(kept, rel=1e-6)
    with pytest.raises(ValueError, match=rf"^alpha: {refused:g} is too small to spend: every bound reaches"):
        design(3, alpha=refused, sided=1, spending=spending)


@pytest.mark.parametrize("sided, times, kept, tol", [(1, "17.5", 1e-88, 1e-94), (2, "34.2", 1e-80, 1e-6)])
def test_a_spending_bound_held_at_the_cap_is_refused_not_overspent(sided, times, kept, tol):
    """LD Pocock spending, three equal looks: at alpha = 1e-90 the first bound is the normal quantile of its share
    (above 20) and the second would lie above 20 too, but is held at the cap, where it crosses with probability
    about 1e-89: the bounds would spend many times alpha. Refused, with no warning first, naming the look; the
    floor where every bound is capped stays where it was."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=rf"^alpha: the bounds spend \S+, {times} times alpha = 1e-90: the bound "
                                             r"at look 2 would lie above the z cap of 20 \(gsDesign's\), where it is "
                                             r"held, spending more than its share; use a larger alpha$"):
            design(3, alpha=1e-90, sided=sided, spending="ld_pocock")
    with pytest.raises(ValueError, match=r"^alpha: 1e-91 is too small to spend: every bound reaches"):
        design(3, alpha=1e-91, sided=1, spending="ld_pocock")
    # below the cap, with a tolerance fit for the alpha: the alpha asked, the first bound its share's quantile
    d = design(3, alpha=kept, sided=sided, spending="ld_pocock", tol=tol)
    share = kept / sided * np.log(1 + (np.e - 1) / 3)
    assert d.upper.max() < 20 and norm.sf(d.upper[0]) == pytest.approx(share, rel=1e-6)
    assert d.alpha_spent[-1] == pytest.approx(kept, rel=1e-5)


def test_an_alpha_far_below_the_tolerance_is_refused_unless_tol_is_smaller():
    """gsDesign's tol bounds each look's share absolutely: beside alpha = 1e-86 it allows the bounds to spend 4 %
    more than alpha (the iteration's first guess is within 1e-6 of every share). Refused, saying to pass a smaller
    tol, with which the design spends alpha; a spending function that cannot reach alpha (LD O'Brien-Fleming's
    1 - Phi far below 1e-10) is refused naming it."""
    with pytest.raises(ValueError, match=r"^alpha: the bounds spend 1.04e-86, 1.04 times alpha = 1e-86: the boundary "
                                         r"iteration stops within tol = 1e-06 of each look's share, coarse beside "
                                         r"alpha; pass a smaller tol \(such as 1e-92\) or use a larger alpha$"):
        design(3, alpha=1e-86, sided=1, spending="ld_pocock")
    d = design(3, alpha=1e-86, sided=1, spending="ld_pocock", tol=1e-92)
    assert d.alpha_spent[-1] == pytest.approx(1e-86, rel=1e-6)
    with pytest.raises(ValueError, match=r"^alpha: the bounds spend 1.02e-14, 1.02 times alpha = 1e-14: the spending "
                                         r"function itself reaches 1.02e-14 by the last look"):
        design(3, alpha=1e-14, sided=2, spending="ld_obf")
    # at a usual alpha nothing changes: spent to within gsDesign's tol
    assert design(3, alpha=0.025, sided=1, spending="ld_pocock").alpha_spent[-1] == pytest.approx(0.025, abs=1e-6)



@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_pickled_or_deep_copied_design_and_inference_keep_their_arrays_read_only(how):
    import copy
    import dataclasses
    import pickle

    from effstats.sequential import LookStats, stagewise_inference

    d = design(3, alpha=0.05)
    d.power  # sizes kept
    s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
                  se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
                  null=0.0, alpha=0.05)
    low = s.fixed_interval[0].copy()
    inf = stagewise_inference(d, z=[1.0, 3.0], look=2)
    for obj in (d, s, inf):
        c = pickle.loads(pickle.dumps(obj)) if how == "pickle" else copy.deepcopy(obj)
        parts = [c, c._bounds] if obj is inf else [c]
        for part in parts:
            arrays = [getattr(part, f.name) for f in dataclasses.fields(part)
                      if isinstance(getattr(part, f.name), np.ndarray)]
            assert arrays
            for a in arrays:
                with pytest.raises(ValueError, match="read-only"):
                    a[...] = 0
        if obj is s:
            for a in c.fixed_interval:
                with pytest.raises(ValueError, match="read-only"):
                    a[...] = 0
            np.testing.assert_array_equal(c.fixed_interval[0], low)
        if obj is d:
            assert c.sizes_computed and c.power == d.power


def test_a_designs_and_its_inferences_arrays_are_read_only_so_what_they_keep_holds():
    import dataclasses

    from effstats.sequential import LookStats, stagewise_inference

    d = design(3, alpha=0.05)
    d.power  # sizes kept
    s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
                  se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
                  null=0.0, alpha=0.05)
    s.fixed_interval  # kept
    inf = stagewise_inference(d, z=[1.0, 3.0], look=2)
    for obj in (d, s, inf, inf._bounds):
        arrays = [getattr(obj, f.name) for f in dataclasses.fields(obj) if isinstance(getattr(obj, f.name), np.ndarray)]
        assert arrays
        for a in arrays:
            with pytest.raises(ValueError, match="read-only"):
                a[...] = 0
    # a caller's own arrays are copied: editing them later leaves the result alone
    est = np.array([[0.05, 0.08]])
    s2 = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=est, se=np.array([[0.03, 0.02]]),
                   z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]), null=0.0, alpha=0.05)
    low = s2.fixed_interval[0].copy()
    est[:] = 0.5
    assert est.flags.writeable
    np.testing.assert_array_equal(s2.fixed_interval[0], low)
    np.testing.assert_allclose(s2.z_at(0.0), [[0.05 / 0.03, 0.08 / 0.02]])


def test_the_gsdesign_backend_without_rpy2_says_how_to_install_it():
    # a pip user without the R extra: design, plan and the evaluator on backend="gsdesign" raise RPackageMissing
    # with the install hint, not rpy2's ModuleNotFoundError
    import subprocess
    import sys

    code = ("import sys\n"
            "sys.modules['rpy2'] = None  # as where rpy2 is not installed\n"
            "import numpy as np\n"
            "import effstats.sequential as s\n"
            "from effstats.rbridge import RPackageMissing\n"
            "calls = [lambda: s.design(k=3, backend='gsdesign'),\n"
            "         lambda: s.plan(0.01, disagreement=0.06, looks=3, backend='gsdesign'),\n"
            "         lambda: s.SequentialEvaluator([s.Precision(half_width=0.05)], backend='gsdesign', rng=0)"
            ".fit(np.ones(500))]\n"
            "for call in calls:\n"
            "    try:\n"
            "        call()\n"
            "    except RPackageMissing as exc:\n"
            "        print('RPackageMissing', \"pip install 'effstats[r]'\" in str(exc))\n"
            "    except Exception as exc:\n"
            "        print(type(exc).__name__, exc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.stdout.splitlines() == ["RPackageMissing True"] * 3, proc.stdout + proc.stderr
