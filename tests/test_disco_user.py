"""Findings of a user-level review of the subset estimators (DISCO, baselines, tinyBenchmarks, the chooser)."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from effstats.disco import AnchorCorr, DISCO, RandomDirect
from effstats.irt import TinyBenchmarks


def _data(seed=0, m=20, n=300):
    rng = np.random.default_rng(seed)
    return (rng.random((m, n)) < rng.uniform(0.3, 0.9, (m, 1))).astype(float)


@pytest.mark.parametrize("est", [DISCO(20, predictor="knn", pca=8, random_state=0), RandomDirect(20, random_state=0),
                                 AnchorCorr(20, random_state=0),
                                 TinyBenchmarks(20, estimator="weighted", random_state=0)])
def test_items_with_ragged_or_nan_outputs_name_the_argument(est):
    est.fit(_data())
    k = len(est.selected_)
    with pytest.raises(ValueError, match="^target_outputs: expected a rectangular"):
        est.predict([[1.0] * k, [0.0] * (k - 1)], items=est.selected_)
    # NaN marks a missing cell: estimated from the other items with a warning naming it; a target with no
    # output on any selected item is refused
    bad = np.ones((2, k))
    bad[0, 0] = np.nan
    with pytest.warns(UserWarning,
                      match=rf"^target_outputs: 1 cells missing on 1 of the {k} selected items \[{est.selected_[0]}\]"):
        assert np.isfinite(est.predict(bad, items=est.selected_)).all()
    bad[1] = np.nan
    with pytest.raises(ValueError, match=r"^target_outputs: targets \[1\] \(positions\) have no output"):
        est.predict(bad, items=est.selected_)
    # and the aligned path still aligns: reversed columns with their ids give the same estimate
    y = _data(1)[:3, est.selected_]
    np.testing.assert_allclose(est.predict(y[:, ::-1], items=est.selected_[::-1]), est.predict(y))


def _wilson(p, n, z):
    """Wilson's score interval of a proportion ``p`` at sample size ``n``."""
    d = 1 + z * z / n
    centre, half = (p + z * z / (2 * n)) / d, z / d * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_random_direct_interval_is_wilson_on_binary_correctness():
    # A mixed 0/1 target: Wilson's score interval with the finite-population-corrected sample size
    # n = k / (1 - k/N). A target right on every sampled item: the Wald interval would collapse to [1, 1]; it gets
    # the exact hypergeometric interval of its count (scipy's law, every population count tried), wider than
    # Wilson's here (Wilson's lower limit at 40 / (1 - 0.1) items, 0.9426, misses 377 right items of 400, which
    # leave P(all 40 sampled right) = 0.082, above the one-sided 0.05).
    from scipy.stats import hypergeom

    y = _data(2, m=10, n=400)
    est = RandomDirect(40, random_state=0).fit(y)
    tgt = np.ones((1, 40))
    mixed = np.ones((1, 40))
    mixed[0, :10] = 0
    z = 1.6448536269514722
    n = 40 / (1 - 40 / 400)
    p = est.predict_interval(np.vstack([tgt, mixed]))
    lo, hi = p.confidence_interval(0.9)
    np.testing.assert_allclose([lo[1], hi[1]], _wilson(0.75, n, z), rtol=1e-12)
    edge = np.flatnonzero(hypergeom.pmf(40, 400, np.arange(401), 40) > 0.05)[0] / 400
    assert (lo[0], hi[0]) == (edge, 1.0) and edge < 377 / 400 < _wilson(1.0, n, z)[0]
    assert hypergeom.pmf(40, 400, 377, 40) > 0.05
    ci = p.confidence_interval(0.9)
    # graded (non-binary) scores: Student's t on 40 - 1 degrees of freedom
    from scipy.special import stdtrit

    g = np.full((1, 40), 0.5)
    g[0, :20] = 0.7
    p = est.predict_interval(g)
    lo, hi = p.confidence_interval(0.9)
    np.testing.assert_allclose([lo[0], hi[0]], 0.6 + np.array([-1, 1]) * stdtrit(39, 0.95) * p.standard_error[0])
    # ... and say so without a NaN sentinel: a finite effective size for every target, Wilson only for 0/1 rows
    both = est.predict_interval(np.vstack([tgt, g]))
    np.testing.assert_allclose(both.n_effective, n)
    np.testing.assert_array_equal(both.wilson, [True, False])
    # a SubsetPrediction built by hand with an effective size and no mask or population keeps Wilson's interval
    from effstats.disco import SubsetPrediction

    hand = SubsetPrediction(np.array([1.0]), np.array([0.0]), "design", None, (0.0, 1.0), None, np.array([n]))
    assert hand.confidence_interval(0.9).low[0] == pytest.approx(_wilson(1.0, n, z)[0])
    # with stratify (20 items of each group of 200, a stratified simple random sample) a target right on every
    # item gets the exact interval of the worst placement of its wrong items between the groups (a dynamic
    # programme over the groups), not Wilson's at the corrected size
    from test_stratified_alike_interval import _dp_lower_limit

    strat = RandomDirect(40, stratify=np.repeat([0, 1], 200), random_state=0).fit(y).predict_interval(tgt)
    low = _dp_lower_limit(np.array([20, 20]), np.array([200, 200]), 0.9)
    assert (strat.confidence_interval(0.9).low[0], strat.confidence_interval(0.9).high[0]) == (low, 1.0)
    assert low < _wilson(1.0, n, z)[0] - 0.01
    assert ci.low[0] < 0.95


