"""Shared invariants over every effstats estimator (after scikit-learn's ``test_common``) and every public module.

For each estimator: ``__init__`` only stores its arguments (``get_params`` returns them unchanged, no fitted
attribute exists before ``fit``), ``clone`` and ``set_params`` round-trip, ``repr`` names the class and the
parameters that differ from the defaults, a method that needs a fit raises ``NotFittedError``, ``fit`` returns
``self`` without changing its inputs (read-only arrays are accepted), the same ``random_state`` gives the same
predictions, ``score`` returns a float, and one 0/1 matrix means one thing: the same results as ``int`` (what
:func:`pandas.read_csv` returns), ``bool`` or ``float``. A registry check keeps the list complete: every
scikit-learn-style estimator that a public module exports is tested here. For each public module: every name in
``__all__`` exists.
"""
from __future__ import annotations

import importlib
import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError as SkNotFittedError

from effstats.datasets import simulate_responses
from effstats.exceptions import NotFittedError


@pytest.fixture(scope="module")
def data():
    rm = simulate_responses(60, 240, n_classes=4, rng=0)
    src = rm.subset(models=np.arange(48))
    tgt = rm.subset(models=np.arange(48, 60))
    return src, tgt


def _on_items(x, items):
    """Positional arguments and keywords for a ``predict`` on the outputs of ``x`` on ``items``: a ResponseMatrix
    is cut by its ids, a bare array by position (with ``items=`` to say which columns it holds)."""
    if isinstance(x, np.ndarray):
        return (x[:, items],), {"items": items}
    return (x.subset(items=items),), {}


def _sortsearch():
    from effstats.sortsearch import SortSearch

    def predict(est, src, tgt):
        args, kw = _on_items(tgt, est.select(40))
        return est.predict(*args, **kw).thresholds

    return SortSearch(sampling="random", random_state=3), predict


def _sample_inserter():
    from effstats.sortsearch import SampleInserter

    # new items' correctness on the selected models (here the source items play the new ones)
    def predict(est, src, tgt):
        models = est.select(10)
        return est.predict(src[models].T if isinstance(src, np.ndarray) else src.subset(models=models)).thresholds

    return SampleInserter(sampling="random", random_state=3), predict


def _copy_nearest():
    from effstats.sortsearch import CopyNearestExpand

    def predict(est, src, tgt):
        args, kw = _on_items(tgt, est.select(40))
        return est.predict(*args, **kw).accuracy

    return CopyNearestExpand(random_state=3), predict


def _hybrid():
    from effstats.sortsearch import HybridSearch

    def predict(est, src, tgt):
        args, kw = _on_items(tgt, est.select(40) if hasattr(est, "select") else est.items_)
        return est.predict(*args, **kw).predicted_accuracy

    return HybridSearch(budget=40, random_state=3), predict


def _irt():
    from effstats.irt import IRT2PL

    return IRT2PL(), lambda est, src, tgt: est.predict_proba()


def _subset(name, module, **kw):
    def make():
        params = {k: v() if callable(v) else v for k, v in kw.items()}
        cls = getattr(importlib.import_module(module), name)
        return cls(**params), lambda est, src, tgt: np.asarray(est.predict(tgt))

    make.score_args = lambda src, tgt: (tgt, tgt.accuracy().to_numpy())  # outputs, true full-benchmark scores

    make.__name__ = name
    return make


def _chooser_candidates():
    from effstats.disco import AnchorCorr, RandomDirect

    return {"random + direct": RandomDirect(30), "anchor-corr": AnchorCorr(30)}


