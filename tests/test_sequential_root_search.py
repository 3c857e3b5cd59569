"""The score statistics' shortcuts and the interval root search, bit for bit.

``TangoStatistic`` keeps what its null variance and ``z_at`` need of its fields alone, and skips the branches no
element takes; ``BinomialStatistic.z_at`` computes the lower tail only where the upper one does not decide; the root
search evaluates the statistic at both ends of every bracket and at its kinks in one call; a paired fit reads its
stop's intervals from one search of every look's. Each must give what the plain computation, done afresh, gives: the
same floats, to the last bit.
"""
import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scipy.special import betainc, ndtri

from effstats._hypergeometric import _hyp_low, _hyp_up
from effstats.sequential import Efficacy, Precision, SequentialEvaluator
from effstats.sequential._safe_arith import _TIE, _exact_z
from effstats.sequential.statistics import BinomialStatistic, TangoStatistic

_EPS, _CC0 = 1e-12, 0.25


def _plain_null_variance(p10, p01, delta0):
    """Tango's restricted-MLE variance, every operation on each call (the definition)."""
    dl = np.minimum(np.maximum(np.asarray(delta0, float), -1 + _EPS), 1 - _EPS)
    pos = dl >= 0
    x10 = np.where(pos, p10, p01)
    x01 = np.where(pos, p01, p10)
    a = np.abs(dl)
    m = np.minimum(np.maximum(1 - x10 - x01, 0), 1)
    b = x10 * (1 - a) + x01 * (1 - 3 * a) - 2 * m * a
    q = (b + np.sqrt(b * b + 8 * x01 * a * (1 - a))) / 4
    q = np.minimum(np.maximum(q, 0), (1 - a) / 2)
    return 2 * q + a - a * a


def _plain_z(stat, theta0):
    """The continuity-corrected score statistic, every operation on each call (the definition)."""
    t = np.asarray(theta0, float)
    v = _plain_null_variance(stat.p10, stat.p01, t)
    d = stat.estimate - t
    finite = np.isfinite(stat.n_eff)
    n = np.where(finite, stat.n_eff, 1.0)
    unit, whole = stat._cc_items()
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        items = np.where(whole, 1.0, np.minimum(1.0, _CC0 + (1.0 - _CC0) * np.abs(t) * unit))
        cc = np.where(finite, items / unit, 0.0)
        d = np.sign(d) * np.maximum(np.abs(d) - cc, 0.0)
        z = np.where(finite & (v > 0), d * np.sqrt(n) / np.sqrt(v), _exact_z(d))
    return np.where(np.isnan(z), 0.0, z)


def _same(x, y, kind=True):
    """The same floats (NaN as NaN, -0.0 apart from 0.0), shape and, with ``kind``, type."""
    return ((not kind or type(x) is type(y)) and np.shape(x) == np.shape(y) and np.array_equal(x, y, equal_nan=True)
            and np.array_equal(np.signbit(x), np.signbit(y)))


@st.composite
def _paired(draw):
    """Paired statistics of 1-5 cells: rare and frequent disagreement, one way only, exhaustive looks (n_eff
    infinite) and a whole item's correction near a census (n_items below n_eff), mixed or alone."""
    k = draw(st.integers(1, 5))
    rate = st.sampled_from([0.0, 1e-3, 0.01, 0.05, 0.2, 0.45])
    p10 = np.array(draw(st.lists(rate, min_size=k, max_size=k)))
    p01 = np.array(draw(st.lists(rate, min_size=k, max_size=k)))
    n_eff = np.array(draw(st.lists(st.sampled_from([2.0, 30.0, 400.0, 5000.0, np.inf]), min_size=k, max_size=k)))
    census = np.array(draw(st.lists(st.booleans(), min_size=k, max_size=k)))
    n_items = np.where(census & np.isfinite(n_eff), np.maximum(n_eff / 50, 1.0), np.where(np.isfinite(n_eff),
                                                                                           n_eff, 100.0))
    shift = np.array(draw(st.lists(st.sampled_from([0.0, 1e-13, -1e-3]), min_size=k, max_size=k)))
    est = p10 - p01 + shift
    se = np.sqrt(p10 + p01 + 1e-4) / np.where(np.isfinite(n_eff), np.sqrt(n_eff), 1e6)
    return TangoStatistic(est, se, n_eff, p10, p01, n_items if draw(st.booleans()) else None)


