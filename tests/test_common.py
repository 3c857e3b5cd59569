"""Shared invariants over every effstats estimator (after scikit-learn's ``test_common``) and every public module.

For each estimator: ``__init__`` only stores its arguments (``get_params`` returns them unchanged, no fitted
attribute exists before ``fit``), ``clone`` round-trips, a method that needs a fit raises ``NotFittedError``,
``fit`` returns ``self`` without changing its inputs, the same ``random_state`` gives the same predictions, and
``score`` returns a float. For each public module: every name in ``__all__`` exists.
"""
from __future__ import annotations

import importlib

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError as SkNotFittedError

from effstats.datasets import simulate_responses
from effstats.exceptions import NotFittedError


@pytest.fixture(scope="module")
def data():
    rm = simulate_responses(60, 240, n_classes=4, rng=0)
    src = rm.subset(models=np.arange(48))
    tgt = rm.subset(models=np.arange(48, 60))
    return src, tgt


def _sortsearch():
    from effstats.sortsearch import SortSearch

    return SortSearch(sampling="random", random_state=3), lambda est, src, tgt: est.predict(
        tgt.subset(items=est.select(40))).thresholds


def _sample_inserter():
    from effstats.sortsearch import SampleInserter

    # new items' correctness on the selected models (here the source items play the new ones)
    return SampleInserter(sampling="random", random_state=3), lambda est, src, tgt: est.predict(
        src.subset(models=est.select(10))).thresholds


def _copy_nearest():
    from effstats.sortsearch import CopyNearestExpand

    return CopyNearestExpand(random_state=3), lambda est, src, tgt: est.predict(
        tgt.subset(items=est.select(40))).accuracy


def _hybrid():
    from effstats.sortsearch import HybridSearch

    return HybridSearch(budget=40, random_state=3), lambda est, src, tgt: est.predict(
        tgt.subset(items=est.select(40) if hasattr(est, "select") else est.items_)).predicted_accuracy


def _irt():
    from effstats.irt import IRT2PL

    return IRT2PL(), lambda est, src, tgt: est.predict_proba()


def _subset(name, module, **kw):
    def make():
        cls = getattr(importlib.import_module(module), name)
        return cls(**kw), lambda est, src, tgt: np.asarray(est.predict(tgt))

    make.score_args = lambda src, tgt: (tgt, tgt.accuracy().to_numpy())  # outputs, true full-benchmark scores

    make.__name__ = name
    return make


ESTIMATORS = [
    _sortsearch,
    _sample_inserter,
    _copy_nearest,
    _hybrid,
    _subset("DISCO", "effstats.disco", n_items=30, random_state=3),
    _subset("RandomDirect", "effstats.disco", n_items=30, random_state=3),
    _subset("AIPW", "effstats.disco", n_items=30, random_state=3),
    _subset("AnchorCorr", "effstats.disco", n_items=30, random_state=3),
    _subset("StratifiedHT", "effstats.disco", n_items=30, random_state=3),
    _subset("SortSearchDirect", "effstats.disco", n_items=30, random_state=3),
    _subset("TinyBenchmarks", "effstats.irt", n_items=30, n_dims=1, random_state=3),
    _irt,
]
IDS = [f.__name__.strip("_") for f in ESTIMATORS]


