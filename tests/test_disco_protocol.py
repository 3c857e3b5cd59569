"""Prediction intervals (design-based and cross-validated conformal), their coverage by simulation on real and
simulated splits, the method chooser, the one-protocol comparison, the newest-k chronological split."""
import math
import warnings

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

from effstats import ResponseMatrix, chronological_split, random_split
from effstats._results import ConfidenceInterval
from effstats.datasets import simulate_responses
from effstats.disco import (
    DISCO,
    AnchorCorr,
    MethodChooser,
    RandomDirect,
    StratifiedHT,
    SubsetPrediction,
    compare_methods,
    summarize_comparison,
)

warnings.filterwarnings("ignore", message="pca: ")


def families(m=60, n=600, seed=0, n_families=8, spread=0.05):
    """Binary benchmark whose models come in tight families with 3-D abilities (signatures carry information)."""
    rng = np.random.default_rng(seed)
    fam = rng.integers(0, n_families, m)
    theta = rng.normal(size=(n_families, 3))[fam] + spread * rng.normal(size=(m, 3))
    a, b = np.abs(rng.normal(size=(n, 3))), rng.normal(size=n)
    y = rng.random((m, n)) < 1 / (1 + np.exp(-(theta @ a.T - b)))
    dates = pd.Timestamp("2022-01-01") + pd.to_timedelta(rng.permutation(m), unit="D")
    return ResponseMatrix(y, models={"release_date": dates})


def load_or_skip(loader, **kw):
    try:
        from effstats import datasets

        return getattr(datasets, loader)(**kw)
    except (FileNotFoundError, ValueError) as exc:  # released predictions not beside the checkout
        pytest.skip(f"{loader}: {exc}")


# ----------------------------------------------------------------------------- result object
def test_subset_prediction_protocol_and_conformal_quantile():
    r = np.array([0.05, -0.01, 0.02, 0.03, -0.04, 0.06, 0.0, 0.01, -0.02])  # 9 CV residuals
    p = SubsetPrediction(np.array([0.5, 0.98]), np.full(2, 0.03), "conformal", np.abs(r))
    ci = p.confidence_interval(0.8)
    assert isinstance(ci, ConfidenceInterval)
    q = np.sort(np.abs(r))[math.ceil(10 * 0.8) - 1]  # the ceil((n+1) level)-th smallest |residual| = 0.05
    assert q == 0.05
    np.testing.assert_allclose(ci.low, [0.45, 0.93])
    np.testing.assert_allclose(ci.high, [0.55, 1.0])  # clipped to the score range
    # a level beyond (n)/(n+1) has no finite conformal quantile: the whole range
    np.testing.assert_allclose(p.confidence_interval(0.95).low, [0.0, 0.0])
    f = p.to_frame(0.8)
    assert list(f.columns) == ["estimate", "standard_error", "low", "high"] and len(f) == 2
    with pytest.raises(ValueError, match="confidence_level"):
        p.confidence_interval(1.5)
    d = SubsetPrediction(np.array([0.5]), np.array([0.05]), "design")
    np.testing.assert_allclose(d.confidence_interval(0.95), ([0.5 - 1.959964 * 0.05], [0.5 + 1.959964 * 0.05]),
                               rtol=1e-6)


def test_score_is_a_float_and_evaluate_reports_coverage():
    rm = families()
    sp = random_split(rm, 15, rng=0)
    src, tgt = sp.apply(rm)
    est = DISCO(40, predictor="knn", pca=None, random_state=0).fit(src)
    truth = tgt.accuracy().to_numpy()
    s = est.score(tgt, truth)
    assert isinstance(s, float) and s == pytest.approx(-100 * np.abs(est.predict(tgt) - truth).mean())
    m = est.evaluate(tgt, truth, confidence_level=0.9)
    assert m.mae == pytest.approx(-s) and 0 <= m.coverage <= 1 and m.width > 0
    p = est.predict_interval(tgt)
    assert p.residuals.shape == (src.n_models,) and list(p.to_frame().index) == list(tgt.model_ids)