@settings(max_examples=150, deadline=None)
@given(stat=_paired(), theta=st.lists(st.floats(-1.2, 1.2), min_size=1, max_size=4))
def test_paired_z_and_null_variance_are_the_plain_formulas_bit_for_bit(stat, theta):
    """Asked twice (the second time from the kept parts) and on a scalar, z_at and null_variance give the plain
    formulas' floats, types and shapes."""
    t = np.array(theta).reshape(-1, 1)
    for _ in range(2):
        assert _same(stat.null_variance(t), _plain_null_variance(stat.p10, stat.p01, t))
        assert _same(stat.z_at(t), _plain_z(stat, t))
        assert _same(stat.z_at(theta[0]), _plain_z(stat, theta[0]))
    one = stat.take(0)
    assert _same(one.z_at(theta[0]), _plain_z(one, theta[0]))


@settings(max_examples=60, deadline=None)
@given(stat=_paired(), c=st.sampled_from([0.5, 1.645, 1.96, 2.8, 6.0]))
def test_paired_interval_of_many_cells_is_each_cell_searched_alone(stat, c):
    """The search evaluates the statistic at the ends and kinks of every bracket at once: each cell's interval is
    the one a search of that cell alone gives, to the last bit, and asking again gives it again."""
    low, high = stat.interval(c)
    for i in range(np.size(stat.estimate)):
        lo1, hi1 = stat.take(i).interval(c)
        assert _same(lo1, low[i], False) and _same(hi1, high[i], False), i
    again = stat.interval(c)
    assert _same(again[0], low) and _same(again[1], high)


def _plain_binomial_z(stat, theta0):
    """The exact one-sided tests' z with both tails computed in every cell (the definition)."""
    th = np.clip(np.asarray(theta0, float), _EPS, 1 - _EPS)
    x, n = stat._xn()
    with np.errstate(all="ignore"):
        p_up = np.where(x > 0, betainc(np.maximum(x, 1e-300), np.maximum(n - x + 1, 1e-300), th), 1.0)
        p_lo = np.where(x < n, 1 - betainc(x + 1, np.maximum(n - x, 1e-300), th), 1.0)
    hyp, xh, m, N = stat._hyp()
    if hyp.any():
        shape = np.broadcast_shapes(hyp.shape, th.shape)
        hyp, thb, xb, mb, Nb = (np.broadcast_to(v, shape) for v in (hyp, th, xh, m, N))
        thb, xb, mb, Nb = thb[hyp], xb[hyp], mb[hyp], Nb[hyp]
        p_up, p_lo = np.broadcast_to(p_up, shape).copy(), np.broadcast_to(p_lo, shape).copy()
        p_up[hyp] = _hyp_up(xb, Nb, np.floor(thb * Nb + _TIE * Nb), mb)
        p_lo[hyp] = _hyp_low(xb, Nb, np.ceil(thb * Nb - _TIE * Nb), mb)
    with np.errstate(all="ignore"):
        zu = -ndtri(np.clip(p_up, 1e-300, 1.0))
        zl = ndtri(np.clip(p_lo, 1e-300, 1.0))
    z = np.where(zu > 0, zu, np.where(zl < 0, zl, 0.0))
    exact = ~np.isfinite(stat.n_eff)
    if exact.any():
        z = np.where(exact, _exact_z(stat.estimate - np.asarray(theta0, float)), z)
    return z