ESTIMATORS = [
    _sortsearch,
    _sample_inserter,
    _copy_nearest,
    _hybrid,
    _subset("DISCO", "effstats.disco", n_items=30, random_state=3),
    _subset("RandomDirect", "effstats.disco", n_items=30, random_state=3),
    _subset("AIPW", "effstats.disco", n_items=30, random_state=3),
    _subset("StratifiedAIPW", "effstats.disco", n_items=30, random_state=3),
    _subset("AnchorCorr", "effstats.disco", n_items=30, random_state=3),
    _subset("StratifiedHT", "effstats.disco", n_items=30, random_state=3),
    _subset("SortSearchDirect", "effstats.disco", n_items=30, random_state=3),
    _subset("MRMR", "effstats.disco", n_items=30),
    _subset("RandomLearn", "effstats.disco", n_items=30, random_state=3),
    _subset("MethodChooser", "effstats.disco", candidates=_chooser_candidates, n_items=30, n_splits=3,
            random_state=3),
    _subset("TinyBenchmarks", "effstats.irt", n_items=30, n_dims=1, random_state=3),
    _irt,
]
IDS = [f.__name__.strip("_") for f in ESTIMATORS]
# checked elsewhere: fit(a, b) runs a sequential test rather than returning self (see the test at the end)
_OTHER_CONTRACT = {"SequentialEvaluator"}


def _fitted_attributes(est):
    return sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("_"))


def _quiet(f, *args, **kw):
    """``f(*args, **kw)`` without warnings (out-of-range targets, extrapolation: not what these tests check)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kw)


def test_every_public_estimator_is_covered():
    covered = {type(make()[0]).__name__ for make in ESTIMATORS} | _OTHER_CONTRACT
    public = set()
    for name in PUBLIC_MODULES:
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", []):
            obj = getattr(mod, attr, None)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                public.add(obj.__name__)
    assert public <= covered, f"estimators without the common tests: {sorted(public - covered)}"


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
def test_set_params_round_trips_and_names_unknown_parameters(make):
    est, _ = make()
    params = est.get_params(deep=False)
    assert est.set_params(**params) is est
    assert {k: repr(v) for k, v in est.get_params(deep=False).items()} == {k: repr(v) for k, v in params.items()}
    name = next(iter(params))
    twin = clone(est).set_params(**{name: params[name]})
    assert repr(twin.get_params(deep=False)[name]) == repr(params[name])
    with pytest.raises(ValueError, match="no_such_parameter"):
        est.set_params(no_such_parameter=1)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_repr_names_the_class_and_changed_parameters(make, data):
    est, _ = make()
    text = repr(est)
    assert text.startswith(type(est).__name__ + "(") and text.endswith(")")
    defaults = {k: p.default for k, p in inspect.signature(type(est).__init__).parameters.items() if k != "self"}
    changed = [k for k, v in est.get_params(deep=False).items() if repr(v) != repr(defaults.get(k))]
    for k in changed:
        assert f"{k}=" in text, f"repr omits the changed parameter {k!r}: {text}"
    _quiet(est.fit, data[0])
    assert repr(est) == text  # fitting changes no parameter


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_not_fitted_error_before_fit(make, data):
    est, predict = make()
    src, tgt = data
    with pytest.raises(NotFittedError) as info:
        predict(est, src, tgt)
    # one filter works for effstats and scikit-learn, and code written as `except ValueError` catches it too
    assert isinstance(info.value, SkNotFittedError) and isinstance(info.value, ValueError)
    assert type(est).__name__ in str(info.value)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_fit_returns_self_does_not_mutate_and_is_reproducible(make, data):
    src, tgt = data
    before = src.values.copy()
    est, predict = make()
    assert _quiet(est.fit, src) is est
    assert np.array_equal(src.values, before), "fit changed its input"
    assert _fitted_attributes(est), "fit set no fitted attribute"
    twin, _ = make()
    _quiet(twin.fit, src)
    p1, p2 = _quiet(predict, est, src, tgt), _quiet(predict, twin, src, tgt)
    # equal up to float summation order (forests sum their trees on threads)
    np.testing.assert_allclose(np.asarray(p1, float), np.asarray(p2, float), rtol=1e-12, atol=1e-12,
                               err_msg="same random_state, different predictions")
    assert np.isfinite(np.asarray(p1, float)).all()


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_random_state_takes_a_numpy_random_state(make, data):
    """scikit-learn's convention: a numpy RandomState is a ``random_state`` too; the same state gives the same fit."""
    src, tgt = data
    if "random_state" not in make()[0].get_params():
        pytest.skip("no random_state parameter")
    out = []
    for _ in range(2):
        est, predict = make()
        est.set_params(random_state=np.random.RandomState(7))
        assert _quiet(est.fit, src) is est
        out.append(np.asarray(_quiet(predict, est, src, tgt), float))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12, atol=1e-12, err_msg="same RandomState, different fits")
    assert np.isfinite(out[0]).all()


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_fit_and_predict_leave_array_inputs_alone(make, data):
    """Read-only arrays in, the same values out: no estimator writes into what it is given."""
    src, tgt = (x.values.astype(float) for x in data)
    src.flags.writeable = tgt.flags.writeable = False
    keep = src.copy(), tgt.copy()
    est, predict = make()
    assert _quiet(est.fit, src) is est
    _quiet(predict, est, src, tgt)
    assert np.array_equal(src, keep[0]) and np.array_equal(tgt, keep[1])


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_int_01_matrix_is_binary_correctness(make, data):
    """An int 0/1 matrix (pandas.read_csv's type for a file of 0/1 results) gives what bool and float give."""
    src, tgt = (x.values for x in data)
    out = {}
    for dtype in (float, bool, int):
        est, predict = make()
        s, t = src.astype(dtype), tgt.astype(dtype)
        _quiet(est.fit, s)
        out[dtype] = np.asarray(_quiet(predict, est, s, t), dtype=float)
    np.testing.assert_array_equal(out[bool], out[float])
    np.testing.assert_array_equal(out[int], out[float])


