"""The exact interval of a stratified simple random sample whose 0/1 responses are all alike: every placement of
the wrong items among the strata of small designs, one stratum against the hypergeometric interval, the default
estimator on CIFAR-10's test set against a dynamic programme over the strata, and bad input."""
import itertools
import warnings

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
import numpy as np
import pytest
from scipy.special import gammaln

from effstats._hypergeometric import hypergeometric_interval, stratified_alike_interval


def _log_all_right(k, size, wrong):
    """log P(a simple random sample of ``k`` of ``size`` items, ``wrong`` of them wrong, is all right)."""
    right = np.asarray(size - wrong, float)
    with np.errstate(invalid="ignore"):
        out = gammaln(right + 1) - gammaln(right - k + 1) - gammaln(size + 1) + gammaln(size - k + 1)
    return np.where(right >= k, out, -np.inf)


def _designs():
    rng = np.random.default_rng(0)
    for _ in range(120):
        h = int(rng.integers(1, 4))
        size = rng.integers(1, 7, h)
        k = np.array([rng.integers(0, s + 1) for s in size])
        if k.sum() and k.sum() < size.sum():
            yield k, size


@pytest.mark.parametrize("level", [0.7, 0.9, 0.95])
def test_every_placement_of_the_wrong_items_on_small_designs(level):
    # every placement (W_1, ..., W_H) of wrong items: a true score below the lower limit of a sample all right
    # gives that sample a probability of at most a, and the limit is the lowest such score (the brute-force maximum
    # over placements of W wrong items is above a at the limit's W and at most a one item further), so the greedy
    # placement is the optimal one; all wrong is the mirror image
    a = (1 - level) / 2
    for k, size in _designs():
        n_items = int(size.sum())
        ci = stratified_alike_interval(k, size, True, level)
        ci0 = stratified_alike_interval(k, size, False, level)
        w_max = round(n_items * (1 - ci.low))
        assert ci.high == 1.0 and ci0.low == 0.0 and ci0.high == pytest.approx(1 - ci.low, abs=1e-12)
        best = np.zeros(n_items + 1)
        for wrong in itertools.product(*(range(s + 1) for s in size)):
            wrong = np.array(wrong)
            p = float(np.exp(_log_all_right(k, size, wrong).sum()))
            best[wrong.sum()] = max(best[wrong.sum()], p)
            if 1 - wrong.sum() / n_items < ci.low - 1e-12:  # the interval of a sample all right misses the score
                assert p <= a + 1e-12, (k, size, wrong)
        # a probability equal to a (as 1/10 at a = 0.1) is above it or not by the last bit of rounding
        assert best[w_max] > a - 1e-12, (k, size)
        assert w_max == n_items - k.sum() or best[w_max + 1] <= a + 1e-12, (k, size)


