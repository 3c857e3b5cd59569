"""Exact Mean Win Rate, ties downstream, comparison-graph components, the clone / removal detectors against
brute force, O(n log n) Kendall / weighted τ against scipy, DIoR's example-size cap and result protocol."""
from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from effstats import ResponseMatrix
from effstats import reliability as R
from effstats.reliability._metametrics import _weighted_tau
from effstats._results import ConfidenceInterval


def fraction_mwr(x: np.ndarray, ties: str = "strict") -> list:
    """App. A with Python fractions: the exact rational MWR of every model (None if undefined)."""
    M, S = x.shape
    out = []
    for m in range(M):
        rates = []
        for s in range(S):
            if np.isnan(x[m, s]):
                continue
            opp = [i for i in range(M) if i != m and not np.isnan(x[i, s])]
            if not opp:
                continue
            wins = sum(Fraction(int(x[m, s] > x[i, s])) + (Fraction(1, 2) if ties == "half" and x[m, s] == x[i, s]
                                                           else 0) for i in opp)
            rates.append(wins / len(opp))
        out.append(sum(rates) / len(rates) if rates else None)
    return out


# ------------------------------------------------------------------------------------- exact MWR
def test_two_fifths_ties_are_exact():
    x = np.array([[5, 5, 2], [4, 4, 1], [2, 3, 3], [1, 0, 5], [3, 1, 0], [0, 2, 4.]])
    mwr = R.mean_win_rate(x)
    assert mwr[3] == mwr[5] == 0.4  # both exactly 2/5 (the float path gave 0.39999999999999997 / 0.4000000000000001)
    # ties stay ties downstream: Kendall τ of the table with itself is 1, and a tie at the top is a half switch
    assert R.kendall_tau(mwr, mwr[None])[0] == pytest.approx(1.0)
    assert R.dior(x, "scenarios", "kendall", n_boot=50, rng=0).distribution.max() <= 1.0


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 8), st.integers(1, 7), st.integers(0, 10_000), st.sampled_from(["strict", "half"]))
def test_mwr_equals_float_of_exact_fraction(M, S, seed, ties):
    """Every MWR is the correctly rounded float of the exact rational, so equal rationals are equal floats."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, (M, S)).astype(float)
    x[rng.random((M, S)) < 0.25] = np.nan
    want = fraction_mwr(x, ties)
    got = R.mean_win_rate(x[None], ties=ties)[0]  # 3-D: no connectivity check, NaN for undefined models
    for g, w in zip(got, want):
        assert (np.isnan(g) and w is None) or g == float(w)


def test_mwr_exact_with_many_distinct_opponent_counts():
    """Ragged tables whose common denominator exceeds 2**53 take the Python-integer path, still exact."""
    rng = np.random.default_rng(3)
    M, S = 60, 30
    x = rng.integers(0, 6, (M, S)).astype(float)
    for s in range(S):  # a different number of evaluated models per scenario: many distinct denominators
        x[rng.permutation(M)[: s + 1], s] = np.nan
    got = R.mean_win_rate(x[None])[0]
    want = fraction_mwr(x)
    assert all(g == float(w) for g, w in zip(got, want))


def test_helm_lite_published_column_follows_half_credit():
    """HELM's code gives a tie half a win; HELM Lite's published column is closer to that rule than to strict wins."""
    from effstats.datasets import load_helm_lite

    lite = load_helm_lite()
    t, pub = lite.to_frame(), lite.models["mean_win_rate"]
    d = {ties: (R.mean_win_rate(t, ties=ties) - pub.reindex(t.index)).abs() for ties in ("strict", "half")}
    assert d["half"].max() < d["strict"].max() and d["half"].median() < d["strict"].median()
    assert d["half"].max() <= 0.0035  # three-decimal rounding of the published column and of the scores


# -------------------------------------------------------------------------------- components
def test_disconnected_leaderboards_are_refused_with_the_groups():
    x = np.array([[1, np.nan], [2, np.nan], [np.nan, 3], [np.nan, 4]])
    with pytest.raises(ValueError, match=r"scores: the models form 2 groups that share no scenario"):
        R.mean_win_rate(x)
    np.testing.assert_array_equal(R.comparison_components(x), [0, 0, 1, 1])
    df = pd.DataFrame(x, index=list("abcd"), columns=["code1", "code2"])
    comp = R.comparison_components(df)
    assert comp.to_dict() == {"a": 0, "b": 0, "c": 1, "d": 1}
    with pytest.raises(ValueError, match=r"data: the models form 2 groups.*\['a', 'b'\]"):
        R.dior(df, n_boot=10)
    # each group alone is fine, and linked through a shared scenario it is one component
    assert R.mean_win_rate(df.loc[["a", "b"], ["code1"]].assign(c2=[0.1, 0.2])).idxmax() == "b"
    x2 = x.copy()
    x2[0, 1] = 0.5
    assert R.comparison_components(x2).max() == 0
    assert R.mean_win_rate(x, check_connected=False).shape == (4,)


# ------------------------------------------------------------------------------- detectors
def test_clone_detector_flags_real_reorders_only():
    assert R.clone_flips(np.array([[3, 1.], [1, 3], [0, 0], [-1, -1]]), top_k=2).empty
    from effstats.datasets import load_helm, load_openllm

    for rm in (load_openllm(), load_helm()):
        cf = R.clone_flips(rm.to_frame(), top_k=5)
        for _, row in cf.iterrows():  # every flag is a visible change of order
            assert row.old_top != row.new_top and row.reversed


def _brute_clone(x: np.ndarray, c: int, n_clones: int, eps: float, ties: str) -> np.ndarray:
    y = np.vstack([x] + [x[c] - eps] * n_clones)
    return R.mean_win_rate(y[None], ties=ties)[0][: x.shape[0]]


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 7), st.integers(2, 5), st.integers(0, 10_000), st.sampled_from(["strict", "half"]),
       st.integers(1, 3))
def test_clone_and_removal_flips_match_brute_force(M, S, seed, ties, n_clones):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, (M, S)).astype(float)
    x[rng.random((M, S)) < 0.15] = np.nan
    x[:, 0] = rng.integers(0, 5, M)  # one complete scenario keeps the table connected
    for j in np.flatnonzero(np.isnan(x).all(0)):  # a scenario nobody ran is refused by the detectors (rightly)
        x[rng.integers(M), j] = rng.integers(0, 5)
    base = R.mean_win_rate(x[None], ties=ties)[0]
    order = np.argsort(-base, kind="stable")[:2]
    a, b = order
    eps = 0.25
    want_c = [c for c in range(M) if (lambda n: (base[a] > base[b] and n[a] < n[b]))(_brute_clone(x, c, n_clones, eps,
                                                                                                   ties))]
    got_c = R.clone_flips(x, top_k=2, n_clones=n_clones, eps=eps, ties=ties)
    assert [int(str(c)[1:]) for c in got_c.clone_of] == want_c
    want_r = []
    for r in range(M):
        if r in order:
            continue
        n = R.mean_win_rate(np.delete(x, r, axis=0)[None], ties=ties)[0]
        ia, ib = a - (a > r), b - (b > r)
        if base[a] > base[b] and n[ia] < n[ib]:
            want_r.append(r)
    got_r = R.removal_flips(x, top_k=2, ties=ties)
    assert [int(str(c)[1:]) for c in got_r.removed] == want_r


# ---------------------------------------------------------------------------- Kendall / weighted τ
@pytest.mark.parametrize("n", [2, 3, 17, 64, 257, 750])
def test_kendall_and_weighted_tau_equal_scipy(n):
    rng = np.random.default_rng(n)
    for levels in (3, 10 * n):  # heavy ties and nearly none
        ref = rng.integers(0, levels, n).astype(float)
        X = rng.integers(0, levels, (12, n)).astype(float)
        X[1] = ref
        X[2] = -ref
        want = np.nan_to_num([stats.kendalltau(ref, x).statistic for x in X])
        np.testing.assert_allclose(R.kendall_tau(ref, X), want, atol=1e-12)
        want_w = np.nan_to_num([stats.weightedtau(ref, x).statistic for x in X])
        np.testing.assert_allclose(_weighted_tau(ref, X), want_w, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 1500), levels=st.sampled_from([2, 3, 40, 10**6]), seed=st.integers(0, 2**32 - 1))
def test_kendall_and_weighted_tau_equal_scipy_on_random_tables_with_ties(n, levels, seed):
    """Rows read in the reference's order, tied reference values among them, and both weighted-τ directions from one
    count of discordant partners per element: scipy's values, above 700 models bit for bit for Kendall's τ-b."""
    rng = np.random.default_rng(seed)
    ref = rng.integers(0, levels, n).astype(float)
    X = rng.integers(0, levels, (5, n)).astype(float)
    X[0] = ref[rng.permutation(n)]
    X[1] = ref + rng.normal(0, 0.5, n)  # close to the reference: few discordant pairs
    X[2] = np.round(-ref / 3)
    want = np.nan_to_num([stats.kendalltau(ref, x).statistic for x in X])
    got = R.kendall_tau(ref, X)
    if n > 700:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    want_w = np.nan_to_num([stats.weightedtau(ref, x).statistic for x in X])
    np.testing.assert_allclose(_weighted_tau(ref, X), want_w, rtol=0, atol=1e-12)


def test_inversion_counting_brute_force():
    from effstats.reliability._metametrics import _inversions, _smaller_before

    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 16, 33, 100):
        v = rng.integers(0, 7, (5, n))
        brute = np.array([[sum(r[j] < r[i] for j in range(i)) for i in range(n)] for r in v])
        np.testing.assert_array_equal(_smaller_before(v), brute)
        inv = [sum(r[i] > r[j] for i in range(n) for j in range(i + 1, n)) for r in v]
        np.testing.assert_array_equal(_inversions(v), inv)


@pytest.mark.parametrize("high", [2, 40_000, 2**19])  # values past int16 take the wide comparison and keys
def test_inversion_counting_wide_values(high):
    from effstats.reliability._metametrics import _inversions, _smaller_before

    rng = np.random.default_rng(high)
    v = rng.integers(0, high, (6, 150))
    v[0] = high - 1  # a constant row: no pair is smaller or inverted
    before = (v[:, None, :] < v[:, :, None]) & np.tril(np.ones((150, 150), bool), -1)
    np.testing.assert_array_equal(_smaller_before(v), before.sum(2))
    greater_after = (v[:, :, None] > v[:, None, :]) & np.triu(np.ones((150, 150), bool), 1)
    np.testing.assert_array_equal(_inversions(v), greater_after.sum((1, 2)))


@pytest.mark.parametrize("n", [1, 3, 17, 65, 129, 300, 577])
@pytest.mark.parametrize("leaf", [1, 4, 16, 64])
def test_inversion_counting_any_block_width(n, leaf):
    """Lengths just past a power of two pad to a multiple of a narrower leaf; the counts must not change."""
    from effstats.reliability._metametrics import _blocks, _inversions, _smaller_before

    w, N = _blocks(n, leaf)
    assert 1 <= w <= leaf and N >= n and N == w * 2 ** int(round(np.log2(N // w)))
    assert N - n < N // w  # less than one element of padding per leaf block
    rng = np.random.default_rng(n * 100 + leaf)
    v = rng.integers(0, max(2, n // 3), (4, n))
    before = (v[:, None, :] < v[:, :, None]) & np.tril(np.ones((n, n), bool), -1)  # [b, i, j]: j < i, v_j < v_i
    np.testing.assert_array_equal(_smaller_before(v, leaf), before.sum(2))
    greater_after = (v[:, :, None] > v[:, None, :]) & np.triu(np.ones((n, n), bool), 1)
    np.testing.assert_array_equal(_inversions(v, leaf), greater_after.sum((1, 2)))


def test_audit_rank_table_from_distinct_resamples_is_every_resamples():
    """The rank table ranks and compares each distinct resampled row once, weighted by how often it was drawn: the
    same rank bounds and shares, bit for bit, as ranking and comparing every resample."""
    from effstats.reliability._benchmark import Benchmark
    from effstats.reliability._report import _score_table

    rng = np.random.default_rng(4)
    M, B = 9, 203
    x = rng.integers(0, 4, (M, 5)) / 4
    bench = Benchmark.from_data(pd.DataFrame(x, index=[f"m{i}" for i in range(M)], columns=list("ABCDE")))
    base = rng.integers(0, 3, (6, M)) / 2  # few distinct rows, ties within them
    base[0, 3] = np.nan  # an unscorable model ranks last
    resampled = base[rng.integers(0, 6, B)]
    tab, p_hold = _score_table(bench, {"mean": x.mean(1)}, "mean", resampled, None)

    ranks = np.array([stats.rankdata(-np.where(np.isnan(r), -np.inf, r), method="min") for r in resampled])
    order = [int(m[1:]) for m in tab["model"]]
    for col, q, method in (("rank_low", 0.025, "lower"), ("rank_high", 0.975, "higher")):
        want = np.quantile(ranks, q, axis=0, method=method)
        np.testing.assert_array_equal(tab[col].to_numpy(), want[order])
    ahead = [[1.0 if r[a] > r[b] else 0.5 if r[a] == r[b] else 0.0 for r in resampled[:, order]]
             for a, b in zip(range(M - 1), range(1, M))]
    np.testing.assert_array_equal(p_hold, np.mean(ahead, axis=1))
    lead = [np.mean([1.0 if r[0] > r[j] else 0.5 if r[0] == r[j] else 0.0 for r in resampled[:, order]])
            for j in range(1, M)]
    np.testing.assert_array_equal(tab["p_leader_ahead"].to_numpy()[1:], lead)
    assert np.isnan(tab["p_leader_ahead"].iloc[0])


# ------------------------------------------------------------------------------------ DIoR
def _items(M=6, sizes=(40, 400), seed=0):
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    ability = np.linspace(-1, 1, M)[:, None]
    X = rng.random((M, n)) < 1 / (1 + np.exp(-(ability - rng.normal(size=(1, n)))))
    return ResponseMatrix(X, kind="binary", items=pd.DataFrame({"scenario": np.repeat(np.arange(len(sizes)), sizes)}))


def test_example_size_is_capped_and_never_beats_the_full_benchmark():
    rm = _items()
    with pytest.raises(ValueError, match=r"size: 401 examples per subscenario requested but the largest .* 400"):
        R.dior(rm, "examples", size=401, n_boot=10)
    # at the largest size every subscenario is drawn at its own size: the full-benchmark bootstrap, draw for draw
    full = R.dior(rm, "examples", "kendall", n_boot=200, rng=5)
    top = R.dior(rm, "examples", "kendall", size=400, n_boot=200, rng=5)
    np.testing.assert_array_equal(full.distribution, top.distribution)
    assert top.compute_fraction == 1.0
    mid = R.dior(rm, "examples", "kendall", size=100, n_boot=200, rng=5)
    assert mid.compute_fraction == pytest.approx((40 + 100) / 440)
    curve = R.efficiency_curve(rm, "examples", "kendall", n_boot=100, rng=1)
    assert curve["size"].max() == 400 and (curve["compute_fraction"] <= 1).all()
    with pytest.raises(ValueError, match="sizes"):
        R.rank_switch_curve(rm, [1000], n_boot=10)


def test_dior_result_protocol_and_batches():
    rm = _items(seed=2)
    r = R.dior(rm, "examples", "kendall", n_boot=300, rng=0)
    ci = r.confidence_interval()
    assert isinstance(ci, ConfidenceInterval) and ci.low == r.dior
    assert r.standard_error == pytest.approx(np.std(r.distribution, ddof=1))
    assert r.confidence_interval(0.5).low >= ci.low
    with pytest.raises(ValueError, match="confidence_level"):
        r.confidence_interval(1.5)
    f = r.to_frame()
    assert f.shape[0] == 1 and {"dior", "statistic", "standard_error", "ci_low", "ci_high"} <= set(f.columns)
    # the plan computes the same distribution batch by batch (what a distributed backend does)
    plan = R.dior_plan(rm, "examples", "kendall")
    one = plan.result(*plan.statistic(plan.draw(300, 0)))  # one batch with the same seed = dior itself
    np.testing.assert_array_equal(one.distribution, r.distribution)
    assert one.dior == r.dior
    g = np.random.default_rng(1)
    draws = [plan.draw(b, g) for b in (100, 120, 80)]
    parts = [plan.statistic(d) for d in draws]
    whole = plan.statistic([np.concatenate([d[j] for d in draws]) for j in range(len(draws[0]))])
    np.testing.assert_array_equal(np.concatenate([p[0] for p in parts]), whole[0])
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), whole[1])


def test_progress_bars(capsys):
    rm = _items(seed=3)
    R.dior(rm, "examples", n_boot=20, rng=0, progress=True)
    R.rank_switch_curve(rm, [10, 40], n_boot=20, rng=0, progress=True)
    err = capsys.readouterr().err
    assert "DIoR examples/kendall" in err and "rank switches" in err


# ------------------------------------------------------------------------------- bad input, named
def _bad_cases():
    rng = np.random.default_rng(0)
    S = pd.DataFrame(rng.random((8, 6)), index=[f"m{i}" for i in range(8)], columns=[f"S{j}" for j in range(6)])
    EX = ResponseMatrix(rng.random((6, 16)) < 0.5, kind="binary",
                        items=pd.DataFrame({"scenario": np.repeat([0, 1], 8)}))
    return [
        (lambda: R.mean_win_rate(pd.concat([S, S.iloc[:1]])), "scores: duplicated model rows"),
        (lambda: R.mean_win_rate(S.assign(S0=np.inf)), "scores: contains infinite"),
        (lambda: R.mean_win_rate(S + 1j), "scores: complex"),
        (lambda: R.mean_of_means(S.to_numpy(), np.array([np.nan, 0, 1, 1, 2, 2])), "groups: some columns"),
        (lambda: R.efficiency_curve(EX, "examples", sizes=[], n_boot=5), "sizes: expected a non-empty"),
        (lambda: R.efficiency_curve(EX, "examples", sizes=[1.5], n_boot=5), "sizes: expected positive integers"),
        (lambda: R.efficiency_curve(EX, "examples", sizes=[True], n_boot=5), "sizes: expected positive integers"),
        (lambda: R.rank_switch_curve(EX, [2], cluster_sizes=[2, 857], n_boot=5), "cluster_sizes"),
        (lambda: R.rank_trajectories(EX, [], n_boot=5), "sizes"),
        (lambda: R.clone_flips(S, eps=np.inf), "eps: expected a finite positive"),
        (lambda: R.flash_helm(EX, new_models=[1, 1], sizes=[2, None], n_boot=5), "new_models: duplicated"),
        (lambda: R.flash_helm(EX, new_models=[], sizes=[2, None], n_boot=5), "new_models: expected at least one"),
        (lambda: R.flash_helm(EX, sizes=[2, None], tiers=[(1, -1)], n_boot=5), "tiers: required resolutions"),
        (lambda: R.flash_helm(EX, sizes=[2, None], resolution={2: np.nan}, n_boot=5), "resolution: values"),
        (lambda: R.flash_helm(EX, sizes=[2, None], resolution="abc", n_boot=5), "resolution: expected a dict"),
        (lambda: R.prompt_strategies(EX, [2], example=[None, None]), "example: expected an item-metadata column"),
    ]


@pytest.mark.parametrize("case", range(16))
def test_bad_input_names_the_argument(case):
    call, match = _bad_cases()[case]
    with pytest.raises(ValueError, match=match):
        call()


def test_best_model_standard_error_matches_its_interval():
    """best_model's interval is a Wilson interval for the no-switch probability; its standard error must describe
    the same thing. Monte-Carlo truth: the spread of the statistic over 40 independent bootstrap runs on HELM
    (0.014) is near the binomial s.e. (0.020, conservative: it treats the repeats as independent), while the
    standard deviation of the per-resample shares (0.15) is ten times too wide."""
    from effstats.datasets import load_helm

    helm = load_helm()
    runs = [R.dior(helm, "scenarios", "best_model", n_boot=100, rng=s) for s in range(40)]
    spread = np.std([r.statistic for r in runs], ddof=1)
    se = np.mean([r.standard_error for r in runs])
    assert 0.4 * se <= spread <= 1.6 * se, (spread, se)
    r = runs[0]
    assert r.standard_error == pytest.approx(np.sqrt(r.statistic * (1 - r.statistic) / r.n_trials))
    lo, hi = r.confidence_interval()
    assert hi - lo == pytest.approx(2 * 1.96 * r.standard_error, rel=0.15)  # Wilson ≈ Wald width here


def test_bad_input_fuzz_findings_named_by_argument():
    """Fuzz findings: duplicated column names were scored as two scenarios; Benchmark.sub_sums accepted negative /
    NaN / complex / string counts (garbage sums) or crashed deep in numpy; DIoRPlan.statistic crashed on malformed
    indices without naming them."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.random((4, 3)), index=list("abcd"), columns=["S0", "S1", "S0"])
    for f in (R.Benchmark.from_data, R.mean_win_rate, lambda d: R.dior(d, n_boot=10), R.clone_flips):
        with pytest.raises(ValueError, match="duplicated column names \\['S0'\\]"):
            f(df)
    rm = _items(seed=2)
    b = R.Benchmark.from_data(rm)
    good = np.ones((2, b.n_items))
    np.testing.assert_array_equal(b.sub_sums(good)[0][0], b.sub_sums()[0][0])
    for bad in (-good, np.where(np.eye(2, b.n_items) > 0, np.nan, 1.0), good.astype(complex), good.astype(str),
                "abc", good[0], good[:, :-1], good[:, :, None]):
        with pytest.raises(ValueError, match="^counts"):
            b.sub_sums(bad)
    plan = R.dior_plan(rm, "examples", "kendall")
    ok = plan.draw(3, 0)
    assert plan.statistic(ok)[0].shape == (3,)
    for bad in ([], "abc", [np.full((4, 6), 99)] * len(ok), [a.astype(float) + 0.5 for a in ok],
                [np.full((3, 2), -1)] * len(ok), ok[:-1], [ok[0][:2], *ok[1:]]):
        with pytest.raises(ValueError, match="^indices"):
            plan.statistic(bad)
    sc = R.dior_plan(rm, "scenarios", "kendall")
    with pytest.raises(ValueError, match="^indices: codes must lie in"):
        sc.statistic([np.full((2, 3), 99)])


