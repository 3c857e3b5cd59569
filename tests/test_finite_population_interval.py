"""The exact finite-population (hypergeometric Clopper-Pearson) interval for 0/1 items sampled without replacement:
brute force over every population count on small benchmarks, the binomial limit, a census, and bad input."""
import numpy as np
import pytest
from scipy import stats

from effstats._hypergeometric import hypergeometric_interval


def _kept(x, n, N, a, tol=0.0):
    """Brute force with scipy's tails: the population counts K that neither one-sided exact test rejects (a tail
    above ``a + tol``)."""
    k = np.arange(N + 1)
    up = stats.hypergeom.sf(x - 1, N, k, n)  # P(X >= x | K)
    down = stats.hypergeom.cdf(x, N, k, n)  # P(X <= x | K)
    return k[(up > a + tol) & (down > a + tol)]


@pytest.mark.parametrize("level", [0.8, 0.95])
def test_coverage_is_exact_for_every_population_count(level):
    # every benchmark of 1 to 14 items, every sample size and every count of 1s K: the probability that the
    # interval holds K / N, summed exactly over the hypergeometric law of the sample's count, is at least the level,
    # and each limit misses with probability at most (1 - level) / 2; the limits are the set scipy's tails keep
    a = (1 - level) / 2
    worst = 1.0
    for N in range(1, 15):
        for n in range(1, N + 1):
            x = np.arange(n + 1)
            low, high = hypergeometric_interval(x, n, N, level)
            for i in x:
                # a tail equal to the level (as 1 / 10 at N = 10) rejects or not with the last bit of rounding
                sure, tied = _kept(i, n, N, a, 1e-12), _kept(i, n, N, a, -1e-12)
                assert tied.min() <= low[i] * N <= sure.min() and sure.max() <= high[i] * N <= tied.max(), (N, n, i)
            for K in range(N + 1):
                pmf = stats.hypergeom.pmf(x, N, K, n)
                above, below = low * N > K, high * N < K
                assert pmf[above].sum() <= a + 1e-12 and pmf[below].sum() <= a + 1e-12, (N, n, K)
                worst = min(worst, pmf[~above & ~below].sum())
    assert worst >= level - 1e-12
    assert worst < level + 0.1  # and not trivially wide: some count is covered close to the level


def test_agrees_with_binomial_clopper_pearson_on_a_large_population():
    # drawing without replacement from 10 million items is drawing with replacement up to about n / N = 1e-5 in
    # the tails, and the limits are multiples of 1 / N: within 1e-6 of scipy's binomial Clopper-Pearson limits
    n = 100
    x = np.arange(n + 1)
    ci = hypergeometric_interval(x, n, 10**7)
    for i in (0, 1, 37, 99, 100):
        cp = stats.binomtest(int(i), n).proportion_ci(0.95, method="exact")
        assert abs(ci.low[i] - cp.low) < 1e-6 and abs(ci.high[i] - cp.high) < 1e-6, i
    # and never wider than the binomial interval on a small population, where it is much narrower
    small = hypergeometric_interval(x, n, 200)
    assert (small.low >= ci.low - 1e-6).all() and (small.high <= ci.high + 1e-6).all()
    assert (small.high - small.low).mean() < 0.75 * (ci.high - ci.low).mean()


def test_all_right_on_120_of_400_items():
    # the exact lower limit is 390 / 400: 390 right items leave P(all 120 sampled right) above 0.025 and 389 do
    # not; the binomial Clopper-Pearson limit at the finite-population-corrected size 120 / (1 - 0.3) is higher,
    # 0.9787, and misses 390 / 400 with that probability
    ci = hypergeometric_interval(120, 120, 400)
    assert ci == (0.975, 1.0)
    p390, p389 = stats.hypergeom.pmf(120, 400, [390, 389], 120)
    assert p390 > 0.025 >= p389
    cp_fpc = 0.025 ** (1 / (120 / (1 - 120 / 400)))
    assert round(cp_fpc, 4) == 0.9787 > ci.low
    assert ci.low >= stats.beta.ppf(0.025, 120, 1)  # and narrower than the binomial one at 120 items (0.9697)