def _fit_predict_recorded(make, s, t):
    """An estimator's predictions after ``fit(s)`` on ``t``, and the warnings it gave on the way."""
    est, predict = make()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(s)
        p = np.asarray(predict(est, s, t), float)
    return p, sorted({(w.category.__name__, str(w.message)) for w in caught})


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_masked_cells_are_missing_as_nan_cells_are(make, data):
    """A numpy masked array's masked cells are missing cells, as ``ResponseMatrix`` reads them: fit and predict give
    what NaN there gives, with the same warnings, and the values under the mask are never read (7.0 is not
    refused)."""
    src, tgt = (x.values.astype(float) for x in data)
    rng = np.random.default_rng(1)
    ms, mt = rng.random(src.shape) < 0.03, rng.random(tgt.shape) < 0.03
    masked = _fit_predict_recorded(make, np.ma.masked_array(np.where(ms, 7.0, src), ms),
                                   np.ma.masked_array(np.where(mt, 7.0, tgt), mt))
    # twice, in the order masked, NaN, masked: caches of fits (IRT) skip a refit and its warnings the second time
    nan = _fit_predict_recorded(make, np.where(ms, np.nan, src), np.where(mt, np.nan, tgt))
    masked = _fit_predict_recorded(make, np.ma.masked_array(np.where(ms, 7.0, src), ms),
                                   np.ma.masked_array(np.where(mt, 7.0, tgt), mt))
    np.testing.assert_array_equal(masked[0], nan[0])
    assert masked[1] == nan[1]
    assert np.isfinite(nan[0]).all()
    # an empty mask is complete data
    full = _fit_predict_recorded(make, src, tgt)
    np.testing.assert_array_equal(_fit_predict_recorded(make, np.ma.masked_array(src), np.ma.masked_array(tgt))[0],
                                  full[0])


