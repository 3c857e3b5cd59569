"""Sort & Search's arguments read one way: option names in any case (as ``check_option(ignore_case=True)`` reads
them everywhere in effstats), and one stated range per argument whichever side of it a value falls."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effstats.sortsearch import (
    CopyNearestExpand,
    HybridSearch,
    SampleInserter,
    SortSearch,
    estimate_accuracy,
    korn_graubard_interval,
    random_positions,
    stratified_positions,
    uniform_positions,
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    ab, diff = rng.normal(size=30), rng.normal(size=60)
    return rng.random((30, 60)) < 1 / (1 + np.exp(-(ab[:, None] - diff[None, :])))


# ----------------------------------------------------------------------------------------------- names
@pytest.mark.parametrize("given, canonical", [
    (dict(sort="SUM"), dict(sort="sum")),
    (dict(sort="Recursive"), dict(sort="recursive")),
    (dict(sampling="Stratified", random_state=0), dict(sampling="stratified", random_state=0)),
    (dict(sampling="RANDOM", random_state=0), dict(sampling="random", random_state=0)),
    (dict(estimator="Difference"), dict(estimator="difference")),
    (dict(missing="RAISE"), dict(missing="raise")),
])
def test_sortsearch_options_in_any_case(data, given, canonical):
    src, new = data[:20], data[20:]
    got = SortSearch(**given).fit(src)
    ref = SortSearch(**canonical).fit(src)
    np.testing.assert_array_equal(got.order_, ref.order_)
    a, b = got.simulate(new, 12), ref.simulate(new, 12)
    np.testing.assert_array_equal(a.thresholds, b.thresholds)
    np.testing.assert_array_equal(a.accuracy, b.accuracy)
    assert (a.design, a.estimator) == (b.design, b.estimator)  # the result names the canonical option
    assert got.get_params() == {**ref.get_params(), **given}  # the parameters stay as given (clone, get_params)


def test_sample_inserter_and_hybrid_options_in_any_case(data):
    si, ref = SampleInserter(sampling="Uniform").fit(data), SampleInserter().fit(data)
    np.testing.assert_array_equal(si.select(6), ref.select(6))
    kw = dict(budget=10, neighbors=(1, 3), weights=(0.0, 0.5), cv=3, random_state=0)
    h = HybridSearch(sort="SUM", **kw).fit(data[:20])
    r = HybridSearch(**kw).fit(data[:20])
    np.testing.assert_array_equal(h.simulate(data[20:]).correctness(), r.simulate(data[20:]).correctness())
    assert h.cv_results_.equals(r.cv_results_)


def test_hybrid_sort_is_one_of_its_own(data):
    # HybridSearch sorts 0/1 correctness: 'confidence' is not among its options, and it says so by name
    with pytest.raises(ValueError, match="^sort: expected one of 'sum', 'recursive', got 'confidence'$"):
        HybridSearch(budget=10, sort="confidence").fit(data)


def test_estimate_accuracy_design_in_any_case(data):
    y, pos = data[:, :8], np.arange(8) * 7
    np.testing.assert_array_equal(estimate_accuracy(y, pos, 60, "SRS"), estimate_accuracy(y, pos, 60, "srs"))


@pytest.mark.parametrize("bad", ["summ", "sum ", 1.0, None])
def test_unknown_option_names_the_argument(data, bad):
    with pytest.raises(ValueError, match=r"^sort: expected one of 'sum', 'confidence', 'recursive', got "):
        SortSearch(sort=bad).fit(data)


# ---------------------------------------------------------------------------------------------- bounds
def _message(call):
    with pytest.raises(ValueError) as info:
        call()
    return str(info.value).rsplit(", got", 1)[0]


@pytest.mark.parametrize("name, make, bad, expected", [
    ("select", lambda d, v: SortSearch().fit(d).select(v), (0, -1, 61, 2.5, True),
     "budget: expected an integer in [1, 60]"),
    ("simulate", lambda d, v: SortSearch().fit(d).simulate(d, v), (0, 61), "budget: expected an integer in [1, 60]"),
    ("budget_curve", lambda d, v: SortSearch().fit(d).budget_curve(d, [5, v]), (0, 61, 1.5),
     "budgets: expected an integer in [1, 60]"),
    ("inserter", lambda d, v: SampleInserter().fit(d).select(v), (0, 31), "budget: expected an integer in [1, 30]"),
    ("copy-nearest", lambda d, v: CopyNearestExpand(random_state=0).fit(d).select(v), (0, 61),
     "budget: expected an integer in [1, 60]"),
    ("hybrid budget", lambda d, v: HybridSearch(budget=v).fit(d), (0, 61, 10.0),
     "budget: expected an integer in [1, 60]"),
    ("hybrid cv_setting",
     lambda d, v: HybridSearch(budget=5, neighbors=(1,), weights=(0.0,), cv=2).fit(d).cv_setting(v),
     (0, 61), "budget: expected an integer in [1, 60]"),
    ("hybrid cv", lambda d, v: HybridSearch(budget=5, cv=v).fit(d), (0, 1, 31, 2.0),
     "cv: expected an integer in [2, 30]"),
    ("positions", lambda d, v: uniform_positions(60, v), (0, 61, 3.0), "budget: expected an integer in [1, 60]"),
    ("stratified", lambda d, v: stratified_positions(60, v, 0), (0, 61), "budget: expected an integer in [1, 60]"),
    ("random", lambda d, v: random_positions(60, v, 0), (0, 61), "budget: expected an integer in [1, 60]"),
    ("interval", lambda d, v: korn_graubard_interval(0.5, 0.1, v, 60), (0, 61, 4.5),
     "budget: expected an integer in [1, 60]"),
    ("depth", lambda d, v: SortSearch(sort="recursive", depth=v).fit(d), (0, -2, 1.5),
     "depth: expected an integer >= 1"),
    ("depth, sum sort", lambda d, v: SortSearch(depth=v).fit(d), (0,), "depth: expected an integer >= 1"),
    ("neighbors", lambda d, v: HybridSearch(budget=5, neighbors=(v,)).fit(d), (0, -1),
     "neighbors: expected an integer >= 1"),
])
def test_one_bound_per_argument(data, name, make, bad, expected):
    """Below the range, above it and off the integers: the same message, stating the same range."""
    for v in bad:
        assert _message(lambda: make(data, v)) == expected, (name, v)


@pytest.mark.parametrize("make, bad", [
    (lambda d, v: HybridSearch(budget=5, weights=(v,)).fit(d), (-0.1, 1.1)),
    (lambda d, v: HybridSearch(budget=5, fallback_margin=v).fit(d), (-0.1, 1.1)),
    (lambda d, v: korn_graubard_interval(0.5, 0.1, 10, 60, v), (0.0, 1.0, 1.5)),
    (lambda d, v: korn_graubard_interval(0.5, 0.1, 10, 60, df=v), (0, -1)),
])
def test_real_valued_bounds_are_stated_once(data, make, bad):
    msgs = {_message(lambda: make(data, v)) for v in bad}
    assert len(msgs) == 1, msgs


def test_hybrid_cv_bound_names_the_source_models(data):
    """cv's bound is the number of source models: the message says so, and too few models is no empty range."""
    with pytest.raises(ValueError, match=r"^cv: expected an integer in \[2, 3\], got 5 \(its cross-validation folds "
                                         r"are over the 3 source models\)$"):
        HybridSearch(budget=5).fit(data[:3])
    with pytest.raises(ValueError, match=r"^source_outputs: HybridSearch needs at least 2 source models"):
        HybridSearch(budget=5).fit(data[:1])