def test_dior_needs_enough_resamples_for_its_bound():
    """dior(n_boot=1) returned the single draw as 'DIoR' with a NaN standard error; with fewer than 2 / (1 - ci)
    draws the percentile bound is just the smallest draw."""
    from effstats.exceptions import DegenerateDataWarning

    rm = _items(seed=2)
    with pytest.raises(ValueError, match="^n_boot: at least 2 resamples"):
        R.dior(rm, n_boot=1)
    with pytest.warns(DegenerateDataWarning, match="n_boot: with 20 resamples"):
        r = R.dior(rm, "examples", n_boot=20, rng=0)
    assert r.distribution.min() <= r.dior <= np.sort(r.distribution)[1]  # what the warning says
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        R.dior(rm, "examples", n_boot=40, rng=0)


def test_few_resamples_warning_comes_after_input_errors():
    from effstats.exceptions import DegenerateDataWarning

    rm = _items(seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        with pytest.raises(ValueError, match="^size"):
            R.dior(rm, "examples", size=10_000, n_boot=5)


@settings(max_examples=40, deadline=None)
@given(shape=st.tuples(st.integers(1, 6), st.integers(1, 40)), levels=st.integers(1, 8), axis=st.sampled_from([0, 1]),
       seed=st.integers(0, 2**32 - 1))
def test_tie_ranks_equal_rankdata(shape, levels, axis, seed):
    from effstats._shared import _tie_ranks

    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, shape).astype(float)
    x[rng.random(shape) < 0.1] = -np.inf  # the audit ranks an unscorable model below every other
    x[rng.random(shape) < 0.1] = -0.0  # equal to 0.0, as rankdata compares them
    low, high = _tie_ranks(x, axis=axis)
    want_low, want_high = stats.rankdata(x, method="min", axis=axis), stats.rankdata(x, method="max", axis=axis)
    np.testing.assert_array_equal(low, want_low)
    np.testing.assert_array_equal(high, want_high)
    assert low.dtype == want_low.dtype and high.dtype == want_high.dtype