def _frame_predictions(make, s, t):
    """``_fit_predict_recorded``'s predictions for DataFrames (item ids as columns): the Sort & Search family is
    given the target's selected columns by id."""
    est, predict = make()
    _quiet(est.fit, s)
    name = type(est).__name__
    if name == "SampleInserter":
        return np.asarray(_quiet(est.predict, s.loc[est.select(10)]).thresholds, float)  # by model id
    if hasattr(est, "select"):
        res = _quiet(est.predict, t[est.select(40)])
        return np.asarray(getattr(res, {"SortSearch": "thresholds", "CopyNearestExpand": "accuracy"}.get(
            name, "predicted_accuracy")), float)
    return np.asarray(_quiet(predict, est, s, t), float)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_nullable_pandas_columns_read_as_numbers_with_pd_na_missing(make, data):
    """pandas' nullable dtypes (what ``read_csv(dtype_backend="numpy_nullable")`` and Parquet give) are numbers:
    the same predictions as float64 columns, with ``pd.NA`` read as NaN, a missing cell."""
    import pandas as pd

    src, tgt = (pd.DataFrame(x.values.astype(float), index=x.model_ids, columns=x.item_ids) for x in data)
    rng = np.random.default_rng(1)
    src, tgt = src.mask(rng.random(src.shape) < 0.03), tgt.mask(rng.random(tgt.shape) < 0.03)
    # with pd.NA in every nullable dtype; without, the integer and boolean ones (read as int and bool)
    for (s, t), dtypes in (((src, tgt), ("Int64", "Float64", "boolean")),
                           ((src.fillna(1.0), tgt.fillna(1.0)), ("Int64", "boolean"))):
        want = _frame_predictions(make, s, t)
        assert np.isfinite(want).all()
        for dtype in dtypes:
            # IRT's fits agree to the last few bits only (threaded sums)
            np.testing.assert_allclose(_frame_predictions(make, s.astype(dtype), t.astype(dtype)), want,
                                       rtol=1e-10, atol=1e-12, err_msg=dtype)


def test_check_array_reads_masked_cells_as_nan_or_refuses_them():
    from effstats._validation import check_array

    x = np.ma.masked_array([[1.0, 7.0]], mask=[[False, True]])
    np.testing.assert_array_equal(check_array(x, "scores", allow_nan=True), [[1.0, np.nan]])
    with pytest.raises(ValueError, match=r"^scores: 1 masked cell\(s\); expected complete data$"):
        check_array(x, "scores")


def test_masked_class_ids_with_labels_are_refused():
    from effstats.disco import AIPW

    ids = np.ma.masked_array(np.zeros((6, 20), int), mask=np.eye(6, 20, dtype=bool))
    with pytest.raises(ValueError, match="source_outputs: class ids with masked cells"):
        AIPW(n_items=5, random_state=0).fit(ids, labels=np.zeros(20, int))


def test_a_number_given_as_a_0d_array_or_numpy_scalar_is_that_number(data):
    """What ``np.mean`` and ``np.array(0.9)`` return is a number: ``confidence_level`` takes it as the float."""
    from effstats._validation import check_positive
    from effstats.disco import StratifiedAIPW

    src, tgt = data
    res = _quiet(StratifiedAIPW(n_items=30, random_state=0).fit(src).predict_interval, tgt)
    want = res.confidence_interval(confidence_level=0.9)
    for level in (np.array(0.9), np.float64(0.9), np.mean([0.85, 0.95])):
        got = res.confidence_interval(confidence_level=level)
        np.testing.assert_allclose(np.asarray(got.low), np.asarray(want.low), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(got.high), np.asarray(want.high), rtol=1e-12)
    assert check_positive(np.array(2.5), "x") == 2.5
    for bad in (np.array(True), np.array([0.9]), np.array(1.0)):
        with pytest.raises(ValueError, match=r"^confidence_level: expected a number in \(0, 1\)"):
            res.confidence_interval(confidence_level=bad)


def test_out_of_range_scores_are_shown_with_every_digit(data):
    """A score of 1.0000001 is refused with a range that shows it, never a rounded ``[0, 1]``."""
    from effstats.disco import AIPW

    src, tgt = (x.values.astype(float) for x in data)
    bad = src.copy()
    bad[3, 7] = 1.0000001
    with pytest.raises(ValueError, match=r"^source_outputs: .*got values in \[0\.0, 1\.0000001\]$"):
        AIPW(n_items=30, random_state=0).fit(bad)
    est = _quiet(AIPW(n_items=30, random_state=0).fit, src)
    bad = tgt.copy()
    bad[0, :] = 1.0000001
    with pytest.raises(ValueError, match=r"^target_outputs: .*got values in \[0\.0, 1\.0000001\]$"):
        est.predict_interval(bad)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_score_returns_a_float(make, data):
    src, tgt = data
    est, _ = make()
    if not hasattr(est, "score"):
        pytest.fail(f"{type(est).__name__} has no score method")
    _quiet(est.fit, src)
    if hasattr(est, "select"):  # Sort & Search family: score at the budget of the last selection
        est.select(10 if type(est).__name__ == "SampleInserter" else 40)
    # new items for SampleInserter, new models otherwise
    default_args = (lambda src, tgt: (src,)) if type(est).__name__ == "SampleInserter" else (lambda src, tgt: (tgt,))
    s = _quiet(est.score, *getattr(make, "score_args", default_args)(src, tgt))
    assert isinstance(s, float) and np.isfinite(s)