# ----------------------------------------------------------------------------- design-based intervals
def test_random_direct_design_interval_covers_by_simulation():
    # One target model, 2,000 items, 600 random 100-item subsets: the 90 % Wald interval with the
    # finite-population variance covers the true accuracy 90 % of the time (3 MC s.e.), and the design s.e.
    # matches the Monte-Carlo spread of the estimates.
    rm = families(m=20, n=2000, seed=3)
    src, tgt = rm.subset(models=np.arange(19)), rm.subset(models=[19])
    truth = tgt.accuracy().iloc[0]
    est, se, cover = [], [], []
    for s in range(600):
        p = RandomDirect(100, random_state=s).fit(src).predict_interval(tgt)
        lo, hi = p.confidence_interval(0.9)
        est.append(p.statistic[0]); se.append(p.standard_error[0]); cover.append(lo[0] <= truth <= hi[0])
    assert abs(np.mean(cover) - 0.9) < 3 * np.sqrt(0.09 / 600)
    assert np.mean(se) == pytest.approx(np.std(est), rel=0.1)


def test_stratified_design_se_matches_monte_carlo():
    rm = families(m=30, n=1200, seed=4)
    src, tgt = rm.subset(models=np.arange(29)), rm.subset(models=[29])
    fits = [StratifiedHT(60, 5, random_state=s).fit(src) for s in range(300)]
    est = np.array([f.predict(tgt)[0] for f in fits])
    se = np.array([f.predict_interval(tgt).standard_error[0] for f in fits[:60]])
    assert se.mean() == pytest.approx(est.std(), rel=0.2)


@pytest.mark.parametrize("loader,kw", [("load_cifar10_predictions", {"domains": ["cifar10"]}),
                                       ("load_imagenet_predictions", {"domains": ["imagenet_val"]})])
def test_design_interval_coverage_on_real_predictions(loader, kw):
    # Real per-item correctness: every model's true accuracy is known, 100 random items per draw, 40 draws.
    rm = load_or_skip(loader, **kw)
    truth = rm.accuracy().to_numpy()
    cover = []
    for s in range(40):
        p = RandomDirect(100, random_state=s).fit(rm).predict_interval(rm)
        lo, hi = p.confidence_interval(0.9)
        cover.append((lo <= truth) & (truth <= hi))
    c = np.mean(cover)
    # draws share models, so the MC s.e. uses the number of draws as the effective sample size (conservative)
    assert abs(c - 0.9) < 3 * np.sqrt(0.09 / 40)


# ----------------------------------------------------------------------------- conformal intervals
def test_conformal_intervals_cover_on_random_splits():
    rm = families(m=60, n=500, seed=5)
    hits = []
    for s in range(20):
        src, tgt = random_split(rm, 12, rng=s).apply(rm)
        p = DISCO(40, predictor="knn", pca=None, random_state=s).fit(src).predict_interval(tgt)
        lo, hi = p.confidence_interval(0.9)
        t = tgt.accuracy().to_numpy()
        hits.extend((lo <= t) & (t <= hi))
    assert np.mean(hits) >= 0.9 - 3 * np.sqrt(0.09 / len(hits))


def test_conformal_coverage_on_real_cifar10_splits():
    rm = load_or_skip("load_cifar10_predictions", domains=["cifar10"]).subset(items=np.arange(4000))
    hits = []
    for s in range(8):
        src, tgt = random_split(rm, 8, rng=s).apply(rm)
        p = DISCO(100, predictor="knn", random_state=s).fit(src).predict_interval(tgt)
        lo, hi = p.confidence_interval(0.9)
        t = tgt.accuracy().to_numpy()
        hits.extend((lo <= t) & (t <= hi))
    assert np.mean(hits) >= 0.9 - 3 * np.sqrt(0.09 / len(hits))


def test_cv_residuals_are_out_of_fold():
    rm = families(m=30, n=300)
    est = DISCO(30, predictor="knn", pca=None, random_state=0).fit(rm)
    r = est.cv_residuals()
    # kNN with k=1 in-sample would copy each model's own score (residual 0); out of fold it cannot
    assert r.shape == (30,) and (np.abs(r) > 0).mean() > 0.8
    assert est.cv_residuals() is not r or np.array_equal(est.cv_residuals(), r)  # cached, same values