@pytest.mark.parametrize("ci", [0.5, 0.9, 0.95, 0.99])
def test_wilson_interval_is_statsmodels_bit_for_bit(ci):
    from statsmodels.stats.proportion import proportion_confint

    from effstats.reliability._metametrics import _wilson

    for n in (1, 2, 5, 37, 1000, 5000):
        for successes in sorted({0.0, 0.5, 1.0, n / 3, n - 0.5, float(n)}):
            lo, hi = proportion_confint(successes, n, alpha=1 - ci, method="wilson")
            assert _wilson(successes, n, ci) == (float(lo), float(hi))


def _graph_components(obs: np.ndarray) -> np.ndarray:
    """The model-scenario graph's components by scipy's graph search, labelled by decreasing size (equal sizes in
    the order of their first model)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    M, S = obs.shape
    r, c = np.nonzero(obs)
    lab = connected_components(coo_matrix((np.ones(r.size), (r, M + c)), shape=(M + S, M + S)), directed=False)[1][:M]
    _, inv, cnt = np.unique(lab, return_inverse=True, return_counts=True)
    rank = np.empty(len(cnt), np.intp)
    rank[np.argsort(-cnt, kind="stable")] = np.arange(len(cnt))
    return rank[inv]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 30), st.integers(1, 9), st.floats(0.0, 0.6), st.integers(0, 2**32 - 1),
       st.sampled_from([1, 2, 16]))
def test_components_equal_the_graph_search(M, S, density, seed, rounds):
    """Label propagation and, when it needs more rounds, scipy's graph search: the same components and labels."""
    from effstats.reliability import _benchmark

    obs = np.random.default_rng(seed).random((M, S)) < density
    old = _benchmark._COMPONENT_ROUNDS
    _benchmark._COMPONENT_ROUNDS = rounds
    try:
        got = _benchmark._components(obs)
    finally:
        _benchmark._COMPONENT_ROUNDS = old
    np.testing.assert_array_equal(got, _graph_components(obs))
    assert got.dtype == np.intp