PUBLIC_MODULES = [
    "effstats", "effstats.responses", "effstats.splits", "effstats.bitpack", "effstats.metrics", "effstats.sortsearch",
    "effstats.disco", "effstats.irt", "effstats.reliability", "effstats.sequential", "effstats.datasets",
    "effstats.distributed", "effstats.exceptions", "effstats._results", "effstats._validation", "effstats.rbridge",
]

# what an estimator's interval rests on: the random draw of the items, the source models' cross-validated residuals,
# items chosen deterministically, the chosen candidate's kind, or no interval for a model's score
INTERVAL_KINDS = {"design", "conformal", "systematic", "chosen", "none"}


def _public_estimators():
    out = {}
    for name in PUBLIC_MODULES:
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", []):
            obj = getattr(mod, attr, None)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                out[obj.__name__] = obj
    return [out[k] for k in sorted(out)]


@pytest.mark.parametrize("cls", _public_estimators(), ids=lambda c: c.__name__)
def test_every_estimator_declares_and_documents_its_interval_kind(cls):
    """``interval_kind`` is a public attribute of every estimator class (a value, or a property where it depends on
    the parameters), defined by effstats rather than left to scikit-learn, and its docstring says what it is."""
    owner = next((k for k in cls.__mro__ if "interval_kind" in vars(k)), None)
    assert owner is not None and owner.__module__.startswith("effstats"), f"{cls.__name__} has no interval_kind"
    value = inspect.getattr_static(cls, "interval_kind")
    if isinstance(value, property):
        assert value.fget.__doc__, f"{cls.__name__}.interval_kind: a property without a docstring"
    else:
        assert value in INTERVAL_KINDS, f"{cls.__name__}.interval_kind = {value!r}, not one of {INTERVAL_KINDS}"
    assert "interval_kind : str" in cls.__doc__, f"{cls.__name__}'s Attributes do not document interval_kind"


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_interval_kind_is_the_kind_of_interval_made(make, data):
    """The declared kind is the interval the estimator makes: a subset estimator's ``predict_interval`` says it in
    its ``method`` (the chooser's: its pick's); Sort & Search's by its sampling."""
    src, tgt = data
    est, _ = make()
    assert est.interval_kind in INTERVAL_KINDS
    if not hasattr(est, "predict_interval"):
        if hasattr(est, "sampling"):
            design = str(est.sampling).lower() in ("stratified", "random")
            assert est.interval_kind == ("design" if design else "systematic")
        return
    _quiet(est.fit, src)
    kind = est.best_estimator_.interval_kind if est.interval_kind == "chosen" else est.interval_kind
    p = _quiet(est.predict_interval, tgt, n_splits=2)
    assert p.method in (kind, "mixed") if est.interval_kind == "chosen" else p.method == kind



@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_names_exist(name):
    mod = importlib.import_module(name)
    missing = [n for n in getattr(mod, "__all__", []) if not hasattr(mod, n)]
    assert hasattr(mod, "__all__") and not missing, missing


# public classes with a ``statistic`` that are not results with an estimate and a sampling error, and why
NOT_ESTIMATE_RESULTS = {
    "DIoRPlan": "its statistic() is the meta-metric of a batch of resamples, not an estimate",
    "LookStats": "its statistic is the test function; estimates are arrays of runs by looks",
    "FlashHELMResult": "its statistic is the compute saving, a count with no sampling error",
    "StagewiseInference": "a median-unbiased estimate under the stage-wise ordering has an interval but no standard "
                          "error",
}