# ----------------------------------------------------------------------------- chooser and one protocol
def test_chooser_keeps_random_direct_without_structure_and_picks_signatures_with_it():
    rng = np.random.default_rng(0)
    # no structure: every model answers every item with its own accuracy, independently
    p = rng.uniform(0.4, 0.8, 40)
    iid = ResponseMatrix(rng.random((40, 1500)) < p[:, None])
    # (cosine kNN needs centred signatures: PCA centres them; on raw 0/1 vectors cosine ignores how many are right)
    cands = {"random + direct": RandomDirect(50),
             "DISCO PDS + kNN": DISCO(50, selection="pds", predictor="knn", estimate="signature", pca=16)}
    ch = MethodChooser(cands, n_items=50, random_state=0).fit(iid)
    assert ch.best_ == "random + direct"
    # tight model families: in range (extrapolation=False), signatures predict far better than a 50-item mean
    fam = families(m=80, n=2000, spread=0.02, seed=1)
    ch2 = MethodChooser(cands, n_items=50, random_state=0, extrapolation=False).fit(fam)
    assert ch2.best_ == "DISCO PDS + kNN"
    # ... but kNN cannot predict a model better than its neighbours: with the best sources held out its error
    # exceeds the 50-item mean's, and the default chooser keeps the mean
    ch3 = MethodChooser(cands, n_items=50, random_state=0).fit(fam)
    top = ch3.cv_results_["top_mae"]
    assert top["DISCO PDS + kNN"] > top["random + direct"] and ch3.best_ == "random + direct"
    np.testing.assert_allclose(ch3.cv_results_["criterion"], ch3.cv_results_[["cv_mae", "top_mae"]].max(axis=1))
    assert ch2.expected_error_ == pytest.approx(ch2.cv_results_.loc["DISCO PDS + kNN", "cv_mae"])
    assert ch2.cv_results_["chosen"].sum() == 1
    np.testing.assert_array_equal(ch2.predict(fam), ch2.best_estimator_.predict(fam))
    np.testing.assert_array_equal(ch2.selected_, ch2.best_estimator_.selected_)
    with pytest.raises(ValueError, match="reference: 'x' is not among the candidates"):
        MethodChooser(cands, reference="x").fit(fam)


def test_compare_methods_one_protocol_and_regret():
    rm = families(m=50, n=800, seed=2)
    splits = [random_split(rm, 12, rng=s) for s in range(2)]
    cands = {"random + direct": RandomDirect(40), "anchor": AnchorCorr(40),
             "DISCO PDS + kNN": DISCO(40, selection="pds", predictor="knn", estimate="signature", pca=None)}
    tab, pred = compare_methods(rm, splits, cands, n_items=40, return_predictions=True)
    assert set(tab["method"]) == set(cands) | {"chooser"}
    assert (tab.groupby("split")["chosen"].sum() == 2).all()  # the pick's own row and the chooser row
    assert {"mae", "spearman", "coverage", "width", "cv_mae"} <= set(tab.columns)
    s = summarize_comparison(tab)
    singles = s.drop(index="chooser")
    assert s.loc["chooser", "regret_vs_best_method"] == pytest.approx(s.loc["chooser", "mae"] - singles["mae"].min())
    ch = tab[tab.method == "chooser"]
    assert s.loc["chooser", "regret"] == pytest.approx(ch["regret"].mean())  # per split: pick minus that split's best
    # per-model table: the chooser's rows repeat its pick's predictions
    mae_from_pred = pred.assign(e=100 * (pred.estimate - pred.truth).abs()).groupby("method")["e"].mean()
    assert mae_from_pred["chooser"] == pytest.approx(s.loc["chooser", "mae"])
    # the rows say the level of the intervals their coverage is of (compare_methods' default, 0.9)
    assert (tab["confidence_level"] == 0.9).all()
    cov_from_pred = pred.assign(c=(pred.low <= pred.truth) & (pred.truth <= pred.high)).groupby("method")["c"].mean()
    assert cov_from_pred["chooser"] == pytest.approx(ch["coverage"].mean())