def test_components_of_a_long_chain_and_of_models_without_scores():
    """A chain of 41 scenarios linked model to model (more rounds than the propagation takes) and two models without
    a score (each its own group, after the larger one, in the order of the models)."""
    from effstats.reliability._benchmark import _components

    obs = np.zeros((43, 41), bool)
    for m in range(40):
        obs[m, m] = obs[m, m + 1] = True
    obs[41, 40] = True  # model 41 joins the chain's end; models 40 and 42 have no score
    assert _components(obs).tolist() == [0] * 40 + [1, 0, 2]
    np.testing.assert_array_equal(_components(obs), _graph_components(obs))


# ---------------------------------------------------------------------------- group means in linear memory
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_group_means_are_the_weighted_means_of_each_groups_columns(n_cols, n_groups, seed):
    from effstats._shared import _group_means

    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_groups, n_cols)
    w = (rng.random((3, 4, n_cols)) < 0.7) * rng.integers(1, 4, (3, 4, n_cols)).astype(float)
    v = np.where(w > 0, rng.random((3, 4, n_cols)).round(3), 0.0)
    got = _group_means(v, w, codes, n_groups)
    for g in range(n_groups):  # brute force, group by group, with exact fractions
        cols = np.flatnonzero(codes == g)
        for i, j in np.ndindex(3, 4):
            den = sum(Fraction(w[i, j, c]) for c in cols)
            want = float(sum(Fraction(v[i, j, c]) * Fraction(w[i, j, c]) for c in cols) / den) if den else np.nan
            if np.isnan(want):
                assert np.isnan(got[i, j, g])
            else:  # the sums run in floating point: a few ulps of the mean
                assert got[i, j, g] == pytest.approx(want, rel=8 * np.finfo(float).eps, abs=0)