def _public_result_classes():
    """Every public class (in an ``__all__``) with a ``confidence_interval`` method or a ``statistic``."""
    out = {}
    for name in PUBLIC_MODULES + ["effstats.workflow"]:
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", []):
            obj = getattr(mod, attr, None)
            fields = set(getattr(obj, "__dataclass_fields__", ())) | set(getattr(obj, "_fields", ()))
            if inspect.isclass(obj) and (hasattr(obj, "confidence_interval") or "statistic" in fields
                                         or hasattr(obj, "statistic")):
                out[obj.__name__] = obj
    return [out[k] for k in sorted(out)]


@pytest.mark.parametrize("cls", _public_result_classes(), ids=lambda c: c.__name__)
def test_every_result_class_follows_the_result_protocol(cls):
    """A result with an estimate has ``statistic``, ``standard_error``, ``to_frame()`` and
    ``confidence_interval(confidence_level=...)`` returning an ``effstats.ConfidenceInterval``."""
    if cls.__name__ in NOT_ESTIMATE_RESULTS:
        return
    fields = set(getattr(cls, "__dataclass_fields__", ())) | set(getattr(cls, "_fields", ()))
    missing = [a for a in ("statistic", "standard_error", "to_frame", "confidence_interval")
               if not (hasattr(cls, a) or a in fields)]
    assert not missing, f"{cls.__name__} lacks {missing}"
    sig = inspect.signature(cls.confidence_interval)
    assert "confidence_level" in sig.parameters, f"{cls.__name__}.confidence_interval has no confidence_level"
    assert "ConfidenceInterval" in str(sig.return_annotation), (
        f"{cls.__name__}.confidence_interval is annotated {sig.return_annotation!r}, not ConfidenceInterval")


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


def _message(call) -> str:
    """The text of the error ``call`` raises, or of the warnings it gives."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            call()
        except (ValueError, TypeError) as exc:
            return str(exc)
    return " | ".join(str(w.message) for w in said)


def test_messages_list_values_as_python_prints_them():
    """Ids, positions and numbers taken from numpy arrays appear in messages as Python prints them: ``[26]``,
    ``['nope']``, ``2.5``; under numpy 2 their reprs would read ``[np.int64(26)]``, ``[np.str_('nope')]``."""
    import pandas as pd

    from effstats._validation import check_fraction, check_positive_int
    from effstats.disco import RandomDirect
    from effstats.irt import IRT2PL
    from effstats.sortsearch import SortSearch

    rm = simulate_responses(40, 60, rng=0)
    src, tgt = rm.subset(models=np.arange(30)), rm.subset(models=np.arange(30, 40))
    est = RandomDirect(10, random_state=0).fit(src.values_with_nan())
    outputs = tgt.values_with_nan()[:, est.selected_].astype(float)
    outputs[0, 0] = np.nan
    ids = np.array([f"q{j}" for j in range(src.n_items)])
    frame = pd.DataFrame(src.values_with_nan(), columns=ids)
    irt = IRT2PL().fit(frame)
    ss = SortSearch().fit(frame)
    expected = {
        "selected items [" + str(int(est.selected_[0])) + "]": lambda: est.predict(outputs, items=est.selected_),
        "e.g. ['nope']": lambda: irt.abilities(np.ones((1, 2)), np.array(["q0", "nope"])),
        "got [999]": lambda: IRT2PL().fit(src.values_with_nan()).abilities(np.ones((1, 2)), items=np.array([0, 999])),
        "fitted items: ['nope']": lambda: ss.predict(np.ones((2, 2), bool), items=np.array(["q0", "nope"])),
        "got 2.5": lambda: check_positive_int(np.float64(2.5), "n"),
        "got 1.5": lambda: check_fraction(np.float64(1.5), "alpha"),
    }
    for text, call in expected.items():
        msg = _message(call)
        assert text in msg and "np." not in msg, msg