def test_random_direct_interval_covers_on_cifar10():
    # The 30 CIFAR-10 models' correctness on the 10,000 test images (real data), 600 random 100-item subsets:
    # pooled 90 % coverage 0.890 with Wilson's interval, 0.852 with the Wald interval it replaced (the most
    # accurate models, >= 96.6 %, 0.77-0.80). Draws share their items across models, so the MC s.e. uses the
    # number of draws (conservative).
    from effstats.datasets import load_cifar10_predictions

    try:
        rm = load_cifar10_predictions(domains=["cifar10"])
    except (FileNotFoundError, ValueError) as exc:
        pytest.skip(f"CIFAR-10 predictions: {exc}")
    truth = rm.accuracy().to_numpy()
    cover = []
    for s in range(600):
        lo, hi = RandomDirect(100, random_state=s).fit(rm).predict_interval(rm).confidence_interval(0.9)
        cover.append((lo <= truth) & (truth <= hi))
    assert np.mean(cover) >= 0.9 - 3 * np.sqrt(0.09 / 600)


def test_dataframe_with_conflicting_items_is_refused():
    # items= that contradict a DataFrame's columns would read outputs labelled by one order in another: refused
    import pandas as pd

    est = AnchorCorr(20, random_state=0).fit(_data())
    sel = est.selected_
    y = _data(1)[:3, sel]
    df = pd.DataFrame(y, columns=sel)
    with pytest.raises(ValueError, match="^items: a DataFrame carries its own item ids"):
        est.predict(df, items=sel[::-1])
    np.testing.assert_allclose(est.predict(df, items=sel), est.predict(y))  # agreeing ids are fine
    np.testing.assert_allclose(est.predict(df.iloc[:, ::-1]), est.predict(y))


@pytest.mark.parametrize("make",
                         [lambda: RandomDirect(20), lambda: DISCO(20, predictor="knn", pca=8), lambda: AnchorCorr(20),
                                  lambda: TinyBenchmarks(20, n_dims=1)])