@pytest.mark.parametrize("level", [0.8, 0.95])
def test_one_stratum_is_the_hypergeometric_interval(level):
    for size in (2, 7, 40, 400, 10_000):
        for k in sorted(k for k in {1, 2, size // 3, size // 2, size - 1} if 0 < k < size):
            for right in (True, False):
                ci = stratified_alike_interval([k], [size], right, level)
                hyp = hypergeometric_interval(k if right else 0, k, size, level)
                lows = sorted((ci.low, hyp.low) if right else (1 - ci.high, 1 - hyp.high))
                assert ci.high - ci.low == pytest.approx(hyp.high - hyp.low + lows[1] - lows[0], abs=1e-12)
                if lows[1] - lows[0] > 1e-12:
                    # a tail equal to a (10 / 400 at a = 0.025) is kept or not by the last bit of rounding: this
                    # interval keeps it, one item wider
                    assert lows[1] - lows[0] == pytest.approx(1 / size, abs=1e-12), (size, k, right)
                    wrong = round(size * (1 - lows[0]))
                    assert np.exp(_log_all_right(k, size, wrong)) == pytest.approx((1 - level) / 2, rel=1e-9)


def test_rows_are_designs_and_a_stratum_without_items_is_free():
    # two designs at once, as each on its own; a stratum sampled not at all holds wrong items at no cost; a census
    # of a stratum none
    k = np.array([[3, 5], [5, 0]])
    size = np.array([[20, 30], [30, 10]])
    ci = stratified_alike_interval(k, size, [True, False])
    one = [stratified_alike_interval(k[i], size[i], r) for i, r in enumerate((True, False))]
    np.testing.assert_allclose(ci.low, [c.low for c in one], atol=1e-15)
    np.testing.assert_allclose(ci.high, [c.high for c in one], atol=1e-15)
    free = stratified_alike_interval([5, 0], [30, 10], True)
    hyp = hypergeometric_interval(5, 5, 30)
    assert free.low == pytest.approx((30 * hyp.low) / 40 + 0.0, abs=1e-12)  # 10 more wrong items, at no cost
    census = stratified_alike_interval([5, 10], [30, 10], True)
    assert census.low == pytest.approx((30 * hyp.low + 10) / 40, abs=1e-12)


def _dp_lower_limit(k, size, level):
    """The lower limit by a dynamic programme over the strata (the best split of each total of wrong items between
    the strata seen so far and the next), independent of the greedy order."""
    a = (1 - level) / 2
    best = np.zeros(1)  # best log P(all right) for 0, 1, ... wrong items in the strata so far
    for k_h, n_h in zip(k, size):
        own = _log_all_right(k_h, n_h, np.arange(n_h + 1))
        keep = own > np.log(a)  # more wrong items in one stratum cannot be part of a placement above a
        own = own[: max(int(keep.sum()), 1)]
        pair = best[:, None] + own[None, :]
        total = np.add.outer(np.arange(len(best)), np.arange(len(own))).ravel()
        new = np.full(total.max() + 1, -np.inf)
        np.maximum.at(new, total, pair.ravel())
        best = new
    return 1 - int(np.flatnonzero(best > np.log(a)).max()) / size.sum()


def test_default_estimator_on_cifar10_takes_the_worst_placement():
    # StratifiedAIPW's own strata and allocation on CIFAR-10's test images, a target right on every one of 50 of
    # the 10,000 (and of 120 of the first 400): the exact stratified limit, which the dynamic programme over the
    # strata confirms, below the Clopper-Pearson one at n / (1 - n/N) (0.929 and 0.979)
    from effstats import ResponseMatrix
    from effstats.datasets import data_root, load_cifar10_predictions
    from effstats.disco import StratifiedAIPW

    try:
        data_root()
    except FileNotFoundError:
        pytest.skip("shared/data/predictions not found beside the checkout")
    rm = load_cifar10_predictions(domains="cifar10")
    for n_total, n, want in ((10_000, 50, 0.9074), (400, 120, 0.965)):
        src = ResponseMatrix(rm.values[:, :n_total])
        est = StratifiedAIPW(n_items=n, random_state=0).fit(src)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # targets beyond the sources' range
            ci = est.predict_interval(np.array([np.ones(n_total), np.zeros(n_total)])).confidence_interval(0.95)
        exact = _dp_lower_limit(est.allocation_, est.stratum_sizes_, 0.95)
        np.testing.assert_allclose([ci.low[0], ci.high[0], ci.low[1], ci.high[1]], [exact, 1, 0, 1 - exact],
                                   atol=1e-12)
        assert round(exact, 4) == want
        assert exact < 0.025 ** ((1 - n / n_total) / n) - 0.01


def test_stratified_ht_and_random_groups_take_the_worst_placement():
    # SSEPY's strata (StratifiedHT) and RandomDirect's groups: a target right (wrong) on every drawn item gets the
    # exact interval of its strata's allocation, by the dynamic programme over the strata
    from effstats.datasets import simulate_responses
    from effstats.disco import RandomDirect, StratifiedHT

    src = simulate_responses(30, 400, rng=0)
    groups = np.repeat([0, 1, 2], [50, 150, 200])
    for est in (StratifiedHT(n_items=40, n_strata=5, random_state=0).fit(src),
                RandomDirect(n_items=40, stratify=groups, random_state=0).fit(src)):
        if isinstance(est, StratifiedHT):
            alloc, sizes = np.bincount(est.strata_[est.selected_]), est.stratum_sizes_
        else:
            alloc, sizes = np.bincount(groups[est.selected_]), np.bincount(groups)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # targets beyond the sources' range
            ci = est.predict_interval(np.array([np.ones(400), np.zeros(400)])).confidence_interval(0.9)
        exact = _dp_lower_limit(alloc, sizes, 0.9)
        assert len(sizes) > 2 and exact < 1 - 0.04
        np.testing.assert_allclose([ci.low[0], ci.high[0], ci.low[1], ci.high[1]], [exact, 1, 0, 1 - exact],
                                   atol=1e-12)


@pytest.mark.parametrize("args, match", [
    (([2.5, 1], [5, 5], True), "n_sampled"),
    (([2, -1], [5, 5], True), "n_sampled"),
    (([6, 1], [5, 5], True), "n_sampled: expected at most population"),
    (([1, 1], [5, 5, 5], True), "population"),
    (([0, 0], [0, 0], True), "population"),
    (([1, 1], [5, 5], True, 1.5), "confidence_level"),
])
def test_bad_input_names_the_argument(args, match):
    with pytest.raises(ValueError, match=match):
        stratified_alike_interval(*args)


@settings(max_examples=300, deadline=None)
@given(hnp.arrays(float, hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=12),
                  elements=st.one_of(st.sampled_from([0.0, 0.5, 1.0, np.nan]), st.floats(0, 1))))
def test_the_value_responses_all_alike_would_have_is_numpys_nanmedian(y):
    # the subset estimators' median of each target's observed responses (from one sort) against numpy's nanmedian
    from effstats._outputs import _row_medians

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a target without a value: NaN
        np.testing.assert_array_equal(_row_medians(y), np.nanmedian(y, axis=1))