# ----------------------------------------------------------------------------------------------- graded scores
@pytest.mark.parametrize("kw", [dict(), dict(missing="raise"), dict(missing="observed"), dict(sort="recursive")])
def test_graded_scores_are_refused_for_what_they_are(kw):
    """Graded scores (AlpacaEval's P(win), with 10 missing cells) get one error naming their kind and the way to 0/1
    results, whatever the missing= rule; the 0/1 outcome of the same data fits."""
    from effstats.datasets import load_alpacaeval

    graded = load_alpacaeval()
    assert graded.kind == "score" and graded.missing is not None and graded.missing.any()
    with pytest.raises(ValueError, match=r"^responses: Sort & Search needs 0/1 results \(kind='binary'\), got graded "
                                         r"scores \(kind='score'\); .*load_alpacaeval\(outcome='win'\)"):
        SortSearch(**kw).fit(graded)
    with pytest.warns(UserWarning, match="missing"):
        assert SortSearch().fit(load_alpacaeval(outcome="win")).n_items_ == graded.shape[1]


@pytest.mark.parametrize("ids", [np.arange(100), np.arange(100)[::-1] + 7])
def test_labelled_columns_with_integer_item_ids_are_aligned_by_id(ids):
    """Integer item ids are ids: a target whose columns are shuffled (ids alike) gives the same predictions and
    simulation as the target in fitted order."""
    from effstats import ResponseMatrix
    from effstats.datasets import simulate_responses
    from effstats.sortsearch import SortSearch
    vals = simulate_responses(30, 100, rng=0).values
    perm = np.random.default_rng(1).permutation(100)
    names = [f"t{i}" for i in range(5)]
    same = ResponseMatrix(vals[25:], item_ids=ids, model_ids=names)
    shuffled = ResponseMatrix(vals[25:][:, perm], item_ids=ids[perm], model_ids=names)
    ss = SortSearch(random_state=0).fit(ResponseMatrix(vals[:25], item_ids=ids))
    ss.select(20)
    np.testing.assert_array_equal(ss.predict(shuffled).predicted_accuracy, ss.predict(same).predicted_accuracy)
    np.testing.assert_array_equal(ss.simulate(shuffled, 20).predicted_accuracy,
                                  ss.simulate(same, 20).predicted_accuracy)