def _tail_term_by_term(x, N, K, n, lower):
    """The exact tail as effstats sums it, one term at a time: the short side's terms from x outwards, each the
    previous times the ratio of neighbouring probabilities, until a term is below 1e-17 of the sum."""
    from scipy.special import gammaln

    lo, hi = max(0.0, n - (N - K)), min(n, K)
    if lower and (x < lo or x >= hi) or not lower and (x <= lo or x > hi):
        return float(x >= hi) if lower else float(x <= lo)  # outside the support
    mode = np.floor((n + 1) * (K + 1) / (N + 2))
    down = x <= mode if lower else x < mode
    j = min(max((x if down else x + 1) if lower else (x - 1 if down else x), lo), hi)
    term = np.exp(gammaln(K + 1) - gammaln(j + 1) - gammaln(K - j + 1) + gammaln(N - K + 1) - gammaln(n - j + 1)
                  - gammaln(N - K - n + j + 1) - gammaln(N + 1) + gammaln(n + 1) + gammaln(N - n + 1))
    acc = term
    while True:
        with np.errstate(all="ignore"):
            ratio = (j * (N - K - n + j) / ((K - j + 1) * (n - j + 1)) if down
                     else (K - j) * (n - j) / ((j + 1) * (N - K - n + j + 1)))
        j = j - 1 if down else j + 1
        if not lo <= j <= hi:
            break
        term = term * np.nan_to_num(ratio)
        acc = acc + term
        if not term > 1e-17 * acc:
            break
    side = min(max(acc, 0.0), 1.0)
    return side if down == lower else 1.0 - side


def test_tails_summed_in_blocks_equal_the_term_by_term_sum():
    from effstats._hypergeometric import _hyp_tail

    rng = np.random.default_rng(5)
    # a few rows are summed in blocks of terms, many one term at a time over them all
    for N, rows in [(1.0, 40), (7.0, 40), (60.0, 40), (1635.0, 40), (5000.0, 40), (60.0, 100), (5000.0, 100)]:
        K, n = rng.integers(0, N + 1, rows).astype(float), rng.integers(0, N + 1, rows).astype(float)
        x = np.floor(rng.random(rows) * (n + 3)) - 1
        for lower in (True, False):
            got = _hyp_tail(x, np.full(rows, N), K, n, lower)
            want = [_tail_term_by_term(*v, lower) for v in zip(x, np.full(rows, N), K, n)]
            np.testing.assert_array_equal(got, want)  # to the last bit


@pytest.mark.parametrize("x", [0, 7, 20])
def test_a_census_gives_the_exact_score(x):
    ci = hypergeometric_interval(x, 20, 20, 0.99)
    assert ci.low == ci.high == x / 20
    both = hypergeometric_interval([x, min(x, 19)], [20, 19], 20)
    assert both.low[0] == both.high[0] == x / 20 and both.high[1] > both.low[1]


@pytest.mark.parametrize("args, match", [
    ((1.5, 3, 10), r"^successes: expected whole numbers >= 0, got \[1.5\]"),
    ((-1, 3, 10), r"^successes: expected whole numbers >= 0"),
    ((4, 3, 10), r"^successes: expected at most n \(3\), got 4$"),
    ((1, 0, 10), r"^n: expected whole numbers >= 1"),
    ((1, 11, 10), r"^n: expected at most population \(10\), got 11$"),
    ((1, 3, 0), r"^population: expected whole numbers >= 1"),
    ((1, 3, np.inf), r"^population: "),
    ((np.nan, 3, 10), r"^successes: "),
    (([1, 2], [3, 3, 3], 10), r"^n, population: expected shapes broadcastable"),
    (("a", 3, 10), r"^successes: "),
])
def test_bad_input_names_the_argument(args, match):
    with pytest.raises(ValueError, match=match):
        hypergeometric_interval(*args)


@pytest.mark.parametrize("level", [0, 1, 1.5, "0.95"])
def test_bad_level_names_the_argument(level):
    with pytest.raises(ValueError, match="^confidence_level: "):
        hypergeometric_interval(1, 3, 10, level)