def test_run_protocol_rows_carry_the_level_of_their_intervals():
    """With a level, each row's coverage and width are those of evaluate at that level, which the row names."""
    from effstats.disco import run_protocol

    rm = families(m=40, n=400, seed=1)
    sp = random_split(rm, 10, rng=0)
    truth = rm.accuracy().to_numpy()[sp.target]
    tab = run_protocol({"random": RandomDirect(40)}, rm, {"r": sp}, seeds=[0], confidence_level=0.8)
    assert {"coverage", "width", "confidence_level"} <= set(tab.columns) and (tab["confidence_level"] == 0.8).all()
    m = RandomDirect(40, random_state=0).fit(rm.subset(models=sp.source)).evaluate(
        rm.subset(models=sp.target), truth, confidence_level=0.8)
    assert tab["coverage"].iloc[0] == pytest.approx(m.coverage) and tab["width"].iloc[0] == pytest.approx(m.width)
    assert "confidence_level" not in run_protocol({"random": RandomDirect(40)}, rm, {"r": sp}, seeds=[0]).columns


# ----------------------------------------------------------------------------- splits
def test_chronological_split_newest_k():
    rm = families(m=30, n=50)
    sp = chronological_split(rm, n_newest=5)
    d = rm.models["release_date"].to_numpy()
    assert len(sp.target) == 5 and d[sp.target].min() > d[sp.source].max()
    with pytest.raises(ValueError, match="cutoff: give exactly one of cutoff and n_newest"):
        chronological_split(rm, "2022-01-10", n_newest=3)


class _Shifted(RandomDirect):
    """A user's variant with its parent's parameters and other estimates."""

    def predict(self, target_outputs):
        return super().predict(target_outputs) + 0.2


def test_run_protocol_keeps_results_by_class_and_only_for_data_that_cannot_change(monkeypatch):
    from effstats.disco import _protocol, run_protocol

    rm = simulate_responses(60, 400, rng=0)
    frozen = rm.subset(models=np.arange(rm.n_models))  # read-only arrays, as the data loaders' and subset's
    split = random_split(rm, 12, rng=0)
    runs = []
    real = _protocol._run_one
    monkeypatch.setattr(_protocol, "_run_one", lambda *a: runs.append(type(a[0]).__name__) or real(*a))
    alone = run_protocol({"shifted": _Shifted(30)}, rm, split, seeds=[0]).mae.iloc[0]
    both = run_protocol({"plain": RandomDirect(30), "shifted": _Shifted(30)}, frozen, split, seeds=[0])
    assert both.set_index("method").loc["shifted", "mae"] == pytest.approx(alone)
    assert both.set_index("method").loc["plain", "mae"] < alone - 10
    # effstats' own classes are kept per (class, parameters, split, seed) on data that cannot change ...
    runs.clear()
    again = run_protocol({"plain": RandomDirect(30), "shifted": _Shifted(30)}, frozen, split, seeds=[0])
    assert runs == ["_Shifted"] and again.equals(both)
    # ... and computed afresh on writeable data, which an edit in place changes
    first = run_protocol({"plain": RandomDirect(30)}, rm, split, seeds=[0]).mae.iloc[0]
    rm.values[:, ::2] = 1  # half of the items right for every model
    runs.clear()
    edited = run_protocol({"plain": RandomDirect(30)}, rm, split, seeds=[0]).mae.iloc[0]
    assert runs == ["RandomDirect"] and edited != pytest.approx(first)