# ------------------------------------------------------------------------------ inputs SortSearch refuses
def _said_by_sortsearch(x):
    with pytest.raises(ValueError) as exc:
        SortSearch(missing="observed").fit(x)
    return str(exc.value)


@pytest.mark.parametrize("empty", ["all", "row"])
def test_models_without_a_response_are_refused_at_fit_as_sortsearch_refuses_them(data, empty):
    x = data.astype(float)
    if empty == "all":
        x[:] = np.nan
    else:
        x[[3, 7]] = np.nan
    said = _said_by_sortsearch(x)
    assert said.startswith("responses: models at positions ") and "have no response (all NaN)" in said
    with pytest.raises(ValueError) as exc:
        CopyNearestExpand(random_state=0).fit(x)
    assert str(exc.value) == said
    with pytest.raises(ValueError, match=r"^responses: (items|models) at positions .* have no response|^missing:"):
        SampleInserter(missing="observed").fit(x)
    x = data.astype(float)
    x[:, 5] = np.nan  # an item no model answered: fitted by both, left out of the draws
    CopyNearestExpand(random_state=0).fit(x)
    SortSearch(missing="observed").fit(x)


def test_duplicated_item_ids_are_refused_at_fit_by_the_estimators_on_labelled_responses(data):
    from effstats.irt import IRT2PL

    df = pd.DataFrame(data.astype(float), columns=["c"] * 30 + [f"i{j}" for j in range(30)])
    said = _said_by_sortsearch(df)
    assert said == "responses: duplicated item ids ['c']; items are matched by id, so every id must be unique"
    for est in (SampleInserter(), CopyNearestExpand(random_state=0), IRT2PL()):
        with pytest.raises(ValueError) as exc:
            est.fit(df)
        assert str(exc.value) == said, type(est).__name__
    # the units SampleInserter orders are models: a repeated model id is named as one
    with pytest.raises(ValueError, match=r"^responses: duplicated model ids \['m'\]; models are matched by id"):
        SampleInserter().fit(pd.DataFrame(data.astype(float), index=["m"] * 2 + [f"m{j}" for j in range(28)]))