def test_degenerate_pools_and_misnumbered_labels_are_refused(make):
    # Class ids 0-9 with labels 10-19 (a numbering mismatch) made every correctness 0 and every estimate 0.0;
    # an all-correct pool gave 1.0 for every target (with numpy divide warnings in the IRT family).
    import warnings

    rng = np.random.default_rng(0)
    lab = rng.integers(0, 10, 300)
    pred = np.where(rng.random((20, 300)) < 0.7, lab, rng.integers(0, 10, (20, 300)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="^labels: no source model predicts the true class of any item"):
            make().fit(pred, labels=lab + 10)
        for y, word in ((np.ones((20, 300), bool), "right"), (np.zeros((20, 300)), "wrong")):
            if isinstance(make(), RandomDirect):  # random items need no differences between the sources
                target = rng.random((1, 300)) < 0.6
                est = make().fit(y)
                assert est.predict(target)[0] == target[0, est.selected_].mean()
                continue
            with pytest.raises(ValueError, match=f"^source_outputs: every source model has the same signature: {word}"):
                make().fit(y)
    make().fit(pred, labels=lab)  # the right numbering fits


def test_stratified_interval_is_wilson_with_the_design_effect():
    from effstats.disco import StratifiedHT

    y = _data(3, m=12, n=500)
    est = StratifiedHT(50, n_strata=5, random_state=0).fit(y)
    k, z = len(est.selected_), 1.6448536269514722
    # right on every sampled item: Wald gave [1, 1]; the exact interval of the worst placement of the wrong items
    # among the strata (a dynamic programme over them), below Wilson's at n = k / (1 - k/N)
    from test_stratified_alike_interval import _dp_lower_limit

    lo, hi = est.predict_interval(np.ones((1, k))).confidence_interval(0.9)
    n = k / (1 - k / 500)
    assert hi[0] == 1.0
    assert lo[0] == _dp_lower_limit(np.bincount(est.strata_[est.selected_]), est.stratum_sizes_, 0.9)
    assert lo[0] < (1 + z * z / (2 * n) - z * z / (2 * n)) / (1 + z * z / n)
    # a mixed target: Wilson at Korn & Graubard's effective size, p(1-p)/se^2 times (z/t)^2 with t the 95 % quantile
    # at Satterthwaite's degrees of freedom of the strata's variance terms
    t = _data(4, m=3, n=500)[:, est.selected_]
    p = est.predict_interval(t)
    lo, hi = p.confidence_interval(0.9)
    q, se = p.statistic, p.standard_error
    assert np.all(np.isfinite(p.df)) and np.all(p.df > 1)
    n = q * (1 - q) / se**2 * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, p.df)) ** 2
    centre = (q + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(q * (1 - q) / n + z * z / (4 * n * n))
    np.testing.assert_allclose(lo, centre - half)
    np.testing.assert_allclose(hi, centre + half)


@pytest.mark.parametrize("layout", ["binary", "missing", "probabilities", "given scores"])
def test_predict_interval_converts_the_selected_items_and_reuses_the_fits_scores(monkeypatch, layout):
    """predict_interval on a ResponseMatrix converts only the selected items' outputs, and takes the source models'
    score range from the scores its fit made (unless they were given): the same outputs and range as converting
    every item and averaging the whole source matrix again."""
    import warnings

    from effstats import ResponseMatrix, _range, _subset

    rng = np.random.default_rng(5)
    ids = [f"i{j}" for j in range(400)]
    if layout == "probabilities":
        p = rng.dirichlet(np.ones(4), size=(12, 400))
        rm = ResponseMatrix.from_probabilities(p, rng.integers(0, 4, 400), item_ids=ids)
    else:
        miss = (rng.random((12, 400)) < 0.05) if layout == "missing" else None
        rm = ResponseMatrix((rng.random((12, 400)) < 0.6).astype(float), missing=miss, item_ids=ids)
    given = rm.accuracy().to_numpy() + 0.01 if layout == "given scores" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # missing cells
        est = RandomDirect(50, random_state=0).fit(rm, given)
    pos = _subset.align_items(rm.item_ids, est.selected_ids_)
    new, old = _subset._response_outputs_on(rm, pos), _subset._as_outputs(rm, "target_outputs").take(pos)
    for a, b in zip(new, old):
        if isinstance(b, pd.DataFrame):
            pd.testing.assert_frame_equal(a, b)
        elif isinstance(b, pd.Index):
            assert a.equals(b)
        else:
            assert (a is None and b is None) or (a.dtype == b.dtype and np.array_equal(a, b))
    full = est._source[0]
    s = full.correctness("source_outputs").astype(float)
    made = _range.score_range(s if full.missing is None else np.where(full.missing, np.nan, s))
    assert est._source_score_range() == made
    calls = []  # conversions of a ResponseMatrix, and correctness of all 400 items (the source's, for its range)
    as_outputs, correctness = _subset._as_outputs, _subset._Outputs.correctness
    monkeypatch.setattr(_subset, "_as_outputs",
                        lambda x, *a, **k: calls.append(type(x).__name__) or as_outputs(x, *a, **k))
    monkeypatch.setattr(_subset._Outputs, "correctness",
                        lambda o, name: calls.append(o.n_items) or correctness(o, name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est.predict_interval(rm)
    assert "ResponseMatrix" not in calls
    assert (400 in calls) == (layout == "given scores"), calls