def test_group_means_of_one_column_a_group_are_the_columns_and_need_no_square_matrix():
    import tracemalloc

    from effstats._shared import _group_means

    n = 4000  # scenarios of a wide leaderboard: one column a group
    rng = np.random.default_rng(0)
    v = -rng.random((2, 12, n)).round(3)
    v[0, 0, :5] = -0.0
    w = np.ones_like(v)
    tracemalloc.start()
    got = _group_means(v, w, np.arange(n), n)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert got.tobytes() == (v + 0.0).tobytes()  # exactly the scores, -0.0 read as 0.0
    assert peak < 20 * v.nbytes  # a (columns × groups) one-hot matrix would take 8 n² = 128 MB


@pytest.mark.parametrize("score", ["mwr", "mean", "mean_of_means"])
@pytest.mark.parametrize("ties", ["strict", "half"])
def test_scorer_gives_the_scores_of_every_weighting_bit_for_bit(score, ties):
    from effstats.reliability._benchmark import Benchmark
    from effstats.reliability._winrate import _score, _scorer

    rng = np.random.default_rng(5)
    x = rng.random((9, 7)).round(1)  # ties within scenarios
    x[rng.random(x.shape) < 0.15] = np.nan
    bench = Benchmark.from_data(pd.DataFrame(x, index=[f"m{i}" for i in range(9)], columns=list("abcdefg")))
    num, den = bench.sub_sums()
    scorer = _scorer(bench, num, den, score, ties)
    for w in (rng.integers(0, 3, (2, 7)).astype(float), np.repeat(np.eye(7)[[3]], 2, axis=0)):
        want = _score(bench, num, den, score, ties, scen_w=w)
        assert scorer(w).tobytes() == want.tobytes()