def test_run_protocol_computes_afresh_after_the_metadata_is_edited_in_place():
    from effstats.disco import run_protocol

    base = simulate_responses(40, 300, rng=0)
    rm = base.with_metadata(items=pd.DataFrame({"task": np.repeat(["a", "b", "c"], 100)}, index=base.item_ids))
    rm = rm.subset(items=np.arange(rm.n_items))  # read-only arrays: results are kept
    split = random_split(rm, 10, rng=0)
    methods = {"strat": RandomDirect(30, stratify="task")}
    first = run_protocol(methods, rm, split, seeds=[0]).mae.iloc[0]
    rm.items["task"] = np.tile(["a", "b", "c"], 100)  # the items regrouped in place
    edited = run_protocol(methods, rm, split, seeds=[0]).mae.iloc[0]
    fresh = ResponseMatrix(rm.values.copy(), model_ids=rm.model_ids, item_ids=rm.item_ids, items=rm.items.copy())
    assert edited == pytest.approx(run_protocol(methods, fresh, split, seeds=[0]).mae.iloc[0])
    assert edited != pytest.approx(first)
    # a metadata cell that cannot be hashed: nothing kept, the result still the data's
    rm.models["tags"] = [["x"]] * rm.n_models
    assert run_protocol(methods, rm, split, seeds=[0]).mae.iloc[0] == pytest.approx(edited)


def test_run_protocol_keeps_splits_of_other_dtypes_apart():
    from effstats.disco import AnchorCorr, run_protocol
    from effstats.splits import ModelSplit

    rm = simulate_responses(40, 300, rng=0).subset(items=np.arange(300))  # read-only arrays: results are kept
    two = ModelSplit(np.array([12, 0], np.int32), np.array([5, 6, 7]))  # the bytes of int64 [12]
    one = ModelSplit(np.array([12]), np.array([5, 6, 7]))
    run_protocol({"anchor": AnchorCorr(20)}, rm, two, seeds=[0])
    with pytest.raises(ValueError, match="need at least 2 source models, got 1"):
        run_protocol({"anchor": AnchorCorr(20)}, rm, one, seeds=[0])


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_array_digest_is_equal_exactly_for_arrays_of_one_dtype_shape_and_bytes(data):
    """The key of run_protocol's memo and of AIPW's ridge fits against the brute-force key, the arrays' (dtype,
    shape, C-order bytes): equal digests exactly where those are equal, whatever the memory layout, however the
    same bytes are cut between the arrays or read under another dtype."""
    from effstats._shared import array_digest

    dtypes = st.sampled_from([np.int32, np.int64, np.float64, np.bool_])
    shapes = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)
    def numbers(dt):  # 0, 1 and 2 (bool: 0 and 1) in one dtype
        return hnp.arrays(dt, shapes, elements=st.integers(0, 1 if dt is np.bool_ else 2).map(dt))

    arrays = st.lists(dtypes.flatmap(numbers), min_size=1, max_size=3)
    a, b = data.draw(arrays), data.draw(arrays)
    if data.draw(st.booleans()):  # the same numbers in other memory: a Fortran-order copy, a strided view
        b = [np.asfortranarray(x) if x.ndim > 1 else np.repeat(x, 2)[::2] if x.ndim else x.copy() for x in a]
    brute = [(x.dtype.str, x.shape, x.tobytes()) for x in a] == [(x.dtype.str, x.shape, x.tobytes()) for x in b]
    assert (array_digest(*a) == array_digest(*b)) == brute
    same_bytes = np.array([12, 0], np.int32)  # the bytes of int64 [12]
    assert array_digest(same_bytes) != array_digest(np.array([12], np.int64))
    assert array_digest([1, 2], [3]) != array_digest([1], [2, 3])


def test_run_protocol_fits_the_folds_of_the_default_and_the_power_tuned_aipw_once(monkeypatch):
    from effstats.disco import AIPW, StratifiedAIPW, _aipw, run_protocol

    rm = simulate_responses(40, 300, rng=0)
    split = random_split(rm, 10, rng=0)
    methods = {"AIPW": AIPW(30), "tuned": AIPW(30, power_tuning=True), "strat": StratifiedAIPW(30)}
    made, real = [], _aipw._RidgeFit.__init__
    monkeypatch.setattr(_aipw._RidgeFit, "__init__", lambda self, *a: made.append(1) or real(self, *a))
    both = run_protocol(methods, rm, split, seeds=[0, 1], confidence_level=0.9)
    assert len(made) == 2 * (5 + 10)  # per seed: five fold fits shared, ten pair fits of the tuned one
    apart = pd.concat([run_protocol({m: e}, rm, split, seeds=[0, 1], confidence_level=0.9) for m, e in methods.items()])
    key = ["method", "seed"]
    pd.testing.assert_frame_equal(both.sort_values(key).reset_index(drop=True),
                                  apart.sort_values(key).reset_index(drop=True), check_exact=True)