def _fitted_attributes(est):
    return sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("_"))


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_init_stores_only_and_clone_round_trips(make):
    est, _ = make()
    params = est.get_params(deep=False)
    assert not _fitted_attributes(est), f"{type(est).__name__}.__init__ sets fitted attributes"
    for k, v in params.items():
        assert getattr(est, k) is v, f"{type(est).__name__}.__init__ changes {k!r}"
    twin = clone(est)
    assert type(twin) is type(est)
    assert {k: repr(v) for k, v in twin.get_params(deep=False).items()} == {k: repr(v) for k, v in params.items()}


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_not_fitted_error_before_fit(make, data):
    est, predict = make()
    src, tgt = data
    with pytest.raises(NotFittedError) as info:
        predict(est, src, tgt)
    # one filter works for effstats and scikit-learn, and old `except ValueError` code keeps working
    assert isinstance(info.value, SkNotFittedError) and isinstance(info.value, ValueError)
    assert type(est).__name__ in str(info.value)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_fit_returns_self_does_not_mutate_and_is_reproducible(make, data):
    src, tgt = data
    before = src.values.copy()
    est, predict = make()
    assert est.fit(src) is est
    assert np.array_equal(src.values, before), "fit changed its input"
    assert _fitted_attributes(est), "fit set no fitted attribute"
    twin, _ = make()
    twin.fit(src)
    p1, p2 = predict(est, src, tgt), predict(twin, src, tgt)
    # equal up to float summation order (forests sum their trees on threads)
    np.testing.assert_allclose(np.asarray(p1, float), np.asarray(p2, float), rtol=1e-12, atol=1e-12,
                               err_msg="same random_state, different predictions")
    assert np.isfinite(np.asarray(p1, float)).all()


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_score_returns_a_float(make, data):
    src, tgt = data
    est, _ = make()
    if not hasattr(est, "score"):
        pytest.fail(f"{type(est).__name__} has no score method")
    est.fit(src)
    if hasattr(est, "select"):  # Sort & Search family: score at the budget of the last selection
        est.select(10 if type(est).__name__ == "SampleInserter" else 40)
    # new items for SampleInserter, new models otherwise
    default_args = (lambda src, tgt: (src,)) if type(est).__name__ == "SampleInserter" else (lambda src, tgt: (tgt,))
    s = est.score(*getattr(make, "score_args", default_args)(src, tgt))
    assert isinstance(s, float) and np.isfinite(s)


PUBLIC_MODULES = [
    "effstats", "effstats.responses", "effstats.splits", "effstats.bitpack", "effstats.metrics", "effstats.sortsearch",
    "effstats.disco", "effstats.irt", "effstats.reliability", "effstats.sequential", "effstats.datasets",
    "effstats.distributed", "effstats.exceptions", "effstats._results", "effstats._validation", "effstats.rbridge",
]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_names_exist(name):
    mod = importlib.import_module(name)
    missing = [n for n in getattr(mod, "__all__", []) if not hasattr(mod, n)]
    assert hasattr(mod, "__all__") and not missing, missing


def test_result_protocol():
    """Results with an estimate share scipy.stats' protocol: confidence_interval(confidence_level=) -> (low, high)."""
    from effstats._results import ConfidenceInterval
    from effstats.datasets import load_helm
    from effstats.reliability import dior

    res = dior(load_helm(), "scenarios", "kendall", n_boot=200, rng=0)
    ci = res.confidence_interval(confidence_level=0.9)
    assert isinstance(ci, ConfidenceInterval) and ci.low <= res.statistic <= ci.high
    wide = res.confidence_interval(confidence_level=0.99)
    assert wide.low <= ci.low and wide.high >= ci.high
    assert res.standard_error > 0
    assert {"statistic", "standard_error", "ci_low", "ci_high"} <= set(res.to_frame().columns)
    with pytest.raises(ValueError, match="confidence_level"):
        res.confidence_interval(confidence_level=1.5)


def test_progress_bars_are_text_bars():
    """tqdm.auto's widget bars crash with Debian's ipywidgets 6 ('FloatProgress' has no 'style') and nbclient
    rejects widget comms: every progress bar in effstats is a plain text bar."""
    from pathlib import Path

    import effstats

    offenders = [str(p) for p in Path(effstats.__file__).parent.rglob("*.py") if "tqdm.auto" in p.read_text()]
    assert not offenders, offenders


def test_sequential_evaluator_follows_the_estimator_contract():
    from effstats.sequential import Efficacy, Precision, SequentialEvaluator

    ev = SequentialEvaluator([Efficacy(), Precision(0.05)], alpha=0.05, batch=50, rng=1)
    twin = clone(ev)
    assert type(twin) is SequentialEvaluator and repr(twin.get_params()) == repr(ev.get_params())
    assert not _fitted_attributes(ev)
    with pytest.raises(NotFittedError, match="start"):
        ev.update(np.ones(10))
    a = (np.random.default_rng(0).random(600) < 0.8).astype(float)
    r1, r2 = ev.fit(a, a[::-1].copy()), clone(ev).fit(a, a[::-1].copy())
    assert r1.decision == r2.decision and r1.n == r2.n  # same parameters and rng, same run


def test_correlation_result_has_scipy_names():
    from effstats.metrics import accuracy_correlation

    rng = np.random.default_rng(0)
    x = rng.random(30)
    res = accuracy_correlation(x, x + 0.1 * rng.random(30))
    assert res.pvalue == res.pearson_pvalue and 0 <= res.pvalue < 0.01
    assert res.confidence_interval(0.95).low < res.statistic < res.confidence_interval(0.95).high