@st.composite
def _binomial(draw):
    """One-model statistics of 1-5 cells: samples of 1-2,000 items, exhaustive looks, and finite benchmarks (the
    hypergeometric law) among them; scores anywhere in [0, 1], 0 and 1 included."""
    k = draw(st.integers(1, 5))
    n_eff = np.array(draw(st.lists(st.sampled_from([1.0, 7.0, 60.0, 2000.0, np.inf]), min_size=k, max_size=k)))
    n = np.where(np.isfinite(n_eff), n_eff, 500.0)
    est = np.round(np.array(draw(st.lists(st.floats(0, 1), min_size=k, max_size=k))) * n) / n
    finite = np.array(draw(st.lists(st.booleans(), min_size=k, max_size=k))) & np.isfinite(n_eff)
    extra = np.array(draw(st.lists(st.integers(0, 40), min_size=k, max_size=k)))
    population = np.where(finite, n + extra, np.inf)
    return BinomialStatistic(est, 0.01, n_eff, population, np.where(finite, n, np.nan))


@settings(max_examples=150, deadline=None)
@given(stat=_binomial(), shift=st.lists(st.sampled_from([-0.3, -0.05, -0.01, 0.0, 0.004, 0.02, 0.1, 1.0]),
                                        min_size=1, max_size=4))
def test_binomial_z_with_the_lower_tail_where_it_decides_is_the_plain_formula_bit_for_bit(stat, shift):
    """The lower tail computed only in the cells the upper one leaves undecided: the same z as both tails in every
    cell, its floats, type and shape, at values tested on either side of each cell's score and on a scalar."""
    t = np.clip(stat.estimate + np.array(shift).reshape(-1, 1), 0.0, 1.0)
    assert _same(stat.z_at(t), _plain_binomial_z(stat, t))
    theta = float(t[0, 0])
    assert _same(stat.z_at(theta), _plain_binomial_z(stat, theta))
    one = stat.take(0)
    assert _same(one.z_at(theta), _plain_binomial_z(one, theta))


def _fit_answers(rules, a, b, rng):
    """A fit's every number: the result's fields, its trace and its intervals at both levels and kinds."""
    res = SequentialEvaluator(rules, initial=50, batch=50, rng=rng).fit(a, b)
    fields = {f.name: getattr(res, f.name) for f in dataclasses.fields(res) if f.name != "trace"}
    cis = []
    for level in (0.9, 0.95):
        for kind in ("deciding", "repeated"):
            try:
                cis.append(tuple(res.confidence_interval(level, kind=kind)))
            except ValueError as e:  # a level the result has no interval of this kind at
                cis.append(str(e))
    return res.reason, fields, res.trace, cis


@pytest.mark.parametrize("rules", [
    lambda: [Precision(0.03)],
    lambda: [Efficacy("greater"), Precision(0.03)],
    lambda: [Efficacy("less"), Precision(0.05)],
    lambda: [Efficacy("two-sided")],
], ids=["precision", "greater-precision", "less-precision", "two-sided"])
def test_a_paired_fit_reading_its_stop_intervals_from_one_search_is_the_fit_searching_them_apart(rules, monkeypatch):
    """A paired fit searches every look's intervals (c2, c1, the fixed-sample ones at 1 - alpha and 1 - 2 alpha)
    at once and reads the stop's there: its result, trace and intervals are, to the last bit, those of a fit that
    searches the stop's intervals apart (as for a statistic with a closed form), over precision, efficacy and
    max_n stops."""
    g = np.random.default_rng(8)
    reasons = set()
    for seed in range(6):
        n = (400, 1500, 4000)[seed % 3]
        a = (g.random(n) < 0.7).astype(float)
        b = (g.random(n) < (0.75, 0.7, 0.55)[seed % 3]).astype(float)
        fast = _fit_answers(rules(), a, b, seed)
        with monkeypatch.context() as m:
            m.setattr(TangoStatistic, "_per_call", False)
            slow = _fit_answers(rules(), a, b, seed)
        reasons.add(fast[0])
        assert fast[0] == slow[0]
        for k, v in fast[1].items():
            assert _same(v, slow[1][k], kind=False) if isinstance(v, float) else v == slow[1][k], k
        pd.testing.assert_frame_equal(fast[2], slow[2], check_exact=True)
        assert all(_same(np.array(x), np.array(y)) if isinstance(x, tuple) else x == y
                   for x, y in zip(fast[3], slow[3]))
    assert len(reasons) >= 2, reasons  # the stops read differ: a precision or efficacy stop and max_n