def test_run_protocol_keeps_the_halves_of_a_split_asked_for_in_every_call(monkeypatch):
    from effstats import performance_split
    from effstats.disco import run_protocol
    from effstats.splits import ModelSplit

    rm = simulate_responses(40, 300, rng=0).subset(items=np.arange(300))  # read-only arrays: splits are kept
    top = performance_split(rm, 0.2)
    applied, real = [], ModelSplit.apply
    monkeypatch.setattr(ModelSplit, "apply", lambda self, r: applied.append(self) or real(self, r))
    for seed in range(5):  # a new random split in every call beside the same top split
        run_protocol({"plain": RandomDirect(20)}, rm, {"random": random_split(rm, 8, rng=seed), "top": top},
                     seeds=[seed])
    assert sum(a is top for a in applied) == 1 and len(applied) == 6


class _Warns(RandomDirect):
    """RandomDirect that warns in every fit, naming its seed."""

    def fit(self, *args, **kwargs):
        warnings.warn(f"seed {self.random_state}", UserWarning)
        return super().fit(*args, **kwargs)


def test_run_protocol_and_compare_methods_do_not_depend_on_n_jobs(monkeypatch):
    """Runs dealt out to forked children give the table of one process, exactly (the same code on the same data),
    and the children's warnings are issued by the caller; the first seed's runs stay in the caller."""
    from effstats.disco import _protocol, run_protocol

    forks = []  # the children's process ids (None: not forked)
    real = _protocol._Forked.__enter__

    def spy(self):
        out = real(self)
        forks.append(self.pid)
        return out
    monkeypatch.setattr(_protocol._Forked, "__enter__", spy)
    methods = {"random": RandomDirect(30), "anchor": AnchorCorr(30), "same anchor": AnchorCorr(30),
               "rf": DISCO(30, selection="pds", predictor="rf", estimate="signature", pca=None), "warns": _Warns(30)}
    tables, caught = {}, {}
    for n_jobs in (1, 2, 3):
        rm = families(m=50, n=400, seed=3).subset(items=np.arange(400))  # a new object: nothing kept from before
        splits = {f"s{s}": random_split(rm, 12, rng=s) for s in range(2)}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            tables[n_jobs] = run_protocol(methods, rm, splits, seeds=[0, 1, 2], confidence_level=0.9, n_jobs=n_jobs)
        caught[n_jobs] = sorted(str(x.message) for x in w if str(x.message).startswith("seed"))
        assert all(x.filename == __file__ for x in w if str(x.message).startswith("seed"))
    assert len(forks) == 3 and None not in forks  # one child with 2 jobs, two with 3
    for n_jobs in (2, 3):
        pd.testing.assert_frame_equal(tables[n_jobs], tables[1], check_exact=True)
        assert caught[n_jobs] == caught[1] == sorted([f"seed {s}" for s in (0, 1, 2)] * 2)
    assert list(tables[1]["method"].unique()) == list(methods) and len(tables[1]) == 2 * 5 * 3
    # compare_methods deals out its splits
    forks.clear()
    out = {}
    for n_jobs in (1, 2):
        rm = families(m=50, n=400, seed=3)
        splits = [random_split(rm, 12, rng=s) for s in range(3)]
        cands = {"random + direct": RandomDirect(30), "anchor": AnchorCorr(30)}
        out[n_jobs] = compare_methods(rm, splits, cands, n_items=30, return_predictions=True, n_jobs=n_jobs)
    assert len(forks) == 1
    for a, b in zip(out[1], out[2]):
        pd.testing.assert_frame_equal(a, b, check_exact=True)

